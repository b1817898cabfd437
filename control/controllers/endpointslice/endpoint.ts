/**
 * EndpointSlice building blocks (Kubernetes' staging/src/k8s.io/endpointslice/utils.go):
 * a pod's Endpoint and ports for a Service, the keys that identify an endpoint and a port
 * set, the labels and owner of the controller's slices. Pure functions.
 */
import { isDeepStrictEqual } from 'node:util';
import { controllerRef, isPodReady } from '../../../api/podutil.js';
import type { Endpoint, EndpointPort, EndpointSlice, Node, Pod, Service } from '../../../api/types.js';
import {
  findPort,
  isHeadlessService,
  LABEL_HEADLESS_SERVICE,
  podIPv4,
  podReference,
  servicePortProtocol,
  shouldSetHostname,
} from '../endpoints-common.js';

/** Label naming the Service of a slice (discovery.LabelServiceName). */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** Label naming the controller that manages a slice (discovery.LabelManagedBy). */
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
/** This controller's value of LABEL_MANAGED_BY. */
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** --max-endpoints-per-slice default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;
/** Node label giving the zone an endpoint reports (v1.LabelTopologyZone). */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

/**
 * The Endpoint of a pod for a Service (podToEndpoint): its IPv4 address; conditions
 * `serving` = the pod is Ready, `terminating` = it has a deletionTimestamp, `ready` =
 * serving and not terminating — or always true with publishNotReadyAddresses; nodeName,
 * zone (from the node's topology.kubernetes.io/zone label), hostname (when the pod's
 * subdomain names the Service), targetRef to the pod. Undefined for a pod without IPv4.
 */
export function podToEndpoint(pod: Pod, node: Node | undefined, svc: Service): Endpoint | undefined {
  const ip = podIPv4(pod);
  if (!ip) return undefined;
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  const ready = svc.spec.publishNotReadyAddresses === true || (serving && !terminating);
  const ep: Endpoint = { addresses: [ip], conditions: { ready, serving, terminating } };
  if (shouldSetHostname(pod, svc)) ep.hostname = pod.spec.hostname!;
  if (pod.spec.nodeName) ep.nodeName = pod.spec.nodeName;
  const zone = node?.metadata.labels?.[LABEL_TOPOLOGY_ZONE];
  if (zone) ep.zone = zone;
  ep.targetRef = podReference(pod);
  return ep;
}

/**
 * The ports a pod serves for a Service (getEndpointPorts): each Service port whose target
 * resolves on this pod, named as the Service port ('' when unnamed). A headless Service
 * without ports gives none.
 */
export function endpointPorts(svc: Service, pod: Pod): EndpointPort[] {
  const out: EndpointPort[] = [];
  for (const sp of svc.spec.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    const ep: EndpointPort = { name: sp.name ?? '', port, protocol: servicePortProtocol(sp) };
    if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
    out.push(ep);
  }
  return out;
}

function portText(p: EndpointPort): string {
  return JSON.stringify([p.name ?? '', p.port ?? null, p.protocol ?? 'TCP', p.appProtocol ?? '']);
}

/** A key equal for equal port sets, whatever their order (NewPortMapKey). */
export function portMapKey(ports: readonly EndpointPort[] | undefined | null): string {
  return (ports ?? []).map(portText).sort().join('|');
}

/** The identity of an endpoint within a port set (hashEndpoint): addresses, hostname, pod namespace/name. */
export function endpointKey(ep: Endpoint): string {
  return JSON.stringify([
    [...ep.addresses].sort(),
    ep.hostname ?? '',
    ep.targetRef?.namespace ?? '',
    ep.targetRef?.name ?? '',
  ]);
}

/**
 * True when two endpoints with the same key also agree on everything else
 * (EndpointsEqualBeyondHash): nodeName, zone, the three conditions, and the targetRef
 * apart from its resourceVersion.
 */
export function endpointsEqualBeyondKey(a: Endpoint, b: Endpoint): boolean {
  const ref = (e: Endpoint) => {
    if (!e.targetRef) return undefined;
    const { resourceVersion: _rv, ...rest } = e.targetRef;
    return rest;
  };
  return (
    (a.nodeName ?? undefined) === (b.nodeName ?? undefined) &&
    (a.zone ?? undefined) === (b.zone ?? undefined) &&
    a.conditions?.ready === b.conditions?.ready &&
    a.conditions?.serving === b.conditions?.serving &&
    a.conditions?.terminating === b.conditions?.terminating &&
    isDeepStrictEqual(ref(a), ref(b))
  );
}

const RESERVED_LABELS = new Set([LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS_SERVICE]);

/**
 * The labels a slice of `svc` must carry (setEndpointSliceLabels): the Service's labels
 * (reserved keys excluded), the headless label for a headless Service, the Service name
 * and this controller's managed-by. `changed` tells whether the slice's non-reserved labels
 * differ from the Service's.
 */
export function sliceLabels(
  current: Readonly<Record<string, string>> | undefined,
  svc: Service,
): { labels: Record<string, string>; changed: boolean } {
  const own = (m: Readonly<Record<string, string>> | undefined) =>
    Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !RESERVED_LABELS.has(k)));
  const labels = own(svc.metadata.labels);
  const changed = !isDeepStrictEqual(own(current), labels);
  if (isHeadlessService(svc)) labels[LABEL_HEADLESS_SERVICE] = '';
  labels[LABEL_SERVICE_NAME] = svc.metadata.name!;
  labels[LABEL_MANAGED_BY] = CONTROLLER_NAME;
  return { labels, changed };
}

/** A new, empty IPv4 slice of `svc` for `ports` (newEndpointSlice): generateName `<service>-`, controller ownerReference. */
export function newEndpointSlice(svc: Service, ports: EndpointPort[]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${svc.metadata.name}-`,
      namespace: svc.metadata.namespace!,
      labels: sliceLabels(undefined, svc).labels,
      ownerReferences: [controllerRef({ ...svc, apiVersion: 'v1', kind: 'Service' })],
    },
    addressType: 'IPv4',
    endpoints: [],
    ports,
  };
}

/** True when `slice` has an ownerReference to this very Service (same uid), as ownedBy. */
export function ownedBy(slice: EndpointSlice, svc: Service): boolean {
  return (slice.metadata.ownerReferences ?? []).some(
    (o) => o.uid === svc.metadata.uid && o.kind === 'Service' && o.apiVersion === 'v1',
  );
}
