/**
 * Object keys and the store interface of informer caches (client-go's tools/cache
 * store.go). An object's key is `namespace/name`, or `name` for a cluster-scoped object
 * (MetaNamespaceKeyFunc); controllers put keys, not objects, on their workqueues.
 */
import type { KubeObject } from '../object.js';

/** Computes the key of an object. */
export type KeyFunc<T> = (obj: T) => string;

/** An object without `metadata.name` cannot be keyed. */
export class KeyError extends Error {
  override readonly name = 'KeyError';
}

/**
 * `namespace/name`, or `name` when the object has no namespace (cluster-scoped).
 * @throws KeyError when `metadata.name` is missing or empty.
 */
export function metaNamespaceKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new KeyError(`object has no metadata.name: ${JSON.stringify(obj).slice(0, 200)}`);
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** The key of `name` in `namespace` ('' or undefined: cluster-scoped). */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * Splits a key made by metaNamespaceKey: `{ namespace, name }` (namespace '' for a
 * cluster-scoped key).
 * @throws KeyError for a key with more than one '/' or an empty name.
 */
export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const parts = key.split('/');
  if (parts.length === 1 && parts[0] !== '') return { namespace: '', name: parts[0]! };
  if (parts.length === 2 && parts[1] !== '') return { namespace: parts[0]!, name: parts[1]! };
  throw new KeyError(`unexpected key format: ${JSON.stringify(key)}`);
}

/**
 * A key → object store (client-go's cache.Store). Objects are held by reference: what
 * `get` and `list` return is shared with every reader and must not be modified —
 * copy it (`structuredClone`) before changing it.
 */
export interface Store<T> {
  /** Inserts or replaces the object under its key. */
  add(obj: T): void;
  /** Same as add: inserts or replaces the object under its key. */
  update(obj: T): void;
  /** Removes the object's key; a missing key is no error. */
  delete(obj: T): void;
  /** Every object, in no particular order. */
  list(): T[];
  /** Every key, in no particular order. */
  listKeys(): string[];
  /** The object stored under the key of `obj`. */
  get(obj: T): T | undefined;
  getByKey(key: string): T | undefined;
  /** Makes the store hold exactly `items`. */
  replace(items: readonly T[]): void;
  /** Number of objects. */
  readonly size: number;
}
