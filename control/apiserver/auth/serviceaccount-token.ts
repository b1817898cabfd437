/**
 * Service account tokens as JWTs (pkg/serviceaccount/jwt.go and openidmetadata.go): signed
 * RS256 with the control process's key (control/pki.ts keeps it in
 * `DATA_DIR/tls/service-account.key`), the key id being the unpadded base64url SHA-256 of
 * the public key's DER (keyIDFromPublicKey), so the JWKS and OIDC discovery documents let
 * anyone verify them.
 *
 *   issue(objs, seconds, audiences)   a signed token (claims: serviceaccount-claims.ts)
 *   authenticate(token, audiences?)   undefined — not a JWT of this issuer (another
 *                                     authenticator may know it); { error } — refused;
 *                                     { user, audiences } — who it is
 *   jwks(), openIDConfiguration()     /openid/v1/jwks, /.well-known/openid-configuration
 *
 * The audience rule is the authenticator's: a token is good for the audiences it names
 * that are also requested (the API audiences, unless a TokenReview asks for others); none
 * in common refuses it.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors, exportJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import type { UserInfo } from '../../../api/auth/user.js';
import {
  tokenClaims,
  TOKEN_LEEWAY_SECONDS,
  validateClaims,
  type BoundObjectGetter,
  type BoundObjects,
} from './serviceaccount-claims.js';

/** The signing algorithm (Kubernetes signs RSA keys with RS256). */
export const SIGNING_ALGORITHM = 'RS256';
/** The paths of the OIDC discovery documents (serviceaccount.OpenIDConfigPath, JWKSPath). */
export const OPENID_CONFIG_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

/** The issuer k3s and kube-apiserver's docs use: `https://kubernetes.default.svc.<cluster domain>`. */
export function defaultIssuer(clusterDomain = 'cluster.local'): string {
  return `https://kubernetes.default.svc.${clusterDomain}`;
}

/** What ServiceAccountTokens is built from. */
export interface ServiceAccountTokensConfig {
  /** The RSA private key, PEM (PKCS#8 or PKCS#1). */
  key: string;
  /** `iss` of issued tokens, and the only one accepted (--service-account-issuer). */
  issuer: string;
  /** The API audiences (--api-audiences); default [issuer], as kube-apiserver defaults it. */
  audiences?: readonly string[];
  /** What tokens are checked against. */
  getter: BoundObjectGetter;
  now?: () => Date;
}

/** An authenticator's answer for one token: not its kind (undefined), refused, or a user. */
export type TokenAuthResult = { user: UserInfo; audiences: string[] } | { error: string } | undefined;

/** Issues, verifies and publishes the keys of service account tokens. */
export class ServiceAccountTokens {
  readonly issuer: string;
  readonly audiences: readonly string[];
  readonly keyId: string;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly getter: BoundObjectGetter;
  private readonly now: () => Date;

  /** @throws Error when the key is not an RSA private key, or the issuer is empty. */
  constructor(cfg: ServiceAccountTokensConfig) {
    if (!cfg.issuer) throw new Error('ServiceAccountTokens: issuer is required');
    this.privateKey = createPrivateKey(cfg.key);
    if (this.privateKey.asymmetricKeyType !== 'rsa')
      throw new Error(`ServiceAccountTokens: the key must be RSA, got ${this.privateKey.asymmetricKeyType}`);
    this.publicKey = createPublicKey(this.privateKey);
    this.keyId = createHash('sha256')
      .update(this.publicKey.export({ type: 'spki', format: 'der' }))
      .digest('base64url');
    this.issuer = cfg.issuer;
    this.audiences = cfg.audiences && cfg.audiences.length > 0 ? [...cfg.audiences] : [cfg.issuer];
    this.getter = cfg.getter;
    this.now = cfg.now ?? (() => new Date());
  }

  /**
   * A signed token for `objs` (see serviceaccount-claims.ts), valid `expirationSeconds`
   * from `now`, for `audiences`; `warnAfterSeconds`: the lifetime asked for, when
   * `expirationSeconds` extends it.
   */
  async issue(
    objs: BoundObjects,
    expirationSeconds: number,
    audiences: readonly string[],
    now: Date = this.now(),
    warnAfterSeconds?: number,
  ): Promise<string> {
    const claims = tokenClaims(
      objs,
      expirationSeconds,
      audiences,
      now,
      warnAfterSeconds !== undefined ? { warnAfterSeconds } : {},
    );
    return new SignJWT({ ...claims, iss: this.issuer })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: this.keyId })
      .sign(this.privateKey);
  }

  /**
   * Who a bearer token is, for `audiences` (default the API audiences): signature, `iss`,
   * `exp` and `nbf` (60 s leeway), the audiences, then the bound objects.
   */
  async authenticate(token: string, audiences: readonly string[] = this.audiences): Promise<TokenAuthResult> {
    if (!this.hasOurIssuer(token)) return undefined;
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.publicKey, {
        issuer: this.issuer,
        algorithms: [SIGNING_ALGORITHM],
        currentDate: this.now(),
        clockTolerance: TOKEN_LEEWAY_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired) return { error: 'service account token has expired' };
      if (err instanceof errors.JWSSignatureVerificationFailed) return { error: 'invalid signature' };
      return { error: 'service account token could not be validated' };
    }
    const tokenAudiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
    const common = tokenAudiences.filter((a) => audiences.includes(a));
    if (common.length === 0)
      return {
        error: `token audiences ${goQuote(tokenAudiences)} is invalid for the target audiences ${goQuote(audiences)}`,
      };
    const user = await validateClaims(payload, this.getter, this.now());
    if ('error' in user) return user;
    return { user, audiences: common };
  }

  /** Whether `token` is a JWT whose (unverified) `iss` is ours (jwt.go's hasCorrectIssuer). */
  private hasOurIssuer(token: string): boolean {
    try {
      decodeProtectedHeader(token);
      return decodeJwt(token).iss === this.issuer;
    } catch {
      return false;
    }
  }

  /** The JWKS document: the public key, `use: sig`, with its `kid` and `alg`. */
  async jwks(): Promise<{ keys: JWK[] }> {
    const jwk = await exportJWK(this.publicKey);
    return {
      keys: [{ use: 'sig', kty: jwk.kty!, kid: this.keyId, alg: SIGNING_ALGORITHM, n: jwk.n!, e: jwk.e! }],
    };
  }

  /** The OIDC discovery document (openidmetadata.go's openIDMetadata), `jwksURI` naming where the JWKS is served. */
  openIDConfiguration(jwksURI: string): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: jwksURI,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
    };
  }
}

/** A list of strings as Go's %q prints a []string: `["a" "b"]`. */
function goQuote(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
}
