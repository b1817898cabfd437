/**
 * Time, injected into the workqueue, leader election and the API server's watch cache so
 * that tests of backoff, delays, leases and bookmarks run in milliseconds without real
 * sleeping (as client-go's `k8s.io/utils/clock`).
 */

/** A source of wall-clock time and one-shot timers. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now; returns a handle for clearTimeout(). */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer from setTimeout(); a fired or unknown handle is ignored. */
  clearTimeout(handle: unknown): void;
}

/** The real clock. Its timers are unref'd: a pending delay never keeps the process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * Resolves after `ms` milliseconds of `clock` time, or as soon as `signal` aborts (without
 * rejecting: the caller checks `signal.aborted`). Never rejects.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clock.clearTimeout(handle);
      resolve();
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Lets every pending promise continuation run (one macrotask turn drains the microtask queue). */
export function flushPromises(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A clock for tests: time moves only in advance(). Timers fire in time order (ties in the
 * order they were set), and after each one the promise continuations it started run, so
 * async loops driven by this clock (the workqueue's delays, leader election's retries)
 * behave as they would in real time, only instantly.
 */
export class FakeClock implements Clock {
  private t: number;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  /** `start`: the initial time, ms since the epoch (default 2026-01-01T00:00:00Z). */
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Number of timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due (including timers set by
   * the ones fired) in time order, and letting promise continuations settle after each.
   */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    await flushPromises();
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      }
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
      await flushPromises();
    }
    this.t = target;
    await flushPromises();
  }
}
