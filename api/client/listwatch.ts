/**
 * The two calls a reflector needs — list a page, open a watch — behind one interface
 * (client-go's ListerWatcher), so that a reflector can be driven by the REST client or,
 * in tests, by an in-memory fake.
 */
import type { KubeList, KubeObject } from '../object.js';
import type { FieldSelectorInput, LabelSelectorInput, RestClient } from './rest.js';
import type { ResourceRef } from './resource.js';
import type { WatchStream } from './watch.js';

/** One list request of a (possibly paginated) list. */
export interface ListPageOptions {
  /** Page size in objects; 0 or omitted: everything in one response. */
  limit?: number;
  /** The `metadata.continue` of the previous page. */
  continue?: string;
  signal?: AbortSignal;
}

/** One watch request. */
export interface ListerWatchOptions {
  /** Start after this resourceVersion (from a list, or the last event seen). */
  resourceVersion: string;
  /** Seconds after which the server ends the watch. */
  timeoutSeconds: number;
  allowWatchBookmarks: boolean;
  signal?: AbortSignal;
}

/**
 * Lists and watches one set of objects (one resource, optionally one namespace and
 * selectors). Both calls reject as RestClient's do (ApiStatusError for server refusals,
 * 410 when a continue token or resourceVersion is too old).
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  list(opts: ListPageOptions): Promise<KubeList<T>>;
  watch(opts: ListerWatchOptions): Promise<WatchStream<T>>;
}

/** What a ListerWatcher over the REST client selects. */
export interface ListWatchScope {
  /** Only this namespace (namespaced resources); omitted: all namespaces. */
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: FieldSelectorInput;
}

/**
 * A ListerWatcher for `ref` over `client`, limited to `scope` (client-go's
 * NewFilteredListWatchFromClient). Lists read the latest state (no resourceVersion:
 * a consistent read).
 */
export function listWatchFor<T extends KubeObject = KubeObject>(
  client: RestClient,
  ref: ResourceRef,
  scope: ListWatchScope = {},
): ListerWatcher<T> {
  const base = {
    ...(scope.namespace !== undefined ? { namespace: scope.namespace } : {}),
    ...(scope.labelSelector !== undefined ? { labelSelector: scope.labelSelector } : {}),
    ...(scope.fieldSelector !== undefined ? { fieldSelector: scope.fieldSelector } : {}),
  };
  return {
    list: (opts) =>
      client.list<T>(ref, {
        ...base,
        ...(opts.limit ? { limit: opts.limit } : {}),
        ...(opts.continue ? { continue: opts.continue } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      }),
    watch: (opts) =>
      client.watch<T>(ref, {
        ...base,
        resourceVersion: opts.resourceVersion,
        timeoutSeconds: opts.timeoutSeconds,
        allowWatchBookmarks: opts.allowWatchBookmarks,
        ...(opts.signal ? { signal: opts.signal } : {}),
      }),
  };
}
