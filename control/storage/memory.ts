/**
 * The `memory` backend: the whole revisioned history in this process, for unit tests and
 * simulated clusters. Same semantics as the others (see store.ts); nothing survives the
 * process. The Store itself is the shared log-structured layer (log-structured.ts); this
 * file keeps only the rows, each write committed at once.
 */
import { LogStructuredStore } from './log-structured.js';
import type { RevisionLog } from './log-structured.js';
import type { KeyValue, WatchEvent } from './store.js';

/** One write of one key: a value, or a tombstone. */
interface Version {
  revision: number;
  createRevision: number;
  value: string;
  deleted: boolean;
}

/**
 * The in-memory rows: per key, every version since the last compaction (values and
 * tombstones), plus the ordered event log for watch replay. Reads at a past revision walk
 * a key's versions; ranges walk the sorted key array (O(keys) per list: fine for tests
 * and simulated clusters, not for large data).
 */
class MemoryLog implements RevisionLog {
  compacted = 1;
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

  headRevision(): number {
    return 1;
  }

  /** The key as of revision `rev`, or undefined if absent or deleted then. */
  at(key: string, rev: number): KeyValue | undefined {
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

  range(start: string, end: string, rev: number, limit: number): KeyValue[] {
    const items: KeyValue[] = [];
    const keys = this.keys();
    for (let i = lowerBound(keys, start); i < keys.length && items.length !== limit; i++) {
      const key = keys[i]!;
      if (key >= end) break;
      const kv = this.at(key, rev);
      if (kv) items.push(kv);
    }
    return items;
  }

  after(prefix: string, since: number): WatchEvent[] {
    return this.events.filter((e) => e.kv.modRevision > since && e.kv.key.startsWith(prefix));
  }

  /** Nothing can fail half-way in memory: the writes are applied as they are appended. */
  transaction(fn: () => void): void {
    fn();
  }

  append(event: WatchEvent): void {
    const { key, modRevision: revision } = event.kv;
    let vs = this.versions.get(key);
    if (!vs) {
      vs = [];
      this.versions.set(key, vs);
      this.newKeys.push(key);
    }
    if (event.type === 'DELETE') vs.push({ revision, createRevision: 0, value: '', deleted: true });
    else
      vs.push({ revision, createRevision: event.kv.createRevision, value: event.kv.value, deleted: false });
    this.events.push(event);
  }

  async compact(revision: number): Promise<void> {
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

  close(): void {}

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
}

/**
 * The in-memory backend: a LogStructuredStore over the rows above, every write committed
 * at once (no group commit). Construct with `new MemoryStore()`.
 */
export class MemoryStore extends LogStructuredStore {
  readonly backend = 'memory' as const;

  constructor() {
    super(new MemoryLog(), { groupCommit: false });
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
