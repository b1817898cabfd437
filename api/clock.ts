/**
 * Time, injected into everything that waits — the workqueue, leader election, the client's
 * reflector and informer, the kubelet, the API server's watch cache — so that tests of
 * backoff, delays, resyncs, leases and bookmarks run in milliseconds without real sleeping
 * (as client-go's `k8s.io/utils/clock`, whose `Clock` is the one clock of client-go too).
 *
 * The one `Clock` of the project lives here, with its real implementation (`realClock`)
 * and its test double (`FakeClock`).
 */

/** A source of wall-clock time, one-shot timers and sleeps. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now; returns a handle for clearTimeout(). */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer from setTimeout(); a fired or unknown handle is ignored. */
  clearTimeout(handle: unknown): void;
  /**
   * Resolves after `ms` milliseconds, or as soon as `signal` aborts (resolving, not
   * rejecting: the caller checks `signal.aborted`). Never rejects.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The sleeps waiting on each signal. A signal gets one 'abort' listener, made by its first
 * sleep, which ends every sleep then waiting on it; a sleep joins and leaves a Set. An
 * EventTarget listener added and removed for every sleep cost some 6 µs of the 7 a sleep
 * took in Node 20, and one process of hollow nodes sleeps thousands of times a second on
 * a few signals per node (each node's pod relist sleeps 1 s at a time).
 */
const sleepers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` when `signal` aborts (unless the returned function was called first). */
function onceAborted(signal: AbortSignal, fn: () => void): () => void {
  let waiting = sleepers.get(signal);
  if (!waiting) {
    const set = new Set<() => void>();
    waiting = set;
    sleepers.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const f of [...set]) f();
        set.clear();
      },
      { once: true },
    );
  }
  const set = waiting;
  set.add(fn);
  return () => set.delete(fn);
}

/** A sleep made of a clock's one-shot timer (how realClock and FakeClock sleep). */
function timerSleep(
  timers: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const handle = timers.setTimeout(() => {
      leave?.();
      resolve();
    }, ms);
    const leave = signal
      ? onceAborted(signal, () => {
          timers.clearTimeout(handle);
          resolve();
        })
      : undefined;
  });
}

/**
 * The real clock. Its timers are unref'd: a pending delay never keeps the process alive.
 * `sleep` runs on the object's own `setTimeout`, so a copy with other timers
 * (`{ ...realClock, setTimeout }`) sleeps on those.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  sleep(ms, signal) {
    return timerSleep(this, ms, signal);
  },
};

/** Lets every pending promise continuation run (one macrotask turn drains the microtask queue). */
export function flushPromises(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** How a FakeClock's sleeps behave. */
export interface FakeClockOptions {
  /**
   * False (the default): a sleep is a timer, and ends when advance() reaches it. True: a
   * sleep moves time forward by its own length and ends on the next macrotask, as
   * `k8s.io/utils/clock/testing`'s `FakeClock.Sleep` (which is `Step`), so that a loop that
   * only sleeps (the reflector's backoff) runs to its next step without the test advancing
   * time; hold() stops such sleeps.
   */
  sleepAdvances?: boolean;
}

/**
 * A clock for tests: time moves only in advance() (and, with `sleepAdvances`, in sleeps).
 * Timers fire in time order (ties in the order they were set), and after each one the
 * promise continuations it started run, so async loops driven by this clock (the
 * workqueue's delays, leader election's retries, the watch cache's bookmarks) behave as
 * they would in real time, only instantly. Every sleep's length is recorded in `sleeps`.
 */
export class FakeClock implements Clock {
  private t: number;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  private readonly sleepAdvances: boolean;
  private gate: { promise: Promise<void>; open: () => void } | undefined;
  /** The length (ms) of every sleep asked for, in order. */
  readonly sleeps: number[] = [];
  /** Sleeps blocked by hold() right now. */
  held = 0;

  /** `start`: the initial time, ms since the epoch (default 2026-01-01T00:00:00Z). */
  constructor(start = Date.UTC(2026, 0, 1), opts: FakeClockOptions = {}) {
    this.t = start;
    this.sleepAdvances = opts.sleepAdvances ?? false;
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

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (!this.sleepAdvances) return timerSleep(this, ms, signal);
    if (this.gate) {
      this.held++;
      const aborted = new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
      await Promise.race([this.gate.promise, aborted]);
      this.held--;
    }
    await this.advance(ms);
  }

  /** With `sleepAdvances`: from now on, sleeps block until release() (to act "during the backoff"). */
  hold(): void {
    if (this.gate) return;
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.gate = { promise, open };
  }

  /** Lets sleeps blocked by hold(), and later ones, go. */
  release(): void {
    const gate = this.gate;
    this.gate = undefined;
    gate?.open();
  }

  /** Number of timers set and not yet fired or cleared (a pending sleep counts as one). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due (including timers set by
   * the ones fired) in time order, and letting promise continuations settle after each.
   * Time never moves back, also when advances overlap.
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
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
      await flushPromises();
    }
    this.t = Math.max(this.t, target);
    await flushPromises();
  }
}
