/**
 * The LeastAllocated scoring strategy of NodeResourcesFit, Kubernetes' default
 * (pkg/scheduler/framework/plugins/noderesources/least_allocated.go): nodes with more of
 * their cpu and memory free after placing the pod score higher, which spreads pods.
 * cpu and memory weigh 1 each; requests are the non-zero figures (100m / 200Mi for
 * containers that request nothing).
 */
import { MAX_NODE_SCORE } from '../../framework/interface.js';

/** ((capacity - requested) * 100) / capacity, integer; 0 when capacity is 0 or exceeded. */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity <= 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/**
 * The node's score, 0..100: the weighted mean of leastRequestedScore over cpu (millicores)
 * and memory (bytes), where `requested*` already includes the pod being scheduled.
 */
export function leastAllocatedScore(
  requestedMilliCPU: number,
  allocatableMilliCPU: number,
  requestedMemory: number,
  allocatableMemory: number,
): number {
  const cpu = leastRequestedScore(requestedMilliCPU, allocatableMilliCPU);
  const mem = leastRequestedScore(requestedMemory, allocatableMemory);
  return Math.trunc((cpu + mem) / 2);
}
