/**
 * The Recreate strategy (Kubernetes' pkg/controller/deployment/recreate.go): scale every
 * old ReplicaSet to 0, wait until none of their pods exists any more (terminating ones
 * included), and only then create and scale up the new ReplicaSet — old and new pods
 * never run together.
 */
import type { Pod, ReplicaSet, Deployment } from '../../../api/types.js';
import { deploymentComplete } from './conditions.js';
import { desiredReplicas } from './fenceposts.js';
import { syncRolloutStatus } from './progress.js';
import { actualReplicaCount, filterActive } from './replicasets.js';
import type { SyncContext } from './sync.js';
import {
  cleanupDeployment,
  getAllReplicaSetsAndSyncRevision,
  scaleReplicaSetAndRecordEvent,
} from './sync.js';

/** Pods of the Deployment's ReplicaSets, keyed by the uid of the ReplicaSet that controls them. */
export type PodMap = ReadonlyMap<string, readonly Pod[]>;

/**
 * True while old pods may still be running (oldPodsRunning): an old ReplicaSet reports
 * pods, or a pod controlled by a ReplicaSet other than the new one is not Succeeded or
 * Failed (a Pending, Running, Unknown or terminating pod counts).
 */
export function oldPodsRunning(
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
  podMap: PodMap,
): boolean {
  if (actualReplicaCount(oldRSs) > 0) return true;
  for (const [uid, pods] of podMap) {
    if (newRS && newRS.metadata.uid === uid) continue;
    for (const pod of pods) {
      const phase = pod.status?.phase;
      if (phase !== 'Failed' && phase !== 'Succeeded') return true;
    }
  }
  return false;
}

/** One Recreate step, then the status (rolloutRecreate). */
export async function rolloutRecreate(
  ctx: SyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
  podMap: PodMap,
): Promise<void> {
  // No new ReplicaSet yet: creating it would scale up before the old pods are gone.
  let { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false);
  let allRSs = [...oldRSs, newRS];

  let scaledDown = false;
  for (const rs of filterActive(oldRSs)) {
    if (await scaleReplicaSetAndRecordEvent(ctx, rs, 0, d)) scaledDown = true;
  }
  if (scaledDown) return syncRolloutStatus(ctx, allRSs, newRS, d);
  if (oldPodsRunning(newRS, oldRSs, podMap)) return syncRolloutStatus(ctx, allRSs, newRS, d);

  if (!newRS) {
    ({ newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true));
    allRSs = [...oldRSs, newRS];
  }
  await scaleReplicaSetAndRecordEvent(ctx, newRS!, desiredReplicas(d), d);
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(ctx, oldRSs, d);
  return syncRolloutStatus(ctx, allRSs, newRS, d);
}
