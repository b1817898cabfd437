/**
 * The ReplicaSet controller (Kubernetes' pkg/controller/replicaset): keeps `spec.replicas`
 * (default 1) active pods matching each ReplicaSet's selector.
 *
 * Informer handlers only map an event to ReplicaSet keys and enqueue them (a pod's event
 * goes to its controller, found through its controllerRef; an orphan's to every
 * ReplicaSet whose selector matches it, so one can adopt it). They also feed the
 * expectations: a pod of ours appearing is an observed creation; a pod of ours getting a
 * deletionTimestamp or disappearing is an observed deletion.
 *
 * reconcile(key), one worker per key at a time:
 *  1. the ReplicaSet from the cache (gone: forget its expectations, done);
 *  2. active pods of its namespace (not terminal, no deletionTimestamp — so a pod being
 *     deleted is replaced at once), claimed through ControllerRefManager (adopt matching
 *     orphans, release own pods that stopped matching);
 *  3. if the expectations are satisfied and the ReplicaSet is not being deleted,
 *     manageReplicas: too few → create the difference (at most burstReplicas) in slow-start
 *     batches; too many → delete the difference (at most burstReplicas), chosen by
 *     getPodsToDelete;
 *  4. status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
 *     observedGeneration, ReplicaFailure) through the status subresource;
 *  5. with minReadySeconds, when all are ready but not yet all available, look again
 *     after minReadySeconds; a failed manageReplicas is thrown, so the key is retried with
 *     backoff.
 */
import { isNotFound } from '../../../api/client/errors.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { DeletedFinalStateUnknown } from '../../../api/client/informer.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import type { Clock } from '../../../api/clock.js';
import { labelSelectorFromObject } from '../../../api/meta/labels.js';
import type { LabelSelector } from '../../../api/meta/labels.js';
import type { OwnerReference } from '../../../api/object.js';
import { controllerOf, isPodActive, isPodReady } from '../../../api/podutil.js';
import type { Pod, ReplicaSet } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, Logger } from '../context.js';
import { UIDTrackingControllerExpectations } from '../expectations.js';
import { hasStatusCause, NAMESPACE_TERMINATING_CAUSE, RealPodControl } from '../podcontrol.js';
import type { PodControl } from '../podcontrol.js';
import {
  claimCandidates,
  CONTROLLER_INDEX,
  controllerIndexFunc,
  ControllerRefManager,
  freshOwnerGetter,
  recheckDeletionTimestamp,
  resolveControllerRef,
  type OwnerKind,
} from '../ref-manager.js';
import { runQueue } from '../run.js';
import { getPodsToDelete } from './pods-to-delete.js';
import { SLOW_START_INITIAL_BATCH_SIZE, slowStartBatch } from './slow-start.js';
import { calculateStatus, updateReplicaSetStatus } from './status.js';

/** Most pods created or deleted in one sync (replicaset.BurstReplicas). */
export const BURST_REPLICAS = 500;

/** The component name of its events. */
export const REPLICASET_CONTROLLER_COMPONENT = 'replicaset-controller';

/** The kind written into the controllerRef of its pods. */
export const REPLICASET_KIND: OwnerKind = { apiVersion: 'apps/v1', kind: 'ReplicaSet' };

/** Options beyond the shared context (tests). */
export interface ReplicaSetControllerOptions {
  /** Most pods created or deleted per sync; default BURST_REPLICAS. */
  burstReplicas?: number;
  /** How pods are created and deleted; default RealPodControl over ctx.client. */
  podControl?: PodControl;
}

/** `namespace/name` of a pod (controller.PodKey). */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/** The ReplicaSet controller; see the file comment. */
export class ReplicaSetController implements Controller {
  readonly name = 'replicaset';
  /** Outstanding creations/deletions per ReplicaSet key (exposed for tests). */
  readonly expectations: UIDTrackingControllerExpectations;
  private readonly ctx: ControllerContext;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly queue: RateLimitingQueue<string>;
  private readonly rsLister: Lister<ReplicaSet>;
  private readonly podLister: Lister<Pod>;
  private readonly podControl: PodControl;
  private readonly burstReplicas: number;

