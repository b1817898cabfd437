/**
 * The bootstrap RBAC policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy): the
 * ClusterRoles and ClusterRoleBindings every cluster starts with, created at API server
 * start when missing (as kube-apiserver's auto-reconciliation adds missing ones; existing
 * objects are left as they are).
 *
 * - cluster-admin (everything) bound to the group system:masters;
 * - system:discovery, system:public-info-viewer, system:basic-user (discovery documents,
 *   health and version, and the self reviews behind `kubectl auth can-i`/`whoami`) bound to
 *   every authenticated user;
 * - system:node-bootstrapper: the node credential endpoint, bound to system:bootstrappers;
 * - system:service-account-issuer-discovery: the OIDC discovery documents, bound to the
 *   group system:serviceaccounts;
 * - system:auth-delegator (TokenReview and SubjectAccessReview, for servers that delegate
 *   authentication and authorization to this one), bound to no one, as upstream;
 * - the in-process controller manager and scheduler (users system:kube-controller-manager,
 *   system:kube-scheduler) bound to cluster-admin: they are trusted parts of the control
 *   process, and k8ts does not carry upstream's fine-grained controller roles.
 */
import { CA_CERTS_PATH, NODE_CREDENTIAL_PATH } from '../../../api/auth/node-credential.js';
import {
  KUBE_CONTROLLER_MANAGER,
  KUBE_SCHEDULER,
  SYSTEM_AUTHENTICATED,
  SYSTEM_BOOTSTRAPPERS,
  SYSTEM_MASTERS,
  SYSTEM_UNAUTHENTICATED,
} from '../../../api/auth/user.js';
import { SERVICE_ACCOUNTS_GROUP } from '../../../api/auth/serviceaccount.js';
import type { KubeObject } from '../../../api/object.js';

/** Paths anonymous requests may read (kube-apiserver's system:public-info-viewer). */
export const PUBLIC_PATHS = ['/healthz', '/livez', '/readyz', '/version', CA_CERTS_PATH] as const;

const RBAC = 'rbac.authorization.k8s.io';

function clusterRole(name: string, rules: Record<string, unknown>[]): KubeObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    rules,
  };
}

function clusterRoleBinding(
  name: string,
  role: string,
  subjects: { kind: 'User' | 'Group'; name: string }[],
): KubeObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
    subjects: subjects.map((s) => ({ apiGroup: RBAC, ...s })),
  };
}

/** The bootstrap ClusterRoles. */
export const BOOTSTRAP_CLUSTER_ROLES: readonly KubeObject[] = [
  clusterRole('cluster-admin', [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ]),
  clusterRole('system:discovery', [
    {
      nonResourceURLs: [
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
        '/healthz',
        '/livez',
        '/readyz',
        '/openapi',
        '/openapi/*',
        '/version',
        '/version/',
      ],
      verbs: ['get'],
    },
  ]),
  clusterRole('system:public-info-viewer', [
    {
      nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/', CA_CERTS_PATH],
      verbs: ['get'],
    },
  ]),
  clusterRole('system:basic-user', [
    {
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      verbs: ['create'],
    },
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:node-bootstrapper', [{ nonResourceURLs: [NODE_CREDENTIAL_PATH], verbs: ['post'] }]),
  clusterRole('system:auth-delegator', [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:service-account-issuer-discovery', [
    {
      nonResourceURLs: [
        '/.well-known/openid-configuration',
        '/.well-known/openid-configuration/',
        '/openid/v1/jwks',
        '/openid/v1/jwks/',
      ],
      verbs: ['get'],
    },
  ]),
];

/** The bootstrap ClusterRoleBindings. */
export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: readonly KubeObject[] = [
  clusterRoleBinding('cluster-admin', 'cluster-admin', [{ kind: 'Group', name: SYSTEM_MASTERS }]),
  clusterRoleBinding('system:discovery', 'system:discovery', [{ kind: 'Group', name: SYSTEM_AUTHENTICATED }]),
  clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', [
    { kind: 'Group', name: SYSTEM_AUTHENTICATED },
    { kind: 'Group', name: SYSTEM_UNAUTHENTICATED },
  ]),
  clusterRoleBinding('system:basic-user', 'system:basic-user', [
    { kind: 'Group', name: SYSTEM_AUTHENTICATED },
  ]),
  clusterRoleBinding('system:node-bootstrapper', 'system:node-bootstrapper', [
    { kind: 'Group', name: SYSTEM_BOOTSTRAPPERS },
  ]),
  clusterRoleBinding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', [
    { kind: 'Group', name: SERVICE_ACCOUNTS_GROUP },
  ]),
  clusterRoleBinding('k8ts:kube-controller-manager', 'cluster-admin', [
    { kind: 'User', name: KUBE_CONTROLLER_MANAGER },
  ]),
  clusterRoleBinding('k8ts:kube-scheduler', 'cluster-admin', [{ kind: 'User', name: KUBE_SCHEDULER }]),
];
