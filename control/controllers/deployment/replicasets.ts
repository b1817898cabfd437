/**
 * Pure helpers over a Deployment's ReplicaSets (Kubernetes' deploymentutil and
 * controller_utils): which one is new, which are old, replica sums, orderings, and how
 * many replicas a scale-up or a proportional scale gives each. Nothing here talks to the
 * API server.
 */
import type { Deployment, ReplicaSet } from '../../../api/types.js';
import { desiredReplicasAnnotation, maxReplicasAnnotation, revisionOf } from './annotations.js';
import { desiredReplicas, maxSurge, scaledValueFromIntOrPercent, DEFAULT_MAX_SURGE } from './fenceposts.js';
import { equalIgnoreHash } from './hash.js';

/** spec.replicas of a ReplicaSet (absent: 1, as the API server defaults it). */
export function specReplicas(rs: ReplicaSet): number {
  return rs.spec.replicas ?? 1;
}

function created(rs: ReplicaSet): number {
  const t = rs.metadata.creationTimestamp;
  return t ? Date.parse(t) : 0;
}

/** Oldest first, ties by name (controller.ReplicaSetsByCreationTimestamp). */
export function byCreationTimestamp(a: ReplicaSet, b: ReplicaSet): number {
  return created(a) - created(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** Lowest revision first, ties oldest first (deploymentutil.ReplicaSetsByRevision). */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  return revisionOf(a) - revisionOf(b) || byCreationTimestamp(a, b);
}

/** Largest first, ties newest first: the order in which a scale-up hands out replicas (ReplicaSetsBySizeNewer). */
export function bySizeNewer(a: ReplicaSet, b: ReplicaSet): number {
  return specReplicas(b) - specReplicas(a) || byCreationTimestamp(b, a);
}

/** Largest first, ties oldest first: the order in which a scale-down takes replicas (ReplicaSetsBySizeOlder). */
export function bySizeOlder(a: ReplicaSet, b: ReplicaSet): number {
  return specReplicas(b) - specReplicas(a) || byCreationTimestamp(a, b);
}

/**
 * The Deployment's new ReplicaSet: the oldest whose template equals the Deployment's
 * apart from the pod-template-hash label (deploymentutil.FindNewReplicaSet), or undefined.
 */
export function findNewReplicaSet(d: Deployment, rss: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...rss].sort(byCreationTimestamp).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

/** Every ReplicaSet but the new one, in the given order (deploymentutil.FindOldReplicaSets' allRSs). */
export function findOldReplicaSets(d: Deployment, rss: readonly ReplicaSet[]): ReplicaSet[] {
  const newRS = findNewReplicaSet(d, rss);
  return rss.filter((rs) => rs.metadata.uid !== newRS?.metadata.uid);
}

/** The ReplicaSets with spec.replicas > 0 (controller.FilterActiveReplicaSets). */
export function filterActive(rss: readonly (ReplicaSet | undefined)[]): ReplicaSet[] {
  return rss.filter((rs): rs is ReplicaSet => rs !== undefined && specReplicas(rs) > 0);
}

/** Σ spec.replicas. */
export function replicaCount(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs ? specReplicas(rs) : 0), 0);
}

/** Σ status.replicas (pods that exist). */
export function actualReplicaCount(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
}

/** Σ status.readyReplicas. */
export function readyReplicaCount(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
}

/** Σ status.availableReplicas. */
export function availableReplicaCount(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);
}

/**
 * The ReplicaSet to scale straight to spec.replicas when the Deployment is not mid-rollout
 * (deploymentutil.FindActiveOrLatest): the only active one; with none active, the new one
 * or else the newest old one; with several active, undefined (proportional scaling).
 */
