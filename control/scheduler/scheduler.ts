/**
 * The scheduler (kube-scheduler, pkg/scheduler): assigns pending pods to nodes.
 *
 * This folder, in the order a pod meets it:
 *   scheduler.ts          informer handlers, the scheduling loop, binding, failure handling
 *   queue/                the scheduling queue (activeQ, backoffQ, unschedulablePods)
 *   cache/                NodeInfos built from informers, with assumed pods
 *   schedule-one.ts       filter → score → select for one pod
 *   framework/            extension points, Status, NodeInfo, CycleState, FitError message
 *   plugins/<name>/       one folder per plugin; plugins/registry.ts lists them all
 *
 * Contract:
 * - Only pods whose `spec.schedulerName` is this scheduler's, without `spec.nodeName`, not
 *   terminating, not terminal and without schedulingGates are queued.
 * - A decision is *assumed* in the cache at once; the Binding is POSTed in the background
 *   (at most `parallelism` at a time) while the loop goes on with the next pod. A failed
 *   binding gives the resources back (forget) and the pod is retried with backoff.
 * - A pod that fits nowhere gets `PodScheduled=False` (reason Unschedulable, the FitError
 *   message) and a Warning `FailedScheduling` event, and waits in unschedulablePods until
 *   a relevant cluster event or the periodic flush. A bound pod gets a Normal `Scheduled`
 *   event "Successfully assigned ns/name to node".
 * - Handlers only update the cache and the queue; all decisions happen in the loop.
 */
import { EventRecorder, SHUTDOWN_FLUSH_MS } from '../../api/client/events.js';
import { InformerFactory } from '../../api/client/factory.js';
import { stripManagedFields } from '../../api/client/transform.js';
import { deletedObject } from '../../api/client/informer.js';
import type {
  DeletedFinalStateUnknown,
  HandlerRegistration,
  SharedInformer,
} from '../../api/client/informer.js';
import { resources } from '../../api/client/resource.js';
import type { ResourceRef } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import type { Clock } from '../../api/clock.js';
import { realClock } from '../../api/clock.js';
import { rfc3339 } from '../../api/object.js';
import type { KubeObject } from '../../api/object.js';
import { getCondition, isPodTerminal } from '../../api/podutil.js';
import type { Node, Pod } from '../../api/types.js';
import type { Logger } from '../controllers/context.js';
import { silentLogger } from '../controllers/context.js';
import { SchedulerCache } from './cache/cache.js';
import { ActionType, events } from './framework/events.js';
import type { ClusterEvent } from './framework/events.js';
import type { Framework } from './framework/framework.js';
import { PodInfo } from './framework/node-info.js';
import { Code } from './framework/status.js';
import type { Status } from './framework/status.js';
import { newDefaultFramework } from './plugins/registry.js';
import { SchedulingQueue } from './queue/scheduling-queue.js';
import type { QueuedPodInfo } from './queue/scheduling-queue.js';
import { SchedulingAlgorithm } from './schedule-one.js';
import type { CycleState } from './framework/cycle-state.js';
import { errorMessage } from '../../api/errors.js';

/** kube-scheduler's default profile name. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** Everything a Scheduler is built from. */
export interface SchedulerConfig {
  client: RestClient;
  /**
   * Shared informers. Given: the scheduler registers its Pod and Node informers on it and
   * run() starts whatever is not running yet, but never shuts it down (the caller owns it).
   * Omitted: the scheduler creates its own factory (with informerTransform), starts it
   * in run() and shuts it down when run() ends.
   */
  informers?: InformerFactory;
  /**
   * What the scheduler's own informers do to each object before caching it
   * (InformerFactoryOptions.transform). Default stripManagedFields: the scheduler never
   * reads managedFields, and kube-scheduler drops them from its pods too
   * (kubernetes#119556); they are a third or more of a pod.
   */
  informerTransform?: <T extends KubeObject>(obj: T, ref: ResourceRef) => T;
  /** Default realClock. */
  clock?: Clock;
  /** Default silent. */
  logger?: Logger;
  /** Events are reported through it; default an EventRecorder for component `default-scheduler`. */
  recorder?: EventRecorder;
  /** Pods with this `spec.schedulerName` are ours; default `default-scheduler`. */
  schedulerName?: string;
  /** 0 (default: adaptive, as Kubernetes) or 1..100: the share of nodes to find feasible before scoring. */
  percentageOfNodesToScore?: number;
  /**
   * How many Bindings may be in flight at once (Kubernetes' `parallelism` sizes its
   * goroutine pools; in one JS thread it bounds the concurrent binding requests).
   * Default 16, as Kubernetes' parallelism.
   */
  parallelism?: number;
  /** Backoff after failed attempts, ms; defaults 1000 and 10 000 (podInitialBackoffSeconds / podMaxBackoffSeconds). */
  podInitialBackoffMs?: number;
  podMaxBackoffMs?: number;
  /** See SchedulingQueue; default 60 000. */
  podMaxInUnschedulablePodsDurationMs?: number;
  /** For tie-breaking between equally scored nodes; default Math.random. */
  random?: () => number;
}

