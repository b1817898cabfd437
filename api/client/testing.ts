/**
 * Test doubles for the client machinery, for this folder's tests and for controllers'
 * unit tests: an in-memory API (`FakeApi`, a ListerWatcher with revisions, a bounded
 * history, paginated lists, failure injection) and a condition waiter with a deadline. The
 * fake clock is api/clock.ts's `FakeClock` (with `sleepAdvances`, for loops that only sleep).
 */
import type { KubeList, KubeObject } from '../object.js';
import { ApiStatusError } from './errors.js';
import type { ListerWatcher, ListerWatchOptions, ListPageOptions } from './listwatch.js';
import { metaNamespaceKey } from './store.js';
import type { WatchEvent, WatchStream } from './watch.js';

/** A watch stream fed by hand: push() events, then end() it or fail() it. */
export class FakeWatchStream<T extends KubeObject = KubeObject> implements WatchStream<T> {
  private readonly queue: WatchEvent<T>[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private error: Error | undefined;
  stopped = false;

  push(ev: WatchEvent<T>): void {
    this.queue.push(ev);
    this.poke();
  }

  /** The server ends the stream (after what was pushed). */
  end(): void {
    this.ended = true;
    this.poke();
  }

  /** The connection breaks (after what was pushed). */
  fail(err: Error): void {
    this.error = err;
    this.poke();
  }

  stop(): void {
    this.stopped = true;
    this.end();
  }

  get closed(): boolean {
    return this.ended || this.error !== undefined;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent<T>, void, undefined> {
    for (;;) {
      if (this.stopped) return;
      const ev = this.queue.shift();
      if (ev !== undefined) {
        yield ev;
        continue;
      }
      if (this.error) throw this.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** What a FakeApi call may be made to do instead of answering normally. */
export type Injected<O> = Error | ((opts: O) => Error | undefined);

/** The 410 Expired Status Kubernetes answers for a too-old resourceVersion. */
export function expiredStatus(message = 'too old resource version'): ApiStatusError {
  return new ApiStatusError({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: 410,
    reason: 'Expired',
    message,
  });
}

/**
 * An in-memory API server for one resource: objects with revisions, a history of the
 * last `historySize` changes, paginated lists over snapshots, watches from a
 * resourceVersion (410 when it is older than the history: as an HTTP error by default,
 * or as an ERROR event with `expiredAs: 'event'`), bookmarks on demand, and failures
 * injected per call.
 */
export class FakeApi<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  revision = 1;
  readonly objects = new Map<string, T>();
  private history: { rev: number; ev: WatchEvent<T> }[] = [];
  /** The oldest revision a watch may start at (changes after it are all in the history). */
  private oldestServable = 1;
  private readonly snapshots = new Map<number, T[]>();
  readonly watchers = new Set<FakeWatchStream<T>>();
  readonly listCalls: ListPageOptions[] = [];
  readonly watchCalls: ListerWatchOptions[] = [];
  /** Failures for the next list / watch calls, in order. */
  readonly failLists: Injected<ListPageOptions>[] = [];
  readonly failWatches: Injected<ListerWatchOptions>[] = [];
  expiredAs: 'http' | 'event' = 'http';
  private readonly waiters: { check: () => boolean; resolve: () => void }[] = [];

  constructor(private readonly historySize = 100) {}

  /** Creates or replaces an object (sets its resourceVersion); tells watchers ADDED or MODIFIED. */
  put(obj: T): T {
    const key = metaNamespaceKey(obj);
    const type = this.objects.has(key) ? 'MODIFIED' : 'ADDED';
    const stored = this.stamp(obj);
    this.objects.set(key, stored);
    this.record({ type, object: stored });
    return stored;
  }

  /** Deletes an object; tells watchers DELETED with its last state (at the deletion's revision). */
  remove(namespace: string | undefined, name: string): void {
    const key = namespace ? `${namespace}/${name}` : name;
    const old = this.objects.get(key);
    if (!old) throw new Error(`fake api: no ${key}`);
    this.objects.delete(key);
    this.record({ type: 'DELETED', object: this.stamp(old) });
  }

  /** Forgets all history: watches from any earlier resourceVersion get 410. */
  compact(): void {
    this.history = [];
    this.oldestServable = this.revision;
    this.snapshots.clear();
  }

  /** Sends a BOOKMARK at the current revision to every open watch. */
  bookmark(): void {
    const ev = {
      type: 'BOOKMARK' as const,
      object: { metadata: { resourceVersion: String(this.revision) } } as T,
    };
    for (const w of this.watchers) w.push(ev);
  }

  /** Ends every open watch as a server timeout would. */
  endWatches(): void {
    for (const w of this.watchers) w.end();
    this.watchers.clear();
  }

  /** Breaks every open watch's connection. */
  breakWatches(err: Error = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })): void {
    for (const w of this.watchers) w.fail(err);
    this.watchers.clear();
  }

  /** Resolves when `check()` holds after a call to this API (or at once if it holds now). */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  async list(opts: ListPageOptions): Promise<KubeList<T>> {
    this.listCalls.push({ ...opts });
    this.notify();
    await Promise.resolve();
    const injected = takeInjected(this.failLists, opts);
    if (injected) throw injected;
    let rev: number;
    let offset: number;
    if (opts.continue) {
      const [r, o] = opts.continue.split(':').map(Number) as [number, number];
      const snap = this.snapshots.get(r);
      if (!snap) throw expiredStatus('the provided continue parameter is too old');
      rev = r;
      offset = o;
    } else {
      rev = this.revision;
      offset = 0;
      this.snapshots.set(rev, [...this.objects.values()]);
    }
    const all = this.snapshots.get(rev)!;
    const end = opts.limit ? Math.min(all.length, offset + opts.limit) : all.length;
    // List items come without apiVersion/kind, as from a real server.
    const items = all.slice(offset, end).map((o) => {
      const copy = { ...o };
      delete copy.apiVersion;
      delete copy.kind;
      return copy;
    });
    return {
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: String(rev), ...(end < all.length ? { continue: `${rev}:${end}` } : {}) },
      items,
    };
  }

  async watch(opts: ListerWatchOptions): Promise<WatchStream<T>> {
    this.watchCalls.push({ ...opts });
    await Promise.resolve();
    const injected = takeInjected(this.failWatches, opts);
    if (injected) {
      this.notify();
      throw injected;
    }
    const from = Number(opts.resourceVersion);
    const stream = new FakeWatchStream<T>();
    opts.signal?.addEventListener('abort', () => stream.stop(), { once: true });
    if (from < this.oldestServable) {
      if (this.expiredAs === 'http') {
        this.notify();
        throw expiredStatus(`too old resource version: ${from} (${this.oldestServable})`);
      }
      stream.push({ type: 'ERROR', object: expiredStatus().status });
      stream.end();
      this.notify();
      return stream;
    }
    for (const { rev, ev } of this.history) if (rev > from) stream.push(ev);
    this.watchers.add(stream);
    this.notify();
    return stream;
  }

  private stamp(obj: T): T {
    this.revision++;
    return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.revision) } };
  }

  private record(ev: WatchEvent<T>): void {
    this.history.push({ rev: this.revision, ev });
    while (this.history.length > this.historySize) {
      this.history.shift();
      this.oldestServable = this.history[0]!.rev - 1;
    }
    for (const w of this.watchers) if (!w.stopped) w.push(ev);
    this.notify();
  }

  private notify(): void {
    for (const w of [...this.waiters]) {
      if (w.check()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }
}

function takeInjected<O>(queue: Injected<O>[], opts: O): Error | undefined {
  const next = queue.shift();
  if (next === undefined) return undefined;
  return next instanceof Error ? next : next(opts);
}

/**
 * Resolves once `check()` returns (or resolves to) true, polling every few milliseconds;
 * rejects with `what` after `timeoutMs` (default 10 000). For tests: wait on a condition
 * with a deadline, never for a fixed time.
 */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
