/**
 * The StatefulSet controller (Kubernetes' pkg/controller/statefulset, stateful_set.go):
 * pods with stable names `<set>-<ordinal>`, created, deleted and updated in ordinal order.
 *
 * Informer handlers only map an event to StatefulSet keys and enqueue them: a pod's event
 * goes to its controller (its controllerRef); an orphan's to every set whose selector
 * matches it, so one can adopt it. There are no expectations: pod names are fixed, so a
 * create from a stale cache fails with AlreadyExists and the key is retried, and the
 * ordered logic acts on one pod at a time.
 *
 * reconcile(key), one worker per key at a time (sync):
 *  1. the set from the cache (gone: done);
 *  2. its ControllerRevisions (owned ones, orphans matching its selector adopted) and its
 *     pods: those of the namespace matching the selector whose names make them members
 *     (`<set>-<n>`), claimed through ControllerRefManager;
 *  3. StatefulSetControl.updateStatefulSet (control.ts) acts and computes status;
 *  4. a RollingUpdate whose pods are all updated and ready becomes current
 *     (completeRollingUpdate); status is written when it changed;
 *  5. with minReadySeconds, when some ready pods are not yet available, look again then.
 * A failed write is thrown: the key is retried with backoff.
 */
import { isDeepStrictEqual } from 'node:util';
import { deletedObject } from '../../../api/client/informer.js';
import type { DeletedFinalStateUnknown } from '../../../api/client/informer.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import { labelSelectorFromObject, type LabelSelector } from '../../../api/meta/labels.js';
import type { OwnerReference } from '../../../api/object.js';
import { controllerOf, isPodReady } from '../../../api/podutil.js';
import type { PersistentVolumeClaim, Pod, StatefulSet } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, Logger } from '../context.js';
import {
  ControllerRefManager,
  freshOwnerGetter,
  ownersSelecting,
  recheckDeletionTimestamp,
  resolveControllerRef,
} from '../ref-manager.js';
import { runQueue } from '../run.js';
import { StatefulSetControl, type StatefulSetStatus } from './control.js';
import type { ControllerRevision } from './history.js';
import { RealStatefulPodControl, type StatefulPodControl } from './pod-control.js';
import { isMemberOf, STATEFULSET_KIND } from './utils.js';

/** The component name of its events. */
export const STATEFULSET_CONTROLLER_COMPONENT = 'statefulset-controller';

/** Options beyond the shared context (tests). */
export interface StatefulSetControllerOptions {
  /** How pods and claims are written; default RealStatefulPodControl over ctx.client. */
  podControl?: StatefulPodControl;
  /** Workers; default 5 (--concurrent-statefulset-syncs). */
  workers?: number;
}

/** The StatefulSet controller; see the file comment. */
export class StatefulSetController implements Controller {
  readonly name = 'statefulset';
  private readonly ctx: ControllerContext;
  private readonly logger: Logger;
  private readonly queue: RateLimitingQueue<string>;
  private readonly setLister: Lister<StatefulSet>;
  private readonly podLister: Lister<Pod>;
  private readonly revisionLister: Lister<ControllerRevision>;
  private readonly podControl: StatefulPodControl;
  private readonly workers: number;
  private stopping: AbortSignal | undefined;

  constructor(ctx: ControllerContext, opts: StatefulSetControllerOptions = {}) {
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.workers = opts.workers ?? 5;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const setInformer = ctx.informers.informerFor<StatefulSet>(resources.statefulsets);
    const podInformer = ctx.informers.informerFor<Pod>(resources.pods);
    const revisionInformer = ctx.informers.informerFor<ControllerRevision>(resources.controllerrevisions);
    const claimInformer = ctx.informers.informerFor<PersistentVolumeClaim>(resources.persistentvolumeclaims);
    this.setLister = setInformer.lister();
    this.podLister = podInformer.lister();
    this.revisionLister = revisionInformer.lister();
    this.podControl =
      opts.podControl ??
      new RealStatefulPodControl({
        client: ctx.client,
        recorder: ctx.recorder(STATEFULSET_CONTROLLER_COMPONENT),
        claims: claimInformer.lister(),
      });
    setInformer.addEventHandler({
      onAdd: (s) => this.enqueue(s),
      onUpdate: (_, s) => this.enqueue(s),
      onDelete: (s) => this.enqueue(deletedObject(s)),
    });
    podInformer.addEventHandler({
      onAdd: (p) => this.podChanged(p),
      onUpdate: (old, cur) => this.updatePod(old, cur),
      onDelete: (p) => this.deletePod(p),
    });
  }

  /** Runs the workers until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    this.stopping = signal;
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: this.workers,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.logger,
    });
  }

  // ---- event handlers: compute keys, enqueue ----

  private enqueue(set: StatefulSet): void {
    this.queue.add(metaNamespaceKey(set));
  }

  private resolveControllerRef(namespace: string | undefined, ref: OwnerReference): StatefulSet | undefined {
    return resolveControllerRef(this.setLister, STATEFULSET_KIND, namespace, ref);
  }

  /** Sets of the pod's namespace whose selector matches it (getPodStatefulSets). */
  private podStatefulSets(pod: Pod): StatefulSet[] {
    return ownersSelecting(this.setLister, pod, selectorOf);
  }