/** Counters, for tests and the benchmark. */
export interface SchedulerStats {
  /** Scheduling attempts (pods popped). */
  attempts: number;
  /** Bindings that succeeded. */
  bound: number;
  /** Bindings that failed. */
  bindingErrors: number;
  /** Attempts that found no node. */
  unschedulable: number;
  /** Attempts that ended in an error. */
  errors: number;
}

export class Scheduler {
  readonly schedulerName: string;
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  readonly framework: Framework;
  readonly stats: SchedulerStats = { attempts: 0, bound: 0, bindingErrors: 0, unschedulable: 0, errors: 0 };
  private readonly client: RestClient;
  private readonly informers: InformerFactory;
  private readonly ownInformers: boolean;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly recorder: EventRecorder;
  private readonly parallelism: number;
  private readonly algorithm: SchedulingAlgorithm;
  private readonly podInformer: SharedInformer<Pod>;
  private readonly bindings = new Set<Promise<void>>();
  private slotWaiter: (() => void) | undefined;
  private ran = false;
  private readonly registrations: HandlerRegistration[] = [];
  /** run()'s signal: a PreBind still waiting gives up when it aborts. */
  private stopping: AbortSignal | undefined;

  /** @throws Error for an invalid setting (percentageOfNodesToScore outside 0..100, parallelism < 1, ...). */
  constructor(cfg: SchedulerConfig) {
    if (!cfg?.client) throw new Error('Scheduler: client is required');
    this.client = cfg.client;
    this.schedulerName = cfg.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.clock = cfg.clock ?? realClock;
    this.logger = cfg.logger ?? silentLogger;
    this.parallelism = cfg.parallelism ?? 16;
    if (!Number.isInteger(this.parallelism) || this.parallelism < 1) {
      throw new Error(`Scheduler: parallelism must be a positive integer, got ${cfg.parallelism}`);
    }
    this.ownInformers = cfg.informers === undefined;
    this.informers =
      cfg.informers ??
      new InformerFactory({ client: cfg.client, transform: cfg.informerTransform ?? stripManagedFields });
    this.recorder =
      cfg.recorder ??
      new EventRecorder({ client: cfg.client, component: DEFAULT_SCHEDULER_NAME, clock: this.clock });
    this.framework = newDefaultFramework({
      client: cfg.client,
      nodeInfos: () => this.cache.nodeInfos(),
      nodesGeneration: () => this.cache.nodesGeneration,
      informers: this.informers,
      clock: this.clock,
    });
    this.algorithm = new SchedulingAlgorithm({
      framework: this.framework,
      cache: this.cache,
      percentageOfNodesToScore: cfg.percentageOfNodesToScore,
      ...(cfg.random ? { random: cfg.random } : {}),
    });
    this.queue = new SchedulingQueue({
      clock: this.clock,
      eventsByPlugin: this.framework.eventsByPlugin,
      podInitialBackoffMs: cfg.podInitialBackoffMs,
      podMaxBackoffMs: cfg.podMaxBackoffMs,
      podMaxInUnschedulablePodsDurationMs: cfg.podMaxInUnschedulablePodsDurationMs,
    });

    this.podInformer = this.informers.informerFor<Pod>(resources.pods);
    const podHandler = this.podInformer.addEventHandler({
      onAdd: (pod) => this.onPodAdd(pod),
      onUpdate: (oldPod, newPod) => this.onPodUpdate(oldPod, newPod),
      onDelete: (obj) => this.onPodDelete(obj),
    });
    const nodeInformer = this.informers.informerFor<Node>(resources.nodes);
    const nodeHandler = nodeInformer.addEventHandler({
      onAdd: (node) => {
        this.cache.addNode(node);
        this.queue.moveAllToActiveOrBackoffQueue(events.nodeAdd);
      },
      onUpdate: (oldNode, newNode) => {
        this.cache.updateNode(newNode);
        const event = nodeSchedulingPropertiesChange(oldNode, newNode);
        if (event) this.queue.moveAllToActiveOrBackoffQueue(event);
      },
      onDelete: (obj) => {
        this.cache.removeNode(deletedObject(obj));
        this.queue.moveAllToActiveOrBackoffQueue(events.nodeDelete);
      },
    });
    this.registrations.push(podHandler, nodeHandler, ...this.storageHandlers());
  }

