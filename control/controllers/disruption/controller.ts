/**
 * The disruption controller (kube-controller-manager's `disruption`,
 * pkg/controller/disruption): keeps every PodDisruptionBudget's status — expectedPods,
 * desiredHealthy, currentHealthy, disruptionsAllowed, disruptedPods, observedGeneration
 * and the DisruptionAllowed condition — which the Eviction API (control/apiserver/
 * eviction.ts) reads to allow or refuse an eviction and decrements when it allows one.
 *
 * Handlers only enqueue: a PDB's events its key; a pod's events the key of the first PDB
 * of its namespace whose selector matches it (getPdbForPod).
 *
 * reconcile(key):
 *  1. the PDB from the cache (gone: done);
 *  2. the pods of its namespace its selector matches (an empty selector matches none);
 *     none → a Normal NoPods event;
 *  3. expectedPods/desiredHealthy (budget.ts); when the scale is needed, each pod's
 *     controller: a ReplicaSet (its spec.replicas, unless a Deployment controls it: then
 *     the Deployment's), a StatefulSet (spec.replicas, read from the API); pods without a
 *     controller are reported (UnmanagedPods) and skipped; a controller that is not found
 *     fails the sync (`found no controllers for pod "x"`);
 *  4. disruptedPods kept while younger than 2 minutes (an older entry: a Warning
 *     NotDeleted event on the pod), currentHealthy, disruptionsAllowed, written through the
 *     status subresource unless unchanged; then, if an entry will expire, the key again then;
 *  5. a conflict is retried; any other failure sets disruptionsAllowed 0 and
 *     DisruptionAllowed False/SyncFailed with the error (failSafe) and is retried.
 *
 * A second queue (syncStalePodDisruption) watches pods that carry DisruptionTarget=True
 * without being deleted (an eviction whose delete failed after it set the condition):
 * 2 minutes after the condition's lastTransitionTime it is set back to False, unless the
 * pod is terminating, terminal, or the kubelet set it (TerminationByKubelet).
 */
import { isConflict, isNotFound } from '../../../api/client/errors.js';
import { errorMessage } from '../../../api/errors.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources, type ResourceRef } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { Clock } from '../../../api/clock.js';
import { labelSelectorFromObject, type LabelSelector } from '../../../api/meta/labels.js';
import { rfc3339 } from '../../../api/object.js';
import { controllerOf } from '../../../api/podutil.js';
import {
  DISRUPTION_ALLOWED_CONDITION,
  setStatusCondition,
  SYNC_FAILED_REASON,
  updateDisruptionAllowedCondition,
  type PodDisruptionBudget,
} from '../../../api/policy.js';
import type { Deployment, Pod, ReplicaSet } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, Logger } from '../context.js';
import { runQueue } from '../run.js';
import {
  buildDisruptedPodMap,
  conditionsAreUpToDate,
  countHealthyPods,
  disruptionsAllowed,
  expectedPodCount,
} from './budget.js';

/** How long a DisruptionTarget condition may stand on a pod that is not deleted (stalePodDisruptionTimeout). */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60 * 1000;

/** The component name of its events. */
export const DISRUPTION_CONTROLLER_COMPONENT = 'controllermanager';

/** apps/v1 StatefulSets, read on demand (no informer: the kind may not be served). */
const STATEFULSETS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'statefulsets',
  kind: 'StatefulSet',
  namespaced: true,
};

function selectorOf(pdb: PodDisruptionBudget): LabelSelector | undefined {
  try {
    const sel = labelSelectorFromObject(pdb.spec?.selector ?? null);
    return sel.empty ? undefined : sel;
  } catch {
    return undefined;
  }
}

