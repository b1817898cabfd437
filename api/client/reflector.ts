/**
 * The reflector: keeps a store equal to the server's state of one set of objects, as
 * client-go's tools/cache Reflector does.
 *
 *   list (paginated, `limit` 500 + `continue`)  →  store.replace(items, rv)
 *   watch from rv (allowWatchBookmarks, timeoutSeconds random in [min, 2·min], min 5 min)
 *     ADDED / MODIFIED / DELETED  →  store.add / update / delete; rv = the object's
 *     BOOKMARK                    →  rv = the bookmark's (store.bookmark, if it wants it)
 *     ERROR                       →  an ApiStatusError; 410 Expired/Gone means relist
 *   the server ends the watch  →  watch again from rv at once
 *   410 (HTTP or ERROR event)  →  list again; the store's replace() computes the diff,
 *                                 so deletions missed meanwhile become delete events
 *   any other failure          →  wait (backoff 1 s doubling to 30 s, jittered), then
 *                                 watch again from rv — or list again if the list failed
 *
 * A watch that ends within 1 s without a single event counts as a failure (client-go's
 * VeryShortWatchError), so a server that keeps closing watches at once is not hammered.
 * The backoff starts over once a watch delivers an event or stays open for a second.
 */
import type { KubeObject } from '../object.js';
import { realClock, type Clock } from '../clock.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { ApiStatusError, isResourceExpired } from './errors.js';
import type { ListerWatcher } from './listwatch.js';

/**
 * Where a reflector puts what it learns. Calls arrive one at a time, in the server's
 * order. A store that throws fails the current list or watch, which is then retried.
 */
export interface ReflectorStore<T extends KubeObject> {
  /** The complete state at `resourceVersion` (after every list): the store becomes exactly `items`. */
  replace(items: T[], resourceVersion: string): void;
  /** A watch ADDED event. */
  add(obj: T): void;
  /** A watch MODIFIED event. */
  update(obj: T): void;
  /** A watch DELETED event; `obj` is the object's last state. */
  delete(obj: T): void;
  /** A BOOKMARK: nothing changed up to `resourceVersion`. */
  bookmark?(resourceVersion: string): void;
}

/** What a reflector has done so far (for tests, metrics and debugging). */
export interface ReflectorStats {
  /** Completed lists (every page of one list counts once). */
  lists: number;
  /** Watches opened (HTTP 200 received). */
  watches: number;
  /** Lists and watches answered 410 (each leads to a relist). */
  expired: number;
  /** Failures waited out with backoff. */
  failures: number;
  /** The latest failure, if any. */
  lastError?: Error;
}

/** Settings of a Reflector. */
export interface ReflectorOptions<T extends KubeObject> {
  listerWatcher: ListerWatcher<T>;
  store: ReflectorStore<T>;
  /** Names the reflector in errors (e.g. `pods`); default `reflector`. */
  name?: string;
  /** Objects per list page; default 500 (client-go's pager). 0: one unpaginated list. */
  pageSize?: number;
  /** Watches ask the server to end them after a random [min, 2·min] seconds; default min 300 (client-go). */
  minWatchTimeoutSeconds?: number;
  /** Reconnect pacing; default 1 s doubling to 30 s, jitter 1. */
  backoff?: BackoffOptions;
  clock?: Clock;
  /** Random numbers in [0, 1) for the watch timeout (and the backoff, unless it brings its own). */
  random?: () => number;
  /**
   * Told about every failure before it is retried (client-go's WatchErrorHandler) —
   * the place to log. Default: nothing (see `stats.lastError`).
   */
  onError?: (err: Error, during: 'list' | 'watch') => void;
  /**
   * `apiVersion` and `kind` to set on listed objects that come without them (list items
   * usually do), so that every object in the store is self-describing.
   */
  typeMeta?: { apiVersion: string; kind: string };
}

/** A watch that ended within a second without any event (client-go's VeryShortWatchError). */
export class VeryShortWatchError extends Error {
  override readonly name = 'VeryShortWatchError';
  constructor(reflector: string) {
    super(`${reflector}: the watch ended within 1 s without any event`);
  }
}

/** How a watch that did not throw came to an end. */
type WatchOutcome = 'ended' | 'expired' | 'stopped';

const VERY_SHORT_WATCH_MS = 1_000;

/**
 * Lists and watches through a ListerWatcher into a ReflectorStore, forever, until
 * stopped: `run(signal)` resolves when `signal` aborts. Never throws: every failure is
 * reported to `onError` and retried.
 */
export class Reflector<T extends KubeObject = KubeObject> {
  readonly name: string;
  private readonly lw: ListerWatcher<T>;
  private readonly store: ReflectorStore<T>;
  private readonly pageSize: number;
  private readonly minWatchTimeoutSeconds: number;
  private readonly backoff: Backoff;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly onError: ((err: Error, during: 'list' | 'watch') => void) | undefined;
  private readonly typeMeta: { apiVersion: string; kind: string } | undefined;
  private rv = '';
  private running = false;
  private readonly counters: ReflectorStats = { lists: 0, watches: 0, expired: 0, failures: 0 };

  /** @throws RangeError for a negative pageSize or a non-positive minWatchTimeoutSeconds. */
  constructor(opts: ReflectorOptions<T>) {
    this.lw = opts.listerWatcher;
    this.store = opts.store;
    this.name = opts.name ?? 'reflector';
    this.pageSize = opts.pageSize ?? 500;
    this.minWatchTimeoutSeconds = opts.minWatchTimeoutSeconds ?? 300;
    if (!(this.pageSize >= 0)) throw new RangeError(`pageSize must not be negative, got ${this.pageSize}`);
    if (!(this.minWatchTimeoutSeconds > 0))
      throw new RangeError(`minWatchTimeoutSeconds must be positive, got ${this.minWatchTimeoutSeconds}`);
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.backoff = new Backoff({ random: this.random, ...opts.backoff });
    this.onError = opts.onError;
    this.typeMeta = opts.typeMeta;
  }

