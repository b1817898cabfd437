/**
 * Listers: read-only, typed views of an informer's cache (client-go's generated listers
 * over tools/cache listers.go). Controllers read the world through listers in
 * `reconcile(key)`, never through the API server.
 *
 * What they return is the cache's own objects, shared with every other reader: never
 * modify one — copy it (`structuredClone`) first.
 */
import type { KubeObject } from '../object.js';
import { parseLabelSelector } from '../meta/labels.js';
import type { LabelSelector } from '../meta/labels.js';
import { NAMESPACE_INDEX } from './indexer.js';
import type { Indexer } from './indexer.js';
import { keyOf } from './store.js';

/** A label selector, parsed or as `?labelSelector=` text (`app=web,tier!=db`). */
export type SelectorInput = LabelSelector | string;

/** Lists and gets the objects of one namespace. */
export interface NamespaceLister<T extends KubeObject> {
  /** The namespace's objects whose labels match `selector` (default: all). */
  list(selector?: SelectorInput): T[];
  /** The object called `name` in this namespace, if cached. */
  get(name: string): T | undefined;
}

/**
 * Lists and gets cached objects of one resource.
 *
 *   lister.list('app=web')                 // all namespaces
 *   lister.namespace('default').list(sel)  // one namespace (the namespace index, no scan)
 *   lister.get('default', 'web-0')         // namespaced
 *   lister.get('node-1')                   // cluster-scoped
 *
 * A selector string is parsed on every call; @throws SelectorParseError for a bad one.
 */
export class Lister<T extends KubeObject = KubeObject> {
  constructor(private readonly indexer: Indexer<T>) {}

  /** Every cached object whose labels match `selector` (default: all). */
  list(selector?: SelectorInput): T[] {
    return filter(this.indexer.list(), selector);
  }

  /** The objects of one namespace (uses the namespace index when the indexer has one). */
  namespace(namespace: string): NamespaceLister<T> {
    const indexer = this.indexer;
    return {
      list(selector) {
        const items = indexer.indexNames().includes(NAMESPACE_INDEX)
          ? indexer.byIndex(NAMESPACE_INDEX, namespace)
          : indexer.list().filter((o) => (o.metadata?.namespace ?? '') === namespace);
        return filter(items, selector);
      },
      get: (name) => indexer.getByKey(keyOf(namespace, name)),
    };
  }

  /** A cluster-scoped object by name. */
  get(name: string): T | undefined;
  /** A namespaced object ('' or undefined namespace: cluster-scoped). */
  get(namespace: string | undefined, name: string): T | undefined;
  get(a: string | undefined, b?: string): T | undefined {
    return b === undefined ? this.indexer.getByKey(a ?? '') : this.indexer.getByKey(keyOf(a, b));
  }

  /** The objects indexed under `value` in index `indexName` (see Indexer.byIndex). */
  byIndex(indexName: string, value: string): T[] {
    return this.indexer.byIndex(indexName, value);
  }
}

function filter<T extends KubeObject>(items: T[], selector: SelectorInput | undefined): T[] {
  if (selector === undefined) return items;
  const sel = typeof selector === 'string' ? parseLabelSelector(selector) : selector;
  if (sel.empty) return items;
  if (sel.matchesNothing) return [];
  return items.filter((o) => sel.matches(o.metadata?.labels));
}
