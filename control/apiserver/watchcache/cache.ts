/**
 * The watch cache of one resource (kube-apiserver's "cacher"): every API watcher of, say,
 * pods is served from ONE store watch on `/registry/pods/`.
 *
 * What it keeps, as kube-apiserver's watchCache:
 * - the current objects by key, each decoded once (`metadata.resourceVersion` set to its
 *   modRevision) and serialized at most once, shared by every list and watch;
 * - a ring buffer of the latest changes (see buffer.ts), from which watches
 *   resume at a resourceVersion; a version that is history is kept as its JSON only,
 *   deflated against another object of the resource (history-codec.ts);
 * - its revision: the newest change applied (or the revision of its last list).
 *
 * How it follows the store: list the prefix at revision R (in pages, one snapshot), then
 * `store.watch(prefix, R)`. When that watch fails it reconnects from the cache's revision
 * with backoff (1 s doubling to 30 s, as client-go's reflector), so watchers notice
 * nothing but a delay. When the store answers Compacted, the history the cache needed is
 * gone: it relists, and every watcher that has not seen everything up to the new list's
 * revision is ended with a 410 Expired ERROR, so that its client relists (the cacher
 * ends its watchers on relist for the same reason). A closed store stops the cache.
 *
 * Watches, by the `resourceVersion` the client sends (api-concepts "Semantics for watch"):
 * - unset: "Get State and Start at Most Recent" — ADDED for every matching object at the
 *   store's current revision (read from the store, reusing the cache's decoded objects),
 *   then every change after it. kube-apiserver sends these to etcd for the same reason:
 *   the cache alone cannot prove it is as new as the store.
 * - "0": "Start at Any" — ADDED for every matching object in the cache, then live.
 * - N: "Start at Exact" — every change after N from the buffer, then live; 410 Expired
 *   ("too old resource version: N (M)", M the oldest resourceVersion servable) when
 *   changes after N have left the buffer. N newer than the cache is accepted and the watch
 *   delivers only changes after N, as the cacher does (a watch's N may come from a list
 *   served by the store, whose revision counts other resources' writes too).
 * - sendInitialEvents (watch-list): true → the state first, then (with bookmarks) a
 *   BOOKMARK annotated `k8s.io/initial-events-end`; for N > 0 the cache first waits to be
 *   at least at N (3 s, then 504 "Too large resource version", as the cacher's
 *   blockTimeout). false → no state: start at the store's current revision (unset), the
 *   cache's (0) or N.
 *
 * Bookmarks (allowWatchBookmarks): about every minute, and 2 s before a watch's deadline
 * when it has one, a watcher that has caught up gets a BOOKMARK at the cache's revision.
 * Note: the store contract has no progress notifications, so the cache's revision moves
 * only with this resource's own writes; a bookmark is sent only when it tells the client
 * something new.
 *
 * Each change is dispatched synchronously, in revision order, inside the store watch's
 * callback, with one encoding per change for all watchers (see event.ts) and
 * per-watcher backpressure (see cache-watcher.ts); a watch's first events follow on a
 * microtask after watch() returns.
 *
 * Why one file of about 860 lines: what is left here is one class whose three parts —
 * starting watchers, following the store, bookmarks — read and write the same state (the
 * phase, the revision, the objects, the sets of replaying and live watchers) on every
 * change; split apart, each would reach into the others through a host interface for every
 * line it touches. The parts that stand alone are already their own files in this folder:
 * the history (buffer.ts), the shared events (event.ts) and one watcher (cache-watcher.ts).
 */
import type { KubeObject } from '../../../api/object.js';
import type { IndexFunc, Indexers } from '../../../api/client/indexer.js';
import { isStorageError } from '../../storage/errors.js';
import type {
  KeyValue,
  Store,
  Watch,
  WatchEvent as StoreWatchEvent,
  WatchHandler,
} from '../../storage/store.js';
import type { CacheWatcherHost, CloseReason, ReplayStart } from './cache-watcher.js';
import { CacheWatcher } from './cache-watcher.js';
import { ApiError, badRequest, expired, toApiError } from '../status.js';
import { realClock, type Clock } from '../../../api/clock.js';
import { EventBuffer } from './buffer.js';
import { HistoryCodec } from './history-codec.js';
import { deepFreeze } from '../../../api/freeze.js';
import { StringTable } from '../../../api/intern.js';
import type { WatchEvent } from './event.js';
import { bookmarkEvent, CachedObject, CacheEvent, errorEvent } from './event.js';

export type { CloseReason } from './cache-watcher.js';
export { CacheWatcher } from './cache-watcher.js';
export type { WatchEvent, WatchEventType } from './event.js';

/** Time, injectable so that tests of bookmarks, backoff and timeouts do not wait (api/clock.ts). */
export type { Clock } from '../../../api/clock.js';
export { realClock } from '../../../api/clock.js';

