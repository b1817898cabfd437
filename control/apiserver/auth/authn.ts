/**
 * Authentication (k8s.io/apiserver/pkg/authentication): who a request is from.
 *
 * `Authenticator` is one function any handler can call — the REST handler, a websocket
 * upgrade, the node credential endpoint:
 *
 *     const user = await authenticate(req); // UserInfo | undefined (anonymous)
 *
 * Two methods, tried in order, as kube-apiserver's union authenticator:
 * - x509 client certificates verified against the client CA by the TLS handshake
 *   (CN = user name, each O = a group), or checked the same way when an in-process
 *   connection was opened with one (../in-process.ts);
 * - bearer tokens: bootstrap tokens `<id>.<secret>` (or a whole join token
 *   `K10<hash>::<id>.<secret>`) looked up in their kube-system Secret; service account
 *   tokens, JWTs of this server's issuer (serviceaccount-token.ts).
 * Every authenticated user gets the group `system:authenticated`. A bearer token that
 * none of them accepts makes the request anonymous; the filter then answers a bare 401
 * Unauthorized, never saying why (handlers/filters.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { KubeObject } from '../../../api/object.js';
import { BOOTSTRAP_TOKEN_PATTERN, BOOTSTRAP_TOKEN_SECRET_PREFIX } from '../../../api/auth/bootstrap-token.js';
import { authenticateBootstrapToken } from './bootstrap-token.js';
import { SYSTEM_AUTHENTICATED, type UserInfo } from '../../../api/auth/user.js';
import type { ServiceAccountTokens, TokenAuthResult } from './serviceaccount-token.js';

/** Resolves with the request's user, or undefined when it carries no valid credential. */
export type Authenticator = (req: IncomingMessage) => Promise<UserInfo | undefined>;

/** The user of a connection's client certificate: its name, groups and the certificate's end (ms). */
export interface CertificateUser {
  readonly user: UserInfo;
  readonly notAfterMs: number;
}

/**
 * A connection's certificate user, read once: for a TLS socket on its first request; for
 * an in-process connection (../in-process.ts) bound when it is made.
 */
const certUsers = new WeakMap<object, CertificateUser | null>();

/**
 * The user of a verified TLS client certificate: `authorized` (node:tls checked the chain
 * against the server's client CA at the handshake), CN the name, O values the groups; none
 * once the certificate has expired, as kube-apiserver's x509 authenticator verifies it on
 * every request. The certificate is parsed once per connection (getPeerCertificate builds
 * a new object each call: 4 % of the control process in bench:scale). An in-process
 * connection's is the one bindCertificateUser gave it, with the same expiry check.
 */
export function x509User(req: IncomingMessage, now: () => Date = () => new Date()): UserInfo | undefined {
  const socket = req.socket;
  let known = certUsers.get(socket);
  if (known === undefined) {
    if (!(socket instanceof TLSSocket) || !socket.authorized) return undefined;
    known = certUserOf(socket);
    certUsers.set(socket, known);
  }
  if (!known || now().getTime() > known.notAfterMs) return undefined;
  return { name: known.user.name, groups: [...known.user.groups] };
}

/**
 * The user a client certificate names: CN `name`, the O values `organizations` its groups,
 * with system:authenticated; `notAfterMs` its end (NaN: already expired).
 */
export function certificateUser(
  name: string,
  organizations: readonly string[],
  notAfterMs: number,
): CertificateUser {
  return {
    user: {
      name,
      groups: [...organizations.filter((g) => g !== SYSTEM_AUTHENTICATED), SYSTEM_AUTHENTICATED],
    },
    notAfterMs: Number.isNaN(notAfterMs) ? 0 : notAfterMs,
  };
}

/**
 * Gives the server end of an in-process connection the user of the certificate it was
 * opened with, checked by the caller as a TLS handshake checks one (../in-process.ts).
 */
export function bindCertificateUser(socket: Duplex, user: CertificateUser): void {
  certUsers.set(socket, user);
}

function certUserOf(socket: TLSSocket): CertificateUser | null {
  const cert = socket.getPeerCertificate();
  if (!cert || !cert.subject) return null;
  const name = cert.subject.CN;
  if (typeof name !== 'string' || name === '') return null;
  const o = cert.subject.O as string | string[] | undefined;
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return certificateUser(name, groups, Date.parse(cert.valid_to));
}

/** The bearer token of a request's Authorization header, if any. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

/** Options of createAuthenticator(). */
export interface AuthenticatorOptions {
  /** Reads a kube-system Secret by name (undefined when missing). */
  getSecret: (name: string) => Promise<KubeObject | undefined>;
  /** Service account tokens (undefined: none are accepted). */
  serviceAccountTokens?: ServiceAccountTokens;
  now?: () => Date;
}

/** The union authenticator: x509 client certificate, then bearer tokens (authenticateToken). */
export function createAuthenticator(opts: AuthenticatorOptions): Authenticator {
  return async (req) => {
    const certUser = x509User(req, opts.now);
    if (certUser) return certUser;
    const raw = bearerToken(req);
    if (raw === undefined) return undefined;
    const result = await authenticateToken(opts, raw, undefined);
    return result && 'user' in result ? result.user : undefined;
  };
}

/**
 * Who a bearer token is, for `audiences` (undefined: the API audiences): a bootstrap token
 * or a service account token (TokenReview asks this too). Bootstrap tokens are not bound
 * to audiences; as upstream's WrapAudienceAgnosticToken, they answer for the API audiences
 * only.
 */
export async function authenticateToken(
  opts: AuthenticatorOptions,
  raw: string,
  audiences: string[] | undefined,
): Promise<TokenAuthResult> {
  const sa = opts.serviceAccountTokens;
  const apiAudiences = sa?.audiences ?? [];
  // A whole join token works too (what `k8ts agent --token` is given).
  const token = raw.includes('::') ? raw.slice(raw.lastIndexOf('::') + 2) : raw;
  const m = BOOTSTRAP_TOKEN_PATTERN.exec(token);
  if (m) {
    const common =
      audiences === undefined ? [...apiAudiences] : audiences.filter((a) => apiAudiences.includes(a));
    if (audiences !== undefined && common.length === 0) return { error: 'token audiences are invalid' };
    const secret = await opts.getSecret(`${BOOTSTRAP_TOKEN_SECRET_PREFIX}${m[1]!}`);
    const user = authenticateBootstrapToken(secret, m[1]!, m[2]!, opts.now?.() ?? new Date());
    return user ? { user, audiences: common } : { error: 'invalid bearer token' };
  }
  const result = await sa?.authenticate(raw, audiences);
  return result ?? { error: 'invalid bearer token' };
}
