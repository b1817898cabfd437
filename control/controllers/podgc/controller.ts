/**
 * The Pod garbage collector (Kubernetes' pkg/controller/podgc). Every gcCheckPeriod
 * (20 s; `podGCPeriodSeconds`) it reads the pod and node caches and force-deletes
 * (grace period 0, since no kubelet will confirm), after marking them Failed:
 *
 * - terminated pods (Succeeded/Failed) beyond `terminatedPodGCThreshold`, evicted ones
 *   first, then oldest first;
 * - terminating pods on a NotReady node tainted `node.kubernetes.io/out-of-service`;
 * - orphaned pods, bound to a node that does not exist — only after the node has been
 *   missing for a quarantine (40 s; `podGCQuarantineSeconds`) and a GET of the node from
 *   the API server (not the cache) confirms it is gone; these get the condition
 *   DisruptionTarget=True, reason DeletionByPodGC;
 * - terminating pods never scheduled (no nodeName).
 *
 * Unlike the queue-driven controllers this one is a periodic sweep, as upstream: its
 * decisions depend on counts and on time, not on single objects.
 */

import { isConflict, isNotFound } from '../../../api/client/errors.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { rfc3339 } from '../../../api/object.js';
import { getCondition } from '../../../api/podutil.js';
import { DelayingQueue } from '../../../api/workqueue/delaying.js';
import type { Condition, Node, Pod } from '../../../api/types.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import { byEvictionAndCreationTimestamp, isPodTerminated, terminatedPodsToDelete } from './select.js';
import { errorMessage } from '../../../api/errors.js';

/** Default seconds between passes (gcCheckPeriod). */
export const GC_CHECK_PERIOD_SECONDS = 20;
/** Default seconds a missing node is quarantined before its pods go (quarantineTime). */
export const QUARANTINE_SECONDS = 40;
/** Taint an admin sets on a node known to be down, letting its terminating pods go (v1.TaintNodeOutOfService). */
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
/** Deletions in flight at once during a pass. */
const DELETE_PARALLELISM = 20;

/** See the file comment. */
export class PodGCController implements Controller {
  readonly name = 'podgc';
  private readonly pods: Lister<Pod>;
  private readonly nodes: Lister<Node>;
  private readonly threshold: number;
  private readonly periodMs: number;
  private readonly quarantineMs: number;
  /** Node names seen missing, each becoming ready after the quarantine. */
  private readonly nodeQueue: DelayingQueue<string>;
  private completedPasses = 0;

  /** @throws RangeError when the period or quarantine is not a positive number. */
  constructor(private readonly ctx: ControllerContext) {
    this.threshold = ctx.config.terminatedPodGCThreshold;
    this.periodMs = (ctx.config.podGCPeriodSeconds ?? GC_CHECK_PERIOD_SECONDS) * 1000;
    this.quarantineMs = (ctx.config.podGCQuarantineSeconds ?? QUARANTINE_SECONDS) * 1000;
    if (!(this.periodMs > 0) || !(this.quarantineMs > 0))
      throw new RangeError('podgc: podGCPeriodSeconds and podGCQuarantineSeconds must be > 0');
    this.nodeQueue = new DelayingQueue<string>({ clock: ctx.clock });
    this.pods = ctx.informers.informerFor<Pod>(resources.pods).lister();
    this.nodes = ctx.informers.informerFor<Node>(resources.nodes).lister();
  }

  /** Number of passes finished so far (for tests and metrics). */
  get passes(): number {
    return this.completedPasses;
  }

  /** Runs a pass at once, then one every period, until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      while (!signal.aborted) {
        try {
          await this.gc();
        } catch (err) {
          this.ctx.logger.warn('podgc: pass failed', { error: errorMessage(err) });
        }
        this.completedPasses++;
        await this.ctx.clock.sleep(this.periodMs, signal);
      }
    } finally {
      this.nodeQueue.shutDown();
    }
  }

  /** One pass over the caches (gc). */
  async gc(): Promise<void> {
    const pods = this.pods.list();
    const nodes = this.nodes.list();
    await this.deleteAll(terminatedPodsToDelete(pods, this.threshold), 'terminated');
    await this.gcTerminatingOutOfService(pods);
    await this.gcOrphaned(pods, nodes);
    await this.deleteAll(
      pods.filter((p) => p.metadata.deletionTimestamp && !p.spec.nodeName),
      'unscheduled terminating',
    );
  }

