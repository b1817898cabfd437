/**
 * What the Endpoints and the EndpointSlice controllers share (Kubernetes'
 * staging/src/k8s.io/endpointslice/util and its FindPort): which pods belong in a
 * Service's endpoints, how a Service port resolves against a pod's container ports, which
 * Services a pod event concerns (with a cache of parsed selectors), and the
 * `endpoints.kubernetes.io/last-change-trigger-time` bookkeeping.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiStatusError } from '../../api/client/errors.js';
import type { ResourceEventHandler } from '../../api/client/informer.js';
import { resources } from '../../api/client/resource.js';
import { deletedObject } from '../../api/client/informer.js';
import type { Lister } from '../../api/client/lister.js';
import { metaNamespaceKey } from '../../api/client/store.js';
import { labelSelectorFromSet } from '../../api/meta/labels.js';
import type { LabelSelector } from '../../api/meta/labels.js';
import { getCondition, isPodReady, isPodTerminal } from '../../api/podutil.js';
import type { RateLimitingQueue } from '../../api/workqueue/rateLimited.js';
import type { ObjectReference, Pod, Service, ServicePort } from '../../api/types.js';
import type { ControllerContext } from './context.js';

/** Label set on the Endpoints and EndpointSlices of a headless Service (v1.IsHeadlessService). */
export const LABEL_HEADLESS_SERVICE = 'service.kubernetes.io/headless';

/**
 * Annotation carrying the time of the earliest pod or Service change the object reflects
 * (v1.EndpointsLastChangeTriggerTime), RFC 3339 with fractional seconds.
 */
export const ANNOTATION_LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

/**
 * True for a headless Service (`clusterIP: None`). Kubernetes tests "no clusterIP set";
 * k8ts' API server does not allocate clusterIPs yet, so an unset clusterIP is not taken as
 * headless here (with an allocator the two rules agree).
 */
export function isHeadlessService(svc: Service): boolean {
  return svc.spec.clusterIP === 'None';
}

/**
 * True when the Service gets its endpoints from the endpoint controllers: it has a
 * non-empty selector and is not of type ExternalName (issue 105986). Endpoints of the
 * others are managed by users.
 */
export function isSelectorService(svc: Service): boolean {
  return svc.spec.type !== 'ExternalName' && Object.keys(svc.spec.selector ?? {}).length > 0;
}

/** True when a create failed because the namespace is being deleted (cause `NamespaceTerminating`): retrying is useless. */
export function isNamespaceTerminating(err: unknown): boolean {
  return (
    err instanceof ApiStatusError &&
    (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating')
  );
}

/** The protocol of a Service port, TCP when unset (the API server's default). */
export function servicePortProtocol(port: ServicePort): 'TCP' | 'UDP' | 'SCTP' {
  return port.protocol ?? 'TCP';
}

/**
 * The pod port a Service port sends to (Kubernetes' FindPort): a numeric targetPort as is;
 * a named one looked up among the container ports (and sidecar init containers' ports) of
 * the same protocol. An unset targetPort means the Service port number (the API server
 * defaults it so). Returns undefined when a named port is not found: the pod does not
 * serve that Service port.
 */
export function findPort(pod: Pod, servicePort: ServicePort): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  const protocol = servicePortProtocol(servicePort);
  const containers = [
    ...pod.spec.containers,
    ...(pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'),
  ];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
    }
  }
  return undefined;
}

/**
 * Whether a pod belongs in a Service's Endpoints or EndpointSlices
 * (ShouldPodBeInEndpoints): not terminal (Succeeded/Failed), has an IP, and — unless
 * `includeTerminating` — is not being deleted.
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  if (!pod.status?.podIP && (pod.status?.podIPs?.length ?? 0) === 0) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  return true;
}

/** The `targetRef` of a pod's address in Endpoints and EndpointSlices: kind Pod, namespace, name, uid. */
export function podReference(pod: Pod): ObjectReference {
  return {
    kind: 'Pod',
    namespace: pod.metadata.namespace!,
    name: pod.metadata.name!,
    uid: pod.metadata.uid!,
  };
}

