/**
 * The pod worker: one per pod UID, an explicit state machine (the kubelet's podWorkers,
 * pkg/kubelet/pod_workers.go). It decides when and in which state a pod is synced; what a
 * sync does to the runtime is the injected PodSyncer's (sync.ts: the kubelet's SyncPod,
 * SyncTerminatingPod and SyncTerminatedPod with kuberuntime), as pod_workers.go calls its
 * podSyncer.
 *
 * Contract:
 *
 *   syncing ──(deletionTimestamp, pod removed from the API, or a terminal phase)──▶ terminating
 *   terminating ──(syncTerminatingPod: every container and the sandbox stopped)──▶ terminated
 *   terminated ──(deletionTimestamp or removed: syncTerminatedPod — containers, sandboxes
 *                 and volumes removed, then the pod object deleted)──▶ done
 *
 * - Only one step runs at a time; update()/remove()/wake() mark the worker dirty and it
 *   steps again as soon as the current step ends (events are level-triggered: a missed or
 *   doubled wake-up does not matter, each step reads the runtime afresh).
 * - syncing: each step is one syncPod; it says whether the pod reached Succeeded or
 *   Failed (then terminating follows in the same step) and how soon it wants another
 *   sync (a crash or image pull backoff running out), else the next sync comes after the
 *   resync interval. A pod never goes back from terminating.
 * - A failing step (runtime down, API error) is retried with backoff, 1 s doubling to
 *   30 s; the manager wakes every worker when the runtime answers again.
 * - The syncer may ask, during a sync, whether termination has been requested since (the
 *   newest pod seen has a deletionTimestamp, or it was removed) to stop starting containers.
 * - stop() ends the loop without touching containers (a restarted agent adopts them).
 */
import type { Logger } from '../../../api/log.js';
import type { Clock } from '../../../api/clock.js';
import type { Pod } from '../../../api/types.js';
import { isCriError } from '../../../cri/index.js';
import { needToReconcilePodReadiness } from './status.js';
import { kubeletPod, type KubeletPod } from './types.js';
import { errorMessage } from '../../../api/errors.js';

/** The worker's states (see the file comment). */
export type PodWorkerState = 'syncing' | 'terminating' | 'terminated';

/** What a syncPod reports back to the state machine. */
export interface SyncPodResult {
  /** The pod reached Succeeded or Failed: it terminates next. */
  terminal: boolean;
  /**
   * The latest time (ms since the epoch) the pod needs its next sync by, when sooner than
   * the resync interval (a CrashLoopBackOff or image pull backoff running out).
   */
  nextSyncAt?: number | undefined;
}

/** What the worker tells its syncer about the pod while a sync runs. */
export interface PodSyncContext {
  /** Aborts when the worker stops (stop()); a hook in progress is cut short. */
  readonly signal: AbortSignal;
  /** True once the pod is gone from the API (remove()): nothing is written to it any more. */
  isPodRemoved(): boolean;
  /**
   * True once the newest pod seen has a deletionTimestamp or the pod was removed
   * (podWorkers.IsPodTerminationRequested): a sync stops starting containers.
   */
  isPodTerminationRequested(): boolean;
}

/**
 * The runtime side of one pod, as pod_workers.go's podSyncer. Each method may throw; the
 * worker retries the step with backoff.
 */
export interface PodSyncer {
  /** A newer version of the pod came from the API (before any sync of it). */
  podUpdated(pod: Pod): void;
  /** SyncPod: make the runtime match the pod's spec and post its status. */
  syncPod(pod: KubeletPod, ctx: PodSyncContext): Promise<SyncPodResult>;
  /** SyncTerminatingPod: stop every container and the sandbox; post the final status unless removed. */
  syncTerminatingPod(pod: KubeletPod, ctx: PodSyncContext): Promise<void>;
  /** SyncTerminatedPod: remove the pod's containers, sandboxes and volumes, then the pod object unless removed. */
  syncTerminatedPod(pod: KubeletPod, ctx: PodSyncContext): Promise<void>;
}

/** A PodWorker's settings. */
export interface PodWorkerConfig {
  /** The pod as first seen; its metadata.uid names the worker. */
  pod: Pod;
  /** Acts on the runtime for this pod (a RuntimePodSyncer, or a fake in tests). */
  syncer: PodSyncer;
  clock: Clock;
  logger: Logger;
  /** Milliseconds between syncs of a pod nothing happens to (kubelet: 60 s). */
  resyncIntervalMs: number;
  /** Called once the worker is done (pod cleaned up and gone). */
  onDone(uid: string): void;
}

/** First retry of a failed step, ms. */
const ERROR_BACKOFF_INITIAL_MS = 1_000;
/** Longest retry delay of failed steps, ms. */
const ERROR_BACKOFF_MAX_MS = 30_000;

/** One pod's worker (see the file comment). */
export class PodWorker {
  readonly uid: string;
  private st: PodWorkerState = 'syncing';
  private pod: KubeletPod;
  private removed = false;
  private dirty = true;
  private wakeUp: AbortController | undefined;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private errorDelayMs = 0;
  /** The settings less `pod`: the first version of the pod is not kept once a newer one came. */
  private readonly cfg: Omit<PodWorkerConfig, 'pod'>;
  private readonly syncContext: PodSyncContext;

