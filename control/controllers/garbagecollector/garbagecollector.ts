/**
 * The garbage collector (Kubernetes' pkg/controller/garbagecollector): deletes objects
 * whose owners are gone, and carries out the deletion propagation policies that the API
 * server records as finalizers.
 *
 * - Monitors: every resource that discovery lists with `list`, `watch` and `delete`
 *   (events excepted, as Kubernetes' default ignoredResources) is watched through the
 *   shared informers at its preferred version; discovery is read again every 30 s, so new
 *   resources get monitors. An ownerReference may name any served version of a kind.
 *   Informer events update the dependency graph (graph.ts) and enqueue uids.
 * - attemptToDelete(uid) (attemptToDeleteItem): a virtual owner the API does not have is
 *   dropped from the graph, enqueueing its dependents. A dependent is classified by a live
 *   GET of each owner ("verify absence": absent, or present with another uid, is
 *   dangling): with a live owner it only loses the dangling references (strategic merge
 *   patch, or a merge patch where that is 415); with none it is deleted — Foreground when
 *   an owner waits for it and it has dependents itself, otherwise as its own finalizers say
 *   (Background by default), with a uid precondition. An owner in foreground deletion
 *   loses `foregroundDeletion` once no dependent with `blockOwnerDeletion: true` is left;
 *   the API server then removes it.
 * - attemptToOrphan(uid): an owner deleted with the `orphan` finalizer: its dependents
 *   lose their ownerReference to it, then it loses the finalizer.
 *
 * Both queues run `concurrentGCSyncs` workers, with rate-limited retries. An ownerReference
 * to a kind the API does not serve is logged and retried with backoff, never acted on.
 */
