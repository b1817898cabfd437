/**
 * The TTL-after-finished controller (Kubernetes' pkg/controller/ttlafterfinished): deletes
 * a Job `spec.ttlSecondsAfterFinished` seconds after it finished (Complete or Failed).
 *
 * Handlers enqueue Jobs that have a TTL and are finished. reconcile(key):
 *  1. the Job from the cache; not there, no TTL, not finished, or being deleted: done;
 *  2. expiry = finish time (the Complete/Failed condition's lastTransitionTime) + TTL;
 *     not yet: requeue at the expiry (by the injected clock);
 *  3. expired: read the Job again from the API server (the TTL may have been changed or
 *     removed meanwhile) and check again; then delete it with propagationPolicy
 *     Foreground and a uid precondition, so its pods go first and a new Job of the same
 *     name is never deleted by mistake.
 */
import { isNotFound } from '../../../api/client/errors.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../../api/client/store.js';
import type { Job } from '../../../api/batch.js';
import { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { Controller, ControllerContext } from '../context.js';
import { runQueue } from '../run.js';

/** When `job` finished (ms since the epoch): its Complete or Failed condition's transition; undefined while it runs. */
export function jobFinishTime(job: Job): number | undefined {
  const c = (job.status?.conditions ?? []).find(
    (x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True',
  );
  if (!c) return undefined;
  const t = Date.parse(c.lastTransitionTime ?? '');
  return Number.isNaN(t) ? undefined : t;
}

/** Milliseconds until the Job expires (<= 0: expired); undefined when it has no TTL or has not finished (timeLeft). */
export function timeLeft(job: Job, now: number): number | undefined {
  const ttl = job.spec.ttlSecondsAfterFinished;
  if (ttl === undefined || ttl === null || job.metadata.deletionTimestamp) return undefined;
  const finished = jobFinishTime(job);
  if (finished === undefined) return undefined;
  return finished + ttl * 1000 - now;
}

/** The `ttl-after-finished` controller; see the file comment. */
export class TTLAfterFinishedController implements Controller {
  readonly name = 'ttl-after-finished';
  private readonly ctx: ControllerContext;
  private readonly queue: RateLimitingQueue<string>;
  private readonly jobLister: Lister<Job>;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.queue = new RateLimitingQueue<string>({ clock: ctx.clock });
    const informer = ctx.informers.informerFor<Job>(resources.jobs);
    this.jobLister = informer.lister();
    const maybe = (job: Job): void => {
      if (job.spec.ttlSecondsAfterFinished !== undefined && jobFinishTime(job) !== undefined)
        this.queue.add(metaNamespaceKey(job));
    };
    informer.addEventHandler({ onAdd: maybe, onUpdate: (_, cur) => maybe(cur) });
  }

  /** Runs 5 workers (--concurrent-ttl-after-finished-syncs' default) until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return runQueue({
      name: this.name,
      queue: this.queue,
      workers: 5,
      reconcile: (key) => this.reconcile(key),
      signal,
      logger: this.ctx.logger,
    });
  }

  /** processJob; see the file comment. @throws when the GET or DELETE failed (retried). */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const cached = this.jobLister.get(namespace, name);
    if (!cached) return;
    const left = timeLeft(cached, this.ctx.clock.now());
    if (left === undefined) return;
    if (left > 0) {
      this.queue.addAfter(key, left);
      return;
    }
    let fresh: Job;
    try {
      fresh = await this.ctx.client.get<Job>(resources.jobs, namespace, name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const freshLeft = timeLeft(fresh, this.ctx.clock.now());
    if (freshLeft === undefined) return;
    if (freshLeft > 0) {
      this.queue.addAfter(key, freshLeft);
      return;
    }
    this.ctx.logger.info('ttl-after-finished: deleting expired job', { key });
    try {
      await this.ctx.client.delete(resources.jobs, namespace, name, {
        propagationPolicy: 'Foreground',
        preconditions: { uid: fresh.metadata.uid },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
