/**
 * SharedInformer: one reflector feeding one indexed cache, and event handlers told about
 * every change (client-go's sharedIndexInformer). Several controllers share one informer
 * per resource (see InformerFactory), so each set of objects is listed and watched once.
 *
 * How changes become handler calls:
 * - a watch ADDED/MODIFIED of an object not in the cache → `onAdd(obj, false)`; of a cached
 *   one → `onUpdate(old, new)`; DELETED → `onDelete(lastState)` (ignored for an object the
 *   cache never had);
 * - a (re)list: objects new to the cache → `onAdd` (`isInInitialList` true on the first
 *   list); objects whose resourceVersion changed → `onUpdate`; cached objects missing from
 *   the list → `onDelete(DeletedFinalStateUnknown)`, a tombstone holding the last state the
 *   cache knew, because the real deletion happened while the watch was down. Unlike
 *   client-go, which reports every listed object as an update after a relist, objects
 *   whose resourceVersion did not change are not reported; use a resync period for
 *   periodic re-delivery.
 * - every resync period of a handler → `onUpdate(obj, obj)` for every cached object.
 *
 * The cache is updated before handlers run, so a handler (and any lister) sees the new
 * state. Handlers run synchronously, one at a time, in registration order: keep them
 * cheap (compute a key, add it to a workqueue). One that throws is reported to `onError`
 * and does not affect the others.
 */
import type { KubeObject } from '../object.js';
import { realClock, type Clock } from '../clock.js';
import type { BackoffOptions } from './backoff.js';
import { Indexer, NAMESPACE_INDEX, namespaceIndexFunc } from './indexer.js';
import type { Indexers } from './indexer.js';
import { Lister } from './lister.js';
import { listWatchFor } from './listwatch.js';
import type { ListerWatcher, ListWatchScope } from './listwatch.js';
import { Reflector } from './reflector.js';
import type { ReflectorStats, ReflectorStore } from './reflector.js';
import { apiVersionOf } from './resource.js';
import type { ResourceRef } from './resource.js';
import type { RestClient } from './rest.js';

/**
 * A deletion inferred from a relist: the object was gone from the server's list, so its
 * final state is unknown; `obj` is the last state the cache had and `key` its key
 * (client-go's cache.DeletedFinalStateUnknown).
 */
export class DeletedFinalStateUnknown<T extends KubeObject = KubeObject> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

/** The object of an onDelete argument, unwrapping a tombstone. */
export function deletedObject<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

/** Callbacks for changes in an informer's cache; every one is optional. */
export interface ResourceEventHandler<T extends KubeObject> {
  /** An object appeared; `isInInitialList` is true for what the first list (or a late registration) delivers. */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** An object changed (or a resync re-delivered it: then `oldObj === newObj`). */
  onUpdate?(oldObj: T, newObj: T): void;
  /** An object is gone: its last state, or a tombstone when the deletion was inferred from a relist. */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

/** What addEventHandler returns. */
export interface HandlerRegistration {
  /** True once this handler has been given the informer's complete initial state. */
  hasSynced(): boolean;
  /** Stops deliveries to this handler (and its resync timer). Idempotent. */
  remove(): void;
}

/** Options of addEventHandler. */
export interface HandlerOptions {
  /** Re-deliver every cached object as `onUpdate(obj, obj)` this often (ms); 0: never. Default: the informer's. */
  resyncPeriodMs?: number;
}

/** Settings of a SharedInformer. */
export interface SharedInformerOptions<T extends KubeObject> {
  listerWatcher: ListerWatcher<T>;
  /** Names the informer in errors (e.g. `pods`). */
  name?: string;
  /** Indexes besides the namespace index (e.g. `{ byNode: fieldIndexFunc('spec.nodeName') }`). */
  indexers?: Indexers<T>;
  /** Default resync period of handlers, ms; default 0 (no resync). */
  resyncPeriodMs?: number;
  /** Set on listed objects that lack them (see ReflectorOptions.typeMeta). */
  typeMeta?: { apiVersion: string; kind: string };
  /**
   * Applied to every object the reflector delivers (listed, added, updated or deleted)
   * before it enters the cache and reaches the handlers, as client-go's SetTransform: the
   * place to drop what this process never reads (stripManagedFields). Returns the object
   * to keep, which may be the argument changed in place (it is the informer's own
   * decoded copy); must keep metadata.name, namespace and resourceVersion; must not throw.
   */
  transform?: (obj: T) => T;
  /** See ReflectorOptions. */
  pageSize?: number;
  minWatchTimeoutSeconds?: number;
  backoff?: BackoffOptions;
  /**
   * Time for the reflector's backoff, the handlers' resync periods and waitForSync's
   * deadline (client-go runs all three on its clock); default realClock.
   */
  clock?: Clock;
  random?: () => number;
  /**
   * Told about list/watch failures (before each retry) and handlers that threw — the place
   * to log. Default: nothing.
   */
  onError?: (err: Error, during: 'list' | 'watch' | 'handler') => void;
}

interface Registration<T extends KubeObject> {
  handler: ResourceEventHandler<T>;
  synced: boolean;
  removed: boolean;
  /** The pending resync timer (a handle of the informer's clock). */
  timer?: unknown;
  resyncPeriodMs: number;
}

/**
 * One resource's shared cache and its handlers.
 *
 *   const pods = SharedInformer.fromClient<Pod>(client, resources.pods);
 *   pods.addEventHandler({ onAdd: (p) => queue.add(metaNamespaceKey(p)) });
 *   pods.start();
 *   if (!(await pods.waitForSync(30_000))) throw new Error('pods never synced');
 *   pods.lister().namespace('default').list('app=web');
 *
 * start() once; stop() ends it for good.
 */
export class SharedInformer<T extends KubeObject = KubeObject> {
  readonly name: string;
  /** The cache. Read it through `lister()`; writing to it is the informer's business. */
  readonly indexer: Indexer<T>;
  private readonly reflector: Reflector<T>;
  private readonly registrations: Registration<T>[] = [];
  private readonly defaultResyncMs: number;
  private readonly clock: Clock;
  private readonly onError: ((err: Error, during: 'list' | 'watch' | 'handler') => void) | undefined;
  private synced = false;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private readonly syncWaiters = new Set<(synced: boolean) => void>();