import { ApiStatusError, isConflict, isNotFound } from '../../../api/client/errors.js';
import type { HandlerRegistration } from '../../../api/client/informer.js';
import { deletedObject } from '../../../api/client/informer.js';
import { apiVersionOf } from '../../../api/client/resource.js';
import type { KubeObject, OwnerReference } from '../../../api/object.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext, ControllerFactory } from '../context.js';
import type { DiscoveredResource } from '../discovery.js';
import { discoverAllResources, groupResource, supportsVerbs } from '../discovery.js';
import { runQueue } from '../run.js';
import { DependencyGraph, FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from './graph.js';
import type { GraphActions, GraphEvent, GraphNode, ObjectIdentity } from './graph.js';

/** How often discovery is read again for new or removed resources, ms (kube-controller-manager: 30 s). */
export const RESOURCE_RESYNC_PERIOD_MS = 30_000;
/**
 * Delay before an owner that exists but no informer has delivered yet is looked at again:
 * 1 s doubling to 5 min, ms (Kubernetes requeues such a node rate-limited).
 */
const UNOBSERVED_RETRY_MS = 1_000;
const UNOBSERVED_RETRY_MAX_MS = 300_000;

/** Resources the collector never watches (Kubernetes' DefaultIgnoredResources). */
export const IGNORED_RESOURCES: ReadonlySet<string> = new Set(['events', 'events.events.k8s.io']);

/** An ownerReference names an apiVersion/kind that discovery does not list (Kubernetes' restMappingError). */
export class UnknownKindError extends Error {
  constructor(apiVersion: string, kind: string) {
    super(
      `no resource serves kind ${kind} in ${apiVersion}; ignoring references to it until discovery lists it`,
    );
  }
}

/** A cluster-scoped object names a namespaced owner: invalid, and retrying cannot fix it. */
class NamespacedOwnerOfClusterScopedObjectError extends Error {}

interface Monitor {
  readonly resource: DiscoveredResource;
  readonly registration: HandlerRegistration;
  readonly synced: () => boolean;
}

type Classified = { solid: OwnerReference[]; dangling: OwnerReference[]; waiting: OwnerReference[] };

/** Builds the garbage collector (`--controllers` name `garbagecollector`). */
export const garbageCollectorController: ControllerFactory = (ctx) => new GarbageCollector(ctx);

/** See the file comment. */
export class GarbageCollector implements Controller {
  readonly name = 'garbagecollector';
  private readonly ctx: ControllerContext;
  readonly graph = new DependencyGraph();
  private readonly attemptToDelete: RateLimitingQueue<string>;
  private readonly attemptToOrphan: RateLimitingQueue<string>;
  private readonly monitors = new Map<string, Monitor>();
  /** `apiVersion\0kind` → the resource serving it, from the last discovery. */
  private kinds = new Map<string, DiscoveredResource>();
  /** Virtual nodes found to exist, by uid → how often they were looked at again. */
  private readonly unobserved = new Map<string, number>();

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.attemptToDelete = new RateLimitingQueue<string>({ clock: ctx.clock });
    this.attemptToOrphan = new RateLimitingQueue<string>({ clock: ctx.clock });
  }

  async run(signal: AbortSignal): Promise<void> {
    const { logger, clock } = this.ctx;
    while (!signal.aborted && !(await this.resyncMonitors())) await clock.sleep(1_000, signal);
    if (signal.aborted) return;
    // Workers act only on a complete graph: a dependent seen before its owner's informer
    // synced would otherwise look orphaned.
    while (!signal.aborted && ![...this.monitors.values()].every((m) => m.synced()))
      await clock.sleep(50, signal);
    logger.info('garbagecollector: graph synced', { monitors: this.monitors.size, nodes: this.graph.size });
    const resync = (async () => {
      while (!signal.aborted) {
        await clock.sleep(RESOURCE_RESYNC_PERIOD_MS, signal);
        if (!signal.aborted) await this.resyncMonitors();
      }
    })();
    const workers = this.ctx.config.concurrentGCSyncs;
    await Promise.all([
      runQueue({
        name: 'garbagecollector',
        queue: this.attemptToDelete,
        workers,
        reconcile: (uid) => this.attemptToDeleteItem(uid),
        signal,
        logger,
      }),
      runQueue({
        name: 'garbagecollector (orphan)',
        queue: this.attemptToOrphan,
        workers,
        reconcile: (uid) => this.attemptToOrphanItem(uid),
        signal,
        logger,
      }),
      resync,
    ]);
    for (const m of this.monitors.values()) m.registration.remove();
  }

  /**
   * Reads discovery and starts a monitor for each deletable resource not yet watched
   * (stopping those no longer served). Resolves false when discovery failed (nothing changes).
   */
  async resyncMonitors(): Promise<boolean> {
    let discovered: { all: DiscoveredResource[]; preferred: DiscoveredResource[] };
    try {
      discovered = await discoverAllResources(this.ctx.client);
    } catch (err) {
      this.ctx.logger.warn('garbagecollector: discovery failed', { error: String(err) });
      return false;
    }
    // Every served version maps (an ownerReference may name any), as upstream's REST
    // mapper; each resource is watched once, at its group's preferred version.
    this.kinds = new Map(discovered.all.map((r) => [`${apiVersionOf(r)}\0${r.kind}`, r]));
    const wanted = new Map(
      discovered.preferred
        .filter(
          (r) => supportsVerbs(r, 'list', 'watch', 'delete') && !IGNORED_RESOURCES.has(groupResource(r)),
        )
        .map((r) => [`${apiVersionOf(r)}/${r.resource}`, r]),
    );
    for (const [key, m] of this.monitors) {
      if (wanted.has(key)) continue;
      m.registration.remove();
      this.monitors.delete(key);
    }
    let added = false;
    for (const [key, r] of wanted) {
      if (this.monitors.has(key)) continue;
      const informer = this.ctx.informers.informerFor(r);
      const registration = informer.addEventHandler({
        onAdd: (obj) => this.observe({ type: 'add', obj }),
        onUpdate: (oldObj, obj) => this.observe({ type: 'update', obj, oldObj }),
        onDelete: (obj) => this.observe({ type: 'delete', obj: deletedObject(obj) }),
      });
      this.monitors.set(key, { resource: r, registration, synced: () => informer.hasSynced() });
      added = true;
    }
    if (added) this.ctx.informers.start();
    return true;
  }

  /** The graph takes the event (it is the collector's cache, as an informer's indexer); the queues get the uids. */
  private observe(ev: GraphEvent): void {
    this.enqueue(this.graph.process(ev));
  }

  private enqueue(actions: GraphActions): void {
    for (const uid of actions.attemptToDelete) this.attemptToDelete.add(uid);
    for (const uid of actions.attemptToOrphan) this.attemptToOrphan.add(uid);
  }

  /** Kubernetes' attemptToDeleteItem + attemptToDeleteWorker's retry rules. */
  private async attemptToDeleteItem(uid: string): Promise<void> {
    const item = this.graph.node(uid);
    if (!item?.virtual) this.unobserved.delete(uid);
    if (!item) return;
    if (item.beingDeleted && !item.deletingDependents) return;
    let latest: KubeObject | undefined;
    try {
      latest = await this.getObject(item.identity);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!latest || latest.metadata?.uid !== item.identity.uid) {
      // Verified absent: drop the node (a virtual delete), which enqueues its dependents.
      this.unobserved.delete(uid);
      this.enqueue(
        this.graph.process({ type: 'delete', obj: {}, virtual: this.canonicalIdentity(item.identity) }),
      );
      return;
    }
    if (item.deletingDependents) {
      await this.processDeletingDependentsItem(item);
      return;
    }
    const refs = latest.metadata?.ownerReferences ?? [];
    if (refs.length > 0) {
      let classified: Classified;
      try {
        classified = await this.classifyReferences(item, refs);
      } catch (err) {
        if (!(err instanceof NamespacedOwnerOfClusterScopedObjectError)) throw err;
        this.ctx.logger.warn('garbagecollector: cluster-scoped object names a namespaced owner; ignored', {
          object: describe(item.identity),
        });
        return;
      }
      await this.collect(item, latest, classified);
    }
    // An owner known only from references that exists: wait for its informer to deliver it.
    if (item.virtual) {
      const n = this.unobserved.get(uid) ?? 0;
      this.unobserved.set(uid, n + 1);
      this.attemptToDelete.addAfter(uid, Math.min(UNOBSERVED_RETRY_MAX_MS, UNOBSERVED_RETRY_MS * 2 ** n));
    }
  }

  private async collect(item: GraphNode, latest: KubeObject, c: Classified): Promise<void> {
    const { solid, dangling, waiting } = c;
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return;
      // A live owner keeps the object; it only stops naming the owners that are gone or
      // waiting for it (so they are not held by it).
      await this.removeOwnerReferences(
        item,
        [...dangling, ...waiting].map((r) => r.uid),
      );
      return;
    }
    if (waiting.length > 0 && item.dependents.size > 0) {
      await this.deleteObject(item.identity, 'Foreground');
      return;
    }
    const finalizers = latest.metadata?.finalizers ?? [];
    const policy = finalizers.includes(FINALIZER_ORPHAN)
      ? 'Orphan'
      : finalizers.includes(FINALIZER_FOREGROUND)
        ? 'Foreground'
        : 'Background';
    this.ctx.logger.info('garbagecollector: deleting object whose owners are gone', {
      object: describe(item.identity),
      propagationPolicy: policy,
    });
    await this.deleteObject(item.identity, policy);
  }

  /** Kubernetes' processDeletingDependentsItem. */
  private async processDeletingDependentsItem(item: GraphNode): Promise<void> {
    const blocking = item.blockingDependents();
    if (blocking.length === 0) {
      await this.removeFinalizer(item, FINALIZER_FOREGROUND);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.attemptToDelete.add(dep.identity.uid);
  }

  /** Kubernetes' attemptToOrphanWorker. */
  private async attemptToOrphanItem(uid: string): Promise<void> {
    const owner = this.graph.node(uid);
    if (!owner) return;
    for (const dep of [...owner.dependents]) await this.removeOwnerReferences(dep, [uid]);
    await this.removeFinalizer(owner, FINALIZER_ORPHAN);
  }

  /** Splits an object's ownerReferences by live GETs of the owners (Kubernetes' classifyReferences / isDangling). */
  private async classifyReferences(item: GraphNode, refs: OwnerReference[]): Promise<Classified> {
    const out: Classified = { solid: [], dangling: [], waiting: [] };
    for (const ref of refs) {
      const r = this.resourceOf(ref.apiVersion, ref.kind);
      if (item.identity.namespace === '' && r.namespaced)
        throw new NamespacedOwnerOfClusterScopedObjectError();
      let owner: KubeObject | undefined;
      try {
        owner = await this.ctx.client.get(r, r.namespaced ? item.identity.namespace : undefined, ref.name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      if (!owner || owner.metadata?.uid !== ref.uid) out.dangling.push(ref);
      else if (owner.metadata?.deletionTimestamp && owner.metadata.finalizers?.includes(FINALIZER_FOREGROUND))
        out.waiting.push(ref);
      else out.solid.push(ref);
    }
    return out;
  }

  private resourceOf(apiVersion: string, kind: string): DiscoveredResource {
    const r = this.kinds.get(`${apiVersion}\0${kind}`);
    if (!r) throw new UnknownKindError(apiVersion, kind);
    return r;
  }

  /** The identity with the namespace the object really has ('' for a cluster-scoped kind). */
  private canonicalIdentity(id: ObjectIdentity): ObjectIdentity {
    const r = this.kinds.get(`${id.apiVersion}\0${id.kind}`);
    return r && !r.namespaced ? { ...id, namespace: '' } : id;
  }

  private getObject(id: ObjectIdentity): Promise<KubeObject> {
    const r = this.resourceOf(id.apiVersion, id.kind);
    return this.ctx.client.get(r, r.namespaced ? id.namespace : undefined, id.name);
  }

  /** DELETE with a uid precondition; an object already gone or replaced counts as done. */
  private async deleteObject(
    id: ObjectIdentity,
    policy: 'Orphan' | 'Background' | 'Foreground',
  ): Promise<void> {
    const r = this.resourceOf(id.apiVersion, id.kind);
    try {
      await this.ctx.client.delete(r, r.namespaced ? id.namespace : undefined, id.name, {
        propagationPolicy: policy,
        preconditions: { uid: id.uid },
      });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /**
   * Removes the ownerReferences with `ownerUIDs` from the object: a strategic merge patch
   * deleting them by uid, carrying the object's uid so it cannot hit a namesake
   * (Kubernetes' deleteOwnerRefStrategicMergePatch). A kind without strategic merge patch
   * (a custom resource: 415) gets a merge patch of the references that stay instead,
   * guarded by the resourceVersion it was computed from (Kubernetes'
   * deleteOwnerRefJSONMergePatch; a conflict is retried by the queue). A gone object needs
   * nothing.
   */
  private async removeOwnerReferences(item: GraphNode, ownerUIDs: string[]): Promise<void> {
    const r = this.resourceOf(item.identity.apiVersion, item.identity.kind);
    const namespace = r.namespaced ? item.identity.namespace : undefined;
    const patch = {
      metadata: {
        uid: item.identity.uid,
        ownerReferences: ownerUIDs.map((uid) => ({ $patch: 'delete', uid })),
      },
    };
    try {
      try {
        await this.ctx.client.patch(r, namespace, item.identity.name, 'strategic', patch);
      } catch (err) {
        if (!(err instanceof ApiStatusError && err.code === 415)) throw err;
        const latest = await this.getObject(item.identity);
        const m = latest.metadata ?? {};
        if (m.uid !== item.identity.uid) return;
        const remove = new Set(ownerUIDs);
        await this.ctx.client.patch(r, namespace, item.identity.name, 'merge', {
          metadata: {
            resourceVersion: m.resourceVersion,
            ownerReferences: (m.ownerReferences ?? []).filter((o) => !remove.has(o.uid)),
          },
        });
      }
    } catch (err) {
      // Gone, or replaced by a namesake (the uid in the patch is then refused as immutable).
      if (isNotFound(err) || (err instanceof ApiStatusError && err.code === 422)) return;
      throw err;
    }
  }

  /**
   * Removes `finalizer` from the object's metadata.finalizers, guarded by its
   * resourceVersion (a merge patch; retried on conflict by the queue).
   */
  private async removeFinalizer(item: GraphNode, finalizer: string): Promise<void> {
    let latest: KubeObject;
    try {
      latest = await this.getObject(item.identity);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const m = latest.metadata ?? {};
    if (m.uid !== item.identity.uid || !m.finalizers?.includes(finalizer)) return;
    const r = this.resourceOf(item.identity.apiVersion, item.identity.kind);
    await this.ctx.client.patch(r, r.namespaced ? m.namespace : undefined, m.name!, 'merge', {
      metadata: {
        resourceVersion: m.resourceVersion,
        finalizers: m.finalizers.filter((f) => f !== finalizer),
      },
    });
  }
}

function describe(id: ObjectIdentity): string {
  return `${id.kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name} (uid ${id.uid})`;
}
