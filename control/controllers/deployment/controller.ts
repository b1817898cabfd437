/**
 * The Deployment controller (Kubernetes' pkg/controller/deployment/deployment_controller.go):
 * informer handlers that only enqueue Deployment keys, and one reconcile(key) —
 * syncDeployment — that claims the Deployment's ReplicaSets and takes one step of its
 * rollout (sync.ts, rolling.ts, recreate.ts, progress.ts).
 *
 * What wakes a Deployment: its own changes; a change to a ReplicaSet it controls (or, for
 * an orphan, to every Deployment whose selector matches it, which may adopt it); for
 * Recreate, the deletion of one of its pods (the new ReplicaSet waits for the old pods to be
 * gone); and the progress-deadline timer of a stuck rollout.
 */
import type { Clock } from '../../../api/clock.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { DeletedFinalStateUnknown, SharedInformer } from '../../../api/client/informer.js';
import { deletedObject } from '../../../api/client/informer.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import { labelSelectorFromObject } from '../../../api/meta/labels.js';
import { controllerOf } from '../../../api/podutil.js';
import type { Deployment, Pod, ReplicaSet } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import {
  CONTROLLER_INDEX,
  controllerIndexFunc,
  ControllerRefManager,
  freshOwnerGetter,
  ownersSelecting,
  recheckDeletionTimestamp,
  resolveControllerRef,
} from '../ref-manager.js';
import type { Controller, ControllerContext, Logger } from '../context.js';
import { runQueue } from '../run.js';
import { rolloutRecreate } from './recreate.js';
import type { PodMap } from './recreate.js';
import { rolloutRolling } from './rolling.js';
import type { SyncContext } from './sync.js';
import {
  checkPausedConditions,
  isScalingEvent,
  sync,
  syncStatusOnly,
  updateDeploymentStatus,
} from './sync.js';

/** The controller's name in kube-controller-manager's `--controllers` list. */
export const DEPLOYMENT_CONTROLLER_NAME = 'deployment';

const OWNER_KIND = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;

/** Runs Deployments (see the file comment). Build it with deploymentController(ctx). */
export class DeploymentController implements Controller, SyncContext {
  readonly name = DEPLOYMENT_CONTROLLER_NAME;
  readonly client: RestClient;
  readonly clock: Clock;
  readonly recorder: EventRecorder;
  readonly queue: RateLimitingQueue<string>;
  private readonly logger: Logger;
  private readonly workers: number;
  private readonly deployments: SharedInformer<Deployment>;
  private readonly replicaSets: SharedInformer<ReplicaSet>;
  private readonly pods: SharedInformer<Pod>;

