/**
 * The annotations the Deployment controller keeps on its ReplicaSets and Deployments
 * (Kubernetes' deploymentutil: RevisionAnnotation, RevisionHistoryAnnotation,
 * DesiredReplicasAnnotation, MaxReplicasAnnotation, SetNewReplicaSetAnnotations,
 * SetReplicasAnnotations, copyDeploymentAnnotationsToReplicaSet).
 *
 * The setters change the object they are given (pass a copy, never a lister's object) and
 * return whether they changed anything.
 */
import type { KubeObject } from '../../../api/object.js';
import type { Deployment, ReplicaSet } from '../../../api/types.js';

/** The rollout revision of a ReplicaSet (and, copied, of its Deployment): a decimal integer. */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** The earlier revisions of a ReplicaSet that was rolled back to, comma-separated, oldest first. */
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
/** spec.replicas of the Deployment when the ReplicaSet was last scaled by it. */
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
/** spec.replicas + maxSurge of the Deployment when the ReplicaSet was last scaled (proportional scaling's base). */
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
/** What `kubectl rollout history` shows as CHANGE-CAUSE. */
export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';
/** kubectl's client-side apply record. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** The pre-apps/v1 rollback request (extensions/v1beta1 `rollbackTo`), never copied. */
export const DEPRECATED_ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';

/** Longest revision-history annotation value kept, in characters (the controller's maxRevHistoryLengthInChars). */
export const MAX_REVISION_HISTORY_LENGTH = 2000;

/** Deployment annotations that are not copied to its new ReplicaSet (deploymentutil.annotationsToSkip). */
export const ANNOTATIONS_TO_SKIP: ReadonlySet<string> = new Set([
  LAST_APPLIED_ANNOTATION,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  DEPRECATED_ROLLBACK_TO_ANNOTATION,
]);

function annotationsOf(obj: KubeObject): Record<string, string> {
  const meta = (obj.metadata ??= {});
  return (meta.annotations ??= {});
}

/** An integer annotation of `obj`, or undefined when absent or not an integer. */
function intAnnotation(obj: KubeObject, key: string): number | undefined {
  const v = obj.metadata?.annotations?.[key];
  if (v === undefined || !/^-?[0-9]+$/.test(v)) return undefined;
  return Number(v);
}

/** The revision of a ReplicaSet or Deployment: its revision annotation, 0 when absent or malformed. */
export function revisionOf(obj: KubeObject): number {
  return intAnnotation(obj, REVISION_ANNOTATION) ?? 0;
}

/** The highest revision among `rss` (0 for none) (deploymentutil.MaxRevision). */
export function maxRevision(rss: readonly ReplicaSet[]): number {
  let max = 0;
  for (const rs of rss) max = Math.max(max, revisionOf(rs));
  return max;
}

/** The desired-replicas annotation of a ReplicaSet, if set and an integer. */
export function desiredReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);
}

/** The max-replicas annotation of a ReplicaSet, if set and an integer. */
export function maxReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return intAnnotation(rs, MAX_REPLICAS_ANNOTATION);
}

/** Sets the Deployment's revision annotation to `revision` (deploymentutil.SetDeploymentRevision). */
export function setDeploymentRevision(d: Deployment, revision: string): boolean {
  const a = annotationsOf(d);
  if (a[REVISION_ANNOTATION] === revision) return false;
  a[REVISION_ANNOTATION] = revision;
  return true;
}

/** True when the ReplicaSet's desired/max-replicas annotations differ from the given numbers. */
export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata.annotations;
  return a?.[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a?.[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** Sets the desired-replicas and max-replicas annotations (deploymentutil.SetReplicasAnnotations). */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  if (!replicasAnnotationsNeedUpdate(rs, desired, max)) return false;
  const a = annotationsOf(rs);
  a[DESIRED_REPLICAS_ANNOTATION] = String(desired);
  a[MAX_REPLICAS_ANNOTATION] = String(max);
  return true;
}

/**
 * Copies the Deployment's annotations, except ANNOTATIONS_TO_SKIP, onto the ReplicaSet
 * (`kubernetes.io/change-cause` among them: that is how `rollout history` learns it).
 */
export function copyDeploymentAnnotationsToReplicaSet(d: Deployment, rs: ReplicaSet): boolean {
  const to = annotationsOf(rs);
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (ANNOTATIONS_TO_SKIP.has(k) || to[k] === v) continue;
    to[k] = v;
    changed = true;
  }
  return changed;
}

/**
 * Brings the annotations of the Deployment's new ReplicaSet up to date
 * (deploymentutil.SetNewReplicaSetAnnotations): copies the Deployment's annotations; raises
 * the revision to `newRevision` when it is lower (never lowers it); when an existing revision
 * is raised — an old ReplicaSet that became new again, as after `rollout undo` — appends the
 * old number to the revision-history annotation (dropping the oldest entries beyond
 * MAX_REVISION_HISTORY_LENGTH characters); and, for a ReplicaSet about to be created
 * (`exists` false), sets the desired/max-replicas annotations from `desired` and `max`.
 * A malformed revision on the ReplicaSet leaves it untouched (returns false).
 */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet,
  newRevision: number,
  exists: boolean,
  replicas: { desired: number; max: number },
): boolean {
  let changed = copyDeploymentAnnotationsToReplicaSet(d, rs);
  const a = annotationsOf(rs);
  const oldRevision = a[REVISION_ANNOTATION];
  let oldRevisionInt = 0;
  if (oldRevision !== undefined && oldRevision !== '') {
    if (!/^-?[0-9]+$/.test(oldRevision)) return false;
    oldRevisionInt = Number(oldRevision);
  }
  if (oldRevisionInt < newRevision) {
    a[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    if (oldRevision !== undefined) {
      const history = a[REVISION_HISTORY_ANNOTATION] ?? '';
      if (history === '') {
        a[REVISION_HISTORY_ANNOTATION] = oldRevision;
      } else {
        const entries = history.split(',');
        let total = history.length + oldRevision.length + 1;
        let start = 0;
        while (total > MAX_REVISION_HISTORY_LENGTH && start < entries.length) {
          total -= entries[start]!.length + 1;
          start++;
        }
        if (total <= MAX_REVISION_HISTORY_LENGTH) {
          a[REVISION_HISTORY_ANNOTATION] = [...entries.slice(start), oldRevision].join(',');
        }
      }
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicas.desired, replicas.max)) changed = true;
  return changed;
}
