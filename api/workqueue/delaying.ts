/**
 * The delaying workqueue (client-go `DelayingInterface`): addAfter(key, ms) adds a key once
 * a delay has passed, which is how failed keys are retried without a hot loop.
 */
import type { Clock } from '../clock.js';
import { realClock } from '../clock.js';
import { WorkQueue } from './queue.js';

/** Configuration of a DelayingQueue. */
export interface DelayingQueueConfig {
  /** Time source for the delays (default: the real clock). */
  clock?: Clock;
}

/**
 * A WorkQueue with addAfter(). A key waiting for its delay is held once: adding it again
 * with a delay that ends sooner moves it earlier, a later one is ignored (as client-go's
 * waiting loop). A key whose delay has passed goes through add(), so dedup and the
 * dirty/processing rules apply as usual.
 */
export class DelayingQueue<T = string> extends WorkQueue<T> {
  protected readonly clock: Clock;
  /** Keys waiting for their delay: when they are due (clock ms) and their timer. */
  private readonly waiting = new Map<T, { readyAt: number; timer: unknown }>();

  constructor(cfg: DelayingQueueConfig = {}) {
    super();
    this.clock = cfg.clock ?? realClock;
  }

  /**
   * Adds `item` after `ms` milliseconds of clock time; at once when `ms` <= 0. Ignored after
   * shutdown.
   */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.waiting.get(item);
    if (existing) {
      if (existing.readyAt <= readyAt) return;
      this.clock.clearTimeout(existing.timer);
    }
    const timer = this.clock.setTimeout(() => {
      this.waiting.delete(item);
      this.add(item);
    }, ms);
    this.waiting.set(item, { readyAt, timer });
  }

  /** Number of keys waiting for their delay (not counted by len()). */
  waitingLen(): number {
    return this.waiting.size;
  }

  /** As WorkQueue.shutDown(); keys still waiting for their delay are dropped. */
  override shutDown(): void {
    this.dropWaiting();
    super.shutDown();
  }

  /** As WorkQueue.shutDownWithDrain(); keys still waiting for their delay are dropped. */
  override shutDownWithDrain(): Promise<void> {
    this.dropWaiting();
    return super.shutDownWithDrain();
  }

  private dropWaiting(): void {
    for (const { timer } of this.waiting.values()) this.clock.clearTimeout(timer);
    this.waiting.clear();
  }
}