  /** @throws Error when the pod has no uid or resyncIntervalMs is not positive. */
  constructor(cfg: PodWorkerConfig) {
    if (!cfg.pod.metadata.uid) throw new Error('PodWorker: the pod has no uid');
    if (!(cfg.resyncIntervalMs > 0))
      throw new Error(`PodWorker: resyncIntervalMs must be positive, got ${cfg.resyncIntervalMs}`);
    const { pod, ...rest } = cfg;
    this.cfg = rest;
    this.uid = cfg.pod.metadata.uid;
    this.pod = kubeletPod(pod);
    this.syncContext = {
      signal: this.abort.signal,
      isPodRemoved: () => this.removed,
      isPodTerminationRequested: () => this.removed || !!this.pod.metadata.deletionTimestamp,
    };
  }

  /** The worker's state. */
  get state(): PodWorkerState {
    return this.st;
  }

  /** A newer version of the pod from the API. */
  update(pod: Pod): void {
    this.cfg.syncer.podUpdated(pod);
    const before = this.pod;
    this.pod = kubeletPod(pod);
    // As the kubelet's pod config (podsDifferSemantically): a change of the status alone —
    // most often the one this worker just posted — is no reason to sync, unless a readiness
    // gate's condition now calls for another Ready (HandlePodReconcile).
    if (before !== pod && !podsDifferSemantically(before, pod) && !needToReconcilePodReadiness(this.pod))
      return;
    this.wake();
  }

  /** The pod is gone from the API. */
  remove(): void {
    this.removed = true;
    this.wake();
  }

  /** Asks for another step (a container changed, a probe result changed, the runtime is back). */
  wake(): void {
    this.dirty = true;
    this.wakeUp?.abort();
  }

  /** Starts the loop. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Ends the loop after the current step; containers are left as they are. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.wakeUp?.abort();
    await this.loop;
  }

  private get log() {
    return { pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, uid: this.uid };
  }

  private async run(): Promise<void> {
    const { clock, logger } = this.cfg;
    while (!this.abort.signal.aborted) {
      this.dirty = false;
      let nextAt: number;
      try {
        const done = await this.step();
        this.errorDelayMs = 0;
        if (done === 'done') {
          this.cfg.onDone(this.uid);
          return;
        }
        nextAt = done;
      } catch (err) {
        this.errorDelayMs = Math.min(
          ERROR_BACKOFF_MAX_MS,
          Math.max(ERROR_BACKOFF_INITIAL_MS, this.errorDelayMs * 2),
        );
        const level = isCriError(err, 'Unavailable') ? 'warn' : 'error';
        logger[level]('pod sync failed, will retry', {
          ...this.log,
          state: this.st,
          retryInMs: this.errorDelayMs,
          error: errorMessage(err),
        });
        nextAt = clock.now() + this.errorDelayMs;
      }
      if (this.dirty || this.abort.signal.aborted) continue;
      const wakeUp = new AbortController();
      this.wakeUp = wakeUp;
      if (this.dirty) continue;
      // stop() aborts the wake-up too, so the sleep needs no signal combined of both
      // (AbortSignal.any: a signal, its listeners and weak references more per pod, some 3 KB).
      await clock.sleep(Math.max(0, nextAt - clock.now()), wakeUp.signal);
      this.wakeUp = undefined;
    }
  }

  /** One step of the state machine; resolves with when to step again (ms since the epoch) or 'done'. */
  private async step(): Promise<number | 'done'> {
    const { clock, logger } = this.cfg;
    const pod = this.pod;
    const phase = pod.status?.phase;
    if (this.st === 'syncing') {
      if (this.removed || pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') {
        this.st = 'terminating';
        logger.info('pod terminating', {
          ...this.log,
          why: this.removed ? 'removed' : pod.metadata.deletionTimestamp ? 'deleted' : `phase ${phase}`,
        });
      } else {
        const resyncAt = clock.now() + this.cfg.resyncIntervalMs;
        const r = await this.cfg.syncer.syncPod(pod, this.syncContext);
        if (!r.terminal) return Math.min(resyncAt, r.nextSyncAt ?? Infinity);
        this.st = 'terminating';
        logger.info('pod terminating', { ...this.log, why: 'all containers finished' });
      }
    }
    if (this.st === 'terminating') {
      await this.cfg.syncer.syncTerminatingPod(pod, this.syncContext);
      this.st = 'terminated';
      logger.info('pod terminated', this.log);
    }
    if (this.removed || pod.metadata.deletionTimestamp) {
      await this.cfg.syncer.syncTerminatedPod(pod, this.syncContext);
      logger.info('pod removed', this.log);
      return 'done';
    }
    return clock.now() + this.cfg.resyncIntervalMs;
  }
}

/** True when what the kubelet acts on differs: spec, labels, annotations, deletion. */
export function podsDifferSemantically(a: Pod, b: Pod): boolean {
  const view = (p: Pod) =>
    JSON.stringify([
      p.spec,
      p.metadata.labels,
      p.metadata.annotations,
      p.metadata.deletionTimestamp,
      p.metadata.deletionGracePeriodSeconds,
    ]);
  return view(a) !== view(b);
}
