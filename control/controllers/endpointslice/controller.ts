/**
 * The EndpointSlice controller (Kubernetes' pkg/controller/endpointslice): keeps, for
 * every Service with a selector, EndpointSlices (labelled `kubernetes.io/service-name`
 * and `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`, owned by
 * the Service) listing the matching pods as endpoints with ready/serving/terminating
 * conditions, at most 100 per slice. Terminating pods stay listed (ready false,
 * terminating true) so that proxies can drain them. Slices managed by anyone else are
 * never touched.
 *
 * Handlers only enqueue Service keys: Service events directly; pod events through the
 * Services whose selectors match the pod, after the batch period; slice events only when
 * they are not the echo of this controller's own write (EndpointSliceTracker), after at
 * least 1 s. reconcile(key) plans the writes with planSlices() over the informer caches.
 */
import { isNotFound } from '../../../api/client/errors.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { splitMetaNamespaceKey } from '../../../api/client/store.js';
import { labelSelectorFromSet } from '../../../api/meta/labels.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { EndpointSlice, Node, Pod, Service } from '../../../api/types.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import {
  ANNOTATION_LAST_CHANGE_TRIGGER_TIME,
  formatTriggerTime,
  isNamespaceTerminating,
  isSelectorService,
  ServiceSelectorCache,
  shouldPodBeInEndpoints,
  TriggerTimeTracker,
  watchServicesAndPods,
} from '../endpoints-common.js';
import { runQueue } from '../run.js';
import {
  CONTROLLER_NAME,
  endpointPorts,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MAX_ENDPOINTS_PER_SLICE,
  podToEndpoint,
} from './endpoint.js';
import { addDesired, planSlices } from './reconciler.js';
import type { DesiredPortSet } from './reconciler.js';
import { EndpointSliceTracker } from './tracker.js';

/**
 * Least delay before a Service is synced because one of its slices changed
 * (endpointSliceChangeMinSyncDelay): gives the cache time to catch up with a burst.
 */
export const SLICE_CHANGE_MIN_SYNC_DELAY_MS = 1000;

/** Options of an EndpointSliceController beyond the shared context. */
export interface EndpointSliceControllerOptions {
  /** --endpoint-updates-batch-period for pod-triggered syncs, ms; default 0 (see EndpointsControllerOptions). */
  batchPeriodMs?: number;
  /** --max-endpoints-per-slice; default 100. */
  maxEndpointsPerSlice?: number;
}

/** See the file comment. */
export class EndpointSliceController implements Controller {
  readonly name = 'endpointslice';
  private readonly batchPeriodMs: number;
  private readonly maxEndpointsPerSlice: number;
  private readonly queue: RateLimitingQueue<string>;
  private readonly services: Lister<Service>;
  private readonly pods: Lister<Pod>;
  private readonly nodes: Lister<Node>;
  private readonly slices: Lister<EndpointSlice>;
  private readonly selectors = new ServiceSelectorCache();
  private readonly triggerTimes = new TriggerTimeTracker();
  private readonly tracker = new EndpointSliceTracker();

