/**
 * Authorization (k8s.io/apiserver/pkg/authorization): request attributes, decisions, the
 * union of authorizers, and the Forbidden status in Kubernetes' wording.
 *
 * The chain k8ts runs, as kube-apiserver's `--authorization-mode=Node,RBAC` plus its
 * privileged-group authorizer: `system:masters` → allow; Node authorizer (node identities)
 * → RBAC.
 */
import { ApiError } from '../status.js';
import { SYSTEM_MASTERS, type UserInfo } from '../../../api/auth/user.js';

/** What is asked (authorizer.Attributes). Resource requests carry group..name; others a path. */
export interface Attributes {
  user: UserInfo;
  /** RBAC verb: get, list, watch, create, update, patch, delete, deletecollection; for paths the lower-case HTTP method (get, post, put, ...). */
  verb: string;
  resourceRequest: boolean;
  /** Non-resource requests: the URL path. */
  path?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** allow / deny (stop) / noOpinion (ask the next authorizer), with a reason for the message. */
export type Decision = { decision: 'allow' | 'deny' | 'noOpinion'; reason?: string };

export interface Authorizer {
  authorize(a: Attributes): Promise<Decision>;
}

export const ALLOW: Decision = { decision: 'allow' };
export const NO_OPINION: Decision = { decision: 'noOpinion' };

/** Members of `system:masters` may do everything (kube-apiserver's privileged group authorizer). */
export const privilegedGroupAuthorizer: Authorizer = {
  authorize: (a) => Promise.resolve(a.user.groups.includes(SYSTEM_MASTERS) ? ALLOW : NO_OPINION),
};

/** Asks each authorizer in turn; the first allow or deny wins; all noOpinion = deny (with their reasons). */
export function unionAuthorizer(...authorizers: Authorizer[]): Authorizer {
  return {
    async authorize(a) {
      const reasons: string[] = [];
      for (const z of authorizers) {
        const d = await z.authorize(a);
        if (d.decision !== 'noOpinion') return d;
        if (d.reason) reasons.push(d.reason);
      }
      return { decision: 'noOpinion', ...(reasons.length ? { reason: reasons.join(', ') } : {}) };
    },
  };
}

/**
 * The 403 of a refused request, worded as kube-apiserver's responsewriters.Forbidden:
 * `pods "web" is forbidden: User "alice" cannot get resource "pods" in API group "" in
 * the namespace "default"` (`at the cluster scope` for cluster-scoped requests; `User
 * "alice" cannot get path "/metrics"` for non-resource requests), then `: <reason>` when
 * the authorizer gave one.
 */
export function forbidden(a: Attributes, reason?: string): ApiError {
  let msg: string;
  const user = a.user.name;
  if (!a.resourceRequest) {
    msg = `forbidden: User "${user}" cannot ${a.verb} path "${a.path ?? ''}"`;
  } else {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : (a.resource ?? '');
    const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
    const why = `User "${user}" cannot ${a.verb} resource "${resource}" in API group "${a.group ?? ''}" ${scope}`;
    const qualified = a.group ? `${a.resource}.${a.group}` : (a.resource ?? '');
    msg = a.name ? `${qualified} "${a.name}" is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  }
  if (reason) msg += `: ${reason}`;
  return new ApiError(403, 'Forbidden', msg, {
    ...(a.name !== undefined ? { name: a.name } : {}),
    ...(a.group ? { group: a.group } : {}),
    ...(a.resource !== undefined ? { kind: a.resource } : {}),
  });
}

/** The 401 of a request without valid credentials (kube-apiserver's Unauthorized). */
export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}