  /** The resourceVersion the store is known to be current at ('' before the first list). */
  get lastSyncResourceVersion(): string {
    return this.rv;
  }

  /** Counters since construction (a copy). */
  get stats(): ReflectorStats {
    return { ...this.counters };
  }

  /**
   * Runs until `signal` aborts: list, then watch, relisting and reconnecting as the file
   * header describes. Resolves once stopped; never rejects.
   * @throws Error when the reflector is already running.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`${this.name}: already running`);
    this.running = true;
    try {
      let needList = true;
      // True while nothing has been learnt from a watch since the last list: a 410 then
      // means relisting does not help at once, so it waits its backoff first.
      let freshList = false;
      while (!signal.aborted) {
        if (needList) {
          try {
            await this.list(signal);
            needList = false;
            freshList = true;
          } catch (err) {
            if (signal.aborted) break;
            if (isResourceExpired(err)) this.counters.expired++;
            await this.fail(asError(err), 'list', signal);
            continue;
          }
        }
        let outcome: WatchOutcome;
        try {
          outcome = await this.watch(signal, () => (freshList = false));
        } catch (err) {
          if (signal.aborted) break;
          await this.fail(asError(err), 'watch', signal);
          continue;
        }
        if (outcome === 'expired') {
          this.counters.expired++;
          needList = true;
          if (freshList) await this.fail(new Error(`${this.name}: 410 right after a list`), 'watch', signal);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async fail(err: Error, during: 'list' | 'watch', signal: AbortSignal): Promise<void> {
    this.counters.failures++;
    this.counters.lastError = err;
    try {
      this.onError?.(err, during);
    } catch {
      // a failing error handler must not stop the reflector
    }
    await this.clock.sleep(this.backoff.next(), signal);
  }

  /** One complete list, page by page, handed to the store as one replace(). */
  private async list(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let rv = '';
    let cont: string | undefined;
    for (;;) {
      let page;
      try {
        page = await this.lw.list({
          ...(this.pageSize > 0 ? { limit: this.pageSize } : {}),
          ...(cont !== undefined ? { continue: cont } : {}),
          signal,
        });
      } catch (err) {
        // The continue token outlived the server's history: start over with one
        // unpaginated list, as client-go's pager falls back to a full list.
        if (cont === undefined || !isResourceExpired(err)) throw err;
        items.length = 0;
        cont = undefined;
        page = await this.lw.list({ signal });
        rv = page.metadata?.resourceVersion ?? '';
        for (const item of page.items) items.push(item);
        break;
      }
      if (cont === undefined) rv = page.metadata?.resourceVersion ?? '';
      for (const item of page.items) items.push(item);
      cont = page.metadata?.continue || undefined;
      if (cont === undefined) break;
    }
    if (!rv) throw new Error(`${this.name}: the list response has no metadata.resourceVersion`);
    if (this.typeMeta) {
      for (const item of items) {
        item.apiVersion ??= this.typeMeta.apiVersion;
        item.kind ??= this.typeMeta.kind;
      }
    }
    this.store.replace(items, rv);
    this.rv = rv;
    this.counters.lists++;
  }

  /**
   * One watch from the current resourceVersion, until it ends. `progressed` is called
   * on its first event.
   * @throws what opening or reading the watch throws (except 410: that is 'expired'),
   *   ApiStatusError for a non-410 ERROR event, VeryShortWatchError.
   */
  private async watch(signal: AbortSignal, progressed: () => void): Promise<WatchOutcome> {
    const min = this.minWatchTimeoutSeconds;
    const timeoutSeconds = Math.floor(min + this.random() * min);
    const started = this.clock.now();
    let stream;
    try {
      stream = await this.lw.watch({
        resourceVersion: this.rv,
        timeoutSeconds,
        allowWatchBookmarks: true,
        signal,
      });
    } catch (err) {
      if (isResourceExpired(err)) return 'expired';
      throw err;
    }
    this.counters.watches++;
    // Stop the stream on abort even if the ListerWatcher ignores the signal.
    const stopStream = () => stream.stop();
    signal.addEventListener('abort', stopStream, { once: true });
    let events = 0;
    try {
      for await (const ev of stream) {
        if (signal.aborted) return 'stopped';
        if (ev.type === 'ERROR') {
          const err = new ApiStatusError(ev.object);
          if (isResourceExpired(err)) return 'expired';
          throw err;
        }
        const obj = ev.object;
        switch (ev.type) {
          case 'ADDED':
            this.store.add(obj);
            break;
          case 'MODIFIED':
            this.store.update(obj);
            break;
          case 'DELETED':
            this.store.delete(obj);
            break;
          case 'BOOKMARK':
            if (obj.metadata?.resourceVersion) this.store.bookmark?.(obj.metadata.resourceVersion);
            break;
        }
        const rv = obj.metadata?.resourceVersion;
        if (rv) this.rv = rv;
        if (events++ === 0) {
          progressed();
          this.backoff.reset();
        }
      }
    } finally {
      signal.removeEventListener('abort', stopStream);
      stream.stop();
    }
    if (signal.aborted) return 'stopped';
    if (events === 0) {
      if (this.clock.now() - started < VERY_SHORT_WATCH_MS) throw new VeryShortWatchError(this.name);
      this.backoff.reset();
    }
    return 'ended';
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