/** kube-apiserver's defaultBookmarkFrequency. */
export const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;
/** Bookmarks go out this long before a watch's deadline (as the cacher: 2 s). */
const BOOKMARK_BEFORE_DEADLINE_MS = 2_000;
/** Bookmark due times are grouped per second, as the cacher's time buckets. */
const BOOKMARK_TICK_MS = 1_000;
/**
 * Changes a watcher may have queued (or owe while replaying) before it is closed as too
 * slow. kube-apiserver sizes a watcher's channels at 10–1000 events by resource; a queued
 * change here costs one reference (the event itself is shared), so err on the generous side.
 */
export const DEFAULT_MAX_PENDING_PER_WATCHER = 1000;
/** The cacher's blockTimeout: how long a read waits for the cache to reach a resourceVersion. */
export const DEFAULT_FRESHNESS_TIMEOUT_MS = 3_000;
/** The cacher lists the store in pages of this many objects (storageWatchListPageSize). */
export const DEFAULT_LIST_PAGE_SIZE = 10_000;
const DEFAULT_BACKOFF = { initialMs: 1_000, maxMs: 30_000 };
/** A watch whose store list keeps losing the race with the buffer gets 410 after this many tries. */
const MAX_START_ATTEMPTS = 3;

export interface WatchCacheConfig {
  store: Store;
  /** The resource's key prefix, e.g. '/registry/pods/' (must start with '/registry/' and end with '/'). */
  prefix: string;
  /**
   * Fixed number of changes kept in the history buffer. Unset (the default): adaptive
   * between minCapacity and maxCapacity, keeping about 75 s of history, as kube-apiserver.
   */
  capacity?: number;
  /** Adaptive capacity bounds (changes); default 100 and 102400, as kube-apiserver. */
  minCapacity?: number;
  maxCapacity?: number;
  clock?: Clock;
  /** Milliseconds between bookmarks to a watcher; default 60 000. */
  bookmarkIntervalMs?: number;
  /** See DEFAULT_MAX_PENDING_PER_WATCHER; default 1000. */
  maxPendingPerWatcher?: number;
  /** How long waitUntilFresh (and watch-list at N) waits, ms; default 3000. */
  freshnessTimeoutMs?: number;
  /** Reconnect backoff after a store watch failure, ms; default 1000 doubling to 30 000. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Page size of the cache's store lists; default 10 000. */
  listPageSize?: number;
  /**
   * Turns a stored value into an object; default JSON.parse. The cache then sets
   * `metadata.resourceVersion` to the key's modRevision. A value that fails to decode is
   * reported to onError and left out (a change to it is skipped). Must return a new object
   * on every call: the cache keeps and shares it.
   */
  decode?: (kv: KeyValue) => KubeObject;
  /**
   * false: the current objects too are kept as their JSON only (as the history's, see
   * CachedObject), decoded again whenever they are read (lists, gets, selectors, indexes):
   * for a resource with many objects that in-process code never reads, Events, of which
   * kube-apiserver keeps no watch cache at all (kubernetes#96052). Default true.
   */
  keepDecoded?: boolean;
  /** apiVersion and kind of the resource, for the objects of BOOKMARK events. */
  typeMeta?: { apiVersion: string; kind: string };
  /** Failures the cache recovers from by itself (store watch errors, bad values, throwing handlers). */
  onError?: (err: unknown) => void;
  /**
   * Secondary indexes by name, the index functions of informers (api/client/indexer.ts):
   * each maps an object to the values it is found under with byIndex(), as the cacher's
   * indexers (pods by `spec.nodeName`). Must be pure and must not throw.
   */
  indexers?: Indexers<KubeObject>;
}

/** How one API watch starts and where its events go. */
export interface CacheWatchOptions {
  /** Only objects in this namespace (namespaced resources); unset/'' = all namespaces. */
  namespace?: string;
  /**
   * The client's resourceVersion, parsed: undefined for unset or '' (state at the most
   * recent revision, then live), 0 for "0" (state of the cache, then live), N > 0 for
   * "every change after N".
   */
  sinceRevision: number | undefined;
  /** watch-list: see the top of this file. Unset = the classic semantics above. */
  sendInitialEvents?: boolean;
  /**
   * Label/field selector, applied to each object before and after every change: one that
   * stops matching is sent as DELETED, one that starts matching as ADDED. Must not
   * mutate its argument (shared).
   */
  filter?: (obj: KubeObject) => boolean;
  allowBookmarks?: boolean;
  /** When the HTTP layer will end this watch (ms from now): a bookmark goes out 2 s before. */
  timeoutMs?: number;
  /**
   * Receives each event, in order; the event and its object are shared (do not mutate);
   * write `ev.line()` to the response. Return false when the sink is full, then call the
   * watcher's resume() when it drains.
   */
  onEvent(ev: WatchEvent): boolean | void;
  /** Called exactly once when the watch ends, with why. */
  onClose(reason: CloseReason): void;
}