  constructor(ctx: ControllerContext) {
    this.client = ctx.client;
    this.clock = ctx.clock;
    this.logger = ctx.logger;
    this.recorder = ctx.recorder('deployment-controller');
    this.workers = ctx.config.concurrentDeploymentSyncs;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.deployments = ctx.informers.informerFor<Deployment>(resources.deployments);
    this.replicaSets = ctx.informers.informerFor<ReplicaSet>(resources.replicasets);
    this.pods = ctx.informers.informerFor<Pod>(resources.pods);
    this.pods.addIndexers({ [CONTROLLER_INDEX]: controllerIndexFunc });

    this.deployments.addEventHandler({
      onAdd: (d) => this.enqueue(d),
      onUpdate: (_, d) => this.enqueue(d),
      onDelete: (d) => this.enqueue(deletedObject(d)),
    });
    this.replicaSets.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (old, cur) => this.updateReplicaSet(old, cur),
      onDelete: (rs) => this.deleteReplicaSet(rs),
    });
    this.pods.addEventHandler({ onDelete: (pod) => this.deletePod(pod) });
  }

  get rsLister() {
    return this.replicaSets.lister();
  }

  /** Works the queue with `concurrentDeploymentSyncs` workers until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: this.workers,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.logger,
    });
  }

  enqueue(d: Deployment): void {
    this.queue.add(metaNamespaceKey(d));
  }

  enqueueAfter(d: Deployment, ms: number): void {
    this.queue.addAfter(metaNamespaceKey(d), ms);
  }

  enqueueRateLimited(d: Deployment): void {
    this.queue.addRateLimited(metaNamespaceKey(d));
  }

  /** The Deployment that `ref` (a controllerRef) names, if it is cached with the same uid. */
  private resolveControllerRef(
    namespace: string | undefined,
    ref: ReturnType<typeof controllerOf>,
  ): Deployment | undefined {
    return resolveControllerRef(this.deployments.lister(), OWNER_KIND, namespace, ref);
  }

  /** Deployments in the ReplicaSet's namespace whose (non-empty) selector matches its labels. */
  private deploymentsForReplicaSet(rs: ReplicaSet): Deployment[] {
    return ownersSelecting(this.deployments.lister(), rs, (d) => labelSelectorFromObject(d.spec.selector));
  }

  private addReplicaSet(rs: ReplicaSet): void {
    if (rs.metadata.deletionTimestamp) return this.deleteReplicaSet(rs);
    const ref = controllerOf(rs);
    if (ref) {
      const d = this.resolveControllerRef(rs.metadata.namespace, ref);
      if (d) this.enqueue(d);
      return;
    }
    // An orphan: whoever matches may adopt it.
    for (const d of this.deploymentsForReplicaSet(rs)) this.enqueue(d);
  }

  private updateReplicaSet(old: ReplicaSet, cur: ReplicaSet): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    const curRef = controllerOf(cur);
    const oldRef = controllerOf(old);
    const refChanged = curRef?.uid !== oldRef?.uid;
    if (refChanged && oldRef) {
      const d = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (d) this.enqueue(d);
    }
    if (curRef) {
      const d = this.resolveControllerRef(cur.metadata.namespace, curRef);
      if (d) this.enqueue(d);
      return;
    }
    const labelsChanged =
      JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
    if (labelsChanged || refChanged) {
      for (const d of this.deploymentsForReplicaSet(cur)) this.enqueue(d);
    }
  }

  private deleteReplicaSet(obj: ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>): void {
    const rs = deletedObject(obj);
    const d = this.resolveControllerRef(rs.metadata.namespace, controllerOf(rs));
    if (d) this.enqueue(d);
  }

  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = deletedObject(obj);
    const rsRef = controllerOf(pod);
    if (!rsRef || rsRef.kind !== 'ReplicaSet') return;
    const rs = this.replicaSets.lister().get(pod.metadata.namespace, rsRef.name);
    if (!rs || rs.metadata.uid !== rsRef.uid) return;
    const d = this.resolveControllerRef(rs.metadata.namespace, controllerOf(rs));
    // Only Recreate waits for pods; a RollingUpdate follows its ReplicaSets' status.
    if (d?.spec.strategy?.type === 'Recreate') this.enqueue(d);
  }

  /**
   * The ReplicaSets of `d` after adoption and release (getReplicaSetsForDeployment), as
   * copies this sync may change.
   * @throws AggregateError when an adoption or release failed.
   */
  private async replicaSetsFor(d: Deployment): Promise<ReplicaSet[]> {
    const candidates = this.replicaSets
      .lister()
      .namespace(d.metadata.namespace ?? '')
      .list();
    const manager = new ControllerRefManager<ReplicaSet>({
      client: this.client,
      resource: resources.replicasets,
      owner: d,
      ownerKind: OWNER_KIND,
      selector: labelSelectorFromObject(d.spec.selector),
      canAdopt: recheckDeletionTimestamp(freshOwnerGetter(this.client, resources.deployments, d)),
    });
    return (await manager.claim(candidates)).map((rs) => structuredClone(rs));
  }

  /** The Deployment's pods grouped by the uid of their controlling ReplicaSet (getPodMapForDeployment). */
  private podMapFor(d: Deployment, rsList: readonly ReplicaSet[]): PodMap {
    // The pods each ReplicaSet controls, from the controller-uid index: upstream lists the
    // namespace's pods by the Deployment's selector and keeps those, the same set.
    const map = new Map<string, Pod[]>();
    const selector = labelSelectorFromObject(d.spec.selector);
    const lister = this.pods.lister();
    const ns = d.metadata.namespace ?? '';
    for (const rs of rsList) {
      const uid = rs.metadata.uid!;
      map.set(
        uid,
        lister.byIndex(CONTROLLER_INDEX, `${ns}/${uid}`).filter((p) => selector.matches(p.metadata.labels)),
      );
    }
    return map;
  }

  /**
   * syncDeployment: reads the Deployment from the cache and takes one step — status only
   * while it is being deleted; scaling only while paused or when spec.replicas changed;
   * otherwise one step of its strategy. Throws to be retried.
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const cached = this.deployments.lister().get(namespace, name);
    if (!cached) return;
    const d = structuredClone(cached);

    if (labelSelectorFromObject(d.spec.selector).empty) {
      this.recorder.event(
        d,
        'Warning',
        'SelectingAll',
        'This deployment is selecting all pods. A non-empty selector is required.',
      );
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        (d.status ??= {}).observedGeneration = d.metadata.generation ?? 0;
        await updateDeploymentStatus(this, d);
      }
      return;
    }

    const rsList = await this.replicaSetsFor(d);
    if (d.metadata.deletionTimestamp) return syncStatusOnly(this, d, rsList);

    await checkPausedConditions(this, d);
    if (d.spec.paused) return sync(this, d, rsList);
    if (await isScalingEvent(this, d, rsList)) return sync(this, d, rsList);

    if (d.spec.strategy?.type === 'Recreate') {
      return rolloutRecreate(this, d, rsList, this.podMapFor(d, rsList));
    }
    return rolloutRolling(this, d, rsList);
  }
}
