/**
 * Deployment conditions and the progress predicates built on them (Kubernetes'
 * deploymentutil: NewDeploymentCondition, SetDeploymentCondition, DeploymentComplete,
 * DeploymentProgressing, DeploymentTimedOut, and the condition reasons).
 *
 * Condition times are RFC 3339 strings at seconds precision (metav1.Time).
 */
import { getCondition } from '../../../api/podutil.js';
import type { Condition, Deployment, ReplicaSet } from '../../../api/types.js';
import { desiredReplicas } from './fenceposts.js';

/** The status of a Deployment as this controller computes it. */
export type DeploymentStatus = NonNullable<Deployment['status']>;

/** Condition types of a Deployment (apps/v1 DeploymentConditionType). */
export const DeploymentConditionType = {
  Available: 'Available',
  Progressing: 'Progressing',
  ReplicaFailure: 'ReplicaFailure',
} as const;

/** Reasons of the Deployment conditions, as deploymentutil spells them. */
export const Reason = {
  /** Progressing True: a new ReplicaSet was created. */
  NewReplicaSetCreated: 'NewReplicaSetCreated',
  /** Progressing True: an existing new ReplicaSet was found (first progress estimate). */
  FoundNewReplicaSet: 'FoundNewReplicaSet',
  /** Progressing True: the rollout made progress. */
  ReplicaSetUpdated: 'ReplicaSetUpdated',
  /** Progressing True: the rollout is complete. */
  NewReplicaSetAvailable: 'NewReplicaSetAvailable',
  /** Progressing False: no progress for progressDeadlineSeconds. */
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  /** Progressing Unknown: spec.paused was set. */
  DeploymentPaused: 'DeploymentPaused',
  /** Progressing Unknown: spec.paused was cleared. */
  DeploymentResumed: 'DeploymentResumed',
  /** Progressing False: creating the new ReplicaSet failed. */
  ReplicaSetCreateError: 'ReplicaSetCreateError',
  /** Available True / False. */
  MinimumReplicasAvailable: 'MinimumReplicasAvailable',
  MinimumReplicasUnavailable: 'MinimumReplicasUnavailable',
} as const;

/** A new condition whose lastUpdateTime and lastTransitionTime are `now` (RFC 3339). */
export function newDeploymentCondition(
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
  now: string,
): Condition {
  return { type, status, lastUpdateTime: now, lastTransitionTime: now, reason, message };
}

/**
 * Puts `condition` into `status.conditions` (deploymentutil.SetDeploymentCondition): no
 * change when a condition of its type already has the same status and reason; otherwise
 * it replaces that condition, keeping its lastTransitionTime when the status is unchanged.
 */
export function setDeploymentCondition(status: DeploymentStatus, condition: Condition): void {
  const current = getCondition(status.conditions, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current && current.status === condition.status && current.lastTransitionTime !== undefined) {
    next.lastTransitionTime = current.lastTransitionTime;
  }
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

/** Removes the condition of `type`, if any. */
export function removeDeploymentCondition(status: DeploymentStatus, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
}

/** True when progressDeadlineSeconds is set and not MaxInt32 (which means "no deadline"). */
export function hasProgressDeadline(d: Deployment): boolean {
  const s = d.spec.progressDeadlineSeconds;
  return s !== undefined && s !== null && s !== 2147483647;
}

/**
 * True when the rollout is done by `status`: updated, total and available replicas all equal
 * spec.replicas, and the status observed the current generation (deploymentutil.DeploymentComplete).
 */
export function deploymentComplete(d: Deployment, status: DeploymentStatus): boolean {
  const replicas = desiredReplicas(d);
  return (
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas &&
    (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}

/**
 * True when `status` shows progress over the Deployment's current status: more updated,
 * ready or available replicas, or fewer old ones (deploymentutil.DeploymentProgressing).
 */
export function deploymentProgressing(d: Deployment, status: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (status.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/**
 * True when the Progressing condition in `status` has not been updated for
 * progressDeadlineSeconds at `nowMs` (ms since the epoch), or already says
 * ProgressDeadlineExceeded; never after a completed rollout (NewReplicaSetAvailable)
 * (deploymentutil.DeploymentTimedOut).
 */
export function deploymentTimedOut(d: Deployment, status: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const cond = getCondition(status.conditions, DeploymentConditionType.Progressing);
  if (!cond) return false;
  if (cond.reason === Reason.NewReplicaSetAvailable) return false;
  if (cond.reason === Reason.ProgressDeadlineExceeded) return true;
  const from = Date.parse(cond.lastUpdateTime ?? '');
  if (Number.isNaN(from)) return false;
  return from + d.spec.progressDeadlineSeconds! * 1000 < nowMs;
}

/**
 * The ReplicaFailure conditions of the new ReplicaSet, or else of any ReplicaSet, as
 * Deployment conditions (the controller's getReplicaFailures +
 * deploymentutil.ReplicaSetToDeploymentCondition).
 */
export function replicaFailures(
  allRSs: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
): Condition[] {
  const convert = (c: Condition): Condition => ({
    type: c.type,
    status: c.status,
    ...(c.lastTransitionTime !== undefined
      ? { lastTransitionTime: c.lastTransitionTime, lastUpdateTime: c.lastTransitionTime }
      : {}),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.message !== undefined ? { message: c.message } : {}),
  });
  const failuresOf = (rs: ReplicaSet | undefined) =>
    (rs?.status?.conditions ?? [])
      .filter((c) => c.type === DeploymentConditionType.ReplicaFailure)
      .map(convert);
  const fromNew = failuresOf(newRS);
  if (fromNew.length > 0) return fromNew;
  return allRSs.flatMap(failuresOf);
}