/** Whether an address gets the pod's hostname: the pod's subdomain names this Service, in its namespace (ShouldSetHostname). */
export function shouldSetHostname(pod: Pod, svc: Service): boolean {
  return (
    !!pod.spec.hostname &&
    pod.spec.subdomain === svc.metadata.name &&
    pod.metadata.namespace === svc.metadata.namespace
  );
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The pod's IPv4 address: the first IPv4 entry of `status.podIPs`, else `status.podIP` if IPv4. */
export function podIPv4(pod: Pod): string | undefined {
  const ips = pod.status?.podIPs?.map((p) => p.ip) ?? [];
  if (ips.length === 0 && pod.status?.podIP) ips.push(pod.status.podIP);
  return ips.find((ip) => IPV4.test(ip));
}

/**
 * Parsed Service selectors by Service key, reparsed only when the selector changes
 * (the endpoint controllers' serviceSelectorCache): a pod event is matched against every
 * Service of its namespace, so parsing each selector each time would dominate.
 */
export class ServiceSelectorCache {
  private readonly cache = new Map<string, { raw: Record<string, string>; selector: LabelSelector }>();

  /** The Service's selector; undefined for a Service without one (it selects nothing). */
  selectorFor(svc: Service): LabelSelector | undefined {
    const raw = svc.spec.selector;
    const key = metaNamespaceKey(svc);
    // An empty selector is no selector: Kubernetes' API server drops an empty map when it
    // stores the Service, so `selector: {}` never reaches its controllers as "everything".
    if (!raw || Object.keys(raw).length === 0) {
      this.cache.delete(key);
      return undefined;
    }
    const hit = this.cache.get(key);
    if (hit && isDeepStrictEqual(hit.raw, raw)) return hit.selector;
    let selector: LabelSelector;
    try {
      selector = labelSelectorFromSet(raw);
    } catch {
      // The API server validates selectors; an invalid one selects nothing rather than everything.
      return undefined;
    }
    this.cache.set(key, { raw: { ...raw }, selector });
    return selector;
  }

  /** Forgets a deleted Service. */
  delete(key: string): void {
    this.cache.delete(key);
  }

  /** Keys of the Services in `services` whose selector matches `labels`. */
  matching(services: readonly Service[], labels: Readonly<Record<string, string>> | undefined): Set<string> {
    const keys = new Set<string>();
    for (const svc of services) {
      const sel = this.selectorFor(svc);
      if (sel && sel.matches(labels)) keys.add(metaNamespaceKey(svc));
    }
    return keys;
  }
}

/**
 * How a pod update matters to endpoints (podEndpointsChanged): `podChanged` when the
 * deletionTimestamp, readiness or IPs changed; `labelsChanged` when the labels or the
 * hostname/subdomain changed (which may change the Services it belongs to). Phase is
 * compared too, so a pod that turns terminal is dropped (Kubernetes relies on its IP or
 * readiness changing with it).
 */
export function podEndpointsChanged(
  oldPod: Pod,
  newPod: Pod,
): { podChanged: boolean; labelsChanged: boolean } {
  const labelsChanged =
    !isDeepStrictEqual(oldPod.metadata.labels ?? {}, newPod.metadata.labels ?? {}) ||
    oldPod.spec.hostname !== newPod.spec.hostname ||
    oldPod.spec.subdomain !== newPod.spec.subdomain;
  const ips = (p: Pod) => [p.status?.podIP ?? '', ...(p.status?.podIPs ?? []).map((x) => x.ip)];
  const podChanged =
    oldPod.metadata.deletionTimestamp !== newPod.metadata.deletionTimestamp ||
    isPodReady(oldPod) !== isPodReady(newPod) ||
    isPodTerminal(oldPod) !== isPodTerminal(newPod) ||
    oldPod.spec.nodeName !== newPod.spec.nodeName ||
    !isDeepStrictEqual(ips(oldPod), ips(newPod));
  return { podChanged, labelsChanged };
}

/** Options of podEventHandler(). */
export interface PodEventHandlerOptions {
  services: Lister<Service>;
  selectors: ServiceSelectorCache;
  /** Called with the key (`namespace/name`) of every Service the event concerns. */
  enqueue: (serviceKey: string) => void;
}

/**
 * The pod informer handler of both endpoint controllers: maps a pod event to the Services
 * whose endpoints it may change (GetPodServiceMemberships / GetServicesToUpdate). An add
 * or delete concerns the Services selecting the pod; an update that changed nothing
 * endpoint-related concerns none; one that changed labels concerns the old and the new
 * Services — all of them if the pod itself changed too, else only those gained or lost.
 */
export function podEventHandler(opts: PodEventHandlerOptions): ResourceEventHandler<Pod> {
  const { services, selectors, enqueue } = opts;
  const forLabels = (ns: string | undefined, labels: Record<string, string> | undefined) =>
    selectors.matching(services.namespace(ns ?? '').list(), labels);
  const enqueueAll = (keys: Iterable<string>) => {
    for (const k of keys) enqueue(k);
  };
  return {
    onAdd: (pod) => enqueueAll(forLabels(pod.metadata.namespace, pod.metadata.labels)),
    onUpdate: (oldPod, newPod) => {
      if (oldPod.metadata.resourceVersion === newPod.metadata.resourceVersion) return;
      const { podChanged, labelsChanged } = podEndpointsChanged(oldPod, newPod);
      if (!podChanged && !labelsChanged) return;
      const now = forLabels(newPod.metadata.namespace, newPod.metadata.labels);
      if (!labelsChanged) return enqueueAll(now);
      const before = forLabels(oldPod.metadata.namespace, oldPod.metadata.labels);
      if (podChanged) return enqueueAll(new Set([...now, ...before]));
      enqueueAll([...now].filter((k) => !before.has(k)));
      enqueueAll([...before].filter((k) => !now.has(k)));
    },
    onDelete: (obj) => {
      const pod = deletedObject(obj);
      enqueueAll(forLabels(pod.metadata.namespace, pod.metadata.labels));
    },
  };
}

/**
 * Computes the last-change trigger time of a Service's endpoints (Kubernetes'
 * TriggerTimeTracker): the earliest of the pod Ready-condition transitions and the Service
 * creation that changed since the previous sync of that Service. The first sync of a
 * Service reports its creationTimestamp. Call compute() once per sync, never for the same
 * Service concurrently (a workqueue key is never processed twice at once).
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, { serviceTime: number; podTimes: Map<string, number> }>();

  /**
   * The trigger time in ms since the epoch, or undefined when nothing changed since the
   * last call for this Service (the annotation is then removed).
   */
  compute(svc: Service, pods: readonly Pod[]): number | undefined {
    const key = metaNamespaceKey(svc);
    const state = this.states.get(key);
    let min: number | undefined;
    const podTimes = new Map<string, number>();
    for (const pod of pods) {
      const t = parseTime(getCondition(pod.status?.conditions, 'Ready')?.lastTransitionTime);
      if (t === undefined) continue;
      podTimes.set(pod.metadata.name!, t);
      if (t > (state?.podTimes.get(pod.metadata.name!) ?? -Infinity)) min = Math.min(min ?? t, t);
    }
    const serviceTime = parseTime(svc.metadata.creationTimestamp) ?? 0;
    if (state && serviceTime > state.serviceTime) min = Math.min(min ?? serviceTime, serviceTime);
    this.states.set(key, { serviceTime, podTimes });
    if (!state) return parseTime(svc.metadata.creationTimestamp);
    return min;
  }

  /** Forgets a deleted Service. */
  deleteService(key: string): void {
    this.states.delete(key);
  }
}

