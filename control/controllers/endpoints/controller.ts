/**
 * The Endpoints controller (Kubernetes' pkg/controller/endpoint): keeps, for every Service
 * with a selector, an Endpoints object of the same name listing the addresses of the pods
 * the selector matches — ready ones in `addresses`, the others in `notReadyAddresses` —
 * grouped into subsets by the ports they serve. Deletes the Endpoints when the Service
 * goes. Services without a selector (and ExternalName ones) are left alone: their
 * Endpoints belong to the user.
 *
 * Handlers only enqueue Service keys: Service events directly; pod events through the
 * Services whose selectors match the pod (old and new labels), after the batch period;
 * deletions of an Endpoints object (to recreate it). reconcile(key) computes the desired
 * subsets from the informer caches, compares them with the cached Endpoints and writes
 * only when something differs.
 */
import { isDeepStrictEqual } from 'node:util';
import { isNotFound } from '../../../api/client/errors.js';
import type { EventRecorder } from '../../../api/client/events.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Endpoints, Pod, Service } from '../../../api/types.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import {
  ANNOTATION_LAST_CHANGE_TRIGGER_TIME,
  formatTriggerTime,
  isHeadlessService,
  isNamespaceTerminating,
  isSelectorService,
  LABEL_HEADLESS_SERVICE,
  ServiceSelectorCache,
  TriggerTimeTracker,
  watchServicesAndPods,
} from '../endpoints-common.js';
import { runQueue } from '../run.js';
import { StaleEndpointsTracker } from './stale.js';
import {
  ANNOTATION_OVER_CAPACITY,
  countAddresses,
  desiredSubsets,
  MAX_ENDPOINTS_CAPACITY,
  subsetsEqual,
  truncateSubsets,
} from './subsets.js';
import { errorMessage } from '../../../api/errors.js';

/** The annotation of Endpoints used as leader-election locks (resourcelock.LeaderElectionRecordAnnotationKey); never cleaned up. */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

/** Options of an EndpointsController beyond the shared context. */
export interface EndpointsControllerOptions {
  /**
   * How long pod-triggered syncs wait so that a burst of pod changes makes one write
   * (--endpoint-updates-batch-period), ms; default 0. Even at 0, changes arriving while a
   * Service is being synced coalesce into one more sync (the workqueue dedups keys).
   */
  batchPeriodMs?: number;
}

/** See the file comment. */
export class EndpointsController implements Controller {
  readonly name = 'endpoint';
  private readonly recorder: EventRecorder;
  private readonly batchPeriodMs: number;
  private readonly queue: RateLimitingQueue<string>;
  private readonly services: Lister<Service>;
  private readonly pods: Lister<Pod>;
  private readonly endpoints: Lister<Endpoints>;
  private readonly selectors = new ServiceSelectorCache();
  private readonly triggerTimes = new TriggerTimeTracker();
  private readonly stale: StaleEndpointsTracker;

  /** @throws RangeError for a negative batch period. */
  constructor(
    private readonly ctx: ControllerContext,
    opts: EndpointsControllerOptions = {},
  ) {
    this.recorder = ctx.recorder('endpoint-controller');
    this.batchPeriodMs = opts.batchPeriodMs ?? 0;
    if (!(this.batchPeriodMs >= 0)) throw new RangeError(`endpoint: batchPeriodMs must be >= 0`);
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.stale = new StaleEndpointsTracker(ctx.clock);

    ({ services: this.services, pods: this.pods } = watchServicesAndPods(ctx, {
      queue: this.queue,
      selectors: this.selectors,
      batchPeriodMs: this.batchPeriodMs,
    }));
    const endpoints = ctx.informers.informerFor<Endpoints>(resources.endpoints);
    this.endpoints = endpoints.lister();
    endpoints.addEventHandler({
      onAdd: (ep) => this.stale.observed(ep),
      onUpdate: (_, ep) => this.stale.observed(ep),
      // Someone deleted an Endpoints object: recreate it if its Service still wants one.
      onDelete: (obj) => this.queue.add(metaNamespaceKey(deletedObject(obj))),
    });
  }