  private async gcTerminatingOutOfService(pods: readonly Pod[]): Promise<void> {
    const victims = pods.filter((p) => {
      if (!p.metadata.deletionTimestamp || !p.spec.nodeName) return false;
      const node = this.nodes.get(p.spec.nodeName);
      if (!node) return false;
      const ready = getCondition(node.status?.conditions, 'Ready')?.status === 'True';
      return !ready && (node.spec?.taints ?? []).some((t) => t.key === TAINT_OUT_OF_SERVICE);
    });
    await this.deleteAll(
      victims.sort(byEvictionAndCreationTimestamp),
      'terminating on an out-of-service node',
    );
  }

  private async gcOrphaned(pods: readonly Pod[], nodes: readonly Node[]): Promise<void> {
    const existing = new Set(nodes.map((n) => n.metadata.name!));
    for (const p of pods) {
      if (p.spec.nodeName && !existing.has(p.spec.nodeName))
        this.nodeQueue.addAfter(p.spec.nodeName, this.quarantineMs);
    }
    const deleted = new Set<string>();
    // len() counts only names whose quarantine is over.
    while (this.nodeQueue.len() > 0) {
      const name = await this.nodeQueue.get();
      if (name === undefined) return;
      try {
        if (!existing.has(name) && !(await this.nodeExists(name))) deleted.add(name);
      } catch (err) {
        // Re-queued by a later pass if still missing.
        this.ctx.logger.warn('podgc: cannot check node', { node: name, error: String(err) });
      } finally {
        this.nodeQueue.done(name);
      }
    }
    if (deleted.size === 0) return;
    await this.deleteAll(
      pods.filter((p) => deleted.has(p.spec.nodeName ?? '')),
      'orphaned',
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'DeletionByPodGC',
        message: 'PodGC: node no longer exists',
      },
    );
  }

  private async nodeExists(name: string): Promise<boolean> {
    try {
      await this.ctx.client.get(resources.nodes, undefined, name);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  private async deleteAll(pods: readonly Pod[], why: string, condition?: Condition): Promise<void> {
    for (let i = 0; i < pods.length; i += DELETE_PARALLELISM) {
      const batch = pods.slice(i, i + DELETE_PARALLELISM);
      const results = await Promise.allSettled(batch.map((p) => this.markFailedAndDelete(p, condition)));
      results.forEach((r, j) => {
        const pod = batch[j]!;
        if (r.status === 'rejected')
          this.ctx.logger.warn('podgc: deleting pod failed', {
            pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
            why,
            error: String(r.reason),
          });
        else
          this.ctx.logger.info('podgc: force-deleted pod', {
            pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
            why,
          });
      });
    }
  }

  /**
   * Marks a pod Failed (with `condition`, if given) unless it already finished — a pod on
   * a vanished node would otherwise stay Running forever — then deletes it with grace 0
   * (markFailedAndDeletePodWithCondition). A pod already gone, or replaced by a new pod of
   * the same name, is left alone.
   */
  private async markFailedAndDelete(pod: Pod, condition?: Condition): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    try {
      if (!isPodTerminated(pod)) {
        const status: Record<string, unknown> = { phase: 'Failed' };
        if (condition) {
          const previous = getCondition(pod.status?.conditions, condition.type);
          const now = rfc3339(new Date(this.ctx.clock.now()));
          status.conditions = [
            {
              ...condition,
              lastProbeTime: null,
              lastTransitionTime: previous?.status === condition.status ? previous.lastTransitionTime : now,
            },
          ];
        }
        // Strategic merge: `conditions` merge by type, the others stay.
        await this.ctx.client.patch(
          resources.pods,
          namespace,
          name!,
          'strategic',
          { metadata: { uid }, status },
          { subresource: 'status' },
        );
      }
      await this.ctx.client.delete(resources.pods, namespace, name!, {
        gracePeriodSeconds: 0,
        ...(uid ? { preconditions: { uid } } : {}),
      });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}

/** Factory of the Pod GC controller (`podgc` in kube-controller-manager's --controllers). */
export const podGCController: ControllerFactory = (ctx) => new PodGCController(ctx);