  /** @throws RangeError for invalid reflector settings (see Reflector). */
  constructor(opts: SharedInformerOptions<T>) {
    this.name = opts.name ?? 'informer';
    this.defaultResyncMs = opts.resyncPeriodMs ?? 0;
    this.onError = opts.onError;
    this.clock = opts.clock ?? realClock;
    this.indexer = new Indexer<T>({
      indexers: { [NAMESPACE_INDEX]: namespaceIndexFunc, ...opts.indexers },
    });
    const t = opts.transform;
    const store: ReflectorStore<T> = t
      ? {
          replace: (items) => this.replace(items.map(t)),
          add: (obj) => this.upsert(t(obj)),
          update: (obj) => this.upsert(t(obj)),
          delete: (obj) => this.remove(t(obj)),
        }
      : {
          replace: (items) => this.replace(items),
          add: (obj) => this.upsert(obj),
          update: (obj) => this.upsert(obj),
          delete: (obj) => this.remove(obj),
        };
    this.reflector = new Reflector<T>({
      listerWatcher: opts.listerWatcher,
      store,
      name: this.name,
      pageSize: opts.pageSize,
      minWatchTimeoutSeconds: opts.minWatchTimeoutSeconds,
      backoff: opts.backoff,
      clock: opts.clock,
      random: opts.random,
      typeMeta: opts.typeMeta,
      onError: (err, during) => this.report(err, during),
    });
  }

  /**
   * An informer for `ref` over `client`, limited to `scope` (a namespace, selectors).
   * Listed objects get the resource's apiVersion and kind.
   */
  static fromClient<T extends KubeObject = KubeObject>(
    client: RestClient,
    ref: ResourceRef,
    opts: ListWatchScope & Omit<SharedInformerOptions<T>, 'listerWatcher'> = {},
  ): SharedInformer<T> {
    const { namespace, labelSelector, fieldSelector, ...rest } = opts;
    const scope: ListWatchScope = {
      ...(namespace !== undefined ? { namespace } : {}),
      ...(labelSelector !== undefined ? { labelSelector } : {}),
      ...(fieldSelector !== undefined ? { fieldSelector } : {}),
    };
    return new SharedInformer<T>({
      name: ref.resource,
      typeMeta: { apiVersion: apiVersionOf(ref), kind: ref.kind },
      ...rest,
      listerWatcher: listWatchFor<T>(client, ref, scope),
    });
  }

  /**
   * Registers a handler. On an informer that already holds objects, the handler is first
   * given each of them as `onAdd(obj, true)`, synchronously, before this returns.
   * @throws Error on a stopped informer.
   */
  addEventHandler(handler: ResourceEventHandler<T>, opts: HandlerOptions = {}): HandlerRegistration {
    if (this.state === 'stopped') throw new Error(`${this.name}: informer is stopped`);
    const reg: Registration<T> = {
      handler,
      synced: false,
      removed: false,
      resyncPeriodMs: opts.resyncPeriodMs ?? this.defaultResyncMs,
    };
    this.registrations.push(reg);
    if (this.synced) {
      for (const obj of this.indexer.list()) this.call('onAdd', () => reg.handler.onAdd?.(obj, true));
      reg.synced = true;
    }
    if (this.state === 'running') this.startResync(reg);
    return {
      hasSynced: () => reg.synced,
      remove: () => {
        if (reg.removed) return;
        reg.removed = true;
        this.stopResync(reg);
        const i = this.registrations.indexOf(reg);
        if (i >= 0) this.registrations.splice(i, 1);
      },
    };
  }