  /** Works until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    // Endpoints whose Service went while no controller ran are found once, at start
    // (checkLeftoverEndpoints); afterwards Service deletions are seen as they happen.
    for (const ep of this.endpoints.list()) {
      if (ep.metadata.annotations?.[LEADER_ANNOTATION] !== undefined) continue;
      this.queue.add(metaNamespaceKey(ep));
    }
    await runQueue({
      name: this.name,
      queue: this.queue,
      workers: this.ctx.config.concurrentEndpointSyncs,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /**
   * Brings the Endpoints of Service `key` (`namespace/name`) in line with its pods
   * (syncService). Throws to be retried: on API errors, and when the Endpoints cache is
   * older than this controller's last write.
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const svc = this.services.get(namespace, name);
    if (!svc) {
      try {
        await this.ctx.client.delete(resources.endpoints, namespace, name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.triggerTimes.deleteService(key);
      this.stale.delete(key);
      return;
    }
    if (!isSelectorService(svc)) return;

    const pods = this.pods.namespace(namespace).list(this.selectors.selectorFor(svc));
    // Computed on every sync, so the tracker's state follows even when nothing is written.
    const triggerTime = this.triggerTimes.compute(svc, pods);
    const subsets = desiredSubsets(svc, pods);

    const current = this.endpoints.get(namespace, name);
    if (this.stale.isStale(key, current)) {
      throw new Error(
        `endpoints informer cache is out of date for ${key}: waiting for the last write to be observed`,
      );
    }
    const serviceLabels = svc.metadata.labels ?? {};
    if (current) {
      const { [LABEL_HEADLESS_SERVICE]: _headless, ...compareLabels } = current.metadata.labels ?? {};
      const annotations = current.metadata.annotations ?? {};
      const capacityAnnotationCorrect =
        countAddresses(current.subsets ?? []) <= MAX_ENDPOINTS_CAPACITY &&
        annotations[ANNOTATION_OVER_CAPACITY] === undefined;
      if (
        subsetsEqual(current.subsets, subsets) &&
        isDeepStrictEqual(compareLabels, serviceLabels) &&
        capacityAnnotationCorrect
      )
        return;
    }

    const next: Endpoints = current
      ? structuredClone(current)
      : { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace } };
    const annotations = { ...next.metadata.annotations };
    if (triggerTime !== undefined)
      annotations[ANNOTATION_LAST_CHANGE_TRIGGER_TIME] = formatTriggerTime(triggerTime);
    else delete annotations[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
    const { subsets: written, truncated } = truncateSubsets(subsets);
    if (truncated) annotations[ANNOTATION_OVER_CAPACITY] = 'truncated';
    else delete annotations[ANNOTATION_OVER_CAPACITY];
    next.subsets = written;
    next.metadata.annotations = annotations;
    next.metadata.labels = { ...serviceLabels };
    if (isHeadlessService(svc)) next.metadata.labels[LABEL_HEADLESS_SERVICE] = '';

    try {
      if (!current) {
        await this.ctx.client.create(resources.endpoints, next);
        this.stale.expectCreate(key);
      } else {
        const updated = await this.ctx.client.update<Endpoints>(resources.endpoints, next);
        if (updated.metadata.resourceVersion !== current.metadata.resourceVersion)
          this.stale.markStale(key, current);
      }
    } catch (err) {
      // Creates fail for as long as the namespace is being deleted: drop the key.
      if (!current && isNamespaceTerminating(err)) return;
      const message = errorMessage(err);
      if (!current)
        this.recorder.event(
          next,
          'Warning',
          'FailedToCreateEndpoint',
          `Failed to create endpoint for service ${key}: ${message}`,
        );
      else
        this.recorder.event(
          next,
          'Warning',
          'FailedToUpdateEndpoint',
          `Failed to update endpoint ${key}: ${message}`,
        );
      throw err;
    }
  }
}

/** Factory of the Endpoints controller (`endpoint` in kube-controller-manager's --controllers). */
export const endpointsController: ControllerFactory = (ctx) => new EndpointsController(ctx);
