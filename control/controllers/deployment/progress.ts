/**
 * Rollout progress (Kubernetes' pkg/controller/deployment/progress.go): the status write at
 * the end of a rollout step, with the Progressing condition — NewReplicaSetAvailable when
 * complete, ReplicaSetUpdated while progress is seen, ProgressDeadlineExceeded when none was
 * seen for spec.progressDeadlineSeconds — and the re-check scheduled for the deadline,
 * since nothing else would wake the controller when a rollout is stuck.
 */
import { getCondition } from '../../../api/podutil.js';
import type { Deployment, ReplicaSet } from '../../../api/types.js';
import type { DeploymentStatus } from './conditions.js';
import {
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  DeploymentConditionType,
  hasProgressDeadline,
  newDeploymentCondition,
  Reason,
  removeDeploymentCondition,
  replicaFailures,
  setDeploymentCondition,
} from './conditions.js';
import type { SyncContext } from './sync.js';
import { calculateStatus, nowString, statusEqual, updateDeploymentStatus } from './sync.js';

/**
 * Computes the status with the Progressing and ReplicaFailure conditions and writes it when
 * it changed (syncRolloutStatus); when it did not, schedules the progress-deadline check
 * (requeueStuckDeployment). No Progressing condition without a progress deadline.
 */
export async function syncRolloutStatus(
  ctx: SyncContext,
  allRSs: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
): Promise<void> {
  const now = nowString(ctx);
  const status = calculateStatus(allRSs, newRS, d, now);
  const { Progressing } = DeploymentConditionType;
  if (!hasProgressDeadline(d)) removeDeploymentCondition(status, Progressing);

  const current = getCondition(d.status?.conditions, Progressing);
  const isCompleteDeployment =
    status.replicas === status.updatedReplicas && current?.reason === Reason.NewReplicaSetAvailable;
  if (hasProgressDeadline(d) && !isCompleteDeployment) {
    const rsName = newRS?.metadata.name;
    if (deploymentComplete(d, status)) {
      const msg = rsName
        ? `ReplicaSet "${rsName}" has successfully progressed.`
        : `Deployment "${d.metadata.name}" has successfully progressed.`;
      setDeploymentCondition(
        status,
        newDeploymentCondition(Progressing, 'True', Reason.NewReplicaSetAvailable, msg, now),
      );
    } else if (deploymentProgressing(d, status)) {
      const msg = rsName
        ? `ReplicaSet "${rsName}" is progressing.`
        : `Deployment "${d.metadata.name}" is progressing.`;
      const condition = newDeploymentCondition(Progressing, 'True', Reason.ReplicaSetUpdated, msg, now);
      // Unlike other conditions, Progressing is rewritten on every sign of progress even
      // with the same reason: its lastUpdateTime is what the deadline is measured from.
      if (current) {
        if (current.status === 'True' && current.lastTransitionTime) {
          condition.lastTransitionTime = current.lastTransitionTime;
        }
        removeDeploymentCondition(status, Progressing);
      }
      setDeploymentCondition(status, condition);
    } else if (deploymentTimedOut(d, status, ctx.clock.now())) {
      const msg = rsName
        ? `ReplicaSet "${rsName}" has timed out progressing.`
        : `Deployment "${d.metadata.name}" has timed out progressing.`;
      setDeploymentCondition(
        status,
        newDeploymentCondition(Progressing, 'False', Reason.ProgressDeadlineExceeded, msg, now),
      );
    }
  }

  const failures = replicaFailures(allRSs, newRS);
  if (failures.length > 0) setDeploymentCondition(status, failures[0]!);
  else removeDeploymentCondition(status, DeploymentConditionType.ReplicaFailure);

  if (statusEqual(d.status, status)) {
    requeueStuckDeployment(ctx, d, status);
    return;
  }
  d.status = status;
  await updateDeploymentStatus(ctx, d);
}

/**
 * Schedules a sync for when the Progressing condition's lastUpdateTime +
 * progressDeadlineSeconds passes (plus a second against timer skew), or a rate-limited one
 * right away when less than a second is left; nothing when there is no deadline or
 * condition, the rollout is complete, or it already timed out. Returns the delay in ms,
 * -1 for none (requeueStuckDeployment).
 */
export function requeueStuckDeployment(ctx: SyncContext, d: Deployment, status: DeploymentStatus): number {
  const current = getCondition(d.status?.conditions, DeploymentConditionType.Progressing);
  if (!hasProgressDeadline(d) || !current) return -1;
  if (deploymentComplete(d, status) || current.reason === Reason.ProgressDeadlineExceeded) return -1;
  const from = Date.parse(current.lastUpdateTime ?? '');
  if (Number.isNaN(from)) return -1;
  const after = from + d.spec.progressDeadlineSeconds! * 1000 - ctx.clock.now();
  if (after < 1000) {
    ctx.enqueueRateLimited(d);
    return 0;
  }
  ctx.enqueueAfter(d, after + 1000);
  return after;
}
