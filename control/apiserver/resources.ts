/**
 * The resources this API server serves: one table that discovery, OpenAPI, routing and
 * the registries all read, so they can never disagree. Names, short names, categories,
 * verbs and subresources are Kubernetes' own (as `kubectl api-resources` shows them
 * against a real cluster).
 */

import type { CustomResourceDefinition, CustomResourceDefinitionVersion } from './apiextensions/types.js';
import type { TablePrinter } from './tables/printer.js';

/** The verbs of discovery documents (RBAC verbs). */
export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

/** Subresources served under `<resource>/<name>/<subresource>`. */
export type Subresource =
  | 'status'
  | 'scale'
  | 'binding'
  | 'eviction'
  | 'log'
  | 'exec'
  | 'attach'
  | 'portforward'
  | 'finalize'
  | 'token';

export interface ResourceInfo {
  /** API group, '' for the core group. */
  group: string;
  version: string;
  /** Plural, lower case: the URL segment and the storage key segment. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly Verb[];
  subresources: readonly Subresource[];
  /**
   * The client-node model class name of the kind (the schema source for OpenAPI), e.g.
   * `V1Deployment`; '' for a custom resource, whose schema is its CRD's.
   */
  model: string;
  /** Set for a resource a CustomResourceDefinition defines (apiextensions/custom-resources.ts). */
  custom?: CustomResourceInfo;
  /** The `kubectl get` columns when they are not the kind's printer in tables/ (a CRD's additionalPrinterColumns). */
  printer?: TablePrinter;
}

/** What a custom resource's ResourceInfo carries of its CRD (one served version of it). */
export interface CustomResourceInfo {
  /** The CRD as last seen (shared: do not mutate). */
  readonly crd: CustomResourceDefinition;
  /** The served version this ResourceInfo is. */
  readonly version: CustomResourceDefinitionVersion;
  /** The CRD's storage version: objects are stored with `<group>/<storageVersion>`. */
  readonly storageVersion: string;
}

/** Finds a served resource by group, version and plural (built-in or custom). */
export type ResourceLookup = (group: string, version: string, resource: string) => ResourceInfo | undefined;

/** Every verb of a resource that serves the whole REST surface (built-in kinds and custom resources). */
export const ALL_VERBS: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

function res(
  group: string,
  version: string,
  kind: string,
  resource: string,
  namespaced: boolean,
  extra: Partial<Pick<ResourceInfo, 'shortNames' | 'categories' | 'verbs' | 'subresources' | 'model'>> = {},
): ResourceInfo {
  const prefix = version.charAt(0).toUpperCase() + version.slice(1);
  return {
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames: extra.shortNames ?? [],
    categories: extra.categories ?? [],
    verbs: extra.verbs ?? ALL_VERBS,
    subresources: extra.subresources ?? [],
    model: extra.model ?? `${prefix}${kind}`,
  };
}

