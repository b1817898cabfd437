/**
 * The namespace controller (Kubernetes' pkg/controller/namespace): empties namespaces
 * being deleted and then releases them to the API server.
 *
 * Informer handlers enqueue the namespace's name on add and update. reconcile(name),
 * one worker per name at a time (namespacedResourcesDeleter.Delete):
 *  1. the live Namespace (a GET, not the cache: it decides deletions); gone or not being
 *     deleted → done;
 *  2. `status.phase: Terminating` if the API server has not set it;
 *  3. without the `kubernetes` spec finalizer it is not ours to empty → done;
 *  4. discovery of the namespaced resources, then deleteAllContent (deleter.ts); the five
 *     Namespace conditions (conditions.ts) are written when they change;
 *  5. content left (pods waiting for their kubelet, objects held by finalizers) → look
 *     again after the estimated grace period, between 1 and 5 s;
 *  6. nothing left → PUT `namespaces/NAME/finalize` without `kubernetes`; the API server
 *     removes the namespace once no finalizer is left.
 * Failures (discovery, deletion errors, conflicts) are thrown: the name is retried with
 * backoff.
 */
import { isNotFound } from '../../../api/client/errors.js';
import type { RestClient } from '../../../api/client/rest.js';
import { resources } from '../../../api/client/resource.js';
import { rfc3339 } from '../../../api/object.js';
import type { Namespace } from '../../../api/types.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext } from '../context.js';
import type { DiscoveredResource } from '../discovery.js';
import { discoverPreferredResources } from '../discovery.js';
import { runQueue } from '../run.js';
import type { NamespaceProblems } from './conditions.js';
import { namespaceConditions, sameConditions } from './conditions.js';
import { contentProblems, deletableNamespacedResources, deleteAllContent } from './deleter.js';
import { errorMessage } from '../../../api/errors.js';

/** The spec finalizer the namespace controller owns (core/v1 FinalizerKubernetes). */
export const FINALIZER_KUBERNETES = 'kubernetes';
/** Bounds of the delay before a namespace with content left is looked at again, seconds. */
export const MIN_REQUEUE_SECONDS = 1;
export const MAX_REQUEUE_SECONDS = 5;

/** See the file comment. */
export class NamespaceController implements Controller {
  readonly name = 'namespace';
  private readonly ctx: ControllerContext;
  private readonly client: RestClient;
  readonly queue: RateLimitingQueue<string>;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.client = ctx.client;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const informer = ctx.informers.informerFor<Namespace>(resources.namespaces);
    informer.addEventHandler({
      onAdd: (ns) => this.enqueue(ns),
      onUpdate: (_, ns) => this.enqueue(ns),
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    await runQueue({
      name: this.name,
      queue: this.queue,
      workers: this.ctx.config.concurrentNamespaceSyncs,
      reconcile: (name) => this.reconcile(name),
      signal,
      logger: this.ctx.logger,
    });
  }

  private enqueue(ns: Namespace): void {
    // Only namespaces being deleted have work; the rest would be a GET each for nothing.
    if (ns.metadata.deletionTimestamp && ns.metadata.name) this.queue.add(ns.metadata.name);
  }

  /** One pass over namespace `name`; see the file comment. */
  async reconcile(name: string): Promise<void> {
    let ns: Namespace;
    try {
      ns = await this.client.get<Namespace>(resources.namespaces, undefined, name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!ns.metadata.deletionTimestamp) return;
    if (!(ns.spec?.finalizers ?? []).includes(FINALIZER_KUBERNETES)) {
      if (ns.status?.phase !== 'Terminating') await this.writeStatus(ns, {});
      return;
    }
    let discovered: DiscoveredResource[];
    try {
      discovered = await discoverPreferredResources(this.client);
    } catch (err) {
      await this.writeStatus(ns, {
        NamespaceDeletionDiscoveryFailure: {
          reason: 'DiscoveryFailed',
          message: `Discovery failed for some groups: ${errorMessage(err)}`,
        },
      });
      throw err;
    }
    const nowMs = this.ctx.clock.now();
    const result = await deleteAllContent(this.client, name, deletableNamespacedResources(discovered), nowMs);
    ns = await this.writeStatus(ns, contentProblems(result));
    if (result.errors.length > 0)
      throw new Error(`namespace ${name}: content deletion failed: ${result.errors.join('; ')}`);
    if (result.remaining.size > 0) {
      const seconds = Math.min(MAX_REQUEUE_SECONDS, Math.max(MIN_REQUEUE_SECONDS, result.estimateSeconds));
      this.ctx.logger.debug('namespace: content remains; looking again later', {
        namespace: name,
        remaining: Object.fromEntries(result.remaining),
        seconds,
      });
      this.queue.addAfter(name, seconds * 1000);
      return;
    }
    await this.finalize(ns);
  }

  /** Writes phase Terminating and the conditions when they differ from what `ns` has; returns the namespace as written. */
  private async writeStatus(ns: Namespace, problems: NamespaceProblems): Promise<Namespace> {
    const conditions = namespaceConditions(
      ns.status?.conditions,
      problems,
      rfc3339(new Date(this.ctx.clock.now())),
    );
    if (ns.status?.phase === 'Terminating' && sameConditions(ns.status.conditions, conditions)) return ns;
    return this.client.updateStatus<Namespace>(resources.namespaces, {
      ...ns,
      status: { ...ns.status, phase: 'Terminating', conditions },
    });
  }

  /** Removes the `kubernetes` finalizer through the finalize subresource (409 on a stale namespace: retried). */
  private async finalize(ns: Namespace): Promise<void> {
    const finalizers = (ns.spec?.finalizers ?? []).filter((f) => f !== FINALIZER_KUBERNETES);
    try {
      await this.client.update<Namespace>(
        resources.namespaces,
        { ...ns, spec: { ...ns.spec, finalizers } },
        { subresource: 'finalize' },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.ctx.logger.info('namespace: content deleted; finalized', { namespace: ns.metadata.name });
  }
}