  /**
   * Informer handlers for the storage objects some plugin registered events for
   * (addAllEventHandlers): an addition, change or removal moves the pods those plugins
   * rejected back to the queues. Only what a plugin asks for is watched.
   */
  private storageHandlers(): HandlerRegistration[] {
    const wanted = new Set<string>();
    for (const evs of this.framework.eventsByPlugin.values()) for (const e of evs) wanted.add(e.resource);
    const out: HandlerRegistration[] = [];
    const kinds = [
      ['PersistentVolumeClaim', resources.persistentvolumeclaims],
      ['PersistentVolume', resources.persistentvolumes],
      ['StorageClass', resources.storageclasses],
    ] as const;
    for (const [kind, ref] of kinds) {
      if (!wanted.has(kind)) continue;
      const move = (actionType: number, label: string) => () =>
        this.queue.moveAllToActiveOrBackoffQueue({ resource: kind, actionType, label: `${kind}${label}` });
      out.push(
        this.informers.informerFor(ref).addEventHandler({
          onAdd: move(ActionType.Add, 'Add'),
          onUpdate: move(ActionType.Update, 'Update'),
          onDelete: move(ActionType.Delete, 'Delete'),
        }),
      );
    }
    return out;
  }

  /**
   * Starts the informers (see `informers`), waits for them to sync, then schedules until
   * `signal` aborts; resolves once bindings in flight have finished and the scheduler's
   * informer handlers are removed. A Scheduler runs once: after losing and regaining
   * leadership, build a new one (its cache and queue start from the informers again).
   * @throws Error when called a second time.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.ran) throw new Error('Scheduler: run() may be called only once; create a new Scheduler');
    this.ran = true;
    this.stopping = signal;
    try {
      this.informers.start();
      const synced = await this.informers.waitForCacheSync(undefined, signal);
      if (!synced || signal.aborted) return;
      this.logger.info('scheduler: caches synced, scheduling', {
        nodes: this.cache.nodeCount,
        pending: this.queue.pendingPods().activeQ,
      });
      this.queue.run();
      const onAbort = () => this.queue.close();
      signal.addEventListener('abort', onAbort, { once: true });
      let lastYield = performance.now();
      for (;;) {
        const qpi = this.queue.tryPop() ?? (await this.queue.pop(signal));
        if (!qpi) break;
        this.scheduleOne(qpi);
        if (this.bindings.size >= this.parallelism) {
          await new Promise<void>((resolve) => (this.slotWaiter = resolve));
          lastYield = performance.now();
        } else if (performance.now() - lastYield > 20) {
          // Informer events and binding replies are macrotasks: let them in now and then.
          await new Promise<void>((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
        if (signal.aborted) break;
      }
      signal.removeEventListener('abort', onAbort);
    } finally {
      this.queue.close();
      while (this.bindings.size > 0) await Promise.allSettled([...this.bindings]);
      for (const r of this.registrations) r.remove();
      if (this.ownInformers) await this.informers.shutdown();
      // Scheduled events still queued get a short grace, then are dropped: stopping must
      // not wait for a backlog of thousands (client-go's broadcaster drops them too).
      await this.recorder.flush(SHUTDOWN_FLUSH_MS);
    }
  }

  /** Whether `pod` is one this scheduler should place. */
  responsibleFor(pod: Pod): boolean {
    return (pod.spec.schedulerName || DEFAULT_SCHEDULER_NAME) === this.schedulerName;
  }

  // ---------------------------------------------------------------------------------
  // Informer handlers (eventhandlers.go): update the cache and the queue, nothing else.

  private onPodAdd(pod: Pod): void {
    if (pod.spec.nodeName) {
      if (isPodTerminal(pod)) return;
      this.cache.addPod(pod);
      this.queue.moveAllToActiveOrBackoffQueue(events.assignedPodAdd);
      return;
    }
    if (this.wantsScheduling(pod)) this.queue.add(pod);
  }

