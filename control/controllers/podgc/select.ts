/**
 * Which pods Pod GC removes, as pure functions (Kubernetes' pkg/controller/podgc):
 * terminated pods beyond the threshold, oldest first with evicted ones before the rest.
 */
import type { Pod } from '../../../api/types.js';

/** True for a pod in phase Succeeded or Failed (isPodTerminated: not Pending, Running or Unknown). */
export function isPodTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== undefined && phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

/** True for a pod the kubelet evicted: Failed with reason `Evicted` (eviction.PodIsEvicted). */
export function isPodEvicted(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' && pod.status.reason === 'Evicted';
}

/**
 * Pod GC's deletion order (byEvictionAndCreationTimestamp): evicted pods first, then by
 * creationTimestamp, oldest first, ties by name. A comparator for Array.prototype.sort.
 */
export function byEvictionAndCreationTimestamp(a: Pod, b: Pod): number {
  const ea = isPodEvicted(a);
  const eb = isPodEvicted(b);
  if (ea !== eb) return ea ? -1 : 1;
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/**
 * The terminated pods to delete so that at most `threshold` remain (gcTerminated), in
 * deletion order. `threshold` <= 0 disables this (none are returned), as
 * --terminated-pod-gc-threshold=0 does.
 */
export function terminatedPodsToDelete(pods: readonly Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const terminated = pods.filter(isPodTerminated);
  const excess = terminated.length - threshold;
  if (excess <= 0) return [];
  return terminated.sort(byEvictionAndCreationTimestamp).slice(0, excess);
}
