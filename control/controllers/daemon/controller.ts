/**
 * The DaemonSet controller (Kubernetes' pkg/controller/daemon): one daemon pod on every
 * node that should run it, rolled to new templates by RollingUpdate or OnDelete.
 *
 * Informer handlers only map events to DaemonSet keys: a pod's to its controller (feeding
 * the expectations: creations observed, deletions observed), an orphan's to every DaemonSet
 * selecting it, a node's to the DaemonSets whose placement on it changed (or all, for a new
 * or removed node), a revision's to its owner.
 *
 * reconcile(key) (syncDaemonSet):
 *  1. the DaemonSet from the cache (gone: forget its expectations, done); nodes from the cache;
 *  2. its pods (claimed through ControllerRefManager: adopt matching orphans, release own
 *     pods that stopped matching) and revisions; constructHistory gives the current hash;
 *  3. unless expectations are pending or it is being deleted:
 *     manage — per node (podsShouldBeOnNode): create a pod where one should run and none
 *     is, delete failed pods (with a per-node backoff, 1 s doubling to 15 min) and
 *     succeeded ones, extra pods (with maxSurge: keep at most an old and a new one), and
 *     pods where none may run or whose node is gone; pods are created with
 *     the template's labels plus controller-revision-hash and pod-template-generation, the
 *     default DaemonSet tolerations and a required node affinity `metadata.name In
 *     [node]`, so the default scheduler binds them (ReplaceDaemonSetPodNodeNameNodeAffinity);
 *     at most BURST_REPLICAS creations/deletions per sync, created in slow-start batches;
 *     then, when the expectations are met, the update strategy: RollingUpdate
 *     (rolling.ts), OnDelete (nothing: a deleted old pod is replaced by manage);
 *     then cleanupHistory (revisionHistoryLimit);
 *  4. status (desired/current/misscheduled/ready/updated/available/unavailable,
 *     observedGeneration) through the status subresource; with minReadySeconds it looks
 *     again when pods are ready but not yet available.
 *
 * Why one file of about 600 lines: it is one class, upstream's DaemonSetsController (its
 * handlers and syncDaemonSet); placement (placement.ts), the rolling update (rolling.ts),
 * history (history.ts) and status (status.ts) are already apart.
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
import { controllerOf, isPodAvailable, isPodReady } from '../../../api/podutil.js';
import type { ControllerRevision, DaemonSet, Node, Pod, Toleration } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import { TEMPLATE_GENERATION_ANNOTATION } from '../../apiserver/strategies/daemonsets.js';
import type { Controller, ControllerContext, Logger } from '../context.js';
import { ControllerExpectations } from '../expectations.js';
import { hasStatusCause, NAMESPACE_TERMINATING_CAUSE, RealPodControl } from '../podcontrol.js';
import type { PodControl } from '../podcontrol.js';
import {
  ControllerRefManager,
  freshOwnerGetter,
  ownersSelecting,
  recheckDeletionTimestamp,
  resolveControllerRef,
  type OwnerKind,
} from '../ref-manager.js';
import { SLOW_START_INITIAL_BATCH_SIZE } from '../replicaset/slow-start.js';
import { runQueue } from '../run.js';
import { cleanupHistory, constructHistory } from './history.js';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  POD_TEMPLATE_GENERATION_LABEL,
  createPodTemplate,
  daemonTolerations,
  nodeShouldRunDaemonPod,
  replaceNodeNameAffinity,
  targetNodeName,
  type NodePlacement,
} from './placement.js';
import { rollingUpdate } from './rolling.js';
import { updateDaemonSetStatus } from './status.js';

/** Most pods created or deleted in one sync (daemon.BurstReplicas). */
export const BURST_REPLICAS = 250;
/** Workers (--concurrent-daemonset-syncs default). */
export const CONCURRENT_DAEMONSET_SYNCS = 2;
/** The component name of its events. */
export const DAEMONSET_CONTROLLER_COMPONENT = 'daemonset-controller';
/** The kind written into the controllerRef of its pods. */
export const DAEMONSET_KIND: OwnerKind = { apiVersion: 'apps/v1', kind: 'DaemonSet' };
/** Event reason of a failed daemon pod being killed (FailedDaemonPodReason). */
export const FAILED_DAEMON_POD_REASON = 'FailedDaemonPod';