/** Counters, updated in place (a plain object for now; a metrics registry may read it). */
export interface WatchCacheMetrics {
  /** Open watchers (waiting to start, replaying or live). */
  watchers: number;
  watchersStarted: number;
  /** Changes applied from the store. */
  eventsReceived: number;
  /** Events handed to watchers (onEvent calls), bookmarks and errors included. */
  eventsDispatched: number;
  bookmarksSent: number;
  watchersClosedSlow: number;
  /** Watchers ended with 410 Expired (too old resourceVersion, or a relist they could not follow). */
  watchersExpired: number;
  /** Relists after the first list (the store watch hit Compacted). */
  resyncs: number;
  storeWatchErrors: number;
  /** Current history buffer capacity (changes). */
  capacity: number;
  /** The cache's revision. */
  revision: number;
}

export interface CacheListOptions {
  namespace?: string;
  filter?: (obj: KubeObject) => boolean;
}

export interface CacheListResult {
  /** Matching objects in key order; shared — do not mutate. */
  items: KubeObject[];
  /** The cache's revision: the list's `metadata.resourceVersion`. */
  revision: number;
}

type Phase = 'new' | 'syncing' | 'ready' | 'stopped';

interface FreshWaiter {
  revision: number;
  resolve(): void;
  reject(err: ApiError): void;
  timer: unknown;
}

export class WatchCache {
  readonly prefix: string;
  readonly metrics: WatchCacheMetrics;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly buffer: EventBuffer;
  private readonly bookmarkIntervalMs: number;
  private readonly maxPending: number;
  private readonly freshnessTimeoutMs: number;
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;
  private readonly listPageSize: number;
  private readonly decodeValue: (kv: KeyValue) => KubeObject;
  private readonly keepDecoded: boolean;
  /**
   * One copy of each repeated short string of the objects kept decoded, and of the
   * namespaces of keys (api/intern.ts).
   */
  private readonly strings = new StringTable();
  /** Packs the JSON of every version retired into the history (history-codec.ts). */
  private readonly codec = new HistoryCodec();
  private readonly typeMeta: { apiVersion: string; kind: string } | undefined;
  private readonly reportError: (err: unknown) => void;

  private phase: Phase = 'new';
  private revisionValue = 0;
  private readonly objects = new Map<string, CachedObject>();
  private readonly indexers: [string, IndexFunc<KubeObject>][];
  /** index name → value → key → object. */
  private readonly indices = new Map<string, Map<string, Map<string, CachedObject>>>();
  private sortedKeys: string[] | undefined;
  private snapshotMemo: { revision: number; items: CachedObject[] } | undefined;

  private storeWatch: Watch | undefined;
  /** Bumped for every store watch and on stop: callbacks of older ones are ignored. */
  private session = 0;
  /** Consecutive failed attempts (the backoff exponent); reset once a store watch is up. */
  private failures = 0;
  private compactedInARow = 0;
  private retryTimer: unknown;
  private started: Promise<void> | undefined;
  private settleStart: { resolve(): void; reject(err: Error): void } | undefined;

  private nextWatcherId = 1;
  private readonly watchers = new Set<CacheWatcher>();
  /** Watchers waiting for the cache to be ready, with how to start them. */
  private readonly waitingForReady = new Map<CacheWatcher, CacheWatchOptions>();
  private readonly replaying = new Set<CacheWatcher>();
  private readonly liveAll = new Set<CacheWatcher>();
  private readonly liveByNamespace = new Map<string, Set<CacheWatcher>>();
  private readonly host: CacheWatcherHost;

  private readonly bookmarkBuckets = new Map<number, CacheWatcher[]>();
  private bookmarkTimer: unknown;
  /** The bookmark at the cache's revision, shared by every watcher it goes to. */
  private bookmarkMemo: { revision: number; event: WatchEvent } | undefined;

  private freshWaiters: FreshWaiter[] = [];

