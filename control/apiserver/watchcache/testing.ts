/**
 * Test helpers for the watch cache: a store whose watches can be broken on demand, a
 * watcher that records what it receives, and a condition waiter with a deadline. The fake
 * clock is api/clock.ts's `FakeClock`.
 */
import type { KubeObject } from '../../../api/object.js';
import type { StorageError } from '../../storage/errors.js';
import type { KeyValue, ListOptions, ListResult, Store, Watch, WatchHandler } from '../../storage/store.js';
import type { CacheWatcher, CacheWatchOptions, CloseReason, WatchCache, WatchEvent } from './cache.js';

/** Resolves once `cond()` holds; rejects after `timeoutMs` of real time (never sleeps a fixed time). */
export async function waitFor(cond: () => boolean, what = 'condition', timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((r) => setImmediate(r));
  }
}

/** A Store that delegates to another and can break its watches (as a lost etcd connection would). */
export class FlakyStore implements Store {
  private readonly active = new Set<{ inner?: Watch; handler: WatchHandler }>();
  /** Watch calls made (for tests that count reconnects). */
  watchCalls = 0;

  constructor(readonly inner: Store) {}

  get backend(): Store['backend'] {
    return this.inner.backend;
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }
  get(key: string, opts?: { revision?: number }): Promise<KeyValue | undefined> {
    return this.inner.get(key, opts);
  }
  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.inner.list(prefix, opts);
  }
  create(key: string, value: string): Promise<KeyValue> {
    return this.inner.create(key, value);
  }
  update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    return this.inner.update(key, value, expectedModRevision);
  }
  delete(key: string, expectedModRevision?: number): Promise<{ deleted: KeyValue; revision: number }> {
    return this.inner.delete(key, expectedModRevision);
  }
  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }
  compactedRevision(): Promise<number> {
    return this.inner.compactedRevision();
  }
  close(): Promise<void> {
    return this.inner.close();
  }

  async watch(prefix: string, sinceRevision: number, handler: WatchHandler): Promise<Watch> {
    this.watchCalls++;
    const entry: { inner?: Watch; handler: WatchHandler } = { handler };
    entry.inner = await this.inner.watch(prefix, sinceRevision, {
      onEvents: (events) => handler.onEvents(events),
      onError: (err) => {
        this.active.delete(entry);
        handler.onError(err);
      },
    });
    this.active.add(entry);
    return {
      cancel: () => {
        this.active.delete(entry);
        entry.inner?.cancel();
      },
    };
  }

  /** Ends every active watch with `err`. */
  breakWatches(err: StorageError): void {
    for (const entry of [...this.active]) {
      this.active.delete(entry);
      entry.inner?.cancel();
      entry.handler.onError(err);
    }
  }
}

/** A watch that records everything it receives. */
export interface Recorder {
  watcher: CacheWatcher;
  events: WatchEvent[];
  closed: CloseReason | undefined;
  /** `TYPE name@resourceVersion` per event, for compact assertions. */
  summary(): string[];
}

export function record(
  cache: WatchCache,
  opts: Partial<Omit<CacheWatchOptions, 'onEvent' | 'onClose'>> & {
    onEvent?: (ev: WatchEvent) => boolean | void;
  } = {},
): Recorder {
  const rec: Recorder = {
    watcher: undefined as unknown as CacheWatcher,
    events: [],
    closed: undefined,
    summary: () => rec.events.map(describe),
  };
  rec.watcher = cache.watch({
    sinceRevision: undefined,
    ...opts,
    onEvent: (ev) => {
      rec.events.push(ev);
      return opts.onEvent?.(ev);
    },
    onClose: (reason) => {
      rec.closed = reason;
    },
  });
  return rec;
}

/** `ADDED ns/name@rv`, `BOOKMARK @rv`, `ERROR 410`. */
export function describe(ev: WatchEvent): string {
  if (ev.type === 'ERROR') return `ERROR ${String((ev.object as { code?: number }).code)}`;
  const m = ev.object.metadata ?? {};
  const name = m.name === undefined ? '' : m.namespace ? `${m.namespace}/${m.name}` : m.name;
  return `${ev.type} ${name}@${m.resourceVersion ?? ''}`;
}

/** A minimal Pod as stored (no resourceVersion: the cache sets it). */
export function pod(
  namespace: string,
  name: string,
  labels?: Record<string, string>,
  extra = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: extra,
  };
}

/** Creates or updates the pod's key; returns the write's revision. */
export async function putPod(store: Store, obj: KubeObject): Promise<number> {
  const key = `/registry/pods/${obj.metadata!.namespace}/${obj.metadata!.name}`;
  const cur = await store.get(key);
  const kv = cur
    ? await store.update(key, JSON.stringify(obj), cur.modRevision)
    : await store.create(key, JSON.stringify(obj));
  return kv.modRevision;
}

/** Deletes the pod's key; returns the deletion's revision. */
export async function deletePod(store: Store, namespace: string, name: string): Promise<number> {
  return (await store.delete(`/registry/pods/${namespace}/${name}`)).revision;
}
