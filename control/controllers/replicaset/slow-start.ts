/**
 * Slow-start batching of creates (Kubernetes' replicaset slowStartBatch): call `fn`
 * `count` times in batches of 1, 2, 4, ... (starting at `initialBatchSize`, doubling after
 * each batch that fully succeeded, the last one cut to what remains); calls within a
 * batch run concurrently. The first batch with a failure ends it: the remaining calls are
 * never made. So a ReplicaSet of 500 whose pods are refused (quota, admission) makes one
 * failing request per sync, not 500, and records one FailedCreate event, not 500.
 */

/** What slowStartBatch() did. */
export interface SlowStartResult {
  /** Calls that resolved. */
  successes: number;
  /** The first failure of the failing batch, if a batch failed. */
  error?: unknown;
}

/** The pod-creation batch size a sync starts with (controller.SlowStartInitialBatchSize). */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;

/**
 * Runs `fn` up to `count` times as the file comment says.
 * @throws Error when initialBatchSize is not a positive integer.
 */
export async function slowStartBatch(
  count: number,
  initialBatchSize: number,
  fn: () => Promise<void>,
): Promise<SlowStartResult> {
  if (!Number.isInteger(initialBatchSize) || initialBatchSize < 1)
    throw new Error(`slowStartBatch: initialBatchSize must be a positive integer, got ${initialBatchSize}`);
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += results.length - results.filter((r) => r.status === 'rejected').length;
    if (failed) return { successes, error: failed.reason };
    remaining -= batch;
  }
  return { successes };
}