  /** @throws Error when the config is invalid (bad prefix, non-positive sizes or intervals). */
  constructor(cfg: WatchCacheConfig) {
    if (!cfg || !cfg.store) throw new Error('WatchCache: store is required');
    const prefix = cfg.prefix;
    if (typeof prefix !== 'string' || !prefix.startsWith('/registry/') || !prefix.endsWith('/')) {
      throw new Error(
        `WatchCache: prefix must start with '/registry/' and end with '/', got ${String(prefix)}`,
      );
    }
    this.prefix = prefix;
    this.store = cfg.store;
    this.indexers = Object.entries(cfg.indexers ?? {});
    for (const [name] of this.indexers) this.indices.set(name, new Map());
    this.clock = cfg.clock ?? realClock;
    this.buffer = new EventBuffer({
      capacity: cfg.capacity,
      minCapacity: cfg.minCapacity,
      maxCapacity: cfg.maxCapacity,
    });
    this.bookmarkIntervalMs = positive(
      cfg.bookmarkIntervalMs,
      DEFAULT_BOOKMARK_INTERVAL_MS,
      'bookmarkIntervalMs',
    );
    this.maxPending = positive(
      cfg.maxPendingPerWatcher,
      DEFAULT_MAX_PENDING_PER_WATCHER,
      'maxPendingPerWatcher',
    );
    this.freshnessTimeoutMs = positive(
      cfg.freshnessTimeoutMs,
      DEFAULT_FRESHNESS_TIMEOUT_MS,
      'freshnessTimeoutMs',
    );
    this.backoffInitialMs = positive(cfg.backoff?.initialMs, DEFAULT_BACKOFF.initialMs, 'backoff.initialMs');
    this.backoffMaxMs = positive(cfg.backoff?.maxMs, DEFAULT_BACKOFF.maxMs, 'backoff.maxMs');
    this.listPageSize = positive(cfg.listPageSize, DEFAULT_LIST_PAGE_SIZE, 'listPageSize');
    const decode = cfg.decode ?? ((kv: KeyValue) => JSON.parse(kv.value) as KubeObject);
    this.decodeValue = (kv) => {
      const obj = decode(kv);
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
        throw new Error(`watch cache: ${kv.key} does not hold a JSON object`);
      }
      obj.metadata = { ...obj.metadata, resourceVersion: String(kv.modRevision) };
      return obj;
    };
    this.typeMeta = cfg.typeMeta;
    this.keepDecoded = cfg.keepDecoded ?? true;
    this.reportError = cfg.onError ?? (() => {});
    this.metrics = {
      watchers: 0,
      watchersStarted: 0,
      eventsReceived: 0,
      eventsDispatched: 0,
      bookmarksSent: 0,
      watchersClosedSlow: 0,
      watchersExpired: 0,
      resyncs: 0,
      storeWatchErrors: 0,
      capacity: this.buffer.capacity,
      revision: 0,
    };
    this.host = this.makeHost();
  }

  /** The cache's revision: the newest change applied, or the revision of its last list (0 before). */
  get revision(): number {
    return this.revisionValue;
  }

  /** True once the cache holds a consistent state (false before start() settles and while relisting). */
  get ready(): boolean {
    return this.phase === 'ready';
  }

  /** Number of current objects. */
  get size(): number {
    return this.objects.size;
  }

  /**
   * Lists the prefix and starts following the store. Resolves once the cache is ready;
   * list or watch failures are reported to onError and retried with backoff meanwhile, so
   * it does not reject because the store is briefly unavailable.
   * @throws Error (rejects) when stop() is called first.
   */
  start(): Promise<void> {
    if (this.started) return this.started;
    this.started = new Promise<void>((resolve, reject) => (this.settleStart = { resolve, reject }));
    // stop() before ready rejects it; that must not become an unhandled rejection when the
    // caller started the cache without awaiting it.
    this.started.catch(() => {});
    if (this.phase === 'stopped') {
      this.settleStart!.reject(new Error('watch cache stopped'));
    } else {
      this.phase = 'syncing';
      void this.sync(true);
    }
    return this.started;
  }

  /** Stops following the store and closes every watcher with 'cache stopped'. Idempotent. */
  stop(): void {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.session++;
    this.storeWatch?.cancel();
    this.storeWatch = undefined;
    if (this.retryTimer !== undefined) this.clock.clearTimeout(this.retryTimer);
    if (this.bookmarkTimer !== undefined) this.clock.clearTimeout(this.bookmarkTimer);
    this.retryTimer = this.bookmarkTimer = undefined;
    this.bookmarkBuckets.clear();
    this.settleStart?.reject(new Error('watch cache stopped'));
    this.settleStart = undefined;
    const unavailable = this.unavailable();
    for (const waiter of this.freshWaiters.splice(0)) {
      this.clock.clearTimeout(waiter.timer);
      waiter.reject(unavailable);
    }
    for (const w of [...this.watchers]) w.close('cache stopped');
  }

  /**
   * The current objects (in key order) matching namespace and filter, with the cache's
   * revision: a list with resourceVersion="0" semantics (or, after waitUntilFresh(N),
   * "not older than N").
   * @throws ApiError 503 when the cache is not ready (the caller may read the store instead).
   */
  list(opts: CacheListOptions = {}): CacheListResult {
    if (this.phase !== 'ready') throw this.unavailable();
    const namespace = opts.namespace || undefined;
    const items: KubeObject[] = [];
    for (const obj of this.snapshot()) {
      if (namespace !== undefined && obj.namespace !== namespace) continue;
      if (opts.filter && !opts.filter(obj.object)) continue;
      items.push(obj.object);
    }
    return { items, revision: this.revisionValue };
  }

  /**
   * One object by name from the cache (shared — do not mutate), or undefined.
   * @throws ApiError 503 when the cache is not ready.
   */
  get(opts: { namespace?: string; name: string }): KubeObject | undefined {
    if (this.phase !== 'ready') throw this.unavailable();
    const key = opts.namespace
      ? `${this.prefix}${opts.namespace}/${opts.name}`
      : `${this.prefix}${opts.name}`;
    return this.objects.get(key)?.object;
  }

  /**
   * The current object `namespace/name` if it is at `resourceVersion` (shared and frozen
   * deeply: see shareable), else undefined (also while the cache is not ready): for an
   * in-process client that decoded the same version from the wire and may keep this copy
   * instead of its own.
   */
  currentAt(opts: { namespace?: string; name: string }, resourceVersion: string): KubeObject | undefined {
    if (this.phase !== 'ready') return undefined;
    const key = opts.namespace
      ? `${this.prefix}${opts.namespace}/${opts.name}`
      : `${this.prefix}${opts.name}`;
    const cached = this.objects.get(key);
    if (!cached || cached.retired || String(cached.revision) !== resourceVersion) return undefined;
    return deepFreeze(cached.object);
  }

  /**
   * The objects indexed under `value` in index `name` (WatchCacheConfig.indexers; shared —
   * do not mutate), in no particular order: what a list filtered by that field finds,
   * without a scan of the cache.
   * @throws ApiError 503 when the cache is not ready; Error for an index never configured.
   */
  byIndex(name: string, value: string): KubeObject[] {
    if (this.phase !== 'ready') throw this.unavailable();
    const index = this.indices.get(name);
    if (!index) throw new Error(`WatchCache ${this.prefix}: no index named ${name}`);
    return [...(index.get(value)?.values() ?? [])].map((o) => o.object);
  }

  /** Moves `key` in every index from what `old` was indexed under to what `cur` is (either may be undefined). */
  private reindex(key: string, old: CachedObject | undefined, cur: CachedObject | undefined): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      const after = cur ? fn(cur.object) : [];
      for (const value of old ? fn(old.object) : []) {
        if (after.includes(value)) continue;
        const entries = index.get(value);
        entries?.delete(key);
        if (entries?.size === 0) index.delete(value);
      }
      for (const value of after) {
        let entries = index.get(value);
        if (!entries) index.set(value, (entries = new Map()));
        entries.set(key, cur!);
      }
    }
  }

  /**
   * Resolves once the cache's revision is at least `revision` (at once if it is).
   * @throws ApiError (rejects) 504 Timeout "Too large resource version: N, current: M" with
   *   cause ResourceVersionTooLarge and retryAfterSeconds 1 after `timeoutMs` (default
   *   3 s, as the cacher); 503 when the cache stops meanwhile.
   */
  waitUntilFresh(revision: number, timeoutMs = this.freshnessTimeoutMs): Promise<void> {
    if (this.phase === 'stopped') return Promise.reject(this.unavailable());
    if (this.phase === 'ready' && this.revisionValue >= revision) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        revision,
        resolve,
        reject,
        timer: this.clock.setTimeout(() => {
          this.freshWaiters = this.freshWaiters.filter((w) => w !== waiter);
          reject(tooLargeResourceVersion(revision, this.revisionValue));
        }, timeoutMs),
      };
      this.freshWaiters.push(waiter);
    });
  }

  /**
   * Starts an API watch (see the top of this file for the resourceVersion semantics).
   * Returns at once; events start on a later microtask, so the caller holds the watcher
   * before its first onEvent. Errors after that (410, 504, 503, store failures) arrive as
   * one ERROR event whose object is a metav1.Status, followed by onClose.
   * @throws ApiError 400 when sinceRevision is not a non-negative integer.
   */
  watch(opts: CacheWatchOptions): CacheWatcher {
    const rv = opts.sinceRevision;
    if (rv !== undefined && (!Number.isSafeInteger(rv) || rv < 0)) {
      throw badRequest(`invalid resourceVersion for watch: ${String(rv)}`);
    }
    const deadline =
      opts.timeoutMs !== undefined && opts.timeoutMs > 0 ? this.clock.now() + opts.timeoutMs : 0;
    const w = new CacheWatcher(this.host, this.nextWatcherId++, { ...opts, deadline });
    this.watchers.add(w);
    this.metrics.watchers = this.watchers.size;
    this.metrics.watchersStarted++;
    queueMicrotask(() => this.startWatcher(w, opts));
    return w;
  }

  // ---- starting watchers ----

  private startWatcher(w: CacheWatcher, opts: CacheWatchOptions): void {
    if (w.state !== 'pending') return;
    if (this.phase === 'stopped') {
      w.fail(errorEvent(this.unavailable().toStatus()), 'error');
      return;
    }
    if (this.phase !== 'ready') {
      this.waitingForReady.set(w, opts);
      return;
    }
    const rv = opts.sinceRevision;
    const initialEvents = opts.sendInitialEvents;
    if (rv === undefined) {
      void this.startAtMostRecent(w, opts, 1);
    } else if (initialEvents === true && rv > this.revisionValue) {
      this.waitUntilFresh(rv).then(
        () => this.startWatcher(w, { ...opts, sinceRevision: 0 }),
        (err: unknown) => w.fail(errorEvent(toApiError(err).toStatus()), 'error'),
      );
    } else if (rv === 0 || initialEvents === true) {
      this.beginWatcher(w, {
        initial: initialEvents === false ? undefined : this.snapshot(),
        initialEnd: initialEvents === true && opts.allowBookmarks ? this.initialEventsEnd() : undefined,
        position: this.revisionValue,
        cursor: this.buffer.end,
      });
    } else if (rv < this.buffer.floor) {
      this.expireWatcher(w, rv);
    } else {
      this.beginWatcher(w, { position: rv, cursor: this.buffer.firstAfter(rv), clientRevision: rv });
    }
  }

  /**
   * resourceVersion unset: the state at the store's current revision G (sendInitialEvents
   * false: none), then every change after G. The store's list is joined to the cache's
   * stream at G: changes up to G are in the list, later ones come from the buffer or live.
   */
  private async startAtMostRecent(w: CacheWatcher, opts: CacheWatchOptions, attempt: number): Promise<void> {
    let initial: CachedObject[] | undefined;
    let revision: number;
    try {
      if (opts.sendInitialEvents === false) {
        revision = await this.store.currentRevision();
      } else {
        const listed = await this.listStore();
        revision = listed.revision;
        initial = this.toCachedObjects(listed.items);
      }
    } catch (err) {
      this.reportError(err);
      w.fail(errorEvent(toApiError(err).toStatus()), 'error');
      return;
    }
    if (w.state !== 'pending') return;
    if (this.phase !== 'ready') {
      this.startWatcher(w, opts);
      return;
    }
    if (revision < this.buffer.floor) {
      // The cache relisted past G, or its buffer moved on, while the store list ran.
      if (attempt >= MAX_START_ATTEMPTS) this.expireWatcher(w, revision);
      else void this.startAtMostRecent(w, opts, attempt + 1);
      return;
    }
    this.beginWatcher(w, {
      initial,
      initialEnd:
        opts.sendInitialEvents === true && opts.allowBookmarks ? this.initialEventsEnd(revision) : undefined,
      position: revision,
      cursor: this.buffer.firstAfter(revision),
    });
  }

  private beginWatcher(w: CacheWatcher, start: ReplayStart): void {
    this.replaying.add(w);
    if (w.allowBookmarks) this.scheduleBookmark(w);
    w.begin(start);
  }

  private expireWatcher(w: CacheWatcher, revision: number): void {
    this.metrics.watchersExpired++;
    const err = expired(`too old resource version: ${revision} (${this.buffer.floor})`);
    w.fail(errorEvent(err.toStatus()), 'expired');
  }

  private initialEventsEnd(revision = this.revisionValue): WatchEvent {
    return bookmarkEvent(revision, this.typeMeta, true);
  }

  private makeHost(): CacheWatcherHost {
    return {
      buffer: this.buffer,
      maxPending: this.maxPending,
      metrics: this.metrics,
      goLive: (w) => {
        this.replaying.delete(w);
        if (w.namespace === undefined) {
          this.liveAll.add(w);
        } else {
          let set = this.liveByNamespace.get(w.namespace);
          if (!set) this.liveByNamespace.set(w.namespace, (set = new Set()));
          set.add(w);
        }
      },
      expire: (w) => this.expireWatcher(w, w.position),
      bookmarkNow: (w) => this.sendBookmark(w),
      forget: (w) => {
        this.watchers.delete(w);
        this.waitingForReady.delete(w);
        this.replaying.delete(w);
        if (w.namespace === undefined) {
          this.liveAll.delete(w);
        } else {
          const set = this.liveByNamespace.get(w.namespace);
          set?.delete(w);
          if (set?.size === 0) this.liveByNamespace.delete(w.namespace);
        }
        this.metrics.watchers = this.watchers.size;
      },
      onError: (err) => this.reportError(err),
    };
  }

  // ---- following the store ----

  /**
   * One attempt to (re)connect: relist first when asked (start, or after Compacted), then
   * watch from the cache's revision. Failures schedule the next attempt.
   */
  private async sync(relist: boolean): Promise<void> {
    const session = ++this.session;
    try {
      if (relist) {
        const listed = await this.listStore();
        if (session !== this.session) return;
        this.replaceState(listed.items, listed.revision);
      }
      const handler: WatchHandler = {
        onEvents: (events) => {
          if (session === this.session) this.apply(events);
        },
        onError: (err) => {
          if (session === this.session) this.storeWatchFailed(err, session);
        },
      };
      const watch = await this.store.watch(this.prefix, this.revisionValue, handler);
      if (session !== this.session) {
        watch.cancel();
        return;
      }
      this.storeWatch = watch;
      this.failures = 0;
      this.compactedInARow = 0;
    } catch (err) {
      if (session !== this.session) return;
      this.storeWatchFailed(err, session);
    }
  }

  private storeWatchFailed(err: unknown, session: number): void {
    if (session !== this.session || this.phase === 'stopped') return;
    this.session++;
    this.storeWatch?.cancel();
    this.storeWatch = undefined;
    this.metrics.storeWatchErrors++;
    this.reportError(err);
    if (isStorageError(err, 'Closed')) {
      this.stop();
      return;
    }
    const compacted = isStorageError(err, 'Compacted');
    // Until a list has been installed (the first, or the relist after a compaction) there
    // is no state to reconnect from.
    const relist = compacted || this.phase !== 'ready';
    if (compacted && this.phase === 'ready') this.phase = 'syncing';
    // A compaction is not a failure of the store: relist at once, and back off only when
    // relists keep losing the race with compaction.
    this.compactedInARow = compacted ? this.compactedInARow + 1 : 0;
    if (this.compactedInARow === 1) {
      queueMicrotask(() => {
        if (this.phase !== 'stopped') void this.sync(true);
      });
      return;
    }
    const delay = Math.min(this.backoffInitialMs * 2 ** this.failures, this.backoffMaxMs);
    this.failures++;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      if (this.phase !== 'stopped') void this.sync(relist);
    }, delay);
  }

  /** The whole prefix at one revision, in pages. */
  private async listStore(): Promise<{ items: KeyValue[]; revision: number }> {
    const first = await this.store.list(this.prefix, { limit: this.listPageSize });
    const items = first.items;
    let token = first.continue;
    while (token) {
      const page = await this.store.list(this.prefix, { limit: this.listPageSize, continue: token });
      for (const kv of page.items) items.push(kv);
      token = page.continue;
    }
    return { items, revision: first.revision };
  }

  /** Store values as cached objects, reusing the cache's own when it holds the same version. */
  private toCachedObjects(kvs: KeyValue[]): CachedObject[] {
    const out: CachedObject[] = [];
    for (const kv of kvs) {
      const known = this.objects.get(kv.key);
      if (known && known.revision === kv.modRevision) {
        out.push(known);
        continue;
      }
      const obj = this.decode(kv, true);
      if (obj) out.push(obj);
    }
    return out;
  }

  /**
   * The cached object of a store value; `current` for the version the cache keeps as its
   * current object: kept decoded, its repeated strings are shared (StringTable).
   */
  private decode(kv: KeyValue, current = false): CachedObject | undefined {
    try {
      const cached = CachedObject.decoded(
        kv.key,
        this.namespaceOf(kv.key),
        kv.modRevision,
        this.decodeValue(kv),
      );
      if (current && this.keepDecoded) this.strings.internValues(cached.object);
      return cached;
    } catch (err) {
      this.reportError(err);
      return undefined;
    }
  }

  private namespaceOf(key: string): string | undefined {
    const slash = key.indexOf('/', this.prefix.length);
    return slash < 0 ? undefined : this.strings.get(key.slice(this.prefix.length, slash));
  }

  /** Installs a fresh list at `revision`: the first one, or a relist after Compacted. */
  private replaceState(kvs: KeyValue[], revision: number): void {
    const objects = this.toCachedObjects(kvs);
    const first = this.revisionValue === 0;
    this.objects.clear();
    for (const index of this.indices.values()) index.clear();
    for (const obj of objects) {
      this.objects.set(obj.key, obj);
      this.reindex(obj.key, undefined, obj);
      if (!this.keepDecoded) obj.retire(this.codec);
    }
    this.sortedKeys = undefined;
    this.snapshotMemo = undefined;
    this.revisionValue = revision;
    this.metrics.revision = revision;
    this.buffer.reset(revision);
    if (!first) {
      this.metrics.resyncs++;
      // Changes between the old revision and `revision` are lost: a watcher that has not
      // seen everything up to `revision` cannot be continued; its client must relist.
      for (const w of [...this.watchers]) {
        if (w.state !== 'live' && w.state !== 'replaying') continue;
        if (w.position < revision) this.expireWatcher(w, w.position);
      }
    }
    this.phase = 'ready';
    this.settleStart?.resolve();
    this.settleStart = undefined;
    this.resolveFreshWaiters();
    const waiting = [...this.waitingForReady];
    this.waitingForReady.clear();
    for (const [w, opts] of waiting) this.startWatcher(w, opts);
  }

  /** Applies a batch of store changes and dispatches each to the live watchers. */
  private apply(events: StoreWatchEvent[]): void {
    const now = this.clock.now();
    for (const e of events) {
      const revision = e.kv.modRevision;
      if (revision <= this.revisionValue) continue;
      this.revisionValue = revision;
      const ev = this.toCacheEvent(e, now);
      if (!ev) continue;
      this.metrics.eventsReceived++;
      this.buffer.push(ev);
      // Filters read the object before and after the change: decoded once for all watchers.
      ev.previous?.hold();
      this.dispatch(ev);
      ev.dispatched(this.codec);
      if (!this.keepDecoded) ev.current?.retire(this.codec);
    }
    this.metrics.revision = this.revisionValue;
    this.metrics.capacity = this.buffer.capacity;
    for (const w of [...this.replaying]) w.checkReplay();
    this.resolveFreshWaiters();
  }

  /** Updates the state for one change and describes it, or undefined when it cannot be used. */
  private toCacheEvent(e: StoreWatchEvent, now: number): CacheEvent | undefined {
    const key = e.kv.key;
    const namespace = this.namespaceOf(key);
    const known = this.objects.get(key);
    const previous = known ?? (e.prevKv ? this.decode(e.prevKv) : undefined);
    this.snapshotMemo = undefined;
    if (e.type === 'DELETE') {
      if (known) {
        this.objects.delete(key);
        this.reindex(key, known, undefined);
        this.sortedKeys = undefined;
      }
      if (!previous) return undefined;
      return new CacheEvent('DELETE', key, namespace, e.kv.modRevision, undefined, previous, now);
    }
    const current = this.decode(e.kv, true);
    if (!current) return undefined;
    if (!known) this.sortedKeys = undefined;
    this.objects.set(key, current);
    this.reindex(key, known, current);
    return new CacheEvent('PUT', key, namespace, e.kv.modRevision, current, previous, now);
  }

  private dispatch(ev: CacheEvent): void {
    if (ev.namespace !== undefined) {
      const scoped = this.liveByNamespace.get(ev.namespace);
      if (scoped) for (const w of scoped) w.push(ev);
    }
    for (const w of this.liveAll) w.push(ev);
  }

  /** The current objects in key order, shared by every watch started at this revision. */
  private snapshot(): CachedObject[] {
    if (this.snapshotMemo?.revision === this.revisionValue) return this.snapshotMemo.items;
    this.sortedKeys ??= [...this.objects.keys()].sort();
    const items = this.sortedKeys.map((k) => this.objects.get(k)!);
    this.snapshotMemo = { revision: this.revisionValue, items };
    return items;
  }

  private resolveFreshWaiters(): void {
    if (this.freshWaiters.length === 0 || this.phase !== 'ready') return;
    const still: FreshWaiter[] = [];
    for (const waiter of this.freshWaiters) {
      if (this.revisionValue >= waiter.revision) {
        this.clock.clearTimeout(waiter.timer);
        waiter.resolve();
      } else {
        still.push(waiter);
      }
    }
    this.freshWaiters = still;
  }

  private unavailable(): ApiError {
    return new ApiError(
      503,
      'ServiceUnavailable',
      this.phase === 'stopped'
        ? `the watch cache for ${this.prefix} is stopped`
        : `the watch cache for ${this.prefix} is not ready`,
      { retryAfterSeconds: 1 },
    );
  }

  // ---- bookmarks ----

  private scheduleBookmark(w: CacheWatcher): void {
    const now = this.clock.now();
    let at = now + this.bookmarkIntervalMs;
    if (w.deadline > 0) {
      at = Math.min(at, w.deadline - BOOKMARK_BEFORE_DEADLINE_MS);
      if (at < now) return;
    }
    const bucket = Math.floor(at / BOOKMARK_TICK_MS);
    const list = this.bookmarkBuckets.get(bucket);
    if (list) list.push(w);
    else this.bookmarkBuckets.set(bucket, [w]);
    if (this.bookmarkTimer === undefined) {
      this.bookmarkTimer = this.clock.setTimeout(() => this.bookmarkTick(), BOOKMARK_TICK_MS);
    }
  }

  private bookmarkTick(): void {
    this.bookmarkTimer = undefined;
    if (this.phase === 'stopped') return;
    const current = Math.floor(this.clock.now() / BOOKMARK_TICK_MS);
    const due: CacheWatcher[] = [];
    for (const [bucket, ws] of this.bookmarkBuckets) {
      if (bucket > current) continue;
      this.bookmarkBuckets.delete(bucket);
      for (const w of ws) due.push(w);
    }
    for (const w of due) {
      if (w.closed) continue;
      this.sendBookmark(w);
      if (!w.closed) this.scheduleBookmark(w);
    }
    if (this.bookmarkBuckets.size > 0 && this.bookmarkTimer === undefined) {
      this.bookmarkTimer = this.clock.setTimeout(() => this.bookmarkTick(), BOOKMARK_TICK_MS);
    }
  }

  private sendBookmark(w: CacheWatcher): void {
    if (this.phase !== 'ready' || this.revisionValue === 0) return;
    const revision = this.revisionValue;
    if (this.bookmarkMemo?.revision !== revision) {
      this.bookmarkMemo = { revision, event: bookmarkEvent(revision, this.typeMeta) };
    }
    w.bookmark(revision, this.bookmarkMemo.event);
  }
}

/**
 * 504 Timeout for a resourceVersion the cache has not reached, worded as kube-apiserver's
 * storage.NewTooLargeResourceVersionError (client-go's reflector recognizes the cause).
 */
export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(
    504,
    'Timeout',
    `Timeout: Too large resource version: ${requested}, current: ${current}`,
    {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    },
  );
}

function positive(value: number | undefined, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v <= 0)
    throw new Error(`WatchCache: ${what} must be a positive number, got ${v}`);
  return v;
}
