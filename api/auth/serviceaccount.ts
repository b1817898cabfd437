/**
 * The names a ServiceAccount authenticates with (k8s.io/apiserver/pkg/authentication/serviceaccount):
 * the user `system:serviceaccount:<namespace>:<name>`, its groups, and the extra keys a
 * pod-bound token adds. Shared by the API server (which issues and accepts the tokens) and
 * whatever else names service accounts (RBAC subjects, the kubelet).
 */

/** The user name prefix of service accounts (ServiceAccountUsernamePrefix). */
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
/** The group of every service account (AllServiceAccountsGroup). */
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

/** `user.Info` extra keys of a token bound to a pod (and the node it runs on), and its JTI. */
export const EXTRA_POD_NAME = 'authentication.kubernetes.io/pod-name';
export const EXTRA_POD_UID = 'authentication.kubernetes.io/pod-uid';
export const EXTRA_NODE_NAME = 'authentication.kubernetes.io/node-name';
export const EXTRA_NODE_UID = 'authentication.kubernetes.io/node-uid';
export const EXTRA_CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

/** `system:serviceaccount:<namespace>:<name>` (MakeUsername). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

/** The groups of a service account of `namespace`: `system:serviceaccounts` and `system:serviceaccounts:<namespace>` (MakeGroupNames). */
export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`];
}

/**
 * The namespace and name of a service account user name (SplitUsername), or undefined
 * when `username` is not one (wrong prefix, a part empty or containing ':').
 */
export function splitServiceAccountUsername(
  username: string,
): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USER_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USER_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return { namespace: parts[0]!, name: parts[1]! };
}
