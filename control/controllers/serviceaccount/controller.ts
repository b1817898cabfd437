/**
 * The ServiceAccount controller (Kubernetes' pkg/controller/serviceaccount,
 * serviceaccounts_controller.go; kube-controller-manager's `serviceaccount`): every active
 * namespace has a `default` ServiceAccount, made again when it is deleted. (The API
 * server also makes it when a Namespace is created, so that a pod created at once finds
 * it; this controller is what keeps it there.)
 *
 * Handlers only enqueue a namespace name: a Namespace added or updated, a ServiceAccount
 * deleted (its namespace).
 *
 * reconcile(namespace), at most one worker per name:
 *  1. the Namespace from the cache; gone or not Active (Terminating): done, as upstream;
 *  2. each ServiceAccount to ensure (`default`) that the cache does not have is created;
 *     AlreadyExists (the cache was behind) and a NamespaceTerminating refusal are fine;
 * any other failure is thrown, so the namespace is retried with backoff.
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

/** The ServiceAccounts made in every namespace (ServiceAccountsControllerOptions.ServiceAccounts). */
export const SERVICE_ACCOUNTS_TO_ENSURE: readonly string[] = ['default'];

/** Workers of the controller (--concurrent-serviceaccount-token-syncs is for another; upstream runs 1). */
const WORKERS = 1;

/** See the file comment. */
export class ServiceAccountsController implements Controller {
  readonly name = 'serviceaccount';
  private readonly ctx: ControllerContext;
  private readonly queue: RateLimitingQueue<string>;
  private readonly namespaces: Lister<KubeObject>;
  private readonly serviceAccounts: Lister<KubeObject>;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const nsInformer = ctx.informers.informerFor<KubeObject>(resources.namespaces);
    const saInformer = ctx.informers.informerFor<KubeObject>(resources.serviceaccounts);
    this.namespaces = nsInformer.lister();
    this.serviceAccounts = saInformer.lister();
    nsInformer.addEventHandler({
      onAdd: (ns) => this.enqueue(ns.metadata?.name),
      onUpdate: (_old, ns) => this.enqueue(ns.metadata?.name),
    });
    saInformer.addEventHandler({
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
      workers: WORKERS,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** One namespace (see the file comment). @throws the API's error of a failed create. */
  async reconcile(namespace: string): Promise<void> {
    const ns = this.namespaces.get(namespace);
    if (!ns || (ns.status as { phase?: string } | undefined)?.phase !== 'Active') return;
    for (const name of SERVICE_ACCOUNTS_TO_ENSURE) {
      if (this.serviceAccounts.get(namespace, name)) continue;
      try {
        await this.ctx.client.create(resources.serviceaccounts, { metadata: { name } }, { namespace });
        this.ctx.logger.info('serviceaccount: created', { namespace, name });
      } catch (err) {
        if (isAlreadyExists(err) || hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) continue;
        throw err;
      }
    }
  }
}