  private onPodUpdate(oldPod: Pod, newPod: Pod): void {
    if (oldPod.spec.nodeName) {
      if (isPodTerminal(newPod)) {
        this.cache.removePod(newPod);
        this.queue.moveAllToActiveOrBackoffQueue(events.assignedPodDelete);
      } else {
        this.cache.updatePod(newPod);
        if (!sameLabels(oldPod, newPod)) this.queue.moveAllToActiveOrBackoffQueue(events.assignedPodUpdate);
      }
      return;
    }
    if (newPod.spec.nodeName) {
      // The binding (ours or anyone's) is now visible.
      this.queue.delete(newPod);
      if (isPodTerminal(newPod)) {
        this.cache.removePod(newPod);
        return;
      }
      this.cache.addPod(newPod);
      this.queue.moveAllToActiveOrBackoffQueue(events.assignedPodAdd);
      return;
    }
    if (this.cache.isAssumedPod(newPod)) return;
    if (this.wantsScheduling(newPod)) this.queue.update(oldPod, newPod);
    else this.queue.delete(newPod);
  }

  private onPodDelete(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = deletedObject(obj);
    if (pod.spec.nodeName || this.cache.nodeOf(pod) !== undefined) {
      if (!this.cache.isAssumedPod(pod)) this.cache.removePod(pod);
      this.queue.moveAllToActiveOrBackoffQueue(events.assignedPodDelete);
    }
    this.queue.delete(pod);
  }

  private wantsScheduling(pod: Pod): boolean {
    const gates = pod.spec.schedulingGates;
    return (
      this.responsibleFor(pod) &&
      !pod.metadata.deletionTimestamp &&
      !isPodTerminal(pod) &&
      !(Array.isArray(gates) && gates.length > 0)
    );
  }

  // ---------------------------------------------------------------------------------
  // The scheduling cycle (synchronous) and the binding cycle (asynchronous).

  private scheduleOne(qpi: QueuedPodInfo): void {
    this.stats.attempts++;
    const cycle = this.queue.schedulingCycle;
    const pod = qpi.pod;
    if (pod.metadata.deletionTimestamp || this.cache.isAssumedPod(pod)) {
      this.queue.done(qpi.key);
      return;
    }
    const result = this.algorithm.schedulePod(pod);
    if (result.kind === 'unschedulable') {
      this.stats.unschedulable++;
      const fitError = result.fitError;
      const post = this.framework.runPostFilterPlugins(result.state, pod, fitError.statuses);
      if (post.status.code === Code.Unschedulable || post.status.code === Code.UnschedulableAndUnresolvable) {
        fitError.postFilterMsg = post.status.message();
      }
      qpi.unschedulablePlugins = fitError.unschedulablePlugins();
      this.handleSchedulingFailure(qpi, 'Unschedulable', fitError.message(), cycle);
      return;
    }
    if (result.kind === 'error') {
      this.stats.errors++;
      qpi.unschedulablePlugins = new Set();
      this.handleSchedulingFailure(qpi, 'SchedulerError', result.status.message(), cycle);
      return;
    }
    const host = result.host;
    this.cache.assumePod(pod, host, new PodInfo(pod));
    const reserved = this.framework.runReservePlugins(result.state, pod, host);
    if (!reserved.isSuccess()) {
      this.cache.forgetPod(pod);
      qpi.unschedulablePlugins = new Set(reserved.plugin ? [reserved.plugin] : []);
      this.handleSchedulingFailure(qpi, 'SchedulerError', reserved.message(), cycle);
      return;
    }
    const binding = this.bindingCycle(result.state, qpi, host, cycle);
    this.bindings.add(binding);
    void binding.finally(() => {
      this.bindings.delete(binding);
      const w = this.slotWaiter;
      this.slotWaiter = undefined;
      w?.();
    });
  }

