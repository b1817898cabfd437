/**
 * One API watch served by the watch cache (kube-apiserver's cacheWatcher).
 *
 * Contract with the watch cache (the "host") and with the HTTP layer:
 *
 * States: pending → replaying → live → (ending →) closed.
 * - pending: waiting for the cache to be ready, or for the store list / revision it starts
 *   from. Nothing is delivered.
 * - replaying: sending what precedes the live stream — the initial ADDED events (a
 *   snapshot of objects, shared with other watchers) and then the cache's history from a
 *   position in its event buffer. Reading goes through a cursor: nothing is copied per
 *   watcher. When the cursor reaches the buffer's end the watcher joins the cache's live
 *   set, with no gap and no duplicate (single-threaded: the switch happens between events).
 * - live: the cache pushes each change to it as it is applied; the watcher converts it
 *   (selector transitions, below) and delivers it at once, or queues it while paused.
 * - ending: a final event (an ERROR) is queued behind what is already queued; no more
 *   changes are taken; the watcher closes once it is delivered.
 * - closed: onClose(reason) has been called, exactly once, whatever ended the watch.
 *
 * Backpressure: onEvent returns `false` when its sink is full (as `Writable.write` does);
 * the watcher then queues instead of delivering until `resume()`. A queue of more than
 * `maxPending` changes — or a replay that falls that far behind the live stream — closes the
 * watcher with 'too slow' rather than letting memory grow or holding up other watchers (as
 * kube-apiserver terminates watchers whose channel stays full). Bookmarks never count as
 * falling behind: when the queue is full they are simply skipped.
 *
 * Selector transitions, as the cacher's convertToWatchEvent: the filter is applied to the
 * object before and after each change — matches after only → ADDED, both → MODIFIED,
 * before only → DELETED (the previous object, with the change's resourceVersion).
 *
 * All events and objects are shared with other watchers: handlers must not mutate them.
 */
import type { KubeObject } from '../../../api/object.js';
import type { EventBuffer } from './buffer.js';
import type { CacheEvent, CachedObject, WatchEvent } from './event.js';

/** Why a watch ended. 'expired' and 'error' follow an ERROR event; the others do not. */
export type CloseReason =
  /** stop() was called (the client went away). */
  | 'stopped'
  /** It fell more than maxPendingPerWatcher changes behind. */
  | 'too slow'
  /** It got a 410 Expired ERROR event: the client must relist. */
  | 'expired'
  /** It got another ERROR event (504 too large resource version, 503, a store failure). */
  | 'error'
  /** onEvent or the filter threw. */
  | 'handler failed'
  /** The watch cache was stopped. */
  | 'cache stopped';

export type CacheWatcherState = 'pending' | 'replaying' | 'live' | 'ending' | 'closed';

/** What a watcher is told to do; see WatchCache.watch for the meaning of each option. */
export interface CacheWatcherOptions {
  namespace?: string;
  filter?: (obj: KubeObject) => boolean;
  allowBookmarks?: boolean;
  /** Clock time (ms) at which the watch will be ended by its owner; bookmarks stop 2 s before. */
  deadline?: number;
  /** Return false to pause delivery until resume() (backpressure). */
  onEvent(ev: WatchEvent): boolean | void;
  onClose(reason: CloseReason): void;
}

/** What a watcher needs from the cache that owns it. */
export interface CacheWatcherHost {
  readonly buffer: EventBuffer;
  readonly maxPending: number;
  /** Counters the watcher bumps. */
  readonly metrics: { eventsDispatched: number; watchersClosedSlow: number; bookmarksSent: number };
  /** The watcher caught up with the buffer's end: push it every change from now on. */
  goLive(w: CacheWatcher): void;
  /** Its replay fell out of the buffer: end it with 410 Expired (it cannot be served continuously). */
  expire(w: CacheWatcher): void;
  /** A bookmark became due while it was replaying and it is now live: send one now. */
  bookmarkNow(w: CacheWatcher): void;
  /** It closed: drop it from every set. Called once. */
  forget(w: CacheWatcher, reason: CloseReason): void;
  /** A handler threw; for logs. */
  onError(err: unknown): void;
}

/** Where a watcher starts: what to replay before going live. */
export interface ReplayStart {
  /** Objects to send as ADDED first (those passing namespace and filter). */
  initial?: readonly CachedObject[];
  /** An event to send after them (the initial-events-end bookmark). */
  initialEnd?: WatchEvent;
  /** The revision the watch starts after: only changes with a greater revision are sent. */
  position: number;
  /** Buffer position of the first change to replay. */
  cursor: number;
  /** The resourceVersion the client already has (the one it asked to resume from); default 0. */
  clientRevision?: number;
}

/** Compact a queue's consumed head once it is at least this long (and half the array). */
const COMPACT_AT = 1024;

