/**
 * The API server's in-process watch of CustomResourceDefinitions, on its own CRD watch
 * cache (as the apiextensions-apiserver's informer on CRDs): the CRDs stored now are handed
 * over at once (so they are served before start() returns), then every change; when the
 * watch ends (the cache fell behind, or was restarted) it starts again from the cache's
 * current state and names the CRDs that still exist, so one deleted meanwhile is dropped.
 */
import type { KubeObject } from '../../../api/object.js';
import type { WatchCache } from '../watchcache/cache.js';

export interface CRDWatchHandlers {
  /** A CRD exists now as `crd` (`deleted` false), or is gone. Must not throw. */
  onCRD(crd: KubeObject, deleted: boolean): void;
  /** After a restart of the watch: the names of every CRD that exists. */
  onRelist(names: ReadonlySet<string>): void;
}

/**
 * Follows the CRDs of `cache` (ready) until the returned function is called.
 */
export function watchCustomResourceDefinitions(cache: WatchCache, h: CRDWatchHandlers): () => void {
  let stopped = false;
  let stopWatch: (() => void) | undefined;
  const begin = (relist: boolean): void => {
    if (stopped || !cache.ready) return;
    const { items, revision } = cache.list();
    if (relist) h.onRelist(new Set(items.map((o) => o.metadata?.name ?? '')));
    for (const crd of items) h.onCRD(crd, false);
    const watcher = cache.watch({
      sinceRevision: revision,
      onEvent: (ev) => {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') h.onCRD(ev.object, false);
        else if (ev.type === 'DELETED') h.onCRD(ev.object, true);
      },
      onClose: (reason) => {
        if (stopped || reason === 'cache stopped') return;
        // Start again on the next turn, from the state the cache has then.
        setTimeout(() => begin(true), 100).unref();
      },
    });
    stopWatch = () => watcher.stop();
  };
  begin(false);
  return () => {
    stopped = true;
    stopWatch?.();
  };
}