  private async bindingCycle(
    state: CycleState,
    qpi: QueuedPodInfo,
    host: string,
    cycle: number,
  ): Promise<void> {
    const pod = qpi.pod;
    const pre = await this.framework.runPreBindPlugins(state, pod, host, this.stopping);
    const st: Status = pre.isSuccess() ? await this.framework.runBindPlugins(state, pod, host) : pre;
    if (st.isSuccess()) {
      this.stats.bound++;
      this.cache.finishBinding(pod);
      this.queue.done(qpi.key);
      this.recorder.event(
        pod,
        'Normal',
        'Scheduled',
        `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${host}`,
      );
      return;
    }
    this.stats.bindingErrors++;
    this.logger.warn('scheduler: binding failed', {
      pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
      node: host,
      error: st.message(),
    });
    this.cache.forgetPod(pod);
    this.framework.runUnreservePlugins(state, pod, host);
    this.queue.moveAllToActiveOrBackoffQueue(events.forgetPod);
    qpi.unschedulablePlugins = new Set();
    // A PreBind failure's message already says which plugin; a Bind failure is a rejected binding.
    const message = pre.isSuccess() ? `Binding rejected: ${st.message()}` : st.message();
    this.handleSchedulingFailure(qpi, 'SchedulerError', message, cycle);
  }

  /**
   * Puts the pod back in the queue (its latest informer state) and reports why: a
   * FailedScheduling event and the PodScheduled=False condition (handleSchedulingFailure).
   * Nothing happens for a pod that is gone or was bound meanwhile.
   */
  private handleSchedulingFailure(
    qpi: QueuedPodInfo,
    reason: 'Unschedulable' | 'SchedulerError',
    message: string,
    cycle: number,
  ): void {
    const { namespace, name, uid } = qpi.pod.metadata;
    const current = this.podInformer.lister().get(namespace!, name!);
    if (!current || current.metadata.uid !== uid || current.spec.nodeName) {
      this.queue.done(qpi.key);
      return;
    }
    qpi.pod = current;
    if (this.wantsScheduling(current)) this.queue.addUnschedulableIfNotPresent(qpi, cycle);
    else this.queue.done(qpi.key);
    this.logger.debug('scheduler: unable to schedule pod', { pod: `${namespace}/${name}`, reason, message });
    this.recorder.event(current, 'Warning', 'FailedScheduling', message);
    this.updatePodScheduledCondition(current, reason, message);
  }

  private updatePodScheduledCondition(pod: Pod, reason: string, message: string): void {
    const old = getCondition(pod.status?.conditions, 'PodScheduled');
    if (old?.status === 'False' && old.reason === reason && old.message === message) return;
    const condition = {
      type: 'PodScheduled',
      status: 'False',
      reason,
      message,
      lastProbeTime: null,
      lastTransitionTime:
        old?.status === 'False' && old.lastTransitionTime
          ? old.lastTransitionTime
          : rfc3339(new Date(this.clock.now())),
    };
    void this.client
      .patch(
        resources.pods,
        pod.metadata.namespace,
        pod.metadata.name!,
        'strategic',
        { status: { conditions: [condition] } },
        { subresource: 'status' },
      )
      .catch((err: unknown) =>
        this.logger.warn('scheduler: cannot update the PodScheduled condition', {
          pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
          error: errorMessage(err),
        }),
      );
  }
}

function sameLabels(a: Pod, b: Pod): boolean {
  const la = a.metadata.labels ?? {};
  const lb = b.metadata.labels ?? {};
  const ka = Object.keys(la);
  if (ka.length !== Object.keys(lb).length) return false;
  return ka.every((k) => la[k] === lb[k]);
}

/**
 * The scheduling-relevant change between two versions of a Node, as one event whose
 * action bits say what changed (nodeSchedulingPropertiesChange); undefined when nothing
 * the plugins look at changed (heartbeats, conditions' timestamps).
 */
export function nodeSchedulingPropertiesChange(oldNode: Node, newNode: Node): ClusterEvent | undefined {
  let bits = 0;
  if (!!oldNode.spec?.unschedulable !== !!newNode.spec?.unschedulable) bits |= ActionType.UpdateNodeTaint;
  if (JSON.stringify(oldNode.status?.allocatable) !== JSON.stringify(newNode.status?.allocatable)) {
    bits |= ActionType.UpdateNodeAllocatable;
  }
  if (JSON.stringify(oldNode.metadata.labels ?? {}) !== JSON.stringify(newNode.metadata.labels ?? {})) {
    bits |= ActionType.UpdateNodeLabel;
  }
  if (JSON.stringify(oldNode.spec?.taints ?? []) !== JSON.stringify(newNode.spec?.taints ?? [])) {
    bits |= ActionType.UpdateNodeTaint;
  }
  const conditions = (n: Node) => (n.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(',');
  if (conditions(oldNode) !== conditions(newNode)) bits |= ActionType.UpdateNodeCondition;
  return bits === 0 ? undefined : { resource: 'Node', actionType: bits, label: 'NodeUpdate' };
}