/** Backoff of replacing a failed daemon pod on one node: 1 s doubling to 15 min (as upstream's failedPodsBackoff). */
export const FAILED_POD_BACKOFF_INITIAL_MS = 1000;
export const FAILED_POD_BACKOFF_MAX_MS = 15 * 60 * 1000;

/**
 * Per-key exponential backoff (client-go flowcontrol.Backoff, IsInBackOffSinceUpdate and
 * Next): next() starts at `initialMs` and doubles to `maxMs`; an entry untouched for twice
 * maxMs starts over. Times in ms since the epoch.
 */
export class Backoff {
  private readonly entries = new Map<string, { delayMs: number; lastUpdate: number }>();
  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}

  /** The remaining delay when `key` was updated less than its delay ago; undefined when not in backoff. */
  inBackoff(key: string, nowMs: number): number | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    const left = e.lastUpdate + e.delayMs - nowMs;
    return left > 0 ? left : undefined;
  }

  /** Records an attempt now: the first delay, or the previous one doubled (capped). */
  next(key: string, nowMs: number): void {
    const e = this.entries.get(key);
    if (!e || nowMs - e.lastUpdate > 2 * this.maxMs) {
      this.entries.set(key, { delayMs: this.initialMs, lastUpdate: nowMs });
      return;
    }
    this.entries.set(key, { delayMs: Math.min(e.delayMs * 2, this.maxMs), lastUpdate: nowMs });
  }
}

/** Options beyond the shared context (tests, benchmarks). */
export interface DaemonSetControllerOptions {
  /** Most pods created or deleted per sync; default BURST_REPLICAS. */
  burstReplicas?: number;
  /** Workers; default CONCURRENT_DAEMONSET_SYNCS. */
  workers?: number;
  /** How pods are created and deleted; default RealPodControl over ctx.client. */
  podControl?: PodControl;
}