  private podChanged(pod: Pod): void {
    const ref = controllerOf(pod);
    if (ref) {
      const set = this.resolveControllerRef(pod.metadata.namespace, ref);
      if (set) this.enqueue(set);
      return;
    }
    for (const s of this.podStatefulSets(pod)) this.enqueue(s);
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    const oldRef = controllerOf(old);
    const curRef = controllerOf(cur);
    if (oldRef && oldRef.uid !== curRef?.uid) {
      const set = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (set) this.enqueue(set);
    }
    this.podChanged(cur);
    if (curRef) {
      const set = this.resolveControllerRef(cur.metadata.namespace, curRef);
      const minReadySeconds = set?.spec.minReadySeconds ?? 0;
      if (set && minReadySeconds > 0 && !isPodReady(old) && isPodReady(cur)) {
        // Nothing will say when it becomes available; look again then (+1 s for the
        // seconds precision of lastTransitionTime).
        this.queue.addAfter(metaNamespaceKey(set), (minReadySeconds + 1) * 1000);
      }
    }
  }

  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = deletedObject(obj);
    const ref = controllerOf(pod);
    if (!ref) return;
    const set = this.resolveControllerRef(pod.metadata.namespace, ref);
    if (set) this.enqueue(set);
  }

  // ---- reconcile ----

  /**
   * Syncs one StatefulSet; see the file comment. Public for tests; the workers call it.
   * @throws when claiming, a pod, claim or revision write, or the status write failed (retry).
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const set = this.setLister.get(namespace, name);
    if (!set) return;
    const selector = selectorOf(set);
    if (!selector) {
      this.logger.warn('statefulset: invalid selector', { key });
      return;
    }
    const canAdopt = recheckDeletionTimestamp(freshOwnerGetter(this.ctx.client, resources.statefulsets, set));
    const revisions = await new ControllerRefManager<ControllerRevision>({
      client: this.ctx.client,
      resource: resources.controllerrevisions,
      owner: set,
      ownerKind: STATEFULSET_KIND,
      selector,
      canAdopt,
    }).claim(this.revisionLister.namespace(namespace).list());
    const pods = await new ControllerRefManager<Pod>({
      client: this.ctx.client,
      resource: resources.pods,
      owner: set,
      ownerKind: STATEFULSET_KIND,
      selector,
      canAdopt,
    }).claim(this.podLister.namespace(namespace).list(), [(p) => isMemberOf(set, p)]);

    const control = new StatefulSetControl({
      client: this.ctx.client,
      podControl: this.podControl,
      recorder: this.ctx.recorder(STATEFULSET_CONTROLLER_COMPONENT),
      now: () => this.ctx.clock.now(),
      ...(this.stopping ? { stopping: this.stopping } : {}),
    });
    const status = await control.updateStatefulSet(set, pods, revisions);
    completeRollingUpdate(set, status);
    await this.updateStatus(set, status);
    const minReadySeconds = set.spec.minReadySeconds ?? 0;
    if (minReadySeconds > 0 && (status.readyReplicas ?? 0) !== (status.availableReplicas ?? 0)) {
      this.queue.addAfter(key, minReadySeconds * 1000);
    }
  }

  /** Writes status through the subresource unless nothing changed (updateStatefulSetStatus). */
  private async updateStatus(set: StatefulSet, status: StatefulSetStatus): Promise<void> {
    const next: StatefulSetStatus = { ...status };
    // readyReplicas, currentReplicas and updatedReplicas are omitempty in Kubernetes'
    // StatefulSetStatus (replicas and availableReplicas are not): a zero is left out.
    for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const)
      if (next[k] === 0) delete next[k];
    if (set.status?.conditions) next.conditions = set.status.conditions;
    if (isDeepStrictEqual(normalize(set.status), normalize(next))) return;
    await this.ctx.client.updateStatus<StatefulSet>(resources.statefulsets, { ...set, status: next });
  }
}

/** A finished RollingUpdate: every pod updated and ready makes the update revision current. */
export function completeRollingUpdate(set: StatefulSet, status: StatefulSetStatus): void {
  if (
    (set.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
    status.updatedReplicas === status.replicas &&
    status.readyReplicas === status.replicas
  ) {
    status.currentReplicas = status.updatedReplicas;
    status.currentRevision = status.updateRevision;
  }
}

function normalize(s: StatefulSetStatus | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s ?? {})) if (v !== undefined && v !== 0 && v !== '') out[k] = v;
  return out;
}

function selectorOf(set: StatefulSet): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(set.spec.selector);
  } catch {
    return undefined;
  }
}
