/**
 * The node lifecycle controller (kube-controller-manager's `nodelifecycle`,
 * pkg/controller/nodelifecycle): notices nodes whose kubelet went silent, marks them and
 * their pods, and keeps the node-condition taints in step with the conditions.
 *
 * Contract:
 * - Every `nodeMonitorPeriodSeconds` every node is enqueued; node events (and pod events,
 *   by the pod's node, when that node is not Ready) enqueue the node too. reconcile(nodeName)
 *   is the only place that acts.
 * - A node is alive while its Ready lastHeartbeatTime or its Lease (kube-node-lease) renewTime
 *   keeps changing, timed by this controller's clock (health.ts). After
 *   `nodeMonitorGracePeriodSeconds` without a change (`nodeStartupGracePeriodSeconds` for a
 *   node that never posted Ready) its Ready, MemoryPressure, DiskPressure and PIDPressure
 *   conditions become Unknown (nodes/status), with a `NodeNotReady` event on the node.
 * - While a node's Ready is not True, every pod on it gets its Ready condition False
 *   (pods/status; a Warning `NodeNotReady` event "Node is not ready" on the pod), as
 *   MarkPodsNotReady: Services stop sending traffic to pods nobody can vouch for.
 * - Taints (node-taints.ts): NoSchedule taints follow the conditions and spec.unschedulable;
 *   one NoExecute taint follows Ready (not-ready / unreachable), subject to the zone
 *   disruption rules (zones.ts). The taint eviction controller acts on NoExecute taints.
 * Not done: the eviction rate limits (--node-eviction-rate, --secondary-node-eviction-rate):
 * taints are added as soon as a node's condition calls for them.
 */

import { isNotFound } from '../../../api/client/errors.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { SharedInformer } from '../../../api/client/informer.js';
import { deletedObject } from '../../../api/client/informer.js';
import { resources } from '../../../api/client/resource.js';
import { rfc3339 } from '../../../api/object.js';
import { getCondition } from '../../../api/podutil.js';
import type { Lease, Node, Pod } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import { runQueue } from '../run.js';
import { NodeHealthTracker, readyStatus, unknownConditions } from './health.js';
import { reconcileNodeTaints } from './node-taints.js';
import { addPodNodeNameIndex, POD_NODE_NAME_INDEX } from './pod-index.js';
import { ZoneCounts } from './zones.js';

/** The controller's name in kube-controller-manager's --controllers list. */
export const NODE_LIFECYCLE_CONTROLLER_NAME = 'nodelifecycle';
/** The namespace of the kubelets' heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Workers reconciling nodes concurrently (never one node twice at once). */
const WORKERS = 4;

/** See the file comment. */
export class NodeLifecycleController implements Controller {
  readonly name = NODE_LIFECYCLE_CONTROLLER_NAME;
  private readonly recorder: EventRecorder;
  private readonly nodes: SharedInformer<Node>;
  private readonly leases: SharedInformer<Lease>;
  private readonly pods: SharedInformer<Pod>;
  private readonly queue: RateLimitingQueue<string>;
  private readonly health: NodeHealthTracker;
  private readonly monitorPeriodMs: number;
  /** Whether the last reconcile saw every zone fully disrupted ("master disruption mode"). */
  private allFullyDisrupted = false;
  /** The nodes of the informer's cache by zone and readiness (its handlers keep it). */
  private readonly zones = new ZoneCounts();

