/**
 * InformerFactory: hands every controller the same SharedInformer for the same resource
 * and scope, so that a process lists and watches each set of objects once however many
 * controllers read it (client-go's informers.SharedInformerFactory).
 *
 *   const factory = new InformerFactory({ client });
 *   const pods = factory.informerFor<Pod>(resources.pods);          // controller A
 *   const same = factory.informerFor<Pod>(resources.pods);          // controller B: pods === same
 *   factory.start();
 *   await factory.waitForCacheSync(30_000);
 *   ...
 *   await factory.shutdown();
 */
import type { KubeObject } from '../object.js';
import { parseFieldSelector } from '../meta/fields.js';
import { parseLabelSelector } from '../meta/labels.js';
import type { Clock } from '../clock.js';
import type { BackoffOptions } from './backoff.js';
import type { Indexers } from './indexer.js';
import { SharedInformer } from './informer.js';
import type { ListWatchScope } from './listwatch.js';
import type { ResourceRef } from './resource.js';
import type { RestClient } from './rest.js';

/** Settings shared by every informer of a factory. */
export interface InformerFactoryOptions {
  client: RestClient;
  /** Default namespace of informers (namespaced resources only); omitted: all namespaces. */
  namespace?: string;
  /** Default handler resync period, ms; default 0 (none). */
  resyncPeriodMs?: number;
  /** See ReflectorOptions. */
  pageSize?: number;
  minWatchTimeoutSeconds?: number;
  backoff?: BackoffOptions;
  clock?: Clock;
  random?: () => number;
  /**
   * Applied to every object of every informer before it is cached, with the informer's
   * resource (SharedInformerOptions.transform; client-go's informers.WithTransform), e.g.
   * stripManagedFields.
   */
  transform?: <T extends KubeObject>(obj: T, ref: ResourceRef) => T;
  /** Told about every informer's failures; `informer` is its name. Default: nothing. */
  onError?: (err: Error, during: 'list' | 'watch' | 'handler', informer: string) => void;
}

/** What informerFor accepts besides the resource. */
export interface InformerRequest<T extends KubeObject> extends ListWatchScope {
  /** Indexes this caller needs; added to the shared informer's cache if missing. */
  indexers?: Indexers<T>;
}

/**
 * Creates and shares informers. Informers are keyed by resource, namespace and the
 * canonical forms of the selectors: two requests that select the same objects get the
 * same informer.
 */
export class InformerFactory {
  private readonly opts: InformerFactoryOptions;
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  private shutDown = false;

  constructor(opts: InformerFactoryOptions) {
    this.opts = opts;
  }

  /**
   * The shared informer of `ref` in `request`'s scope, created on first use (not started:
   * see start()). Cluster-scoped resources ignore the namespace.
   * @throws SelectorParseError for a malformed selector string; Error after shutdown().
   */
  informerFor<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    request: InformerRequest<T> = {},
  ): SharedInformer<T> {
    if (this.shutDown) throw new Error('the informer factory is shut down');
    const namespace = ref.namespaced ? (request.namespace ?? this.opts.namespace) : undefined;
    const labelSelector =
      typeof request.labelSelector === 'string'
        ? parseLabelSelector(request.labelSelector)
        : request.labelSelector;
    const fieldSelector =
      typeof request.fieldSelector === 'string'
        ? parseFieldSelector(request.fieldSelector)
        : request.fieldSelector;
    const ls = labelSelector?.toString() ?? '';
    const fs = fieldSelector?.toString() ?? '';
    const key = [ref.group, ref.version, ref.resource, namespace ?? '', ls, fs].join('\u0000');
    let informer = this.informers.get(key) as SharedInformer<T> | undefined;
    if (!informer) {
      const o = this.opts;
      const onError = o.onError;
      const name = [
        namespace !== undefined ? `${ref.resource}/${namespace}` : ref.resource,
        ls && `labels(${ls})`,
        fs && `fields(${fs})`,
      ]
        .filter(Boolean)
        .join(' ');
      informer = SharedInformer.fromClient<T>(o.client, ref, {
        name,
        namespace,
        ...(ls !== '' ? { labelSelector: ls } : {}),
        ...(fs !== '' ? { fieldSelector: fs } : {}),
        resyncPeriodMs: o.resyncPeriodMs,
        pageSize: o.pageSize,
        minWatchTimeoutSeconds: o.minWatchTimeoutSeconds,
        backoff: o.backoff,
        clock: o.clock,
        random: o.random,
        ...(o.transform ? { transform: (obj: T) => o.transform!(obj, ref) } : {}),
        ...(onError
          ? { onError: (err: Error, during: 'list' | 'watch' | 'handler') => onError(err, during, name) }
          : {}),
      });
      this.informers.set(key, informer as unknown as SharedInformer<KubeObject>);
    }
    if (request.indexers) informer.addIndexers(request.indexers);
    return informer;
  }

  /** Starts every informer created so far that is not running (call again after creating more). */
  start(): void {
    if (this.shutDown) throw new Error('the informer factory is shut down');
    for (const informer of this.informers.values()) informer.start();
  }

  /**
   * Waits until every started informer has synced. Resolves true when all have, false
   * when `timeoutMs` passes first (default: no limit) or `signal` aborts.
   */
  async waitForCacheSync(timeoutMs?: number, signal?: AbortSignal): Promise<boolean> {
    const started = [...this.informers.values()].filter((i) => i.isRunning);
    const results = await Promise.all(started.map((i) => i.waitForSync(timeoutMs, signal)));
    return results.every(Boolean);
  }

  /** The informers created so far. */
  list(): SharedInformer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /** Stops every informer; resolves when all have stopped. The factory cannot be used afterwards. */
  async shutdown(): Promise<void> {
    this.shutDown = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
