/**
 * The watches every hollow node of one process shares (hollow-nodes.ts): where an agent's
 * kubelet has a pod informer and a Node informer of its own (`spec.nodeName=<node>`,
 * `metadata.name=<node>`), N hollow nodes would make 2N watches of the API server, which
 * is not what kubemark or kwok cost it either. Here there is one of each:
 *
 * - pods with `fieldSelector=spec.nodeName!=` (bound pods only), of which only those bound
 *   to one of this process's nodes are kept, without their managedFields (the kubelet
 *   never reads them; client-go's TransformStripManagedFields) and with their repeated
 *   strings shared (intern.ts), indexed by node. Each node's
 *   PodManager reads its pods through `podSourceFor(node)`, a PodSource view of that
 *   index with the informer's delivery rules (the pods already bound first, as onAdd);
 * - Nodes, of which only this process's are kept, each cut to what a hollow node reads of
 *   its own Node (name, uid, resourceVersion, spec.podCIDR, status), handed to the node's
 *   `onNode` callback on every add and update (its pod CIDR; its status, which the node's
 *   status cycles compare with what they would post instead of a GET, as the kubelet
 *   reads its nodeLister; its Ready condition as the node lifecycle controller left it);
 * - Services, in full, the kubelet's serviceLister of every node (Service variables, the
 *   kube-dns address).
 *
 * A pod's spec.nodeName never changes once set, so the filter keeps or drops each pod for
 * its whole life and the cache stays consistent.
 */
import { deletedObject, SharedInformer, type ResourceEventHandler } from '../../api/client/informer.js';
import type { ListerWatcher } from '../../api/client/listwatch.js';
import { listWatchFor } from '../../api/client/listwatch.js';
import { apiVersionOf, resources } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import type { WatchEvent } from '../../api/client/watch.js';
import type { Logger } from '../../api/log.js';
import type { KubeObject } from '../../api/object.js';
import type { Node, Pod, Service } from '../../api/types.js';
import type { PodSource } from '../kubelet/pods/manager.js';
import { StringTable } from '../../api/intern.js';

/**
 * `inner` keeping only the objects `keep` accepts, each as `transform` makes it (client-go's
 * informer transform); BOOKMARK and ERROR events pass unchanged.
 */
export function filteredListerWatcher<T extends KubeObject>(
  inner: ListerWatcher<T>,
  keep: (obj: T) => boolean,
  transform: (obj: T) => T = (o) => o,
): ListerWatcher<T> {
  return {
    list: async (opts) => {
      const list = await inner.list(opts);
      return { ...list, items: list.items.filter(keep).map(transform) };
    },
    watch: async (opts) => {
      const stream = await inner.watch(opts);
      return {
        stop: () => stream.stop(),
        async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
          for await (const ev of stream) {
            if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') yield ev;
            else if (keep(ev.object)) yield { type: ev.type, object: transform(ev.object) };
          }
        },
      };
    },
  };
}

/** A pod without metadata.managedFields. */
function stripManagedFields(pod: Pod): Pod {
  if (!pod.metadata.managedFields) return pod;
  const { managedFields: _, ...metadata } = pod.metadata;
  return { ...pod, metadata };
}

/** What a hollow node reads of its Node (see the file comment). */
function slimNode(node: Node): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.metadata.name,
      uid: node.metadata.uid,
      resourceVersion: node.metadata.resourceVersion,
    },
    spec: node.spec?.podCIDR ? { podCIDR: node.spec.podCIDR } : {},
    status: node.status ?? {},
  };
}

const BY_NODE = 'spec.nodeName';

/** One node's view of the shared pod informer. */
class NodePodView implements PodSource {
  handler: ResourceEventHandler<Pod> | undefined;
  started = false;
  constructor(
    private readonly watches: HollowWatches,
    private readonly nodeName: string,
  ) {}

  addEventHandler(handler: ResourceEventHandler<Pod>): void {
    if (this.handler) throw new Error(`pods of ${this.nodeName}: one handler only`);
    this.handler = handler;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    // What the shared informer already holds, as an informer started now would list it;
    // later changes come through dispatch().
    if (this.watches.pods.hasSynced()) for (const pod of this.list()) this.handler?.onAdd?.(pod, true);
  }

  waitForSync(timeoutMs: number | undefined, signal: AbortSignal): Promise<boolean> {
    return this.watches.pods.waitForSync(timeoutMs, signal);
  }

  async stop(): Promise<void> {
    this.started = false;
    this.handler = undefined;
  }

