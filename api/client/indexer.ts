/**
 * A store with secondary indexes (client-go's cache.Indexer over its threadSafeStore):
 * an index function maps an object to zero or more values, and `byIndex(name, value)`
 * finds every object indexed under a value without a scan — pods by namespace, pods by
 * `spec.nodeName`, ReplicaSets by owner.
 *
 * JavaScript runs one callback at a time, so no locking is needed: every method leaves
 * the store and all its indexes consistent before it returns.
 */
import type { KubeObject } from '../object.js';
import { metaNamespaceKey } from './store.js';
import type { KeyFunc, Store } from './store.js';

/** The values an object is indexed under (none: it is not in that index). */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** Index functions by index name. */
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

/** Name of the by-namespace index (client-go's NamespaceIndex). */
export const NAMESPACE_INDEX = 'namespace';

/** Indexes an object under its namespace ('' for cluster-scoped objects), as MetaNamespaceIndexFunc. */
export function namespaceIndexFunc(obj: KubeObject): readonly string[] {
  return [obj.metadata?.namespace ?? ''];
}

/**
 * Indexes objects by the string at a dotted field path, e.g. `fieldIndexFunc('spec.nodeName')`.
 * A missing, empty or non-string field indexes the object under '' (for `spec.nodeName`:
 * the pods not yet bound to a node).
 */
export function fieldIndexFunc<T extends KubeObject>(path: string): IndexFunc<T> {
  const parts = path.split('.');
  return (obj) => {
    let v: unknown = obj;
    for (const p of parts) {
      if (typeof v !== 'object' || v === null) {
        v = undefined;
        break;
      }
      v = (v as Record<string, unknown>)[p];
    }
    return [typeof v === 'string' ? v : ''];
  };
}

/** Asking for an index that was never added. */
export class IndexNotFoundError extends Error {
  override readonly name = 'IndexNotFoundError';
  constructor(readonly index: string) {
    super(`index with name ${index} does not exist`);
  }
}

/** Options of an Indexer. */
export interface IndexerOptions<T> {
  /** Default: metaNamespaceKey (`namespace/name`). */
  keyFunc?: KeyFunc<T>;
  /** Default: only the namespace index. */
  indexers?: Indexers<T>;
}

/**
 * A Store with indexes. The namespace index is always there unless `indexers` is given
 * (then exactly those). Index functions must be pure and must not throw: one that throws
 * makes the write that called it throw, leaving the store unchanged.
 */
export class Indexer<T extends KubeObject = KubeObject> implements Store<T> {
  private readonly items = new Map<string, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  /** index name → indexed value → keys. */
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  readonly keyFunc: KeyFunc<T>;

  constructor(opts: IndexerOptions<T> = {}) {
    this.keyFunc = opts.keyFunc ?? metaNamespaceKey;
    this.addIndexers(opts.indexers ?? { [NAMESPACE_INDEX]: namespaceIndexFunc });
  }

  /**
   * Adds indexes, built at once from the objects already stored; may be called at any
   * time (a controller sharing an informer adds the indexes it needs).
   * @throws Error when an index of that name already exists (with a different function).
   */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      const existing = this.indexFuncs.get(name);
      if (existing === fn) continue;
      if (existing) throw new Error(`indexer conflict: an index named ${name} already exists`);
    }
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.indexFuncs.has(name)) continue;
      const values = new Map<string, Set<string>>();
      for (const [key, obj] of this.items) for (const v of fn(obj)) addTo(values, v, key);
      this.indexFuncs.set(name, fn);
      this.indices.set(name, values);
    }
  }

  /** Names of the indexes. */
  indexNames(): string[] {
    return [...this.indexFuncs.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  add(obj: T): void {
    const key = this.keyFunc(obj);
    const next = this.indexValues(obj);
    const old = this.items.get(key);
    if (old !== undefined) this.unindex(key, this.indexValues(old));
    this.items.set(key, obj);
    this.indexKey(key, next);
  }

  update(obj: T): void {
    this.add(obj);
  }

  delete(obj: T): void {
    this.deleteByKey(this.keyFunc(obj));
  }

  /** Removes a key; returns the object that was stored under it. */
  deleteByKey(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.unindex(key, this.indexValues(old));
    this.items.delete(key);
    return old;
  }

  get(obj: T): T | undefined {
    return this.items.get(this.keyFunc(obj));
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  replace(items: readonly T[]): void {
    const keyed = items.map((obj) => [this.keyFunc(obj), obj, this.indexValues(obj)] as const);
    this.items.clear();
    for (const values of this.indices.values()) values.clear();
    for (const [key, obj, values] of keyed) {
      this.items.set(key, obj);
      this.indexKey(key, values);
    }
  }

  /**
   * The objects indexed under `value` in index `indexName`.
   * @throws IndexNotFoundError for an unknown index.
   */
  byIndex(indexName: string, value: string): T[] {
    const out: T[] = [];
    for (const key of this.indexKeys(indexName, value)) out.push(this.items.get(key)!);
    return out;
  }

  /**
   * The keys indexed under `value` in index `indexName`.
   * @throws IndexNotFoundError for an unknown index.
   */
  indexKeys(indexName: string, value: string): string[] {
    const values = this.indices.get(indexName);
    if (!values) throw new IndexNotFoundError(indexName);
    return [...(values.get(value) ?? [])];
  }

  /**
   * The objects sharing at least one value of index `indexName` with `obj` (client-go's
   * Index), each once.
   * @throws IndexNotFoundError for an unknown index.
   */
  index(indexName: string, obj: T): T[] {
    const fn = this.indexFuncs.get(indexName);
    if (!fn) throw new IndexNotFoundError(indexName);
    const values = this.indices.get(indexName)!;
    const keys = new Set<string>();
    for (const v of fn(obj)) for (const k of values.get(v) ?? []) keys.add(k);
    return [...keys].map((k) => this.items.get(k)!);
  }

  /**
   * Every value index `indexName` currently holds objects under.
   * @throws IndexNotFoundError for an unknown index.
   */
  listIndexFuncValues(indexName: string): string[] {
    const values = this.indices.get(indexName);
    if (!values) throw new IndexNotFoundError(indexName);
    return [...values.keys()];
  }

  private indexValues(obj: T): Map<string, readonly string[]> {
    const out = new Map<string, readonly string[]>();
    for (const [name, fn] of this.indexFuncs) out.set(name, fn(obj));
    return out;
  }

  private indexKey(key: string, values: Map<string, readonly string[]>): void {
    for (const [name, vs] of values) for (const v of vs) addTo(this.indices.get(name)!, v, key);
  }

  private unindex(key: string, values: Map<string, readonly string[]>): void {
    for (const [name, vs] of values) {
      const index = this.indices.get(name)!;
      for (const v of vs) {
        const keys = index.get(v);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) index.delete(v);
      }
    }
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) index.set(value, (keys = new Set()));
  keys.add(key);
}
