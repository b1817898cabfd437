/**
 * Rate limiters for retries (client-go `default_rate_limiters.go`): how long a key waits
 * before it is retried. Delays are in milliseconds.
 */
import type { Clock } from '../clock.js';
import { realClock } from '../clock.js';

/** Decides how long a key waits before its next retry, and counts its failures. */
export interface RateLimiter<T = string> {
  /** Records one more failure of `item`; returns the delay before its retry, ms (>= 0). */
  when(item: T): number;
  /** Stops tracking `item` (it succeeded, or is given up on): its backoff starts over. */
  forget(item: T): void;
  /** Failures of `item` recorded since it was last forgotten. */
  numRequeues(item: T): number;
}

/**
 * Per-key exponential backoff (client-go `ItemExponentialFailureRateLimiter`): the n-th
 * failure since forget() waits `baseDelayMs * 2^(n-1)`, capped at `maxDelayMs`.
 * With client-go's controller defaults (5 ms, 1000 s): 5, 10, 20, 40 ms, ... 1000 s from
 * the 19th failure on.
 */
export class ItemExponentialFailureRateLimiter<T = string> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  /** `baseDelayMs` > 0: the first delay; `maxDelayMs` >= baseDelayMs: the cap. Throws otherwise. */
  constructor(
    readonly baseDelayMs: number,
    readonly maxDelayMs: number,
  ) {
    if (!(baseDelayMs > 0) || !(maxDelayMs >= baseDelayMs)) {
      throw new Error(
        `exponential rate limiter: need 0 < baseDelayMs <= maxDelayMs, got ${baseDelayMs}, ${maxDelayMs}`,
      );
    }
  }

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    // 2^exp overflows to Infinity for large exp; the cap takes care of it.
    return Math.min(this.baseDelayMs * 2 ** exp, this.maxDelayMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** Configuration of a BucketRateLimiter. */
export interface BucketRateLimiterConfig {
  /** Tokens added per second (> 0). */
  qps: number;
  /** Bucket size (>= 1): how many retries may go at once after a quiet spell. */
  burst: number;
  /** Time source (default: the real clock). */
  clock?: Clock;
}

/**
 * An overall token bucket shared by all keys (client-go `BucketRateLimiter` over
 * `golang.org/x/time/rate`): the bucket starts full with `burst` tokens and refills at
 * `qps` per second; each when() takes a token, borrowing from the future when the bucket
 * is empty, so with 10 qps the retries beyond the burst are spaced 100 ms apart
 * (100, 200, 300 ms, ...). It keeps no per-key state: forget() does nothing and
 * numRequeues() is 0.
 */
export class BucketRateLimiter<T = string> implements RateLimiter<T> {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  /** Tokens at `last`; negative when reservations have borrowed from the future. */
  private tokens: number;
  private last: number;

  /** Throws when qps <= 0 or burst < 1. */
  constructor(cfg: BucketRateLimiterConfig) {
    if (!(cfg.qps > 0) || !(cfg.burst >= 1)) {
      throw new Error(`bucket rate limiter: need qps > 0 and burst >= 1, got ${cfg.qps}, ${cfg.burst}`);
    }
    this.qps = cfg.qps;
    this.burst = cfg.burst;
    this.clock = cfg.clock ?? realClock;
    this.tokens = cfg.burst;
    this.last = this.clock.now();
  }

  when(_item: T): number {
    const now = Math.max(this.clock.now(), this.last);
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/**
 * Several limiters at once (client-go `MaxOfRateLimiter`): every one records the failure,
 * the longest delay wins; forget() forgets in all, numRequeues() is the largest count.
 */
export class MaxOfRateLimiter<T = string> implements RateLimiter<T> {
  private readonly limiters: ReadonlyArray<RateLimiter<T>>;

  constructor(...limiters: Array<RateLimiter<T>>) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let delay = 0;
    for (const limiter of this.limiters) delay = Math.max(delay, limiter.when(item));
    return delay;
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    let n = 0;
    for (const limiter of this.limiters) n = Math.max(n, limiter.numRequeues(item));
    return n;
  }
}

/** client-go's per-key backoff for controllers starts at 5 ms ... */
export const DEFAULT_BASE_DELAY_MS = 5;
/** ... and doubles up to 1000 s. */
export const DEFAULT_MAX_DELAY_MS = 1_000_000;
/** client-go's overall retry budget for controllers: 10 retries per second ... */
export const DEFAULT_QPS = 10;
/** ... in bursts of up to 100. */
export const DEFAULT_BURST = 100;

/**
 * The controllers' default (client-go `DefaultControllerRateLimiter`): the max of per-key
 * exponential backoff (5 ms → 1000 s) and an overall token bucket (10 qps, burst 100).
 */
export function defaultControllerRateLimiter<T = string>(clock: Clock = realClock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(DEFAULT_BASE_DELAY_MS, DEFAULT_MAX_DELAY_MS),
    new BucketRateLimiter<T>({ qps: DEFAULT_QPS, burst: DEFAULT_BURST, clock }),
  );
}
