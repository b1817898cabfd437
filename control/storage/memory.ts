/**
 * The `memory` backend: the whole revisioned history in this process, for unit tests and
 * simulated clusters. Same semantics as the others (see store.ts); nothing survives the
 * process.
 */
import { decodeContinue, encodeContinue } from './continue.js';
import { StorageError } from './errors.js';
import type { KeyValue, ListOptions, ListResult, Store, Watch, WatchEvent, WatchHandler } from './store.js';
import {
  checkKey,
  checkPrefix,
  checkRevision,
  checkValue,
  prefixEnd,
  readRevision,
  watchStart,
  checkCompactRevision,
} from './validate.js';
import { WatchHub } from './watch-hub.js';

/** One write of one key: a value, or a tombstone. */
interface Version {
  revision: number;
  createRevision: number;
  value: string;
  deleted: boolean;
}

/**
 * The in-memory backend: per key, every version since the last compaction (values and
 * tombstones), plus the ordered event log for watch replay. Reads at a past revision walk
 * a key's versions; lists walk the sorted key array (O(keys) per list: fine for tests and
 * simulated clusters, not for large data). Construct with `new MemoryStore()`.
 */
export class MemoryStore implements Store {
  readonly backend = 'memory' as const;
  private revision = 1;
  private compacted = 1;
  private closed = false;
  /**
   * Every key ever written (and not yet compacted away), ascending — except the new keys
   * in `newKeys`, which keys() merges in when a list or compaction needs the order (an
   * insertion into the middle of a large sorted array on every create would copy it).
   */
  private sortedKeys: string[] = [];
  private newKeys: string[] = [];
  /** Per key, its versions in ascending revision order. */
  private readonly versions = new Map<string, Version[]>();
  /** All events in revision order, since the last compaction (for watch replay). */
  private events: WatchEvent[] = [];
  private readonly hub = new WatchHub();

  async currentRevision(): Promise<number> {
    this.checkOpen();
    return this.revision;
  }

  async compactedRevision(): Promise<number> {
    this.checkOpen();
    return this.compacted;
  }

  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | undefined> {
    this.checkOpen();
    checkKey(key);
    const rev = this.readRevision(opts.revision);
    return this.at(key, rev);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkOpen();
    checkPrefix(prefix);
    let start = prefix;
    let rev: number;
    if (opts.continue) {
      const point = decodeContinue(opts.continue, prefix);
      rev = this.readRevision(point.revision);
      start = point.startKey;
    } else {
      rev = this.readRevision(opts.revision);
    }
    const limit = opts.limit ?? 0;
    checkRevision(limit, 'limit', true);
    const end = prefixEnd(prefix);
    const items: KeyValue[] = [];
    const keys = this.keys();
    for (let i = lowerBound(keys, start); i < keys.length; i++) {
      const key = keys[i]!;
      if (key >= end) break;
      const kv = this.at(key, rev);
      if (!kv) continue;
      if (limit > 0 && items.length === limit) {
        return { items, revision: rev, continue: encodeContinue({ revision: rev, startKey: key }) };
      }
      items.push(kv);
    }
    return { items, revision: rev };
  }