  constructor(private readonly ctx: ControllerContext) {
    this.recorder = ctx.recorder('node-controller');
    this.monitorPeriodMs = ctx.config.nodeMonitorPeriodSeconds * 1000;
    this.health = new NodeHealthTracker({
      gracePeriodMs: ctx.config.nodeMonitorGracePeriodSeconds * 1000,
      startupGracePeriodMs: ctx.config.nodeStartupGracePeriodSeconds * 1000,
    });
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.nodes = ctx.informers.informerFor<Node>(resources.nodes);
    // All namespaces, as kube-controller-manager's shared factory gives it: the garbage
    // collector watches every Lease already, and a second watch of kube-node-lease alone
    // would deliver each node's renewal (every 10 s per node) twice over.
    this.leases = ctx.informers.informerFor<Lease>(resources.leases);
    this.pods = ctx.informers.informerFor<Pod>(resources.pods);
    addPodNodeNameIndex(this.pods);

    const enqueueNode = (node: Node): void => this.queue.add(node.metadata.name!);
    this.nodes.addEventHandler({
      onAdd: (node) => {
        this.zones.set(node);
        enqueueNode(node);
      },
      onUpdate: (_, node) => {
        this.zones.set(node);
        enqueueNode(node);
      },
      onDelete: (obj) => {
        const node = deletedObject(obj);
        this.zones.delete(node.metadata.name!);
        enqueueNode(node);
      },
    });
    // A pod matters here only on a node that is not Ready (it is to be marked not Ready, as
    // the upstream controller's podUpdated queues only those): a reconcile of the node for
    // every pod change of a healthy cluster was work for nothing, several times per pod.
    const enqueuePodNode = (pod: Pod): void => {
      const name = pod.spec.nodeName;
      if (!name) return;
      const node = this.nodes.lister().get(name);
      if (node && readyStatus(node) !== 'True') this.queue.add(name);
    };
    this.pods.addEventHandler({ onAdd: enqueuePodNode, onUpdate: (_, pod) => enqueuePodNode(pod) });
  }

  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.monitor(signal),
      runQueue({
        name: this.name,
        queue: this.queue,
        workers: WORKERS,
        reconcile: (key) => this.reconcile(key),
        signal,
        logger: this.ctx.logger,
      }),
    ]);
  }

  /** Enqueues every node each monitor period (Kubernetes' monitorNodeHealth ticker). */
  private async monitor(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      for (const node of this.nodes.lister().list()) this.queue.add(node.metadata.name!);
      await this.ctx.clock.sleep(this.monitorPeriodMs, signal);
    }
  }

  /** Checks one node's health, marks it and its pods, and reconciles its taints (see the file comment). */
  async reconcile(name: string): Promise<void> {
    const cached = this.nodes.lister().get(name);
    if (!cached) {
      this.health.forget(name);
      return;
    }
    let node = cached;
    const now = this.ctx.clock.now();
    const lease = this.leases.lister().get(NODE_LEASE_NAMESPACE, name);
    const observed = readyStatus(node);
    const { expired } = this.health.observe(node, lease, now);
    if (expired) {
      const conditions = unknownConditions(node, rfc3339(new Date(now)));
      if (conditions) {
        this.ctx.logger.info('node stopped posting status; marking it Unknown', { node: name });
        node = await this.ctx.client.updateStatus<Node>(resources.nodes, {
          ...node,
          status: { ...node.status, conditions },
        });
      }
    }
    const current = readyStatus(node);
    if (observed === 'True' && current !== 'True') {
      this.recorder.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
    }
    if (current !== undefined && current !== 'True') await this.markPodsNotReady(name);
    await this.reconcileTaints(node, now);
  }

  /** Sets Ready=False on the pods bound to `nodeName` whose Ready condition is not False yet. */
  private async markPodsNotReady(nodeName: string): Promise<void> {
    const now = rfc3339(new Date(this.ctx.clock.now()));
    for (const pod of this.pods.lister().byIndex(POD_NODE_NAME_INDEX, nodeName)) {
      const ready = getCondition(pod.status?.conditions, 'Ready');
      if (pod.spec.nodeName !== nodeName || !ready || ready.status === 'False') continue;
      const conditions = (pod.status?.conditions ?? []).map((c) =>
        c.type === 'Ready' ? { ...c, status: 'False' as const, lastTransitionTime: now } : c,
      );
      try {
        await this.ctx.client.updateStatus<Pod>(resources.pods, {
          ...pod,
          status: { ...pod.status, conditions },
        });
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
      this.recorder.event(pod, 'Warning', 'NodeNotReady', 'Node is not ready');
    }
  }

  /** Writes the node's controller-owned taints when they differ from what its conditions call for. */
  private async reconcileTaints(node: Node, now: number): Promise<void> {
    const view = this.zones.view(node);
    if (view.allFullyDisrupted !== this.allFullyDisrupted) {
      this.allFullyDisrupted = view.allFullyDisrupted;
      if (view.allFullyDisrupted) {
        this.ctx.logger.warn(
          'all nodes are not Ready: entering master disruption mode (no NoExecute taints)',
        );
      } else {
        this.ctx.logger.info('a node is Ready again: leaving master disruption mode');
        this.health.resetProbeTimestamps(now);
      }
    }
    const taints = reconcileNodeTaints(node, view.mode, rfc3339(new Date(now)));
    if (!taints) return;
    const spec = { ...node.spec };
    if (taints.length > 0) spec.taints = taints;
    else delete spec.taints;
    this.ctx.logger.info('updating node taints', {
      node: node.metadata.name,
      taints: taints.map((t) => `${t.key}:${t.effect}`),
    });
    await this.ctx.client.update<Node>(resources.nodes, { ...node, spec });
  }
}

/** The ControllerFactory of the node lifecycle controller (registry name `nodelifecycle`). */
export const nodeLifecycleController: ControllerFactory = (ctx) => new NodeLifecycleController(ctx);