/** The template generation of a DaemonSet (util.GetTemplateGeneration); undefined when not set. */
export function templateGeneration(ds: DaemonSet): number | undefined {
  const v = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

/**
 * Whether a pod runs the DaemonSet's current template (IsPodUpdated): its
 * controller-revision-hash is `hash`, or its pod-template-generation is the DaemonSet's.
 */
export function isPodUpdated(pod: Pod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  const generationMatches =
    generation !== undefined && labels[POD_TEMPLATE_GENERATION_LABEL] === String(generation);
  const hashMatches = hash !== '' && labels[CONTROLLER_REVISION_HASH_LABEL] === hash;
  return hashMatches || generationMatches;
}

/** Oldest first; among equal times, by name (podByCreationTimestampAndPhase, simplified). */
export function byCreation(a: Pod, b: Pod): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** What one sync works from (computed once, shared by manage, rolling update and status). */
export interface SyncState {
  ds: DaemonSet;
  nodes: Node[];
  nodesByName: Map<string, Node>;
  /** Pods by target node (node name '' for pods without one). */
  nodeToDaemonPods: Map<string, Pod[]>;
  placement: (node: Node) => NodePlacement;
  hash: string;
  generation: number | undefined;
  nowMs: number;
}

/** The DaemonSet controller; see the file comment. */
export class DaemonSetController implements Controller {
  readonly name = 'daemonset';
  /** Outstanding creations/deletions per DaemonSet key (exposed for tests). */
  readonly expectations: ControllerExpectations;
  private readonly ctx: ControllerContext;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly queue: RateLimitingQueue<string>;
  private readonly dsLister: Lister<DaemonSet>;
  private readonly podLister: Lister<Pod>;
  private readonly nodeLister: Lister<Node>;
  private readonly revLister: Lister<ControllerRevision>;
  private readonly podControl: PodControl;
  private readonly burstReplicas: number;
  private readonly workers: number;
  private stopping: AbortSignal | undefined;

  /** @throws Error when burstReplicas or workers is not a positive integer. */
  constructor(ctx: ControllerContext, opts: DaemonSetControllerOptions = {}) {
    this.ctx = ctx;
    this.logger = ctx.logger;
    this.clock = ctx.clock;
    this.burstReplicas = opts.burstReplicas ?? BURST_REPLICAS;
    this.workers = opts.workers ?? CONCURRENT_DAEMONSET_SYNCS;
    for (const [k, v] of [
      ['burstReplicas', this.burstReplicas],
      ['workers', this.workers],
    ] as const) {
      if (!Number.isInteger(v) || v < 1)
        throw new Error(`daemonset: ${k} must be a positive integer, got ${v}`);
    }
    this.expectations = new ControllerExpectations({ clock: ctx.clock });
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.podControl =
      opts.podControl ??
      new RealPodControl({ client: ctx.client, recorder: ctx.recorder(DAEMONSET_CONTROLLER_COMPONENT) });

    const dsInformer = ctx.informers.informerFor<DaemonSet>(resources.daemonsets);
    const podInformer = ctx.informers.informerFor<Pod>(resources.pods);
    const nodeInformer = ctx.informers.informerFor<Node>(resources.nodes);
    const revInformer = ctx.informers.informerFor<ControllerRevision>(resources.controllerrevisions);
    this.dsLister = dsInformer.lister();
    this.podLister = podInformer.lister();
    this.nodeLister = nodeInformer.lister();
    this.revLister = revInformer.lister();
    dsInformer.addEventHandler({
      onAdd: (ds) => this.enqueue(ds),
      onUpdate: (old, cur) => {
        if (old.metadata.uid !== cur.metadata.uid) this.deleteDS(old);
        this.enqueue(cur);
      },
      onDelete: (obj) => this.deleteDS(obj),
    });
    podInformer.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (old, cur) => this.updatePod(old, cur),
      onDelete: (obj) => this.deletePod(deletedObject(obj), true),
    });
    nodeInformer.addEventHandler({
      onAdd: () => this.enqueueAll(),
      onUpdate: (old, cur) => this.updateNode(old, cur),
      onDelete: () => this.enqueueAll(),
    });
    const revOwner = (rev: ControllerRevision) => {
      const ref = controllerOf(rev);
      const ds = ref && this.resolveControllerRef(rev.metadata.namespace, ref);
      if (ds) this.enqueue(ds);
    };
    revInformer.addEventHandler({
      onAdd: revOwner,
      onUpdate: (_, cur) => revOwner(cur),
      onDelete: (obj) => revOwner(deletedObject(obj)),
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

  // ---- event handlers ----

  private enqueue(ds: DaemonSet): void {
    this.queue.add(metaNamespaceKey(ds));
  }

  private enqueueAll(): void {
    for (const ds of this.dsLister.list()) this.enqueue(ds);
  }

  private deleteDS(obj: DaemonSet | DeletedFinalStateUnknown<DaemonSet>): void {
    const key = metaNamespaceKey(deletedObject(obj));
    this.expectations.deleteExpectations(key);
    this.queue.add(key);
  }

  private resolveControllerRef(namespace: string | undefined, ref: OwnerReference): DaemonSet | undefined {
    return resolveControllerRef(this.dsLister, DAEMONSET_KIND, namespace, ref);
  }

  private podDaemonSets(pod: Pod): DaemonSet[] {
    return ownersSelecting(this.dsLister, pod, selectorOf);
  }

  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) {
      this.deletePod(pod);
      return;
    }
    const ref = controllerOf(pod);
    if (ref) {
      const ds = this.resolveControllerRef(pod.metadata.namespace, ref);
      if (!ds) return;
      const key = metaNamespaceKey(ds);
      this.expectations.creationObserved(key);
      this.queue.add(key);
      return;
    }
    for (const ds of this.podDaemonSets(pod)) this.enqueue(ds);
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    if (cur.metadata.deletionTimestamp && !old.metadata.deletionTimestamp) {
      this.deletePod(cur);
      return;
    }
    const curRef = controllerOf(cur);
    const oldRef = controllerOf(old);
    if (oldRef && oldRef.uid !== curRef?.uid) {
      const ds = this.resolveControllerRef(old.metadata.namespace, oldRef);
      if (ds) this.enqueue(ds);
    }
    if (curRef) {
      const ds = this.resolveControllerRef(cur.metadata.namespace, curRef);
      if (!ds) return;
      this.enqueue(ds);
      const minReadySeconds = ds.spec.minReadySeconds ?? 0;
      if (minReadySeconds > 0 && !isPodReady(old) && isPodReady(cur))
        this.queue.addAfter(metaNamespaceKey(ds), (minReadySeconds + 1) * 1000);
      return;
    }
    for (const ds of this.podDaemonSets(cur)) this.enqueue(ds);
  }

  /** A pod of ours going: `removed` when it left the store, else it got a deletionTimestamp. */
  private deletePod(pod: Pod, removed = false): void {
    const uid = pod.metadata.uid ?? '';
    // A pod seen with a deletionTimestamp and then removed is one deletion, observed once.
    const seen = this.seenDeleting.has(uid);
    if (removed) this.seenDeleting.delete(uid);
    else this.seenDeleting.add(uid);
    const ref = controllerOf(pod);
    if (!ref) return;
    const ds = this.resolveControllerRef(pod.metadata.namespace, ref);
    if (!ds) return;
    const key = metaNamespaceKey(ds);
    if (!seen) this.expectations.deletionObserved(key);
    this.queue.add(key);
  }

  /** Backoff of deleting failed daemon pods, per `<ds key>/<node>`. */
  private readonly failedPodsBackoff = new Backoff(FAILED_POD_BACKOFF_INITIAL_MS, FAILED_POD_BACKOFF_MAX_MS);

  /** Uids of pods whose deletion was already observed through their deletionTimestamp. */
  private readonly seenDeleting = new Set<string>();

  private updateNode(old: Node, cur: Node): void {
    // Heartbeats change nothing a DaemonSet looks at.
    if (
      JSON.stringify(old.metadata.labels) === JSON.stringify(cur.metadata.labels) &&
      JSON.stringify(old.spec?.taints) === JSON.stringify(cur.spec?.taints)
    )
      return;
    for (const ds of this.dsLister.list()) {
      const tol = daemonTolerations(ds.spec.template);
      const a = nodeShouldRunDaemonPod(old, ds.spec.template, tol);
      const b = nodeShouldRunDaemonPod(cur, ds.spec.template, tol);
      if (a.shouldRun !== b.shouldRun || a.shouldContinueRunning !== b.shouldContinueRunning)
        this.enqueue(ds);
    }
  }

  // ---- reconcile ----

  /**
   * Syncs one DaemonSet (syncDaemonSet); see the file comment. Public for tests.
   * @throws when claiming pods, writing revisions or status, or creating/deleting pods failed (retry).
   */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const ds = this.dsLister.get(namespace, name);
    if (!ds) {
      this.expectations.deleteExpectations(key);
      return;
    }
    const selector = selectorOf(ds);
    if (!selector || selector.empty) {
      this.logger.warn('daemonset: invalid or empty selector', { key });
      return;
    }
    const nodes = this.nodeLister.list();
    const pods = await this.claimPods(ds, selector);
    const owned = this.revLister
      .namespace(namespace)
      .list()
      .filter((r) => controllerOf(r)?.uid === ds.metadata.uid);
    const { old, hash } = await constructHistory(this.ctx.client, ds, owned);
    const state = this.syncState(ds, nodes, pods, hash);

    if (!this.expectations.satisfiedExpectations(key) || ds.metadata.deletionTimestamp) {
      await updateDaemonSetStatus(this.ctx.client, state, false, this.queue);
      return;
    }
    let err: unknown;
    try {
      await this.manage(key, state);
      if (
        this.expectations.satisfiedExpectations(key) &&
        (ds.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate'
      ) {
        const { deletes, creates } = rollingUpdate(state);
        if (deletes.length + creates.length > 0) await this.syncNodes(key, state, deletes, creates);
      }
      const live = new Set<string>();
      for (const p of pods) {
        const h = p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
        if (h) live.add(h);
      }
      await cleanupHistory(this.ctx.client, ds, old, live);
    } catch (e) {
      err = e;
    }
    await updateDaemonSetStatus(this.ctx.client, state, true, this.queue);
    if (err !== undefined) throw err;
  }

  private syncState(ds: DaemonSet, nodes: Node[], pods: Pod[], hash: string): SyncState {
    const nodeToDaemonPods = new Map<string, Pod[]>();
    for (const pod of pods) {
      const node = targetNodeName(pod) ?? '';
      const list = nodeToDaemonPods.get(node);
      if (list) list.push(pod);
      else nodeToDaemonPods.set(node, [pod]);
    }
    const tolerations: Toleration[] = daemonTolerations(ds.spec.template);
    const cache = new Map<string, NodePlacement>();
    return {
      ds,
      nodes,
      nodesByName: new Map(nodes.map((n) => [n.metadata.name ?? '', n])),
      nodeToDaemonPods,
      placement: (node) => {
        const k = node.metadata.name ?? '';
        let p = cache.get(k);
        if (!p) cache.set(k, (p = nodeShouldRunDaemonPod(node, ds.spec.template, tolerations)));
        return p;
      },
      hash,
      generation: templateGeneration(ds),
      nowMs: this.clock.now(),
    };
  }

  private claimPods(ds: DaemonSet, selector: LabelSelector): Promise<Pod[]> {
    const manager = new ControllerRefManager<Pod>({
      client: this.ctx.client,
      resource: resources.pods,
      owner: ds,
      ownerKind: DAEMONSET_KIND,
      selector,
      canAdopt: recheckDeletionTimestamp(freshOwnerGetter(this.ctx.client, resources.daemonsets, ds)),
    });
    return manager.claim(this.podLister.namespace(ds.metadata.namespace ?? '').list());
  }

  /** manage + podsShouldBeOnNode: see the file comment. */
  private async manage(key: string, s: SyncState): Promise<void> {
    const creates: string[] = [];
    const deletes: Pod[] = [];
    const surge = allowsSurge(s.ds);
    for (const node of s.nodes) {
      const nodeName = node.metadata.name ?? '';
      const { shouldRun, shouldContinueRunning } = s.placement(node);
      const daemonPods = s.nodeToDaemonPods.get(nodeName);
      if (shouldRun && !daemonPods) {
        creates.push(nodeName);
      } else if (shouldContinueRunning && daemonPods) {
        const running: Pod[] = [];
        for (const pod of daemonPods) {
          if (pod.metadata.deletionTimestamp) continue;
          if (pod.status?.phase === 'Failed') {
            // A kubelet that keeps rejecting the pod would fight us in a hot loop: back off
            // per DaemonSet and node (failedPodsBackoff: 1 s doubling to 15 min).
            const delay = this.failedPodsBackoff.inBackoff(`${key}/${nodeName}`, s.nowMs);
            if (delay !== undefined) {
              this.queue.addAfter(key, delay);
              continue;
            }
            this.failedPodsBackoff.next(`${key}/${nodeName}`, s.nowMs);
            this.ctx
              .recorder(DAEMONSET_CONTROLLER_COMPONENT)
              .event(
                s.ds,
                'Warning',
                FAILED_DAEMON_POD_REASON,
                `Found failed daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${nodeName}, will try to kill it`,
              );
            deletes.push(pod);
          } else if (pod.status?.phase === 'Succeeded') deletes.push(pod);
          else running.push(pod);
        }
        if (running.length <= 1) continue;
        running.sort(byCreation);
        if (!surge) {
          deletes.push(...running.slice(1));
          continue;
        }
        // With surge: keep the oldest new pod and, while it is not yet available, the oldest old one.
        let oldestNew: Pod | undefined;
        let oldestOld: Pod | undefined;
        for (const pod of running) {
          if (pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === s.hash) {
            if (!oldestNew) {
              oldestNew = pod;
              continue;
            }
          } else if (!oldestOld) {
            oldestOld = pod;
            continue;
          }
          deletes.push(pod);
        }
        if (
          oldestNew &&
          oldestOld &&
          (!isPodReady(oldestOld) || isPodAvailable(oldestNew, s.ds.spec.minReadySeconds ?? 0, s.nowMs))
        )
          deletes.push(oldestOld);
      } else if (!shouldContinueRunning && daemonPods) {
        for (const pod of daemonPods) if (!pod.metadata.deletionTimestamp) deletes.push(pod);
      }
    }
    // Pods for nodes that are gone (or for no node at all): nothing will ever run them.
    for (const [nodeName, pods] of s.nodeToDaemonPods) {
      if (s.nodesByName.has(nodeName)) continue;
      for (const pod of pods) if (!pod.metadata.deletionTimestamp) deletes.push(pod);
    }
    await this.syncNodes(key, s, deletes, creates);
  }

  /**
   * syncNodes: deletes `deletes` and creates a pod for each node in `creates` (each capped at
   * burstReplicas), with the expectations set first. Creations go in slow-start batches;
   * after a failed batch the rest are skipped (and no longer expected).
   * @throws the first error of a create or delete.
   */
  private async syncNodes(key: string, s: SyncState, deletes: Pod[], creates: string[]): Promise<void> {
    const createDiff = Math.min(creates.length, this.burstReplicas);
    const deleteDiff = Math.min(deletes.length, this.burstReplicas);
    this.expectations.setExpectations(key, createDiff, deleteDiff);
    const namespace = s.ds.metadata.namespace ?? '';
    const template = createPodTemplate(s.ds.spec.template, s.generation, s.hash);
    const ref: OwnerReference = {
      ...DAEMONSET_KIND,
      name: s.ds.metadata.name ?? '',
      uid: s.ds.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    let firstErr: unknown;
    let pos = 0;
    for (let batch = Math.min(createDiff, SLOW_START_INITIAL_BATCH_SIZE); pos < createDiff;) {
      const results = await Promise.allSettled(
        creates.slice(pos, pos + batch).map(async (nodeName) => {
          if (this.stopping?.aborted) throw new Error('the controller is stopping');
          const podTemplate = {
            metadata: template.metadata,
            spec: { ...template.spec, affinity: replaceNodeNameAffinity(template.spec.affinity, nodeName) },
          };
          try {
            await this.podControl.createPods(namespace, podTemplate, s.ds, ref);
          } catch (err) {
            this.expectations.creationObserved(key);
            if (hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
            throw err;
          }
        }),
      );
      pos += batch;
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        firstErr = failed.reason;
        const skipped = createDiff - pos;
        if (skipped > 0) this.expectations.lowerExpectations(key, skipped, 0);
        break;
      }
      batch = Math.min(2 * batch, createDiff - pos);
    }
    const results = await Promise.allSettled(
      deletes.slice(0, deleteDiff).map(async (pod) => {
        try {
          await this.podControl.deletePod(namespace, pod.metadata.name ?? '', s.ds);
        } catch (err) {
          this.expectations.deletionObserved(key);
          if (!isNotFound(err)) throw err;
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    firstErr ??= failed?.reason;
    if (firstErr !== undefined) throw firstErr;
  }
}

/** The DaemonSet's selector; undefined when it does not parse. */
function selectorOf(ds: DaemonSet): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(ds.spec.selector);
  } catch {
    return undefined;
  }
}

/** util.AllowsSurge: a RollingUpdate whose maxSurge is not zero. */
export function allowsSurge(ds: DaemonSet): boolean {
  const s = ds.spec.updateStrategy;
  if ((s?.type ?? 'RollingUpdate') !== 'RollingUpdate') return false;
  const v = s?.rollingUpdate?.maxSurge;
  return v !== undefined && v !== 0 && v !== '0%' && v !== '0';
}