function parseTime(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/** A time as Go's RFC3339Nano prints it in UTC: fractional seconds only when non-zero, no trailing zeros. */
export function formatTriggerTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d*?)0*Z$/, (_, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

/** Options of watchServicesAndPods(). */
export interface ServiceAndPodWatchOptions {
  /** The controller's queue of Service keys (`namespace/name`). */
  queue: RateLimitingQueue<string>;
  /** The controller's selector cache: kept in step with Service events. */
  selectors: ServiceSelectorCache;
  /** How long pod-triggered syncs wait (--endpoint-updates-batch-period), ms. */
  batchPeriodMs: number;
}

/**
 * The Service and Pod half of both endpoint controllers' constructors (NewEndpointController
 * and the EndpointSlice controller's NewController register the same handlers): asks the
 * shared informers for Services and Pods, enqueues a Service's key on its add, update and
 * delete (refreshing or dropping its parsed selector), and a pod event's Services through
 * podEventHandler() after `batchPeriodMs`.
 * @returns the listers of the two informers.
 */
export function watchServicesAndPods(
  ctx: ControllerContext,
  opts: ServiceAndPodWatchOptions,
): { services: Lister<Service>; pods: Lister<Pod> } {
  const { queue, selectors, batchPeriodMs } = opts;
  const serviceInformer = ctx.informers.informerFor<Service>(resources.services);
  const podInformer = ctx.informers.informerFor<Pod>(resources.pods);
  const services = serviceInformer.lister();
  const onServiceUpdate = (svc: Service) => {
    selectors.selectorFor(svc);
    queue.add(metaNamespaceKey(svc));
  };
  serviceInformer.addEventHandler({
    onAdd: onServiceUpdate,
    onUpdate: (_, svc) => onServiceUpdate(svc),
    onDelete: (obj) => {
      const key = metaNamespaceKey(deletedObject(obj));
      selectors.delete(key);
      queue.add(key);
    },
  });
  podInformer.addEventHandler(
    podEventHandler({ services, selectors, enqueue: (key) => queue.addAfter(key, batchPeriodMs) }),
  );
  return { services, pods: podInformer.lister() };
}