  list(): Pod[] {
    return this.watches.pods.indexer.byIndex(BY_NODE, this.nodeName);
  }
}

/** Settings of HollowWatches. */
export interface HollowWatchesConfig {
  /** A client that may list and watch pods, Nodes and Services (any node's credential may). */
  client: RestClient;
  /** The nodes this process plays: only their pods and Nodes are kept. */
  nodeNames: ReadonlySet<string>;
  logger: Logger;
}

/** The shared watches (see the file comment). start() once, stop() at the end. */
export class HollowWatches {
  readonly pods: SharedInformer<Pod>;
  readonly nodes: SharedInformer<Node>;
  readonly services: SharedInformer<Service>;
  private readonly views = new Map<string, NodePodView>();
  private readonly nodeHandlers = new Map<string, (node: Node) => void>();

  constructor(cfg: HollowWatchesConfig) {
    const onError = (what: string) => (err: Error, during: string) =>
      cfg.logger.warn(`hollow nodes: ${what} informer error`, { during, error: err.message });
    const ours = (name: string | undefined) => name !== undefined && cfg.nodeNames.has(name);
    // Each kept pod's repeated values share one string (intern.ts).
    const interner = new StringTable();
    this.pods = new SharedInformer<Pod>({
      name: 'pods',
      typeMeta: { apiVersion: apiVersionOf(resources.pods), kind: resources.pods.kind },
      listerWatcher: filteredListerWatcher(
        listWatchFor<Pod>(cfg.client, resources.pods, { fieldSelector: 'spec.nodeName!=' }),
        (pod) => ours(pod.spec?.nodeName),
        (pod) => interner.internValues(stripManagedFields(pod)),
      ),
      indexers: { [BY_NODE]: (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []) },
      onError: onError('pod'),
    });
    this.pods.addEventHandler({
      onAdd: (pod, initial) => this.viewOf(pod)?.handler?.onAdd?.(pod, initial),
      onUpdate: (old, pod) => this.viewOf(pod)?.handler?.onUpdate?.(old, pod),
      onDelete: (obj) => this.viewOf(deletedObject(obj))?.handler?.onDelete?.(obj),
    });
    this.nodes = new SharedInformer<Node>({
      name: 'nodes',
      typeMeta: { apiVersion: 'v1', kind: 'Node' },
      listerWatcher: filteredListerWatcher(
        listWatchFor<Node>(cfg.client, resources.nodes),
        (node) => ours(node.metadata.name),
        slimNode,
      ),
      onError: onError('node'),
    });
    const onNode = (node: Node) => this.nodeHandlers.get(node.metadata.name ?? '')?.(node);
    this.nodes.addEventHandler({ onAdd: onNode, onUpdate: (_, node) => onNode(node) });
    this.services = SharedInformer.fromClient<Service>(cfg.client, resources.services, {
      onError: onError('service'),
    });
  }

  /** Starts the three informers; resolves once they have synced (false: `timeoutMs` passed first). */
  async start(timeoutMs?: number): Promise<boolean> {
    this.pods.start();
    this.nodes.start();
    this.services.start();
    const synced = await Promise.all([
      this.pods.waitForSync(timeoutMs),
      this.nodes.waitForSync(timeoutMs),
      this.services.waitForSync(timeoutMs),
    ]);
    return synced.every(Boolean);
  }

  /** Node `nodeName`'s pods, as its PodManager reads them (see the file comment). */
  podSourceFor(nodeName: string): PodSource {
    let view = this.views.get(nodeName);
    if (!view) this.views.set(nodeName, (view = new NodePodView(this, nodeName)));
    return view;
  }

  /** Calls `handler` with node `nodeName`'s Node (cut down) on every add and update, now too if cached. */
  onNode(nodeName: string, handler: (node: Node) => void): void {
    this.nodeHandlers.set(nodeName, handler);
    const cached = this.nodes.lister().get(nodeName);
    if (cached) handler(cached);
  }

  /** A cached pod by namespace and name (managedFields stripped); undefined when not ours or unknown. */
  pod(namespace: string, name: string): Pod | undefined {
    return this.pods.lister().get(namespace, name);
  }

  /** Stops the informers. */
  async stop(): Promise<void> {
    this.nodeHandlers.clear();
    await Promise.all([this.pods.stop(), this.nodes.stop(), this.services.stop()]);
  }

  private viewOf(pod: Pod): NodePodView | undefined {
    const view = this.views.get(pod.spec?.nodeName ?? '');
    return view?.started ? view : undefined;
  }
}
