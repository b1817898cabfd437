/**
 * Who a request is from (Kubernetes' user.Info) and the well-known names of users and
 * groups (k8s.io/apiserver/pkg/authentication/user and the bootstrap token constants).
 */

/** An authenticated user: name, groups (always including system:authenticated), optional uid. */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  /** Extra attributes (e.g. the bootstrap token's id), as user.Info's Extra. */
  extra?: Record<string, string[]>;
}

export const SYSTEM_MASTERS = 'system:masters';
export const SYSTEM_AUTHENTICATED = 'system:authenticated';
export const SYSTEM_UNAUTHENTICATED = 'system:unauthenticated';
export const SYSTEM_ANONYMOUS = 'system:anonymous';
export const SYSTEM_NODES = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';
export const SYSTEM_BOOTSTRAPPERS = 'system:bootstrappers';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const KUBE_SCHEDULER = 'system:kube-scheduler';
export const KUBE_CONTROLLER_MANAGER = 'system:kube-controller-manager';
export const ADMIN_USER = 'system:admin';

/**
 * The node name of a node identity (`system:node:<name>` in group `system:nodes`), as the
 * Node authorizer's NodeIdentifier; undefined for every other user.
 */
export function nodeNameOf(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX) || !user.groups.includes(SYSTEM_NODES)) return undefined;
  const name = user.name.slice(NODE_USER_PREFIX.length);
  return name === '' ? undefined : name;
}
