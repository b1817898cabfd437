/**
 * Keeps the store's history bounded, as kube-apiserver's compactor does: every `interval`
 * it compacts at the revision it saw one interval earlier, so watchers and paginated
 * lists always have at least one interval of history to catch up from, and history never
 * grows without bound.
 *
 * Several control processes may run one each against one etcd: a compaction at or below
 * an earlier one is a no-op, so they need no coordination.
 */
import type { Store } from './store.js';

/** The configuration of a Compactor: the store, and the interval (ms) with injectable timers. */
export interface CompactorConfig {
  store: Store;
  /** Milliseconds between compactions; kube-apiserver's default is 5 minutes. */
  intervalMs?: number;
  /** Timer functions, injectable so tests run without waiting. */
  setInterval?: (fn: () => void, ms: number) => { unref?(): void };
  clearInterval?: (handle: unknown) => void;
  /** Called with failures (a compaction that failed is retried at the next tick). */
  onError?: (err: unknown) => void;
}

/** kube-apiserver's default `--etcd-compaction-interval`: 5 minutes, in ms. */
export const DEFAULT_COMPACTION_INTERVAL_MS = 5 * 60 * 1000;

/**
 * Compacts `store` every `intervalMs` at the revision seen one interval before.
 * @throws Error from the constructor when intervalMs is not a positive number.
 */
export class Compactor {
  private readonly cfg: Required<Omit<CompactorConfig, 'store'>> & { store: Store };
  private handle: unknown;
  /** The revision seen at the previous tick: the next compaction point. */
  private lastSeen = 0;
  private running: Promise<void> | undefined;

  constructor(cfg: CompactorConfig) {
    const intervalMs = cfg.intervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS;
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) {
      throw new Error(`Compactor: intervalMs must be a positive number of milliseconds, got ${intervalMs}`);
    }
    this.cfg = {
      store: cfg.store,
      intervalMs,
      setInterval: cfg.setInterval ?? ((fn, ms) => setInterval(fn, ms)),
      clearInterval: cfg.clearInterval ?? ((h) => clearInterval(h as NodeJS.Timeout)),
      onError: cfg.onError ?? (() => {}),
    };
  }

  /** Starts the periodic compaction (the timer does not keep the process alive). */
  start(): void {
    if (this.handle !== undefined) return;
    const h = this.cfg.setInterval(() => void this.tick(), this.cfg.intervalMs);
    h.unref?.();
    this.handle = h;
  }

  /** Stops the timer and waits for a compaction in progress. */
  async stop(): Promise<void> {
    if (this.handle !== undefined) this.cfg.clearInterval(this.handle);
    this.handle = undefined;
    await this.running;
  }

  /**
   * One step: compact at the revision recorded by the previous step (if any), then record
   * the current one. Exposed for tests and for an explicit compaction.
   */
  async tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        const target = this.lastSeen;
        this.lastSeen = await this.cfg.store.currentRevision();
        if (target > 0) await this.cfg.store.compact(target);
      } catch (err) {
        this.cfg.onError(err);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }
}
