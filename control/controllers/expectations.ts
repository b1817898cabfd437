/**
 * Expectations: what a controller has asked the API server to create or delete and has not
 * yet seen come back through its informer (Kubernetes' pkg/controller
 * ControllerExpectations and UIDTrackingControllerExpectations).
 *
 * Why: a controller reads the world from an informer cache, which lags behind its own
 * writes. Right after creating 3 pods, a second reconcile of the same owner would still
 * see 0 pods in the cache and create 3 more. So before creating or deleting, the
 * controller records how many adds/dels it expects under the owner's key; the informer
 * handlers lower the counts as the pods show up (or go); and reconcile only acts again
 * once `satisfiedExpectations(key)` — every expected event observed, or the record is
 * older than 5 minutes (a lost event must not block the owner forever).
 *
 *   exp.expectCreations('ns/web', 3);          // before the creates
 *   exp.creationObserved('ns/web');            // pod informer onAdd, once per pod
 *   if (exp.satisfiedExpectations('ns/web')) manageReplicas(...);
 */
import type { Clock } from '../../api/clock.js';
import { realClock } from '../../api/clock.js';

/** How long expectations may stay unfulfilled before a controller acts anyway: 5 minutes (ExpectationsTimeout), ms. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;

/** One owner's outstanding expectations (ControlleeExpectations). */
export interface ControlleeExpectations {
  /** The owner's `namespace/name`. */
  readonly key: string;
  /** Creations still to be observed; <= 0 means none. */
  add: number;
  /** Deletions still to be observed; <= 0 means none. */
  del: number;
  /** When they were set, ms since the epoch (clock time). */
  readonly timestamp: number;
}

/** Settings of ControllerExpectations. */
export interface ControllerExpectationsOptions {
  /** Time source for the expiry (default: the real clock). */
  clock?: Clock;
  /** Expiry, ms; default EXPECTATIONS_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** True when every expected creation and deletion has been observed (Fulfilled). */
export function fulfilled(e: ControlleeExpectations): boolean {
  return e.add <= 0 && e.del <= 0;
}

/**
 * Counts of expected creations/deletions per owner key (ControllerExpectations). Not
 * persisted: a restarted controller starts with none, which is "satisfied".
 */
export class ControllerExpectations {
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly store = new Map<string, ControlleeExpectations>();

  constructor(opts: ControllerExpectationsOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.timeoutMs = opts.timeoutMs ?? EXPECTATIONS_TIMEOUT_MS;
  }

  /** The expectations recorded for `key`, if any (a copy). */
  getExpectations(key: string): ControlleeExpectations | undefined {
    const e = this.store.get(key);
    return e && { ...e };
  }

  /** Forgets `key` (the owner was deleted). */
  deleteExpectations(key: string): void {
    this.store.delete(key);
  }

  /**
   * True when the owner may be synced: no expectations recorded (a new owner, or a
   * restarted controller), all observed, or recorded more than the timeout ago.
   */
  satisfiedExpectations(key: string): boolean {
    const e = this.store.get(key);
    if (!e) return true;
    return fulfilled(e) || this.isExpired(e);
  }

  /** True when `e` was set more than the timeout ago. */
  isExpired(e: ControlleeExpectations): boolean {
    return this.clock.now() - e.timestamp > this.timeoutMs;
  }

  /** Replaces the expectations of `key` with `add` creations and `del` deletions, stamped now. */
  setExpectations(key: string, add: number, del: number): void {
    this.store.set(key, { key, add, del, timestamp: this.clock.now() });
  }

  /** Expects `adds` creations (and no deletions) for `key`, replacing what was there. */
  expectCreations(key: string, adds: number): void {
    this.setExpectations(key, adds, 0);
  }

  /** Expects `dels` deletions (and no creations) for `key`, replacing what was there. */
  expectDeletions(key: string, dels: number): void {
    this.setExpectations(key, 0, dels);
  }

  /** Lowers the counts of `key` (no-op without expectations); the timestamp is kept. */
  lowerExpectations(key: string, add: number, del: number): void {
    const e = this.store.get(key);
    if (!e) return;
    e.add -= add;
    e.del -= del;
  }

  /** Raises the counts of `key` (no-op without expectations); the timestamp is kept. */
  raiseExpectations(key: string, add: number, del: number): void {
    const e = this.store.get(key);
    if (!e) return;
    e.add += add;
    e.del += del;
  }

  /** One expected creation was seen (or will never happen: a failed create). */
  creationObserved(key: string): void {
    this.lowerExpectations(key, 1, 0);
  }

  /** One expected deletion was seen (or will never happen). */
  deletionObserved(key: string): void {
    this.lowerExpectations(key, 0, 1);
  }
}

/**
 * ControllerExpectations that remember WHICH dependents are expected to go, by their
 * `namespace/name` key (UIDTrackingControllerExpectations). A pod is seen going twice —
 * once when its deletionTimestamp is set, once when it is removed — and only the first
 * sighting may lower the count; a deletion of a pod the controller did not delete must
 * not lower it at all.
 */
export class UIDTrackingControllerExpectations {
  readonly counts: ControllerExpectations;
  private readonly uids = new Map<string, Set<string>>();

  constructor(opts: ControllerExpectationsOptions = {}) {
    this.counts = new ControllerExpectations(opts);
  }

  getExpectations(key: string): ControlleeExpectations | undefined {
    return this.counts.getExpectations(key);
  }

  satisfiedExpectations(key: string): boolean {
    return this.counts.satisfiedExpectations(key);
  }

  expectCreations(key: string, adds: number): void {
    this.counts.expectCreations(key, adds);
  }

  creationObserved(key: string): void {
    this.counts.creationObserved(key);
  }

  /**
   * Expects the deletion of exactly the dependents `dependentKeys` (`namespace/name`),
   * replacing earlier expectations of `key`.
   */
  expectDeletions(key: string, dependentKeys: readonly string[]): void {
    this.uids.set(key, new Set(dependentKeys));
    this.counts.expectDeletions(key, dependentKeys.length);
  }

  /** The dependent `dependentKey` was seen going; counts only if it was expected and not yet seen. */
  deletionObserved(key: string, dependentKey: string): void {
    const expected = this.uids.get(key);
    if (expected?.delete(dependentKey)) this.counts.deletionObserved(key);
  }

  /** The dependent keys still expected to go for `key`. */
  getUIDs(key: string): ReadonlySet<string> | undefined {
    return this.uids.get(key);
  }

  /** Forgets `key` entirely (the owner was deleted). */
  deleteExpectations(key: string): void {
    this.counts.deleteExpectations(key);
    this.uids.delete(key);
  }
}