export class CacheWatcher {
  private stateValue: CacheWatcherState = 'pending';
  private pausedValue = false;
  private positionValue = 0;
  /** The newest resourceVersion delivered to (or queued for) the client. */
  private clientRevision = 0;
  private initial: readonly CachedObject[] = [];
  private initialIndex = 0;
  private initialEnd: WatchEvent | undefined;
  /** Buffer position of the next change to replay. */
  private cursor = 0;
  /** The buffer's end when replay began: later changes are "live" ones the replay owes. */
  private replayEnd = 0;
  private queue: WatchEvent[] = [];
  private queueRevisions: number[] = [];
  private head = 0;
  private ending: CloseReason | undefined;
  private pumping = false;
  /** A bookmark fell due while replaying; send one on going live. */
  private bookmarkDue = false;

  readonly namespace: string | undefined;
  /** Clock time (ms) at which the HTTP layer ends this watch (bookmarks stop before it); 0 = none. */
  readonly deadline: number;
  readonly allowBookmarks: boolean;
  private readonly filter: ((obj: KubeObject) => boolean) | undefined;
  private readonly onEvent: (ev: WatchEvent) => boolean | void;
  private readonly onClose: (reason: CloseReason) => void;

  constructor(
    private readonly host: CacheWatcherHost,
    readonly id: number,
    opts: CacheWatcherOptions,
  ) {
    this.namespace = opts.namespace || undefined;
    this.allowBookmarks = opts.allowBookmarks ?? false;
    this.deadline = opts.deadline ?? 0;
    this.filter = opts.filter;
    this.onEvent = opts.onEvent;
    this.onClose = opts.onClose;
  }

  /**
   * Revision of the newest cache change this watcher has processed (delivered, queued or
   * filtered out), or the revision it starts after. Changes at or below it are skipped.
   */
  get position(): number {
    return this.positionValue;
  }

  get state(): CacheWatcherState {
    return this.stateValue;
  }

  get closed(): boolean {
    return this.stateValue === 'closed';
  }

  /** True while onEvent has asked to pause (returned false) and resume() has not been called. */
  get paused(): boolean {
    return this.pausedValue;
  }

  /** Changes queued and not yet delivered. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Ends the watch (the client went away); onClose('stopped') follows. Idempotent. */
  stop(): void {
    this.close('stopped');
  }

  /** Continues delivery after onEvent returned false (call it on the sink's 'drain'). */
  resume(): void {
    if (this.stateValue === 'closed') return;
    this.pausedValue = false;
    this.pump();
  }

  // ---- called by the cache ----

  /** Starts replaying (state pending → replaying). */
  begin(start: ReplayStart): void {
    if (this.stateValue !== 'pending') return;
    this.stateValue = 'replaying';
    this.initial = start.initial ?? [];
    this.initialEnd = start.initialEnd;
    this.positionValue = start.position;
    this.clientRevision = start.clientRevision ?? 0;
    this.cursor = start.cursor;
    this.replayEnd = this.host.buffer.end;
    this.pump();
  }

  /** A change the cache just applied (live watchers only). */
  push(ev: CacheEvent): void {
    if (this.stateValue !== 'live' || ev.revision <= this.positionValue) return;
    this.positionValue = ev.revision;
    const out = this.convert(ev, true);
    if (out === undefined) return;
    if (this.pausedValue || this.pumping || this.head < this.queue.length) {
      this.enqueue(out, ev.revision);
      if (this.pending > this.host.maxPending) this.closeSlow();
      return;
    }
    this.deliver(out, ev.revision);
  }

  /**
   * Called after each batch of changes while replaying: a replay that owes more live
   * changes than maxPending is too slow; one whose cursor fell out of the buffer expires.
   */
  checkReplay(): void {
    if (this.stateValue !== 'replaying') return;
    const buffer = this.host.buffer;
    if (this.cursor < buffer.start) {
      this.host.expire(this);
      return;
    }
    const owed = buffer.end - Math.max(this.cursor, this.replayEnd);
    if (owed > this.host.maxPending) this.closeSlow();
  }

  /**
   * A periodic bookmark at the cache's `revision`. Sent only when it tells the client
   * something new, never ahead of changes still to be replayed, and skipped (not queued)
   * when the queue is full.
   * @returns true when it was delivered or queued.
   */
  bookmark(revision: number, ev: WatchEvent): boolean {
    if (this.stateValue === 'replaying' || this.stateValue === 'pending') {
      this.bookmarkDue = true;
      return false;
    }
    if (this.stateValue !== 'live' || revision < this.positionValue || revision <= this.clientRevision)
      return false;
    if (this.pausedValue || this.pumping || this.head < this.queue.length) {
      if (this.pending >= this.host.maxPending) return false;
      this.enqueue(ev, revision);
    } else {
      this.deliver(ev, revision);
    }
    this.host.metrics.bookmarksSent++;
    return true;
  }

