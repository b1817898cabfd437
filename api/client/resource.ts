/**
 * Which resource a request or an informer is about: client-go's GroupVersionResource plus
 * the two facts a client needs to build URLs and keys (is it namespaced, what kind are its
 * objects). The API server's own table (control/apiserver/resources.ts) is the source of
 * truth; `api/` may not import `control/` at run time, so the refs the controllers and the
 * agent use are repeated here, and a test checks that both tables agree.
 */

/** One resource of the API, e.g. `{ group: 'apps', version: 'v1', resource: 'deployments', ... }`. */
export interface ResourceRef {
  /** API group, '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural, lower case: the URL segment (`pods`, `replicasets`). */
  readonly resource: string;
  readonly namespaced: boolean;
  /** Kind of its objects (`Pod`); informers use it to fill `kind` when a list item lacks it. */
  readonly kind: string;
}

function ref(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
): ResourceRef {
  return Object.freeze({ group, version, resource, kind, namespaced });
}

/** The resources k8ts serves that its own components read and write. */
export const resources = {
  namespaces: ref('', 'v1', 'namespaces', 'Namespace', false),
  nodes: ref('', 'v1', 'nodes', 'Node', false),
  pods: ref('', 'v1', 'pods', 'Pod', true),
  services: ref('', 'v1', 'services', 'Service', true),
  endpoints: ref('', 'v1', 'endpoints', 'Endpoints', true),
  configmaps: ref('', 'v1', 'configmaps', 'ConfigMap', true),
  secrets: ref('', 'v1', 'secrets', 'Secret', true),
  events: ref('', 'v1', 'events', 'Event', true),
  serviceaccounts: ref('', 'v1', 'serviceaccounts', 'ServiceAccount', true),
  persistentvolumeclaims: ref('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true),
  persistentvolumes: ref('', 'v1', 'persistentvolumes', 'PersistentVolume', false),
  statefulsets: ref('apps', 'v1', 'statefulsets', 'StatefulSet', true),
  deployments: ref('apps', 'v1', 'deployments', 'Deployment', true),
  replicasets: ref('apps', 'v1', 'replicasets', 'ReplicaSet', true),
  daemonsets: ref('apps', 'v1', 'daemonsets', 'DaemonSet', true),
  controllerrevisions: ref('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true),
  horizontalpodautoscalers: ref(
    'autoscaling',
    'v2',
    'horizontalpodautoscalers',
    'HorizontalPodAutoscaler',
    true,
  ),
  jobs: ref('batch', 'v1', 'jobs', 'Job', true),
  cronjobs: ref('batch', 'v1', 'cronjobs', 'CronJob', true),
  leases: ref('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  endpointslices: ref('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  poddisruptionbudgets: ref('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true),
  storageclasses: ref('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false),
} as const satisfies Record<string, ResourceRef>;

/** `group/version`, or `version` alone for the core group: the `apiVersion` of the resource's objects. */
export function apiVersionOf(r: Pick<ResourceRef, 'group' | 'version'>): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/**
 * The URL path of a resource, a collection or one object (and a subresource of it):
 * `/api/v1/namespaces/ns/pods/name/status`, `/apis/apps/v1/deployments` (all namespaces).
 * Path segments are URL-encoded. `namespace` is ignored for cluster-scoped resources;
 * for namespaced ones, leaving it out addresses all namespaces (valid only for list and
 * watch).
 * @throws Error when `subresource` is given without `name`.
 */
export function resourcePath(
  r: ResourceRef,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  if (subresource !== undefined && name === undefined)
    throw new Error(`subresource ${subresource} needs an object name`);
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name !== undefined ? `/${encodeURIComponent(name)}` : '';
  const sub = subresource !== undefined ? `/${encodeURIComponent(subresource)}` : '';
  return `${base}${ns}/${r.resource}${obj}${sub}`;
}