/** The disruption controller; see the file comment. */
export class DisruptionController implements Controller {
  readonly name = 'disruption';
  private readonly ctx: ControllerContext;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly recorder: EventRecorder;
  private readonly queue: RateLimitingQueue<string>;
  private readonly stalePodQueue: RateLimitingQueue<string>;
  private readonly pdbLister: Lister<PodDisruptionBudget>;
  private readonly podLister: Lister<Pod>;
  private readonly rsLister: Lister<ReplicaSet>;
  private readonly deploymentLister: Lister<Deployment>;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.clock = ctx.clock;
    this.recorder = ctx.recorder(DISRUPTION_CONTROLLER_COMPONENT);
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.stalePodQueue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const pdbInformer = ctx.informers.informerFor<PodDisruptionBudget>(resources.poddisruptionbudgets);
    const podInformer = ctx.informers.informerFor<Pod>(resources.pods);
    this.pdbLister = pdbInformer.lister();
    this.podLister = podInformer.lister();
    this.rsLister = ctx.informers.informerFor<ReplicaSet>(resources.replicasets).lister();
    this.deploymentLister = ctx.informers.informerFor<Deployment>(resources.deployments).lister();
    pdbInformer.addEventHandler({
      onAdd: (pdb) => this.queue.add(metaNamespaceKey(pdb)),
      onUpdate: (_old, cur) => this.queue.add(metaNamespaceKey(cur)),
      onDelete: (obj) => this.queue.add(metaNamespaceKey(deletedObject(obj))),
    });
    podInformer.addEventHandler({
      onAdd: (pod) => {
        this.enqueueForPod(pod);
        this.enqueueStalePodDisruption(pod);
      },
      onUpdate: (_old, cur) => {
        this.enqueueForPod(cur);
        this.enqueueStalePodDisruption(cur);
      },
      onDelete: (obj) => this.enqueueForPod(deletedObject(obj)),
    });
  }

  /** Runs one worker per queue (kube-controller-manager runs one of each) until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([
      runQueue({
        name: this.name,
        queue: this.queue,
        workers: 1,
        reconcile: (key) => this.reconcile(key),
        signal,
        logger: this.logger,
      }),
      runQueue({
        name: `${this.name}-stale-pod-disruption`,
        queue: this.stalePodQueue,
        workers: 1,
        reconcile: (key) => this.syncStalePodDisruption(key),
        signal,
        logger: this.logger,
      }),
    ]);
  }

  /**
   * nonTerminatingPodHasStaleDisruptionCondition: undefined when the pod has no
   * DisruptionTarget=True that could go stale; else the milliseconds until it is stale (≥ 0).
   */
  private staleDisruptionIn(pod: Pod): number | undefined {
    if (pod.metadata.deletionTimestamp) return undefined;
    const cond = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    const phase = pod.status?.phase;
    if (
      !cond ||
      cond.status !== 'True' ||
      cond.reason === 'TerminationByKubelet' ||
      phase === 'Succeeded' ||
      phase === 'Failed'
    )
      return undefined;
    const since = cond.lastTransitionTime ? Date.parse(cond.lastTransitionTime) : NaN;
    const age = Number.isNaN(since) ? STALE_POD_DISRUPTION_TIMEOUT_MS : this.clock.now() - since;
    return Math.max(0, STALE_POD_DISRUPTION_TIMEOUT_MS - age);
  }

  private enqueueStalePodDisruption(pod: Pod): void {
    const wait = this.staleDisruptionIn(pod);
    if (wait !== undefined) this.stalePodQueue.addAfter(metaNamespaceKey(pod), wait);
  }

  /**
   * syncStalePodDisruption: sets a stale DisruptionTarget condition to False (a status
   * patch guarded by the pod's resourceVersion); too early: looks again when it will be
   * stale. Public for tests.
   * @throws the patch's error but NotFound (retry).
   */
  async syncStalePodDisruption(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pod = this.podLister.get(namespace, name);
    if (!pod) return;
    const wait = this.staleDisruptionIn(pod);
    if (wait === undefined) return;
    if (wait > 0) {
      this.stalePodQueue.addAfter(key, wait);
      return;
    }
    try {
      await this.ctx.client.patch<Pod>(
        resources.pods,
        namespace,
        name,
        'strategic',
        {
          metadata: { resourceVersion: pod.metadata.resourceVersion },
          status: {
            conditions: [
              {
                type: 'DisruptionTarget',
                status: 'False',
                lastTransitionTime: rfc3339(new Date(this.clock.now())),
              },
            ],
          },
        },
        { subresource: 'status' },
      );
      this.logger.info('disruption: reset stale DisruptionTarget condition to False', { pod: key });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  /** getPdbForPod: the first PDB of the pod's namespace selecting it (a warning when several do). */
  private enqueueForPod(pod: Pod): void {
    const matching = this.pdbLister
      .namespace(pod.metadata.namespace ?? '')
      .list()
      .filter((pdb) => selectorOf(pdb)?.matches(pod.metadata.labels ?? {}) ?? false);
    if (matching.length === 0) return;
    if (matching.length > 1)
      this.logger.warn('disruption: pod matches multiple PodDisruptionBudgets; chose the first', {
        pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
        pdbs: matching.map((p) => p.metadata.name),
      });
    this.queue.add(metaNamespaceKey(matching[0]!));
  }

  /**
   * Syncs one PDB (sync/trySync); see the file comment. Public for tests.
   * @throws the sync's error after failSafe wrote SyncFailed, or a conflict (retry).
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pdb = this.pdbLister.get(namespace, name);
    if (!pdb) return;
    try {
      await this.trySync(pdb);
    } catch (err) {
      if (isConflict(err)) throw err;
      this.logger.warn('disruption: failed to sync PDB', { key, error: String(err) });
      await this.failSafe(pdb, err);
      throw err;
    }
  }

  private async trySync(pdb: PodDisruptionBudget): Promise<void> {
    const selector = selectorOf(pdb);
    const pods = selector
      ? this.podLister
          .namespace(pdb.metadata.namespace ?? '')
          .list()
          .filter((p) => selector.matches(p.metadata.labels ?? {}))
      : [];
    if (pods.length === 0) this.recorder.event(pdb, 'Normal', 'NoPods', 'No matching pods found');
    let counts;
    try {
      counts = await expectedPodCount(pdb, pods, () => this.expectedScale(pdb, pods));
    } catch (err) {
      this.recorder.event(
        pdb,
        'Warning',
        'CalculateExpectedPodCountFailed',
        `Failed to calculate the number of expected pods: ${errorMessage(err)}`,
      );
      throw err;
    }
    const nowMs = this.clock.now();
    const { disruptedPods, expired, recheckAtMs } = buildDisruptedPodMap(pods, pdb, nowMs);
    for (const podName of expired) {
      const pod = pods.find((p) => p.metadata.name === podName);
      if (pod)
        this.recorder.event(
          pod,
          'Warning',
          'NotDeleted',
          `Pod was expected by PDB ${pdb.metadata.namespace}/${pdb.metadata.name} to be deleted but it wasn't`,
        );
    }
    const currentHealthy = countHealthyPods(pods, disruptedPods, nowMs);
    await this.updateStatus(pdb, currentHealthy, counts.desiredHealthy, counts.expectedPods, disruptedPods);
    if (recheckAtMs !== undefined)
      this.queue.addAfter(metaNamespaceKey(pdb), Math.max(0, recheckAtMs - nowMs));
  }

  /** getExpectedScale: Σ scale over the distinct controllers of `pods`. */
  private async expectedScale(pdb: PodDisruptionBudget, pods: readonly Pod[]): Promise<number> {
    const scales = new Map<string, number>();
    const unmanaged: string[] = [];
    for (const pod of pods) {
      const ref = controllerOf(pod);
      if (!ref) {
        unmanaged.push(pod.metadata.name!);
        continue;
      }
      if (scales.has(ref.uid)) continue;
      const found = await this.controllerScale(pod.metadata.namespace ?? '', ref);
      if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
      scales.set(found.uid, found.scale);
    }
    if (unmanaged.length > 0)
      this.recorder.event(
        pdb,
        'Warning',
        'UnmanagedPods',
        `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec.selector)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    let total = 0;
    for (const s of scales.values()) total += s;
    return total;
  }

  /** The finders: a ReplicaSet (or its Deployment), a StatefulSet. */
  private async controllerScale(
    namespace: string,
    ref: { apiVersion: string; kind: string; name: string; uid: string },
  ): Promise<{ uid: string; scale: number } | undefined> {
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
    if (ref.kind === 'ReplicaSet' && (group === 'apps' || group === 'extensions')) {
      const rs = this.rsLister.get(namespace, ref.name);
      if (!rs || rs.metadata.uid !== ref.uid) return undefined;
      const owner = controllerOf(rs);
      if (owner?.kind === 'Deployment') {
        const d = this.deploymentLister.get(namespace, owner.name);
        if (!d || d.metadata.uid !== owner.uid) return undefined;
        return { uid: d.metadata.uid!, scale: d.spec.replicas ?? 1 };
      }
      return { uid: rs.metadata.uid!, scale: rs.spec.replicas ?? 1 };
    }
    if (ref.kind === 'StatefulSet' && group === 'apps') {
      try {
        const sts = await this.ctx.client.get<{ metadata: { uid?: string }; spec?: { replicas?: number } }>(
          STATEFULSETS,
          namespace,
          ref.name,
        );
        if (sts.metadata.uid !== ref.uid) return undefined;
        return { uid: ref.uid, scale: sts.spec?.replicas ?? 1 };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
    return undefined;
  }

  /** updatePdbStatus: writes the new status unless the stored one says the same. */
  private async updateStatus(
    pdb: PodDisruptionBudget,
    currentHealthy: number,
    desiredHealthy: number,
    expectedPods: number,
    disruptedPods: Record<string, string>,
  ): Promise<void> {
    const allowed = disruptionsAllowed(currentHealthy, desiredHealthy, expectedPods);
    const s = pdb.status;
    const generation = pdb.metadata.generation ?? 0;
    if (
      s &&
      s.currentHealthy === currentHealthy &&
      s.desiredHealthy === desiredHealthy &&
      s.expectedPods === expectedPods &&
      s.disruptionsAllowed === allowed &&
      sameMap(s.disruptedPods ?? {}, disruptedPods) &&
      (s.observedGeneration ?? 0) === generation &&
      conditionsAreUpToDate(pdb)
    )
      return;
    const status: NonNullable<PodDisruptionBudget['status']> = {
      currentHealthy,
      desiredHealthy,
      expectedPods,
      disruptionsAllowed: allowed,
      observedGeneration: generation,
      ...(Object.keys(disruptedPods).length > 0 ? { disruptedPods } : {}),
      conditions: structuredClone(s?.conditions ?? []),
    };
    updateDisruptionAllowedCondition(status, rfc3339(new Date(this.clock.now())));
    await this.ctx.client.updateStatus<PodDisruptionBudget>(resources.poddisruptionbudgets, {
      ...pdb,
      status,
    });
  }

  /** failSafe: no disruptions while the budget cannot be computed. */
  private async failSafe(pdb: PodDisruptionBudget, err: unknown): Promise<void> {
    const status = structuredClone(
      pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
    );
    status.disruptionsAllowed = 0;
    setStatusCondition(
      (status.conditions ??= []),
      {
        type: DISRUPTION_ALLOWED_CONDITION,
        status: 'False',
        reason: SYNC_FAILED_REASON,
        message: errorMessage(err),
        ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      },
      rfc3339(new Date(this.clock.now())),
    );
    await this.ctx.client.updateStatus<PodDisruptionBudget>(resources.poddisruptionbudgets, {
      ...pdb,
      status,
    });
  }
}

function sameMap(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}