export function findActiveOrLatest(
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreationTimestamp(b, a));
  const active = filterActive([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/**
 * True when the new ReplicaSet runs the full count: spec.replicas and its desired-replicas
 * annotation equal the Deployment's, and all of them are available (deploymentutil.IsSaturated).
 */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = desiredReplicasAnnotation(rs);
  const replicas = desiredReplicas(d);
  return (
    desired !== undefined &&
    specReplicas(rs) === replicas &&
    desired === replicas &&
    (rs.status?.availableReplicas ?? 0) === replicas
  );
}

/**
 * spec.replicas the new ReplicaSet may have now (deploymentutil.NewRSNewReplicas):
 * RollingUpdate — grow by what maxSurge leaves free above spec.replicas across all
 * ReplicaSets (`replicas + maxSurge − Σ spec.replicas`), never beyond spec.replicas;
 * Recreate — spec.replicas.
 */
export function newRSNewReplicas(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet): number {
  const replicas = desiredReplicas(d);
  if (d.spec.strategy?.type === 'Recreate') return replicas;
  const surge = scaledValueFromIntOrPercent(
    d.spec.strategy?.rollingUpdate?.maxSurge ?? DEFAULT_MAX_SURGE,
    replicas,
    true,
  );
  const current = replicaCount(allRSs);
  const maxTotal = replicas + surge;
  if (current >= maxTotal) return specReplicas(newRS);
  const up = Math.min(maxTotal - current, replicas - specReplicas(newRS));
  return specReplicas(newRS) + up;
}

/** Go's math.Round: halves away from zero. */
function roundHalfAway(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

/**
 * This ReplicaSet's share of a proportional scale (deploymentutil.getReplicaSetFraction):
 * its size scaled by (spec.replicas + maxSurge) / (the max-replicas it was last scaled for),
 * minus its size; the whole size (negative) when the Deployment goes to 0. Without a
 * max-replicas annotation the Deployment's status.replicas is the base.
 */
export function replicaSetFraction(rs: ReplicaSet, d: Deployment): number {
  const size = specReplicas(rs);
  if (desiredReplicas(d) === 0) return -size;
  const deploymentMax = desiredReplicas(d) + maxSurge(d);
  const before = maxReplicasAnnotation(rs) ?? d.status?.replicas ?? 0;
  // A base of 0 (scaled to zero earlier, annotation lost) gives no proportion to go by.
  if (before === 0) return 0;
  return roundHalfAway((size * deploymentMax) / before) - size;
}

/**
 * How many replicas to add to (or, negative, remove from) one ReplicaSet of a proportional
 * scale, given the total to add and what was added so far (deploymentutil.GetReplicaSetProportion):
 * its fraction, capped so that the running sum never passes the total.
 */
export function replicaSetProportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (specReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/**
 * The new sizes of the active ReplicaSets when a mid-rollout Deployment is scaled
 * (the proportional part of the controller's scale()): the room up to
 * spec.replicas + maxSurge (or down to 0 when spec.replicas is 0) is shared out in
 * proportion to each ReplicaSet's size; largest first (ties: newer first when growing,
 * older first when shrinking), and whatever rounding leaves over goes to (or comes from)
 * the first. Returns [ReplicaSet, new size] in that order.
 */
export function proportionalSizes(d: Deployment, active: readonly ReplicaSet[]): [ReplicaSet, number][] {
  const replicas = desiredReplicas(d);
  const allowed = replicas > 0 ? replicas + maxSurge(d) : 0;
  const toAdd = allowed - replicaCount(active);
  const ordered = [...active];
  if (toAdd > 0) ordered.sort(bySizeNewer);
  else if (toAdd < 0) ordered.sort(bySizeOlder);
  let added = 0;
  const sizes = ordered.map((rs): [ReplicaSet, number] => {
    if (toAdd === 0) return [rs, specReplicas(rs)];
    const p = replicaSetProportion(rs, d, toAdd, added);
    added += p;
    return [rs, specReplicas(rs) + p];
  });
  if (toAdd !== 0 && sizes.length > 0) sizes[0]![1] = Math.max(0, sizes[0]![1] + toAdd - added);
  return sizes;
}