  /** @throws RangeError for a negative batch period or a maxEndpointsPerSlice outside 1..1000. */
  constructor(
    private readonly ctx: ControllerContext,
    opts: EndpointSliceControllerOptions = {},
  ) {
    this.batchPeriodMs = opts.batchPeriodMs ?? 0;
    this.maxEndpointsPerSlice = opts.maxEndpointsPerSlice ?? MAX_ENDPOINTS_PER_SLICE;
    if (!(this.batchPeriodMs >= 0)) throw new RangeError('endpointslice: batchPeriodMs must be >= 0');
    if (!(
      Number.isInteger(this.maxEndpointsPerSlice) &&
      this.maxEndpointsPerSlice >= 1 &&
      this.maxEndpointsPerSlice <= 1000
    ))
      throw new RangeError('endpointslice: maxEndpointsPerSlice must be an integer in 1..1000');
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });

    ({ services: this.services, pods: this.pods } = watchServicesAndPods(ctx, {
      queue: this.queue,
      selectors: this.selectors,
      batchPeriodMs: this.batchPeriodMs,
    }));
    const nodes = ctx.informers.informerFor<Node>(resources.nodes);
    const slices = ctx.informers.informerFor<EndpointSlice>(resources.endpointslices);
    this.nodes = nodes.lister();
    this.slices = slices.lister();
    slices.addEventHandler({
      onAdd: (slice) => {
        if (managedByUs(slice) && this.tracker.shouldSync(slice)) this.queueForSlice(slice);
      },
      onUpdate: (old, slice) => {
        if (old.metadata.resourceVersion === slice.metadata.resourceVersion) return;
        const name = slice.metadata.labels?.[LABEL_SERVICE_NAME];
        if (name !== old.metadata.labels?.[LABEL_SERVICE_NAME]) {
          this.queueForSlice(slice);
          this.queueForSlice(old);
          return;
        }
        if (managedByUs(old) !== managedByUs(slice) || (managedByUs(slice) && this.tracker.shouldSync(slice)))
          this.queueForSlice(slice);
      },
      onDelete: (obj) => {
        const slice = deletedObject(obj);
        // An unexpected deletion (not ours) means the Service needs its slice back.
        if (managedByUs(slice) && this.tracker.has(slice) && !this.tracker.handleDeletion(slice))
          this.queueForSlice(slice);
      },
    });
  }

  private queueForSlice(slice: EndpointSlice): void {
    const name = slice.metadata.labels?.[LABEL_SERVICE_NAME];
    if (!name) return;
    this.queue.addAfter(
      `${slice.metadata.namespace}/${name}`,
      Math.max(SLICE_CHANGE_MIN_SYNC_DELAY_MS, this.batchPeriodMs),
    );
  }

  /** Works until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await runQueue({
      name: this.name,
      queue: this.queue,
      workers: this.ctx.config.concurrentEndpointSyncs,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** This controller's slices of Service `namespace/name`, from the cache. */
  private managedSlices(namespace: string, name: string): EndpointSlice[] {
    return this.slices
      .namespace(namespace)
      .list(labelSelectorFromSet({ [LABEL_SERVICE_NAME]: name, [LABEL_MANAGED_BY]: CONTROLLER_NAME }));
  }

  /**
   * Brings the slices of Service `key` (`namespace/name`) in line with its pods
   * (syncService + Reconciler.Reconcile). Throws to be retried: on API errors, when the
   * slice cache lags behind this controller's writes, and when pods were left out because
   * their Node is not (yet) known.
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const svc = this.services.get(namespace, name);
    if (!svc || !isSelectorService(svc)) {
      // The garbage collector would remove them through their ownerReference; doing it
      // here makes them go at once. Selectorless Services get no slices from us either.
      for (const slice of this.managedSlices(namespace, name)) await this.deleteSlice(slice);
      if (!svc) {
        this.triggerTimes.deleteService(key);
        this.tracker.deleteService(key);
      }
      return;
    }

    const existing = this.managedSlices(namespace, name);
    if (this.tracker.staleSlices(svc, existing)) {
      throw new Error(`EndpointSlice informer cache is out of date for ${key}: waiting for our last writes`);
    }
    const pods = this.pods.namespace(namespace).list(this.selectors.selectorFor(svc));
    const triggerTime = this.triggerTimes.compute(svc, pods);

    const desired = new Map<string, DesiredPortSet>();
    const missingNodes: string[] = [];
    const ordered = [...pods].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    for (const pod of ordered) {
      if (!shouldPodBeInEndpoints(pod, true)) continue;
      const node = pod.spec.nodeName ? this.nodes.get(pod.spec.nodeName) : undefined;
      // A pod on an unknown Node is left out (and the Service retried) unless the user asked
      // for every address to be published; Pod GC removes such pods eventually.
      if (!node && !svc.spec.publishNotReadyAddresses) {
        missingNodes.push(`${pod.metadata.name} (node ${pod.spec.nodeName ?? ''})`);
        continue;
      }
      const ep = podToEndpoint(pod, node, svc);
      if (ep) addDesired(desired, endpointPorts(svc, pod), ep);
    }

    const plan = planSlices(svc, desired, existing, this.maxEndpointsPerSlice);
    const annotate = (slice: EndpointSlice) => {
      const annotations = { ...slice.metadata.annotations };
      if (triggerTime !== undefined)
        annotations[ANNOTATION_LAST_CHANGE_TRIGGER_TIME] = formatTriggerTime(triggerTime);
      else delete annotations[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
      slice.metadata.annotations = annotations;
    };
    // No new slices for a Service being deleted: they would race the garbage collector.
    if (!svc.metadata.deletionTimestamp) {
      for (const slice of plan.create) {
        annotate(slice);
        try {
          this.tracker.update(await this.ctx.client.create<EndpointSlice>(resources.endpointslices, slice));
        } catch (err) {
          if (isNamespaceTerminating(err)) return;
          throw err;
        }
      }
    }
    for (const slice of plan.update) {
      annotate(slice);
      this.tracker.update(await this.ctx.client.update<EndpointSlice>(resources.endpointslices, slice));
    }
    for (const slice of plan.delete) await this.deleteSlice(slice);

    if (missingNodes.length > 0) {
      throw new Error(`${key}: left out pods whose Node is not found: ${missingNodes.join(', ')}`);
    }
  }

  private async deleteSlice(slice: EndpointSlice): Promise<void> {
    try {
      await this.ctx.client.delete(resources.endpointslices, slice.metadata.namespace, slice.metadata.name!, {
        preconditions: { uid: slice.metadata.uid! },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return;
    }
    this.tracker.expectDeletion(slice);
  }
}

function managedByUs(slice: EndpointSlice): boolean {
  return slice.metadata.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME;
}

/** Factory of the EndpointSlice controller (`endpointslice` in kube-controller-manager's --controllers). */
export const endpointSliceController: ControllerFactory = (ctx) => new EndpointSliceController(ctx);
