/**
 * The token cleaner (Kubernetes' pkg/controller/bootstrap/tokencleaner.go, the
 * `tokencleaner` controller kubeadm turns on): deletes the Secrets of bootstrap tokens
 * (kube-system, type bootstrap.kubernetes.io/token) once their `expiration` has passed,
 * so an expired join token leaves nothing behind. A token without an expiration (the
 * server's default join token) is never deleted.
 *
 * Handlers only enqueue `kube-system/<name>`. reconcile(key), one worker:
 *  1. the Secret from the cache (gone: done);
 *  2. no `expiration`: nothing to do;
 *  3. expired, or an expiration that is no RFC 3339 time (upstream treats it as expired):
 *     DELETE with a uid precondition, so that a Secret made again under that name is not
 *     deleted in its place; a 404 or the precondition's 409 means someone else acted: done;
 *  4. not yet: look again when it expires (addAfter the time left, on the injected clock).
 * A failed delete is thrown, so the key is retried with backoff.
 */
import { isConflict, isNotFound } from '../../../api/client/errors.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { splitMetaNamespaceKey, metaNamespaceKey } from '../../../api/client/store.js';
import type { KubeObject } from '../../../api/object.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import { BOOTSTRAP_TOKEN_SECRET_TYPE, secretStrings } from '../../../api/auth/bootstrap-token.js';
import type { Controller, ControllerContext } from '../context.js';
import { runQueue } from '../run.js';

/** The namespace bootstrap tokens live in. */
const TOKEN_NAMESPACE = 'kube-system';

/** See the file comment. */
export class TokenCleaner implements Controller {
  readonly name = 'tokencleaner';
  private readonly ctx: ControllerContext;
  private readonly queue: RateLimitingQueue<string>;
  private readonly secrets: Lister<KubeObject>;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    // Only the bootstrap tokens, as upstream's informer: not every Secret in memory.
    const informer = ctx.informers.informerFor<KubeObject>(resources.secrets, {
      namespace: TOKEN_NAMESPACE,
      fieldSelector: `type=${BOOTSTRAP_TOKEN_SECRET_TYPE}`,
    });
    this.secrets = informer.lister();
    informer.addEventHandler({
      onAdd: (s) => this.queue.add(metaNamespaceKey(s)),
      onUpdate: (_old, s) => this.queue.add(metaNamespaceKey(s)),
    });
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

  /** One token Secret (see the file comment). */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const secret = this.secrets.get(key);
    if (!secret || secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return;
    const leftMs = timeLeftMs(secret, this.ctx.clock.now());
    if (leftMs === undefined) return;
    if (leftMs > 0) {
      this.queue.addAfter(key, leftMs);
      return;
    }
    try {
      await this.ctx.client.delete(resources.secrets, namespace, name, {
        ...(secret.metadata?.uid ? { preconditions: { uid: secret.metadata.uid } } : {}),
      });
      this.ctx.logger.info('tokencleaner: deleted expired bootstrap token', { secret: key });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}

/**
 * Milliseconds until a token Secret expires at `now` (ms since the epoch): <= 0 when it
 * has, or its `expiration` is no time; undefined when it has none (GetExpiration).
 */
export function timeLeftMs(secret: KubeObject, now: number): number | undefined {
  const expiration = secretStrings(secret).expiration;
  if (expiration === undefined || expiration === '') return undefined;
  // RFC 3339: a date, a time and an offset (Date.parse alone also takes looser forms).
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(expiration)
    ? Date.parse(expiration)
    : NaN;
  return Number.isNaN(at) ? 0 : at - now;
}
