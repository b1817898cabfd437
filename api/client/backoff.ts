/**
 * Retry pacing for the client machinery: exponential backoff with jitter. The waiting
 * itself is the caller's, on the injected `Clock` (api/clock.ts).
 */

/** Settings of a Backoff; all durations in milliseconds. */
export interface BackoffOptions {
  /** First delay; default 1000. */
  initialMs?: number;
  /** Largest delay; default 30 000. */
  maxMs?: number;
  /** Growth per failure; default 2. */
  factor?: number;
  /**
   * Each delay is stretched by a random fraction up to this much (0.5: up to +50 %),
   * then capped at `maxMs`, so that clients that failed together do not retry
   * together; default 1 (as client-go's reflector).
   */
  jitter?: number;
  /** Random numbers in [0, 1); default Math.random. */
  random?: () => number;
}

/**
 * Exponential backoff with jitter: the n-th consecutive failure waits
 * min(maxMs, initialMs · factorⁿ · (1 + jitter · random)). With the defaults: about 1–2 s,
 * 2–4 s, 4–8 s, ... capped at 30 s — client-go's reflector backoff (800 ms doubling to
 * 30 s, jitter 1.0), started at 1 s. `reset()` after a success starts over.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private failures = 0;

  /** @throws RangeError for a non-positive initialMs, maxMs < initialMs, factor < 1 or a negative jitter. */
  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 1_000;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 1;
    this.random = opts.random ?? Math.random;
    if (!(this.initialMs > 0))
      throw new RangeError(`backoff initialMs must be positive, got ${this.initialMs}`);
    if (!(this.maxMs >= this.initialMs))
      throw new RangeError(`backoff maxMs (${this.maxMs}) must be at least initialMs (${this.initialMs})`);
    if (!(this.factor >= 1)) throw new RangeError(`backoff factor must be at least 1, got ${this.factor}`);
    if (!(this.jitter >= 0)) throw new RangeError(`backoff jitter must not be negative, got ${this.jitter}`);
  }

  /** Consecutive failures since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  /** The delay (ms) before the next retry; counts one more failure. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** Math.min(this.failures, 64));
    this.failures++;
    return Math.min(this.maxMs, base * (1 + this.jitter * this.random()));
  }

  /** Forgets the failures: the next delay is `initialMs` again (jittered). */
  reset(): void {
    this.failures = 0;
  }
}
