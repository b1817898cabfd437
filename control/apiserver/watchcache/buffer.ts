/**
 * The watch cache's history: the most recent changes of one resource, in revision order, in
 * a ring buffer (kube-apiserver's watchCache "cyclic buffer").
 *
 * Positions are absolute: the first event ever pushed is at 0, and `start`/`end` only grow,
 * so a reader can hold a position across pushes and evictions and find out afterwards
 * whether it is still in the buffer (`start <= position`).
 *
 * `floor` is the oldest resourceVersion a watch can resume from: every change of this
 * resource after `floor` is still in the buffer. After `reset(R)` (the cache relisted at R)
 * it is R; each eviction raises it to the evicted event's revision.
 *
 * Sizing, as kube-apiserver's watch cache does since 1.19: unless fixed, the capacity
 * adapts between `minCapacity` (100) and `maxCapacity` (100 Ki) so that the buffer keeps
 * about `freshMs` (75 s, one bookmark interval plus a margin) of history: it doubles when
 * full and its oldest event is younger than that, and halves when full and the newest
 * quarter of it is already older (so it does not flap).
 */
import type { CacheEvent } from './event.js';

export const DEFAULT_MIN_CAPACITY = 100;
export const DEFAULT_MAX_CAPACITY = 100 * 1024;
/** kube-apiserver's eventFreshDuration: the bookmark frequency (1 min) plus a margin. */
export const DEFAULT_EVENT_FRESH_MS = 75_000;

export interface EventBufferConfig {
  /** Fixed capacity (events); when set, the buffer never resizes. */
  capacity?: number;
  /** Bounds of the adaptive capacity (events); ignored when `capacity` is set. */
  minCapacity?: number;
  maxCapacity?: number;
  /** How much history (ms) the adaptive capacity tries to keep. */
  freshMs?: number;
}

export class EventBuffer {
  private slots: (CacheEvent | undefined)[];
  private cap: number;
  private readonly min: number;
  private readonly max: number;
  private readonly freshMs: number;
  private startPos = 0;
  private endPos = 0;
  private floorRevision = 0;

  /** @throws Error when a capacity is not a positive integer or min > max. */
  constructor(cfg: EventBufferConfig = {}) {
    if (cfg.capacity !== undefined) {
      checkCapacity(cfg.capacity, 'capacity');
      this.min = this.max = cfg.capacity;
    } else {
      this.min = cfg.minCapacity ?? DEFAULT_MIN_CAPACITY;
      this.max = cfg.maxCapacity ?? DEFAULT_MAX_CAPACITY;
      checkCapacity(this.min, 'minCapacity');
      checkCapacity(this.max, 'maxCapacity');
      if (this.min > this.max) {
        throw new Error(`watch cache: minCapacity ${this.min} is larger than maxCapacity ${this.max}`);
      }
    }
    this.freshMs = cfg.freshMs ?? DEFAULT_EVENT_FRESH_MS;
    this.cap = this.min;
    this.slots = new Array<CacheEvent | undefined>(this.cap);
  }

  /** Position of the oldest event kept. */
  get start(): number {
    return this.startPos;
  }

  /** Position just after the newest event (where the next push goes). */
  get end(): number {
    return this.endPos;
  }

  get size(): number {
    return this.endPos - this.startPos;
  }

  get capacity(): number {
    return this.cap;
  }

  /** The oldest resourceVersion a watch can resume from (see the top of this file). */
  get floor(): number {
    return this.floorRevision;
  }

  /** The event at `position`. @throws Error when it is no longer (or not yet) in the buffer. */
  at(position: number): CacheEvent {
    if (position < this.startPos || position >= this.endPos) {
      throw new Error(`watch cache: position ${position} is outside [${this.startPos}, ${this.endPos})`);
    }
    return this.slots[position % this.cap]!;
  }

  /** Empties the buffer after a relist at `revision`; positions keep growing. */
  reset(revision: number): void {
    this.slots.fill(undefined);
    this.startPos = this.endPos;
    this.floorRevision = revision;
  }

  /** Appends `event` (its revision must exceed every earlier one), evicting the oldest when full. */
  push(event: CacheEvent): void {
    if (this.isFull()) this.resize(event.recordTime);
    if (this.isFull()) this.evict(1);
    this.slots[this.endPos % this.cap] = event;
    this.endPos++;
  }

  /**
   * The position of the first event with a revision greater than `revision` (`end` when
   * there is none). Binary search: revisions increase along the buffer.
   */
  firstAfter(revision: number): number {
    let lo = this.startPos;
    let hi = this.endPos;
    while (lo < hi) {
      const mid = lo + ((hi - lo) >>> 1);
      if (this.slots[mid % this.cap]!.revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private isFull(): boolean {
    return this.endPos - this.startPos === this.cap;
  }

  private resize(now: number): void {
    if (this.min === this.max) return;
    const oldest = this.slots[this.startPos % this.cap]!;
    if (now - oldest.recordTime < this.freshMs) {
      if (this.cap < this.max) this.relayout(Math.min(this.cap * 2, this.max));
      return;
    }
    const quarter = this.slots[(this.endPos - Math.floor(this.cap / 4)) % this.cap]!;
    if (now - quarter.recordTime > this.freshMs && this.cap > this.min) {
      this.relayout(Math.max(Math.floor(this.cap / 2), this.min));
    }
  }

  private relayout(capacity: number): void {
    if (capacity < this.size) this.evict(this.size - capacity);
    const slots = new Array<CacheEvent | undefined>(capacity);
    for (let p = this.startPos; p < this.endPos; p++) slots[p % capacity] = this.slots[p % this.cap];
    this.slots = slots;
    this.cap = capacity;
  }

  private evict(count: number): void {
    for (let i = 0; i < count; i++) {
      const slot = this.startPos % this.cap;
      this.floorRevision = this.slots[slot]!.revision;
      this.slots[slot] = undefined;
      this.startPos++;
    }
  }
}

function checkCapacity(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new Error(`watch cache: ${what} must be a positive integer, got ${n}`);
  }
}
