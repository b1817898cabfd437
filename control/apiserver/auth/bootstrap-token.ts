/**
 * The bootstrap token authenticator (plugin/pkg/auth/authenticator/token/bootstrap): who
 * a bootstrap token `<id>.<secret>` is, read from its kube-system Secret. The token's
 * format and its Secret's layout are in api/auth/bootstrap-token.ts.
 */
import { timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '../../../api/object.js';
import {
  BOOTSTRAP_TOKEN_SECRET_PREFIX,
  BOOTSTRAP_TOKEN_SECRET_TYPE,
  secretStrings,
} from '../../../api/auth/bootstrap-token.js';
import {
  BOOTSTRAP_USER_PREFIX,
  SYSTEM_AUTHENTICATED,
  SYSTEM_BOOTSTRAPPERS,
  type UserInfo,
} from '../../../api/auth/user.js';

/**
 * The user a bootstrap token authenticates as, given its Secret (Kubernetes'
 * bootstrap token authenticator): the Secret must have the right type and name, the
 * matching secret (compared in constant time), `usage-bootstrap-authentication: true`, no
 * past `expiration`, and must not be being deleted. Extra groups must start with
 * `system:bootstrappers:`.
 * @returns undefined when the token does not authenticate.
 */
export function authenticateBootstrapToken(
  secret: KubeObject | undefined,
  id: string,
  tokenSecret: string,
  now = new Date(),
): UserInfo | undefined {
  if (!secret || secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return undefined;
  if (secret.metadata?.name !== `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`) return undefined;
  if (secret.metadata?.deletionTimestamp) return undefined;
  const d = secretStrings(secret);
  if (d['token-id'] !== id) return undefined;
  const want = Buffer.from(d['token-secret'] ?? '');
  const got = Buffer.from(tokenSecret);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
  if (d['usage-bootstrap-authentication'] !== 'true') return undefined;
  if (d.expiration !== undefined) {
    const exp = Date.parse(d.expiration);
    if (Number.isNaN(exp) || exp <= now.getTime()) return undefined;
  }
  const extra = (d['auth-extra-groups'] ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g.startsWith(`${SYSTEM_BOOTSTRAPPERS}:`));
  return {
    name: `${BOOTSTRAP_USER_PREFIX}${id}`,
    groups: [SYSTEM_BOOTSTRAPPERS, ...extra, SYSTEM_AUTHENTICATED],
  };
}
