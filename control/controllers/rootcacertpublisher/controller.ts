/**
 * The root CA publisher (Kubernetes' pkg/controller/certificates/rootcacertpublisher;
 * kube-controller-manager's `root-ca-cert-publisher`): every namespace has a ConfigMap
 * `kube-root-ca.crt` whose `ca.crt` is the cluster CA, the one the API server's serving
 * certificate chains to, so a pod can verify the API server from its projected
 * ServiceAccount volume. It is kept current: edited data is put back, a deleted one is
 * made again, a changed CA (config.rootCACert) is written on the next sync.
 *
 * Handlers only enqueue a namespace name: a Namespace added or updated, a
 * `kube-root-ca.crt` deleted or updated (its namespace). The ConfigMap informer watches
 * that name only (a field selector), not every ConfigMap of the cluster.
 *
 * reconcile(namespace), at most one worker per name:
 *  1. the Namespace from the cache; gone or being deleted: done (a create would fail);
 *  2. no ConfigMap: create it (AlreadyExists, NamespaceTerminating: fine);
 *  3. its data is exactly `{ca.crt: <CA>}` and it has the description annotation: done;
 *  4. else update it (a copy with that data and annotation), guarded by its
 *     resourceVersion; a conflict is thrown and retried like any other failure.
 *
 * With a server that serves plain HTTP (no CA), `ca.crt` is empty: pods still find the
 * ConfigMap their projected volume names, and nothing to trust is the truth.
 */
import { isAlreadyExists } from '../../../api/client/errors.js';
import { deletedObject } from '../../../api/client/informer.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext } from '../context.js';
import { hasStatusCause, NAMESPACE_TERMINATING_CAUSE } from '../podcontrol.js';
import { runQueue } from '../run.js';

/** The ConfigMap's name (RootCACertConfigMapName). */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
/** Its one key. */
export const ROOT_CA_KEY = 'ca.crt';
/** The annotation upstream puts on it (DescriptionAnnotation), word for word. */
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints ' +
  'such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across ' +
  'distributions of Kubernetes clusters.';

/** See the file comment. */
export class RootCACertPublisher implements Controller {
  readonly name = 'root-ca-cert-publisher';
  private readonly ctx: ControllerContext;
  private readonly queue: RateLimitingQueue<string>;
  private readonly namespaces: Lister<KubeObject>;
  private readonly configMaps: Lister<KubeObject>;
  private readonly rootCA: string;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.rootCA = ctx.config.rootCACert ?? '';
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const nsInformer = ctx.informers.informerFor<KubeObject>(resources.namespaces);
    const cmInformer = ctx.informers.informerFor<KubeObject>(resources.configmaps, {
      fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}`,
    });
    this.namespaces = nsInformer.lister();
    this.configMaps = cmInformer.lister();
    nsInformer.addEventHandler({
      onAdd: (ns) => this.enqueue(ns.metadata?.name),
      onUpdate: (_old, ns) => this.enqueue(ns.metadata?.name),
    });
    cmInformer.addEventHandler({
      onUpdate: (_old, cm) => this.enqueue(cm.metadata?.namespace),
      onDelete: (obj) => this.enqueue(deletedObject(obj).metadata?.namespace),
    });
  }

  private enqueue(namespace: string | undefined): void {
    if (namespace) this.queue.add(namespace);
  }

  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: 1,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** One namespace (see the file comment). @throws the API's error of a failed write. */
  async reconcile(namespace: string): Promise<void> {
    const ns = this.namespaces.get(namespace);
    if (!ns || ns.metadata?.deletionTimestamp) return;
    const data = { [ROOT_CA_KEY]: this.rootCA };
    const cm = this.configMaps.get(namespace, ROOT_CA_CONFIGMAP);
    if (!cm) {
      try {
        await this.ctx.client.create(
          resources.configmaps,
          {
            metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
            data,
          },
          { namespace },
        );
      } catch (err) {
        if (isAlreadyExists(err) || hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) return;
        throw err;
      }
      return;
    }
    const current = (cm.data ?? {}) as Record<string, string>;
    const same =
      Object.keys(current).length === 1 &&
      current[ROOT_CA_KEY] === this.rootCA &&
      cm.binaryData === undefined &&
      cm.metadata?.annotations?.[DESCRIPTION_ANNOTATION] === DESCRIPTION;
    if (same) return;
    const copy = structuredClone(cm);
    copy.data = data;
    delete copy.binaryData;
    copy.metadata = {
      ...copy.metadata,
      annotations: { ...copy.metadata?.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION },
    };
    await this.ctx.client.update(resources.configmaps, copy);
  }
}