  /** Adds indexes to the cache (see Indexer.addIndexers); allowed before or after start. */
  addIndexers(indexers: Indexers<T>): void {
    this.indexer.addIndexers(indexers);
  }

  /** A typed, read-only view of the cache. */
  lister(): Lister<T> {
    return new Lister(this.indexer);
  }

  /** True once the first list has been stored and its events delivered. */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Waits until the informer has synced. Resolves true once it has, false when
   * `timeoutMs` passes first (default: no limit), `signal` aborts or the informer stops.
   */
  waitForSync(timeoutMs?: number, signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.state === 'stopped' || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let timer: unknown;
      const done = (ok: boolean) => {
        if (timer !== undefined) this.clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.syncWaiters.delete(done);
        resolve(ok);
      };
      const onAbort = () => done(false);
      this.syncWaiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = this.clock.setTimeout(() => done(false), timeoutMs);
    });
  }

  /** The resourceVersion the cache is current at ('' before the first list). */
  get lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion;
  }

  /** The reflector's counters (lists, watches, 410s, failures). */
  get stats(): ReflectorStats {
    return this.reflector.stats;
  }

  /** True between start() and stop(). */
  get isRunning(): boolean {
    return this.state === 'running';
  }

  /**
   * Starts listing and watching in the background; returns at once (see waitForSync).
   * Idempotent while running.
   * @throws Error on a stopped informer (informers are not restartable).
   */
  start(): void {
    if (this.state === 'running') return;
    if (this.state === 'stopped') throw new Error(`${this.name}: a stopped informer cannot be restarted`);
    this.state = 'running';
    for (const reg of this.registrations) this.startResync(reg);
    this.running = this.reflector.run(this.abort.signal);
  }

  /** Stops watching and resyncing; resolves once the reflector has let go. Idempotent. */
  async stop(): Promise<void> {
    this.state = 'stopped';
    this.abort.abort();
    for (const reg of this.registrations) this.stopResync(reg);
    for (const waiter of [...this.syncWaiters]) waiter(false);
    await this.running;
  }

  /**
   * Resyncs `reg` every resyncPeriodMs on the clock: a one-shot timer armed again after
   * each tick (as the reflector's resync timer), so a fake clock drives it tick by tick.
   */
  private startResync(reg: Registration<T>): void {
    if (reg.resyncPeriodMs <= 0 || reg.timer !== undefined) return;
    const tick = () => {
      reg.timer = this.clock.setTimeout(tick, reg.resyncPeriodMs);
      if (!this.synced || reg.removed || this.state !== 'running') return;
      for (const obj of this.indexer.list()) this.call('onUpdate', () => reg.handler.onUpdate?.(obj, obj));
    };
    reg.timer = this.clock.setTimeout(tick, reg.resyncPeriodMs);
  }

  private stopResync(reg: Registration<T>): void {
    if (reg.timer !== undefined) this.clock.clearTimeout(reg.timer);
    reg.timer = undefined;
  }

  private replace(items: T[]): void {
    const initial = !this.synced;
    const previous = new Map<string, T>();
    for (const key of this.indexer.listKeys()) previous.set(key, this.indexer.getByKey(key)!);
    const listed = items.map((obj) => [this.indexer.keyFunc(obj), obj] as const);
    this.indexer.replace(items);
    for (const [key, obj] of listed) {
      const old = previous.get(key);
      previous.delete(key);
      if (old === undefined) this.dispatch('onAdd', (h) => h.onAdd?.(obj, initial));
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        this.dispatch('onUpdate', (h) => h.onUpdate?.(old, obj));
    }
    for (const [key, old] of previous) {
      const tombstone = new DeletedFinalStateUnknown(key, old);
      this.dispatch('onDelete', (h) => h.onDelete?.(tombstone));
    }
    if (initial) {
      this.synced = true;
      for (const reg of this.registrations) reg.synced = true;
      for (const waiter of [...this.syncWaiters]) waiter(true);
    }
  }

  private upsert(obj: T): void {
    const old = this.indexer.get(obj);
    this.indexer.add(obj);
    if (old === undefined) this.dispatch('onAdd', (h) => h.onAdd?.(obj, false));
    else this.dispatch('onUpdate', (h) => h.onUpdate?.(old, obj));
  }

  private remove(obj: T): void {
    const old = this.indexer.deleteByKey(this.indexer.keyFunc(obj));
    if (old === undefined) return;
    this.dispatch('onDelete', (h) => h.onDelete?.(obj));
  }

  private dispatch(what: string, fn: (h: ResourceEventHandler<T>) => void): void {
    for (const reg of [...this.registrations]) if (!reg.removed) this.call(what, () => fn(reg.handler));
  }

  private call(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      this.report(new Error(`${this.name}: ${what} handler threw: ${e.message}`, { cause: e }), 'handler');
    }
  }

  private report(err: Error, during: 'list' | 'watch' | 'handler'): void {
    try {
      this.onError?.(err, during);
    } catch {
      // a failing error handler must not break the informer
    }
  }
}
