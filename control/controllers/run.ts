/**
 * The worker loop most controllers share: run `workers` reconcilers over a rate-limited
 * queue until `signal` aborts, logging failed keys (client-go's
 * `wait.Until(c.worker, ...)` + `processNextWorkItem`).
 */
import { runWorkers } from '../../api/workqueue/workers.js';
import type { RateLimitingQueue } from '../../api/workqueue/rateLimited.js';
import type { Logger } from './context.js';
import { errorMessage } from '../../api/errors.js';

/** Options of runQueue(). */
export interface RunQueueOptions<T> {
  /** The controller's name, for log lines. */
  name: string;
  queue: RateLimitingQueue<T>;
  /** Number of concurrent workers (>= 1); a key is never reconciled by two at once. */
  workers: number;
  /** Reconciles one key; throw to retry it with backoff. */
  reconcile: (key: T) => Promise<void>;
  signal: AbortSignal;
  logger: Logger;
}

/**
 * Runs the workers until `signal` aborts, then shuts the queue down and resolves when the
 * workers have finished their current keys. Failures are logged at `warn` with the key and
 * how often it has been retried.
 */
export async function runQueue<T>(opts: RunQueueOptions<T>): Promise<void> {
  const { queue, signal } = opts;
  const stop = (): void => queue.shutDown();
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    await runWorkers(queue, opts.workers, opts.reconcile, {
      onError: (err, key, requeues) => {
        // A sync cut short because the controller is stopping is not a failure.
        if (signal.aborted) return;
        opts.logger.warn(`${opts.name}: reconcile failed; retrying`, {
          key: String(key),
          requeues,
          error: errorMessage(err),
        });
      },
    });
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
