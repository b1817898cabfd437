/**
 * The rate-limited workqueue (client-go `RateLimitingInterface`) that controllers use:
 * a failed key goes back with addRateLimited(key) and waits as its RateLimiter says;
 * a key that succeeded is forget()-ten so its backoff starts over next time.
 */
import type { Clock } from '../clock.js';
import { realClock } from '../clock.js';
import { DelayingQueue } from './delaying.js';
import type { RateLimiter } from './ratelimit.js';
import { defaultControllerRateLimiter } from './ratelimit.js';

/** Configuration of a RateLimitingQueue. */
export interface RateLimitingQueueConfig<T> {
  /** Time source for delays and the token bucket (default: the real clock). */
  clock?: Clock;
  /** Default: defaultControllerRateLimiter(clock) — 5 ms → 1000 s per key, 10 qps / 100 overall. */
  rateLimiter?: RateLimiter<T>;
}

/** A DelayingQueue whose retries are paced by a RateLimiter. */
export class RateLimitingQueue<T = string> extends DelayingQueue<T> {
  readonly rateLimiter: RateLimiter<T>;

  constructor(cfg: RateLimitingQueueConfig<T> = {}) {
    const clock = cfg.clock ?? realClock;
    super({ clock });
    this.rateLimiter = cfg.rateLimiter ?? defaultControllerRateLimiter<T>(clock);
  }

  /** Records a failure of `item` and adds it back after the limiter's delay. Ignored after shutdown. */
  addRateLimited(item: T): void {
    if (this.shuttingDown()) return;
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** Ends the backoff tracking of `item` (call after it was reconciled, or given up on). */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  /** How many times `item` was added back with addRateLimited() since it was last forgotten. */
  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}