  /**
   * Ends the watch with a final event (an ERROR) delivered after what is already queued.
   * No more changes are taken. Closes with `reason` once it is delivered.
   */
  fail(ev: WatchEvent, reason: CloseReason): void {
    if (this.stateValue === 'closed' || this.stateValue === 'ending') return;
    this.stateValue = 'ending';
    this.ending = reason;
    this.initial = [];
    this.initialEnd = undefined;
    this.enqueue(ev, 0);
    this.pump();
  }

  /** Closes without a final event. Idempotent. */
  close(reason: CloseReason): void {
    if (this.stateValue === 'closed') return;
    this.stateValue = 'closed';
    this.queue = [];
    this.queueRevisions = [];
    this.head = 0;
    this.initial = [];
    this.host.forget(this, reason);
    try {
      this.onClose(reason);
    } catch (err) {
      this.host.onError(err);
    }
  }

  // ---- delivery ----

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.pausedValue && this.stateValue !== 'closed') {
        if (this.head < this.queue.length) {
          const ev = this.queue[this.head]!;
          const rev = this.queueRevisions[this.head]!;
          this.head++;
          this.compactQueue();
          this.deliver(ev, rev);
          continue;
        }
        if (this.ending !== undefined) {
          this.close(this.ending);
          break;
        }
        if (this.stateValue === 'replaying' && this.replayStep()) continue;
        // Replay may have ended by queueing something (a bookmark on going live, an error).
        if (this.head < this.queue.length) continue;
        break;
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Delivers the next replayed event. @returns false when there is nothing more to replay. */
  private replayStep(): boolean {
    while (this.initialIndex < this.initial.length) {
      const obj = this.initial[this.initialIndex++]!;
      if (!this.inNamespace(obj.namespace)) continue;
      const matches = this.matches(obj.object);
      if (matches === undefined) return false;
      if (!matches) continue;
      this.deliver(obj.event('ADDED'), obj.revision);
      return true;
    }
    this.initial = [];
    if (this.initialEnd) {
      const ev = this.initialEnd;
      this.initialEnd = undefined;
      this.deliver(ev, this.positionValue);
      return true;
    }
    const buffer = this.host.buffer;
    if (this.cursor < buffer.start) {
      this.host.expire(this);
      return false;
    }
    while (this.cursor < buffer.end) {
      const ev = buffer.at(this.cursor++);
      if (ev.revision <= this.positionValue) continue;
      this.positionValue = ev.revision;
      if (!this.inNamespace(ev.namespace)) continue;
      const out = this.convert(ev, false);
      if (this.stateValue !== 'replaying') return false;
      if (out === undefined) continue;
      this.deliver(out, ev.revision);
      return true;
    }
    this.stateValue = 'live';
    this.host.goLive(this);
    if (this.bookmarkDue) {
      this.bookmarkDue = false;
      this.host.bookmarkNow(this);
    }
    return false;
  }

  private deliver(ev: WatchEvent, revision: number): void {
    if (revision > this.clientRevision) this.clientRevision = revision;
    this.host.metrics.eventsDispatched++;
    let more: boolean | void;
    try {
      more = this.onEvent(ev);
    } catch (err) {
      this.host.onError(err);
      this.close('handler failed');
      return;
    }
    if (more === false) this.pausedValue = true;
  }

  private enqueue(ev: WatchEvent, revision: number): void {
    this.queue.push(ev);
    this.queueRevisions.push(revision);
  }

  private compactQueue(): void {
    if (this.head === this.queue.length) {
      this.queue = [];
      this.queueRevisions = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AT && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.queueRevisions = this.queueRevisions.slice(this.head);
      this.head = 0;
    }
  }

  private closeSlow(): void {
    this.host.metrics.watchersClosedSlow++;
    this.close('too slow');
  }

  // ---- selection ----

  private inNamespace(namespace: string | undefined): boolean {
    return this.namespace === undefined || this.namespace === namespace;
  }

  /** The filter's verdict, or undefined when it threw (the watcher is then closed). */
  private matches(obj: KubeObject): boolean | undefined {
    if (!this.filter) return true;
    try {
      return this.filter(obj);
    } catch (err) {
      this.host.onError(err);
      this.close('handler failed');
      return undefined;
    }
  }

  /**
   * The event this watcher sees for a change, or undefined for none (see the top of this
   * file); `live`: pushed by the cache's dispatch, which shares one event among watchers.
   */
  private convert(ev: CacheEvent, live: boolean): WatchEvent | undefined {
    const prev = ev.previous;
    if (ev.type === 'DELETE') {
      return prev && this.matches(prev.object) ? ev.deleted(live) : undefined;
    }
    const cur = ev.current!;
    const curMatches = this.matches(cur.object);
    if (curMatches === undefined) return undefined;
    let prevMatches = false;
    if (prev) {
      const m = this.matches(prev.object);
      if (m === undefined) return undefined;
      prevMatches = m;
    }
    if (curMatches) return cur.event(prevMatches ? 'MODIFIED' : 'ADDED', live);
    return prevMatches ? ev.deleted(live) : undefined;
  }
}
