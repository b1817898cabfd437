/**
 * The controller worker loop (client-go's `processNextWorkItem`, as every controller in
 * kube-controller-manager runs it): take a key, reconcile it, and on failure put it back
 * with rate-limited backoff.
 */

/** The queue operations a worker needs (RateLimitingQueue has them). */
export interface WorkerQueue<T> {
  get(): Promise<T | undefined>;
  done(item: T): void;
  addRateLimited(item: T): void;
  forget(item: T): void;
  numRequeues(item: T): number;
}

/** Options of runWorkers(). */
export interface RunWorkersOptions<T> {
  /**
   * Called when reconcile(key) throws, before the key is re-queued with backoff;
   * `requeues` is how many times the key had already been re-queued since its last
   * success. Errors thrown here are ignored.
   */
  onError?: (err: unknown, key: T, requeues: number) => void;
}

/**
 * Runs `n` (>= 1) workers over `queue` until it shuts down; resolves when all have exited
 * (the queue is shut down and has handed out all it held).
 *
 * For each key: `await reconcile(key)`; if it resolves, forget(key) (its backoff starts
 * over); if it throws, onError() then addRateLimited(key); either way done(key), so a key
 * added meanwhile is processed again. Because the queue hands a key to one worker at a
 * time, reconcile never runs twice at once for the same key.
 */
export async function runWorkers<T>(
  queue: WorkerQueue<T>,
  n: number,
  reconcile: (key: T) => Promise<void>,
  opts: RunWorkersOptions<T> = {},
): Promise<void> {
  if (!Number.isInteger(n) || n < 1) throw new Error(`runWorkers: n must be an integer >= 1, got ${n}`);
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await reconcile(key);
        queue.forget(key);
      } catch (err) {
        try {
          opts.onError?.(err, key, queue.numRequeues(key));
        } catch {
          // A failing error handler must not stop the worker or lose the retry.
        }
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
}