  /** @throws Error when burstReplicas is not a positive integer. */
  constructor(ctx: ControllerContext, opts: ReplicaSetControllerOptions = {}) {
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.clock = ctx.clock;
    this.burstReplicas = opts.burstReplicas ?? BURST_REPLICAS;
    if (!Number.isInteger(this.burstReplicas) || this.burstReplicas < 1)
      throw new Error(`replicaset: burstReplicas must be a positive integer, got ${this.burstReplicas}`);
    this.expectations = new UIDTrackingControllerExpectations({ clock: ctx.clock });
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.podControl =
      opts.podControl ??
      new RealPodControl({ client: ctx.client, recorder: ctx.recorder(REPLICASET_CONTROLLER_COMPONENT) });

    const rsInformer = ctx.informers.informerFor<ReplicaSet>(resources.replicasets);
    const podInformer = ctx.informers.informerFor<Pod>(resources.pods);
    podInformer.addIndexers({ [CONTROLLER_INDEX]: controllerIndexFunc });
    this.rsLister = rsInformer.lister();
    this.podLister = podInformer.lister();
    rsInformer.addEventHandler({
      onAdd: (rs) => this.enqueue(rs),
      onUpdate: (old, cur) => this.updateRS(old, cur),
      onDelete: (obj) => this.deleteRS(obj),
    });
    podInformer.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (old, cur) => this.updatePod(old, cur),
      onDelete: (obj) => this.deletePod(deletedObject(obj)),
    });
  }

  /** The signal of run(): a sync stops creating pods once it aborts. */
  private stopping: AbortSignal | undefined;

  /** Runs `concurrentReplicaSetSyncs` workers until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    this.stopping = signal;
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: this.ctx.config.concurrentReplicaSetSyncs,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.logger,
    });
  }

  // ---- event handlers: compute keys, feed expectations, enqueue ----

  private enqueue(rs: ReplicaSet): void {
    this.queue.add(metaNamespaceKey(rs));
  }

  private updateRS(old: ReplicaSet, cur: ReplicaSet): void {
    // Deleted and recreated under the same name between two events: the old one's
    // expectations must not hold back the new one.
    if (old.metadata.uid !== cur.metadata.uid) this.deleteRS(old);
    this.enqueue(cur);
  }

  private deleteRS(obj: ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>): void {
    const key = metaNamespaceKey(deletedObject(obj));
    this.expectations.deleteExpectations(key);
    this.queue.add(key);
  }

  /** The ReplicaSet a controllerRef points to, if cached with that uid (resolveControllerRef). */
  private resolveControllerRef(namespace: string | undefined, ref: OwnerReference): ReplicaSet | undefined {
    return resolveControllerRef(this.rsLister, REPLICASET_KIND, namespace, ref);
  }

  /**
   * ReplicaSets of the pod's namespace whose selector matches its labels
   * (GetPodReplicaSets). An empty or invalid selector matches nothing here.
   */
  private podReplicaSets(pod: Pod): ReplicaSet[] {
    const out: ReplicaSet[] = [];
    for (const rs of this.rsLister.namespace(pod.metadata.namespace ?? '').list()) {
      const selector = this.selectorOf(rs);
      if (!selector || selector.empty || !selector.matches(pod.metadata.labels)) continue;
      out.push(rs);
    }
    if (out.length > 1) {
      this.logger.warn('replicaset: more than one ReplicaSet selects a pod; fix their selectors', {
        pod: podKey(pod),
        replicaSets: out.map((rs) => rs.metadata.name),
      });
    }
    return out;
  }

  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) {
      // Seen for the first time already going (e.g. after a restart): a deletion, not a creation.
      this.deletePod(pod);
      return;
    }
    const ref = controllerOf(pod);
    if (ref) {
      const rs = this.resolveControllerRef(pod.metadata.namespace, ref);
      if (!rs) return;
      const key = metaNamespaceKey(rs);
      this.expectations.creationObserved(key);
      this.queue.add(key);
      return;
    }
    // An orphan: wake every ReplicaSet that might adopt it. No creation is observed: nobody
    // waits for an orphan.
    for (const rs of this.podReplicaSets(pod)) this.enqueue(rs);
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return; // a resync
    const labelChanged = !sameLabels(old.metadata.labels, cur.metadata.labels);
    if (cur.metadata.deletionTimestamp) {
      // A graceful delete sets deletionTimestamp first and removes the pod only when the
      // kubelet confirms. Count it as gone now, so the replacement starts at once.
      this.deletePod(cur);
      if (labelChanged) this.deletePod(old);
      return;
    }
    const curRef = controllerOf(cur);
    const oldRef = controllerOf(old);
    const refChanged = !sameRef(oldRef, curRef);
    if (refChanged && oldRef) {
      const rs = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (rs) this.enqueue(rs);
    }
    if (curRef) {
      const rs = this.resolveControllerRef(cur.metadata.namespace, curRef);
      if (!rs) return;
      this.enqueue(rs);
      const minReadySeconds = rs.spec.minReadySeconds ?? 0;
      if (minReadySeconds > 0 && !isPodReady(old) && isPodReady(cur)) {
        // Nothing will tell us when the pod becomes available; look again then. The extra
        // second absorbs the seconds precision of lastTransitionTime.
        this.queue.addAfter(metaNamespaceKey(rs), (minReadySeconds + 1) * 1000);
      }
      return;
    }
    if (labelChanged || refChanged) for (const rs of this.podReplicaSets(cur)) this.enqueue(rs);
  }

  private deletePod(pod: Pod): void {
    const ref = controllerOf(pod);
    if (!ref) return; // nobody waits for an orphan to go
    const rs = this.resolveControllerRef(pod.metadata.namespace, ref);
    if (!rs) return;
    const key = metaNamespaceKey(rs);
    this.expectations.deletionObserved(key, podKey(pod));
    this.queue.add(key);
  }

  // ---- reconcile ----

  private selectorOf(rs: ReplicaSet): LabelSelector | undefined {
    try {
      return labelSelectorFromObject(rs.spec.selector);
    } catch {
      return undefined;
    }
  }

  /**
   * Syncs one ReplicaSet (syncReplicaSet); see the file comment. Public for tests; the
   * workers call it.
   * @throws when claiming pods, writing status, or creating/deleting pods failed (retry).
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const rs = this.rsLister.get(namespace, name);
    if (!rs) {
      this.expectations.deleteExpectations(key);
      return;
    }
    const rsNeedsSync = this.expectations.satisfiedExpectations(key);
    let selector: LabelSelector;
    try {
      selector = labelSelectorFromObject(rs.spec.selector);
    } catch (err) {
      // The API server validates selectors; retrying a broken one cannot help.
      this.logger.warn('replicaset: invalid selector', { key, error: String(err) });
      return;
    }
    // Our pods, matching or not (those whose labels changed must be released), and the
    // namespace's orphans: what upstream's list of the whole namespace can claim.
    const active = claimCandidates(this.podLister, rs).filter(isPodActive);
    const filteredPods = await this.claimPods(rs, selector, active);

    let manageReplicasErr: unknown;
    if (rsNeedsSync && !rs.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(key, rs, filteredPods);
      } catch (err) {
        manageReplicasErr = err;
      }
    }
    const status = calculateStatus(rs, filteredPods, manageReplicasErr, this.clock.now());
    const updated = await updateReplicaSetStatus(this.ctx.client, rs, status);
    const replicas = updated.spec.replicas ?? 1;
    const minReadySeconds = updated.spec.minReadySeconds ?? 0;
    if (
      manageReplicasErr === undefined &&
      minReadySeconds > 0 &&
      updated.status?.readyReplicas === replicas &&
      updated.status?.availableReplicas !== replicas
    ) {
      // A safety net for clock skew between us and whoever stamped the Ready condition.
      this.queue.addAfter(key, minReadySeconds * 1000);
    }
    if (manageReplicasErr !== undefined) throw manageReplicasErr;
  }

  private claimPods(rs: ReplicaSet, selector: LabelSelector, pods: Pod[]): Promise<Pod[]> {
    const manager = new ControllerRefManager<Pod>({
      client: this.ctx.client,
      resource: resources.pods,
      owner: rs,
      ownerKind: REPLICASET_KIND,
      selector,
      // An uncached read after listing the pods: the cache may not know yet that the
      // ReplicaSet is being deleted, and adopting then would hand pods to the garbage collector.
      canAdopt: recheckDeletionTimestamp(freshOwnerGetter(this.ctx.client, resources.replicasets, rs)),
    });
    return manager.claim(pods);
  }

  /** Creates or deletes pods to close the gap to spec.replicas (manageReplicas). */
  private async manageReplicas(key: string, rs: ReplicaSet, filteredPods: Pod[]): Promise<void> {
    const namespace = rs.metadata.namespace ?? '';
    const diff = filteredPods.length - (rs.spec.replicas ?? 1);
    if (diff < 0) {
      const toCreate = Math.min(-diff, this.burstReplicas);
      // Before the first create: its pod may reach the informer before the call returns.
      this.expectations.expectCreations(key, toCreate);
      const controllerRef: OwnerReference = {
        ...REPLICASET_KIND,
        name: rs.metadata.name ?? '',
        uid: rs.metadata.uid ?? '',
        controller: true,
        blockOwnerDeletion: true,
      };
      const { successes, error } = await slowStartBatch(toCreate, SLOW_START_INITIAL_BATCH_SIZE, async () => {
        // Stopping (SIGTERM, a lost lease): no more creates; the batch ends here.
        if (this.stopping?.aborted) throw new Error('the controller is stopping');
        try {
          await this.podControl.createPods(namespace, rs.spec.template, rs, controllerRef);
        } catch (err) {
          // Every create in a terminating namespace fails; that is not this ReplicaSet's failure.
          if (hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
          throw err;
        }
      });
      // Pods never created will never be observed; stop waiting for them. The next sync
      // starts the slow start over.
      for (let i = successes; i < toCreate; i++) this.expectations.creationObserved(key);
      if (error !== undefined) throw error;
      return;
    }
    if (diff > 0) {
      const toDelete = Math.min(diff, this.burstReplicas);
      const podsToDelete = getPodsToDelete(
        filteredPods,
        this.indirectlyRelatedPods(rs),
        toDelete,
        this.clock.now(),
      );
      // Exactly these pods: each is observed once, whether as a deletionTimestamp or a removal.
      this.expectations.expectDeletions(key, podsToDelete.map(podKey));
      const results = await Promise.allSettled(
        podsToDelete.map(async (pod) => {
          try {
            await this.podControl.deletePod(namespace, pod.metadata.name ?? '', rs);
          } catch (err) {
            // The informer will not see this deletion (or already saw it: NotFound).
            this.expectations.deletionObserved(key, podKey(pod));
            if (!isNotFound(err)) throw err;
          }
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /**
   * Pods of this ReplicaSet and of its siblings under the same controller (e.g. one
   * Deployment's ReplicaSets), each once (getIndirectlyRelatedPods): they decide which
   * nodes are doubled up when choosing pods to delete.
   */
  private indirectlyRelatedPods(rs: ReplicaSet): Pod[] {
    const owner = controllerOf(rs);
    const family = owner
      ? this.rsLister
          .namespace(rs.metadata.namespace ?? '')
          .list()
          .filter((r) => controllerOf(r)?.uid === owner.uid)
      : [rs];
    const seen = new Set<string>();
    const related: Pod[] = [];
    for (const r of family) {
      const selector = this.selectorOf(r);
      if (!selector) continue;
      for (const pod of this.podLister.namespace(r.metadata.namespace ?? '').list(selector)) {
        const uid = pod.metadata.uid ?? podKey(pod);
        if (seen.has(uid)) continue;
        seen.add(uid);
        related.push(pod);
      }
    }
    return related;
  }
}

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ea = Object.entries(a ?? {});
  if (ea.length !== Object.keys(b ?? {}).length) return false;
  return ea.every(([k, v]) => b?.[k] === v);
}

function sameRef(a: OwnerReference | undefined, b: OwnerReference | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.apiVersion === b.apiVersion &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.uid === b.uid &&
    a.controller === b.controller &&
    a.blockOwnerDeletion === b.blockOwnerDeletion
  );
}
