/**
 * The filters in front of every handler: steps 1 and 2 of the chain (index.ts), as
 * kube-apiserver's endpoints/filters WithAuthentication, WithImpersonation and
 * WithAuthorization.
 *
 *   authenticateRequest  credentials → user (auth/authn.ts), then impersonation headers;
 *                        anonymous only on PUBLIC_PATHS, else 401
 *   authorizeRequest     the request's attributes → the authorizer chain (system:masters,
 *                        Node, RBAC); 403 unless one allows
 *
 * Without `security` (in-process tests, `k8ts server --insecure-http`) every request is
 * INSECURE_USER, an admin, and nothing is asked, as kube-apiserver's old insecure port.
 */
import type { IncomingMessage } from 'node:http';
import type { Authenticator } from '../auth/authn.js';
import { forbidden, unauthorized, type Attributes, type Authorizer } from '../auth/authz.js';
import { PUBLIC_PATHS } from '../auth/policy.js';
import {
  ADMIN_USER,
  SYSTEM_ANONYMOUS,
  SYSTEM_MASTERS,
  SYSTEM_UNAUTHENTICATED,
  type UserInfo,
} from '../../../api/auth/user.js';
import type { ResourceRequest } from '../request.js';
import { badRequest } from '../status.js';

/** The user of every request when the server runs without `security`. */
export const INSECURE_USER: UserInfo = { name: ADMIN_USER, groups: [SYSTEM_MASTERS, 'system:authenticated'] };
const ANONYMOUS_USER: UserInfo = { name: SYSTEM_ANONYMOUS, groups: [SYSTEM_UNAUTHENTICATED] };

/** What the filters use; one per server. */
export interface FilterConfig {
  /** Whether the server runs with `security`; false: everyone is INSECURE_USER and allowed. */
  readonly secure: boolean;
  readonly authenticate: Authenticator;
  readonly authorizer: Authorizer;
}

/**
 * The request's user: authenticated (then impersonated, when it asks and may), anonymous
 * on PUBLIC_PATHS, INSECURE_USER without `security`.
 * @throws ApiError 401 for a request without valid credentials elsewhere; 403 or 400 from
 *   impersonation.
 */
export async function authenticateRequest(
  cfg: FilterConfig,
  req: IncomingMessage,
  url: URL,
): Promise<UserInfo> {
  if (!cfg.secure) return INSECURE_USER;
  const user = await cfg.authenticate(req);
  if (user) return impersonate(cfg.authorizer, req, user);
  if ((PUBLIC_PATHS as readonly string[]).includes(url.pathname)) return ANONYMOUS_USER;
  throw unauthorized();
}

/**
 * User impersonation (`kubectl --as USER --as-group GROUP`): the `Impersonate-User` and
 * `Impersonate-Group` headers replace the user when it may `impersonate` that user and
 * each group (resources `users`, `groups` of the core group), as kube-apiserver's
 * impersonation filter.
 * @throws ApiError 403 when it may not; 400 for groups without a user.
 */
async function impersonate(authorizer: Authorizer, req: IncomingMessage, user: UserInfo): Promise<UserInfo> {
  const as = req.headers['impersonate-user'];
  const rawGroups = req.headers['impersonate-group'];
  const groups = (Array.isArray(rawGroups) ? rawGroups : rawGroups ? [rawGroups] : []).flatMap((g) =>
    g.split(',').map((x) => x.trim()),
  );
  if (as === undefined) {
    if (groups.length > 0) throw badRequest('requested group impersonation without user impersonation');
    return user;
  }
  const name = Array.isArray(as) ? as[0]! : as;
  for (const [resource, target] of [['users', name] as const, ...groups.map((g) => ['groups', g] as const)]) {
    const attrs: Attributes = {
      user,
      verb: 'impersonate',
      resourceRequest: true,
      group: '',
      resource,
      name: target,
    };
    const d = await authorizer.authorize(attrs);
    if (d.decision !== 'allow') throw forbidden(attrs, d.reason);
  }
  return { name, groups: [...groups.filter((g) => g !== 'system:authenticated'), 'system:authenticated'] };
}

/**
 * Authorizes a request of `user`: a resource request (`rr`) by its verb, resource,
 * subresource, namespace and name; any other by its lower-cased method (HEAD as get) and
 * path. A GET of PUBLIC_PATHS is allowed to everyone, whatever RBAC says.
 * @throws ApiError 403 Forbidden when no authorizer allows it.
 */
export async function authorizeRequest(
  cfg: FilterConfig,
  req: IncomingMessage,
  url: URL,
  rr: ResourceRequest | undefined,
  user: UserInfo,
): Promise<void> {
  if (!cfg.secure) return;
  const method = (req.method ?? 'GET').toLowerCase();
  const attrs: Attributes = rr
    ? {
        user,
        verb: rr.verb,
        resourceRequest: true,
        group: rr.resource.group,
        version: rr.resource.version,
        resource: rr.resource.resource,
        ...(rr.subresource ? { subresource: rr.subresource } : {}),
        ...(rr.namespace !== undefined ? { namespace: rr.namespace } : {}),
        ...(rr.name !== undefined ? { name: rr.name } : {}),
      }
    : { user, verb: method === 'head' ? 'get' : method, resourceRequest: false, path: url.pathname };
  // Public paths are public to everyone, whatever RBAC says.
  if (!rr && (PUBLIC_PATHS as readonly string[]).includes(url.pathname) && attrs.verb === 'get') return;
  await checkAccess(cfg, attrs);
}

/**
 * Asks the authorizer chain about `attrs` (nothing to ask without `security`).
 * @throws ApiError 403 Forbidden in Kubernetes' wording when it does not allow.
 */
export async function checkAccess(cfg: FilterConfig, attrs: Attributes): Promise<void> {
  if (!cfg.secure) return;
  const d = await cfg.authorizer.authorize(attrs);
  if (d.decision !== 'allow') throw forbidden(attrs, d.reason);
}
