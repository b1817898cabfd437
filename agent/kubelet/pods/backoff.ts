/**
 * Per-key exponential backoff, as client-go's flowcontrol.Backoff which the kubelet uses
 * for restarts of crashed containers (CrashLoopBackOff, 10 s doubling to 300 s) and for
 * image pulls (ImagePullBackOff, same numbers). An entry resets when the event comes more
 * than 2 × max (10 minutes) after the entry's last update: a container that ran that long
 * before crashing starts again at 10 s.
 */
import type { Clock } from '../../../api/clock.js';

/** Settings of a Backoff (milliseconds). */
export interface BackoffConfig {
  clock: Clock;
  /** First delay, ms (kubelet: 10 000). */
  initialMs: number;
  /** Ceiling, ms (kubelet: 300 000). */
  maxMs: number;
}

interface Entry {
  /** The current delay, ms. */
  backoffMs: number;
  /** When next() last ran for the key, ms since the epoch. */
  lastUpdate: number;
}

/** See the file comment. */
export class Backoff {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  readonly initialMs: number;
  readonly maxMs: number;

  /** @throws Error when the delays are not positive or max < initial. */
  constructor(cfg: BackoffConfig) {
    if (!(cfg.initialMs > 0) || !(cfg.maxMs >= cfg.initialMs)) {
      throw new Error(`Backoff: need 0 < initialMs <= maxMs, got ${cfg.initialMs}, ${cfg.maxMs}`);
    }
    this.clock = cfg.clock;
    this.initialMs = cfg.initialMs;
    this.maxMs = cfg.maxMs;
  }

  private expired(eventTime: number, e: Entry): boolean {
    return eventTime - e.lastUpdate > 2 * this.maxMs;
  }

  /**
   * Moves `key` one step: the initial delay for a new or expired entry (judged by
   * `eventTime`, ms since the epoch), else double, at most max. Records now as the update.
   */
  next(key: string, eventTime: number = this.clock.now()): void {
    const e = this.entries.get(key);
    if (!e || this.expired(eventTime, e)) {
      this.entries.set(key, { backoffMs: this.initialMs, lastUpdate: this.clock.now() });
    } else {
      e.backoffMs = Math.min(e.backoffMs * 2, this.maxMs);
      e.lastUpdate = this.clock.now();
    }
  }

  /** The current delay of `key`, ms (0 when it has no entry). */
  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /**
   * Milliseconds left while `key` is still backing off from something that happened at
   * `eventTime` (flowcontrol's IsInBackOffSince: now − eventTime < delay); 0 when not.
   */
  remainingSince(key: string, eventTime: number): number {
    const e = this.entries.get(key);
    if (!e || this.expired(eventTime, e)) return 0;
    return Math.max(0, e.backoffMs - (this.clock.now() - eventTime));
  }

  /**
   * Milliseconds left of the delay counted from the key's last update
   * (IsInBackOffSinceUpdate with eventTime = now); 0 when not backing off.
   */
  remainingSinceUpdate(key: string): number {
    const e = this.entries.get(key);
    const now = this.clock.now();
    if (!e || this.expired(now, e)) return 0;
    return Math.max(0, e.backoffMs - (now - e.lastUpdate));
  }

  /** Forgets `key`. */
  reset(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets every key starting with `prefix` (a pod's entries when it goes away). */
  resetPrefix(prefix: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(prefix)) this.entries.delete(k);
  }
}
