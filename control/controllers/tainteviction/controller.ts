/**
 * The taint eviction controller (kube-controller-manager's `taint-eviction-controller`,
 * pkg/controller/tainteviction): deletes the pods on nodes with NoExecute taints they do
 * not tolerate — at once, or when their tolerationSeconds run out (schedule.ts).
 *
 * Contract:
 * - Keys are pods (`namespace/name`). A pod is enqueued when it appears, disappears, or its
 *   node or tolerations change; all pods of a node are enqueued when the node's NoExecute
 *   taints change. A pod waiting out its toleration is re-enqueued for that moment.
 * - An eviction records a `TaintManagerEviction` event "Marking for deletion Pod ns/name",
 *   adds the `DisruptionTarget` condition (reason `DeletionByTaintManager`) and deletes the
 *   pod with its default grace period (precondition: its uid). A dropped schedule records
 *   "Cancelling deletion of Pod ns/name".
 * - Pods already terminating are left alone: on an unreachable node nobody confirms their
 *   deletion, they stay terminating, and their controllers replace them (terminating pods
 *   are not active).
 */
import { isConflict, isNotFound } from '../../../api/client/errors.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { SharedInformer } from '../../../api/client/informer.js';
import { deletedObject } from '../../../api/client/informer.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import { rfc3339 } from '../../../api/object.js';
import type { Node, Pod, Taint } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import { addPodNodeNameIndex, POD_NODE_NAME_INDEX } from '../nodelifecycle/pod-index.js';
import { runQueue } from '../run.js';
import { EvictionSchedule } from './schedule.js';

/** The controller's name in kube-controller-manager's --controllers list. */
export const TAINT_EVICTION_CONTROLLER_NAME = 'taint-eviction-controller';
/** Workers evicting concurrently (Kubernetes runs 8). */
const WORKERS = 8;

/** The NoExecute taints of a node (none for a missing node). */
function noExecuteTaints(node: Node | undefined): Taint[] {
  return (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/** See the file comment. */
export class TaintEvictionController implements Controller {
  readonly name = TAINT_EVICTION_CONTROLLER_NAME;
  private readonly recorder: EventRecorder;
  private readonly nodes: SharedInformer<Node>;
  private readonly pods: SharedInformer<Pod>;
  private readonly queue: RateLimitingQueue<string>;
  private readonly schedule = new EvictionSchedule();

  constructor(private readonly ctx: ControllerContext) {
    this.recorder = ctx.recorder(TAINT_EVICTION_CONTROLLER_NAME);
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.nodes = ctx.informers.informerFor<Node>(resources.nodes);
    this.pods = ctx.informers.informerFor<Pod>(resources.pods);
    addPodNodeNameIndex(this.pods);

    const enqueuePod = (pod: Pod): void => this.queue.add(metaNamespaceKey(pod));
    this.pods.addEventHandler({
      onAdd: enqueuePod,
      onUpdate: (old, pod) => {
        if (
          old.spec.nodeName !== pod.spec.nodeName ||
          JSON.stringify(old.spec.tolerations ?? []) !== JSON.stringify(pod.spec.tolerations ?? [])
        )
          enqueuePod(pod);
      },
      onDelete: (obj) => enqueuePod(deletedObject(obj)),
    });
    const enqueueNodePods = (node: Node): void => {
      for (const pod of this.pods.lister().byIndex(POD_NODE_NAME_INDEX, node.metadata.name!)) enqueuePod(pod);
    };
    this.nodes.addEventHandler({
      onAdd: enqueueNodePods,
      onUpdate: (old, node) => {
        if (JSON.stringify(noExecuteTaints(old)) !== JSON.stringify(noExecuteTaints(node)))
          enqueueNodePods(node);
      },
      onDelete: (obj) => enqueueNodePods(deletedObject(obj)),
    });
  }

  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: WORKERS,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** Evicts pod `key` now, schedules a look at it later, or drops its schedule (see the file comment). */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pod = this.pods.lister().get(namespace, name);
    if (!pod || !pod.spec.nodeName || pod.metadata.deletionTimestamp) {
      if (this.schedule.cancel(key) && !pod?.metadata.deletionTimestamp) this.cancelled(namespace, name);
      return;
    }
    const now = this.ctx.clock.now();
    const taints = noExecuteTaints(this.nodes.lister().get(pod.spec.nodeName));
    const decision = this.schedule.decide(key, taints, pod.spec.tolerations, now);
    switch (decision.action) {
      case 'none':
        if (decision.cancelled) this.cancelled(namespace, name);
        return;
      case 'wait':
        this.queue.addAfter(key, decision.fireAt - now);
        return;
      case 'evict':
        await this.evict(pod);
        this.schedule.cancel(key);
        return;
    }
  }

  private cancelled(namespace: string, name: string): void {
    this.recorder.event(
      { apiVersion: 'v1', kind: 'Pod', namespace, name },
      'Normal',
      'TaintManagerEviction',
      `Cancelling deletion of Pod ${namespace}/${name}`,
    );
  }

  /** Marks the pod as a disruption target and deletes it; a pod already gone (or replaced) is done. */
  private async evict(pod: Pod): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    this.ctx.logger.info('deleting pod on a NoExecute-tainted node', {
      pod: `${namespace}/${name}`,
      node: pod.spec.nodeName,
    });
    this.recorder.event(
      pod,
      'Normal',
      'TaintManagerEviction',
      `Marking for deletion Pod ${namespace}/${name}`,
    );
    try {
      const condition = (pod.status?.conditions ?? []).find((c) => c.type === 'DisruptionTarget');
      if (condition?.status !== 'True') {
        await this.ctx.client.patch(
          resources.pods,
          namespace,
          name!,
          'strategic',
          {
            status: {
              conditions: [
                {
                  type: 'DisruptionTarget',
                  status: 'True',
                  reason: 'DeletionByTaintManager',
                  message: 'Taint manager: deleting due to NoExecute taint',
                  lastTransitionTime: rfc3339(new Date(this.ctx.clock.now())),
                },
              ],
            },
          },
          { subresource: 'status' },
        );
      }
      await this.ctx.client.delete(resources.pods, namespace, name!, uid ? { preconditions: { uid } } : {});
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}

/** The ControllerFactory of the taint eviction controller (registry name `taint-eviction-controller`). */
export const taintEvictionController: ControllerFactory = (ctx) => new TaintEvictionController(ctx);