/** Every resource served, in discovery order. */
export const RESOURCES: readonly ResourceInfo[] = [
  // core/v1
  res('', 'v1', 'Namespace', 'namespaces', false, {
    shortNames: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status', 'finalize'],
  }),
  res('', 'v1', 'Node', 'nodes', false, { shortNames: ['no'], subresources: ['status'] }),
  res('', 'v1', 'Pod', 'pods', true, {
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status', 'binding', 'eviction', 'log', 'exec', 'attach', 'portforward'],
  }),
  res('', 'v1', 'Service', 'services', true, {
    shortNames: ['svc'],
    categories: ['all'],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status'],
  }),
  res('', 'v1', 'Endpoints', 'endpoints', true, { shortNames: ['ep'] }),
  res('', 'v1', 'ConfigMap', 'configmaps', true, { shortNames: ['cm'] }),
  res('', 'v1', 'Secret', 'secrets', true),
  res('', 'v1', 'Event', 'events', true, { shortNames: ['ev'], model: 'CoreV1Event' }),
  // serviceaccounts/token: the TokenRequest API (token-request.ts).
  res('', 'v1', 'ServiceAccount', 'serviceaccounts', true, { shortNames: ['sa'], subresources: ['token'] }),
  // PersistentVolumeClaims and PersistentVolumes (strategies/persistentvolume*.ts); their
  // classes are storage.k8s.io StorageClasses, below.
  res('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, {
    shortNames: ['pvc'],
    subresources: ['status'],
  }),
  res('', 'v1', 'PersistentVolume', 'persistentvolumes', false, {
    shortNames: ['pv'],
    subresources: ['status'],
  }),
  // apps/v1
  // StatefulSet: control/controllers/statefulset.
  res('apps', 'v1', 'StatefulSet', 'statefulsets', true, {
    shortNames: ['sts'],
    categories: ['all'],
    subresources: ['status', 'scale'],
  }),
  res('apps', 'v1', 'Deployment', 'deployments', true, {
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: ['status', 'scale'],
  }),
  res('apps', 'v1', 'ReplicaSet', 'replicasets', true, {
    shortNames: ['rs'],
    categories: ['all'],
    subresources: ['status', 'scale'],
  }),
  // DaemonSet: control/controllers/daemon.
  res('apps', 'v1', 'DaemonSet', 'daemonsets', true, {
    shortNames: ['ds'],
    categories: ['all'],
    subresources: ['status'],
  }),
  // ControllerRevision: DaemonSet and StatefulSet history (control/controllers/daemon).
  res('apps', 'v1', 'ControllerRevision', 'controllerrevisions', true),
  // autoscaling/v2: HorizontalPodAutoscalers (strategies/horizontalpodautoscalers.ts).
  res('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, {
    shortNames: ['hpa'],
    categories: ['all'],
    subresources: ['status'],
  }),
  // autoscaling/v1: the same objects, converted (strategies/horizontalpodautoscalers-v1.ts).
  res('autoscaling', 'v1', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, {
    shortNames: ['hpa'],
    categories: ['all'],
    subresources: ['status'],
  }),
  // batch/v1
  res('batch', 'v1', 'CronJob', 'cronjobs', true, {
    shortNames: ['cj'],
    categories: ['all'],
    subresources: ['status'],
  }),
  res('batch', 'v1', 'Job', 'jobs', true, { categories: ['all'], subresources: ['status'] }),
  // coordination.k8s.io/v1
  res('coordination.k8s.io', 'v1', 'Lease', 'leases', true),
  // discovery.k8s.io/v1
  res('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', true),
  // events.k8s.io/v1
  res('events.k8s.io', 'v1', 'Event', 'events', true, { shortNames: ['ev'], model: 'EventsV1Event' }),
  // rbac.authorization.k8s.io/v1
  res('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
  res('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
  res('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true),
  res('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true),
  // policy/v1: PodDisruptionBudgets, which the Eviction API honours (eviction.ts,
  // control/controllers/disruption).
  res('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, {
    shortNames: ['pdb'],
    subresources: ['status'],
  }),
  // storage.k8s.io/v1: StorageClasses (strategies/storageclasses.ts); `local-path`, the
  // default, is created at start (control/main.ts).
  res('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false, { shortNames: ['sc'] }),
  // authorization.k8s.io/v1 and authentication.k8s.io/v1: create-only reviews, answered
  // and never stored (control/apiserver/auth/reviews.ts).
  res('authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, {
    verbs: ['create'],
  }),
  res('authorization.k8s.io', 'v1', 'SubjectAccessReview', 'subjectaccessreviews', false, {
    verbs: ['create'],
  }),
  res('authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, {
    verbs: ['create'],
  }),
  res('authentication.k8s.io', 'v1', 'SelfSubjectReview', 'selfsubjectreviews', false, { verbs: ['create'] }),
  res('authentication.k8s.io', 'v1', 'TokenReview', 'tokenreviews', false, { verbs: ['create'] }),
  // apiextensions.k8s.io/v1: CustomResourceDefinitions, whose resources are served
  // dynamically (apiextensions/).
  res('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, {
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    subresources: ['status'],
  }),
];

/** Resources answered by computing a review from the request's user, never stored. */
export function isReview(r: Pick<ResourceInfo, 'group' | 'resource'>): boolean {
  return (
    (r.group === 'authorization.k8s.io' &&
      (r.resource === 'selfsubjectaccessreviews' ||
        r.resource === 'subjectaccessreviews' ||
        r.resource === 'selfsubjectrulesreviews')) ||
    (r.group === 'authentication.k8s.io' &&
      (r.resource === 'selfsubjectreviews' || r.resource === 'tokenreviews'))
  );
}

/** `group/version`, or `version` alone for the core group (the `apiVersion` of objects). */
export function groupVersion(r: Pick<ResourceInfo, 'group' | 'version'>): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** The resource served at `group`/`version` named `resource` (plural), if any. */
export function findResource(group: string, version: string, resource: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.resource === resource);
}

/** The resource of an object's `apiVersion` and `kind`, if served. */
export function findKind(apiVersion: string, kind: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => groupVersion(r) === apiVersion && r.kind === kind);
}

/**
 * The storage key of an object, `/registry/<resource>/<namespace>/<name>` (cluster-scoped:
 * no namespace part), as DESIGN.md lays out the store.
 */
export function storageKey(r: ResourceInfo, namespace: string | undefined, name: string): string {
  return r.namespaced ? `${storagePrefix(r, namespace)}${name}` : `${storagePrefix(r)}${name}`;
}

/**
 * The key prefix of all objects of a resource (with `namespace`: of that namespace only);
 * ends with '/'. Resource names are unique across the served groups except `events`:
 * events.k8s.io Events are kept under `/registry/events.k8s.io/events/` (Kubernetes
 * serves both groups from one set of objects by conversion, which k8ts does not do yet).
 */
export function storagePrefix(r: ResourceInfo, namespace?: string): string {
  // Custom resources: `/registry/<group>/<plural>/`, as upstream keeps them (a CRD's group
  // has a dot, so it never meets a built-in resource name).
  const base = r.group === 'events.k8s.io' || r.custom ? `${r.group}/${r.resource}` : r.resource;
  return namespace === undefined ? `/registry/${base}/` : `/registry/${base}/${namespace}/`;
}
