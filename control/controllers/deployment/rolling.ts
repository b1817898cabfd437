/**
 * The RollingUpdate strategy (Kubernetes' pkg/controller/deployment/rolling.go): each
 * sync takes one step — scale the new ReplicaSet up as far as maxSurge allows, or else
 * scale old ReplicaSets down as far as maxUnavailable allows — and the next step follows
 * when the ReplicaSets' status changes. Across all steps:
 *   Σ spec.replicas ≤ spec.replicas + maxSurge, and
 *   available pods ≥ spec.replicas − maxUnavailable (old pods are only taken away once new
 *   ones are available, unhealthy old ones first).
 */
import type { Deployment, ReplicaSet } from '../../../api/types.js';
import { deploymentComplete } from './conditions.js';
import { desiredReplicas, maxUnavailable } from './fenceposts.js';
import { syncRolloutStatus } from './progress.js';
import {
  availableReplicaCount,
  byCreationTimestamp,
  filterActive,
  newRSNewReplicas,
  replicaCount,
  specReplicas,
} from './replicasets.js';
import type { SyncContext } from './sync.js';
import {
  cleanupDeployment,
  getAllReplicaSetsAndSyncRevision,
  scaleReplicaSetAndRecordEvent,
} from './sync.js';

/** One rolling-update step, then the status (rolloutRolling). */
export async function rolloutRolling(ctx: SyncContext, d: Deployment, rsList: ReplicaSet[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true);
  // With createIfNotExisted the new ReplicaSet exists (or the call threw).
  const rs = newRS!;
  const allRSs = [...oldRSs, rs];
  if (await reconcileNewReplicaSet(ctx, allRSs, rs, d)) return syncRolloutStatus(ctx, allRSs, rs, d);
  if (await reconcileOldReplicaSets(ctx, allRSs, filterActive(oldRSs), rs, d)) {
    return syncRolloutStatus(ctx, allRSs, rs, d);
  }
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(ctx, oldRSs, d);
  return syncRolloutStatus(ctx, allRSs, rs, d);
}

/**
 * Scales the new ReplicaSet towards spec.replicas: down at once when above it, up by
 * what maxSurge leaves free (reconcileNewReplicaSet). Resolves true when it scaled.
 */
export async function reconcileNewReplicaSet(
  ctx: SyncContext,
  allRSs: ReplicaSet[],
  newRS: ReplicaSet,
  d: Deployment,
): Promise<boolean> {
  const replicas = desiredReplicas(d);
  if (specReplicas(newRS) === replicas) return false;
  if (specReplicas(newRS) > replicas) return scaleReplicaSetAndRecordEvent(ctx, newRS, replicas, d);
  return scaleReplicaSetAndRecordEvent(ctx, newRS, newRSNewReplicas(d, allRSs, newRS), d);
}

/**
 * How many old replicas may go now without availability falling below
 * spec.replicas − maxUnavailable, counting the new ReplicaSet's not-yet-available pods as
 * missing: Σ spec.replicas − minAvailable − (new spec.replicas − new available).
 */
export function maxScaledDown(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet): number {
  const minAvailable = desiredReplicas(d) - maxUnavailable(d);
  const newUnavailable = specReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  return replicaCount(allRSs) - minAvailable - newUnavailable;
}

/**
 * Scales old ReplicaSets down (reconcileOldReplicaSets): first their unavailable replicas
 * (which cost no availability, and would otherwise block the rollout), up to
 * maxScaledDown; then available ones, oldest ReplicaSet first, as far as the available pods
 * exceed spec.replicas − maxUnavailable. Resolves true when it scaled anything.
 */
export async function reconcileOldReplicaSets(
  ctx: SyncContext,
  allRSs: ReplicaSet[],
  oldRSs: ReplicaSet[],
  newRS: ReplicaSet,
  d: Deployment,
): Promise<boolean> {
  if (replicaCount(oldRSs) === 0) return false;
  const limit = maxScaledDown(d, allRSs, newRS);
  if (limit <= 0) return false;
  const cleaned = await cleanupUnhealthyReplicas(ctx, oldRSs, d, limit);
  const scaled = await scaleDownOldReplicaSetsForRollingUpdate(ctx, [...oldRSs, newRS], oldRSs, d);
  return cleaned + scaled > 0;
}

/**
 * Scales each old ReplicaSet (oldest first) down by its unavailable replicas
 * (spec.replicas − available), `maxCleanupCount` in all (cleanupUnhealthyReplicas). The
 * ReplicaSet controller deletes not-ready pods first, so this removes no available pod.
 * Resolves with the number removed.
 */
export async function cleanupUnhealthyReplicas(
  ctx: SyncContext,
  oldRSs: ReplicaSet[],
  d: Deployment,
  maxCleanupCount: number,
): Promise<number> {
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreationTimestamp)) {
    if (total >= maxCleanupCount) break;
    const size = specReplicas(rs);
    const available = rs.status?.availableReplicas ?? 0;
    if (size === 0 || size <= available) continue;
    const count = Math.min(maxCleanupCount - total, size - available);
    await scaleReplicaSetAndRecordEvent(ctx, rs, size - count, d);
    total += count;
  }
  return total;
}

/**
 * Scales old ReplicaSets (oldest first) down by as many replicas as the available pods
 * exceed spec.replicas − maxUnavailable (scaleDownOldReplicaSetsForRollingUpdate).
 * Resolves with the number removed.
 */
export async function scaleDownOldReplicaSetsForRollingUpdate(
  ctx: SyncContext,
  allRSs: ReplicaSet[],
  oldRSs: ReplicaSet[],
  d: Deployment,
): Promise<number> {
  const minAvailable = desiredReplicas(d) - maxUnavailable(d);
  const available = availableReplicaCount(allRSs);
  if (available <= minAvailable) return 0;
  const target = available - minAvailable;
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreationTimestamp)) {
    if (total >= target) break;
    const size = specReplicas(rs);
    if (size === 0) continue;
    const count = Math.min(size, target - total);
    await scaleReplicaSetAndRecordEvent(ctx, rs, size - count, d);
    total += count;
  }
  return total;
}