  async create(key: string, value: string): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    const current = this.at(key, this.revision);
    if (current) throw new StorageError('KeyExists', `key ${key} already exists`, { key, current });
    return this.write(key, value, undefined);
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    checkRevision(expectedModRevision, 'expected modRevision');
    const current = this.at(key, this.revision);
    if (!current) throw new StorageError('KeyNotFound', `key ${key} not found`, { key });
    if (current.modRevision !== expectedModRevision) {
      throw new StorageError(
        'Conflict',
        `key ${key} is at modRevision ${current.modRevision}, not ${expectedModRevision}`,
        { key, current },
      );
    }
    return this.write(key, value, current);
  }

  async delete(key: string, expectedModRevision?: number): Promise<{ deleted: KeyValue; revision: number }> {
    this.checkOpen();
    checkKey(key);
    if (expectedModRevision !== undefined) checkRevision(expectedModRevision, 'expected modRevision');
    const current = this.at(key, this.revision);
    if (!current) throw new StorageError('KeyNotFound', `key ${key} not found`, { key });
    if (expectedModRevision !== undefined && current.modRevision !== expectedModRevision) {
      throw new StorageError(
        'Conflict',
        `key ${key} is at modRevision ${current.modRevision}, not ${expectedModRevision}`,
        { key, current },
      );
    }
    const revision = ++this.revision;
    this.versions.get(key)!.push({ revision, createRevision: 0, value: '', deleted: true });
    this.record({
      type: 'DELETE',
      kv: { key, value: '', createRevision: 0, modRevision: revision },
      prevKv: current,
    });
    return { deleted: current, revision };
  }

  async watch(prefix: string, sinceRevision: number, handler: WatchHandler): Promise<Watch> {
    this.checkOpen();
    checkPrefix(prefix);
    const since = watchStart(sinceRevision, this.revision, this.compacted);
    const replay = this.events.filter((e) => e.kv.modRevision > since && e.kv.key.startsWith(prefix));
    return this.hub.add(prefix, since, handler, replay);
  }

  async compact(revision: number): Promise<void> {
    this.checkOpen();
    checkCompactRevision(revision, this.revision);
    if (revision <= this.compacted) return;
    this.compacted = revision;
    this.events = this.events.filter((e) => e.kv.modRevision >= revision);
    // Keep, per key, the version visible at `revision` (unless it is a tombstone) and all later ones.
    const kept: string[] = [];
    for (const key of this.keys()) {
      const vs = this.versions.get(key)!;
      let visible = -1;
      for (let i = 0; i < vs.length && vs[i]!.revision <= revision; i++) visible = i;
      const from = visible >= 0 && vs[visible]!.deleted ? visible + 1 : Math.max(visible, 0);
      const rest = vs.slice(from);
      if (rest.length === 0) {
        this.versions.delete(key);
      } else {
        this.versions.set(key, rest);
        kept.push(key);
      }
    }
    this.sortedKeys = kept;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hub.failAll(new StorageError('Closed', 'store closed'));
  }

  private write(key: string, value: string, current: KeyValue | undefined): KeyValue {
    const revision = ++this.revision;
    const createRevision = current ? current.createRevision : revision;
    let vs = this.versions.get(key);
    if (!vs) {
      vs = [];
      this.versions.set(key, vs);
      this.newKeys.push(key);
    }
    vs.push({ revision, createRevision, value, deleted: false });
    const kv: KeyValue = { key, value, createRevision, modRevision: revision };
    this.record(current ? { type: 'PUT', kv, prevKv: current } : { type: 'PUT', kv });
    return kv;
  }

  private record(event: WatchEvent): void {
    this.events.push(event);
    this.hub.publish([event]);
  }

  /** Every key in ascending order (merging the keys created since the last call). */
  private keys(): readonly string[] {
    if (this.newKeys.length === 0) return this.sortedKeys;
    const added = this.newKeys.sort();
    const old = this.sortedKeys;
    const merged = new Array<string>(old.length + added.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < old.length && j < added.length) merged[k++] = old[i]! < added[j]! ? old[i++]! : added[j++]!;
    while (i < old.length) merged[k++] = old[i++]!;
    while (j < added.length) merged[k++] = added[j++]!;
    this.sortedKeys = merged;
    this.newKeys = [];
    return merged;
  }

  /** The key as of revision `rev`, or undefined if absent or deleted then. */
  private at(key: string, rev: number): KeyValue | undefined {
    const vs = this.versions.get(key);
    if (!vs) return undefined;
    for (let i = vs.length - 1; i >= 0; i--) {
      const v = vs[i]!;
      if (v.revision > rev) continue;
      if (v.deleted) return undefined;
      return { key, value: v.value, createRevision: v.createRevision, modRevision: v.revision };
    }
    return undefined;
  }

  /** Resolves the revision a read happens at, checking it against history. */
  private readRevision(requested: number | undefined): number {
    return readRevision(requested, this.revision, this.compacted);
  }

  private checkOpen(): void {
    if (this.closed) throw new StorageError('Closed', 'store closed');
  }
}

/** Index of the first element >= `x` in the ascending array `a`. */
function lowerBound(a: readonly string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
