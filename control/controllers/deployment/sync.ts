/**
 * The parts of a Deployment sync that every strategy shares (Kubernetes'
 * pkg/controller/deployment/sync.go): finding or creating the new ReplicaSet and keeping
 * the revision annotations, scaling ReplicaSets (straight or proportionally), cleaning up
 * old ReplicaSets beyond revisionHistoryLimit, the paused condition, and computing status.
 *
 * Every function takes the SyncContext and a Deployment `d` that is the sync's own copy
 * (never a lister's object): they update it in place (annotations, status, and the
 * resourceVersion after a status write), so later steps of the same sync see what earlier
 * ones wrote. ReplicaSets passed in are copies too and are updated in place after writes.
 * API errors are thrown: the sync is then retried with backoff.
 */
import type { Clock } from '../../../api/clock.js';
import { isAlreadyExists, isNotFound } from '../../../api/client/errors.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { Lister } from '../../../api/client/lister.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import { rfc3339 } from '../../../api/object.js';
import { controllerOf, controllerRef, getCondition } from '../../../api/podutil.js';
import type { Deployment, ReplicaSet } from '../../../api/types.js';
import {
  desiredReplicasAnnotation,
  maxRevision,
  replicasAnnotationsNeedUpdate,
  REVISION_ANNOTATION,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from './annotations.js';
import type { DeploymentStatus } from './conditions.js';
import {
  DeploymentConditionType,
  hasProgressDeadline,
  newDeploymentCondition,
  Reason,
  setDeploymentCondition,
} from './conditions.js';
import { desiredReplicas, isRollingUpdate, maxSurge, maxUnavailable } from './fenceposts.js';
import { computeHash, equalIgnoreHash, POD_TEMPLATE_HASH_LABEL } from './hash.js';
import {
  actualReplicaCount,
  availableReplicaCount,
  byRevision,
  filterActive,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  isSaturated,
  newRSNewReplicas,
  proportionalSizes,
  readyReplicaCount,
  replicaCount,
  specReplicas,
} from './replicasets.js';
import { errorMessage } from '../../../api/errors.js';

/** What the sync steps need from the controller. */
export interface SyncContext {
  client: RestClient;
  /** The ReplicaSet cache (to read a ReplicaSet whose create said AlreadyExists). */
  rsLister: Lister<ReplicaSet>;
  recorder: EventRecorder;
  clock: Clock;
  /** Syncs the Deployment again in `ms` milliseconds (the progress-deadline check). */
  enqueueAfter(d: Deployment, ms: number): void;
  /** Syncs the Deployment again after the queue's backoff. */
  enqueueRateLimited(d: Deployment): void;
}

/** The Deployment's ReplicaSets split as a sync uses them: the new one (if any) and all the others. */
export interface ReplicaSetsOfDeployment {
  newRS: ReplicaSet | undefined;
  oldRSs: ReplicaSet[];
}

/** `now` of the context's clock as RFC 3339 (metav1.Now). */
export function nowString(ctx: SyncContext): string {
  return rfc3339(new Date(ctx.clock.now()));
}

/** Writes `d.status` (and its annotations: the status strategy keeps them) and adopts the new resourceVersion. */
export async function updateDeploymentStatus(ctx: SyncContext, d: Deployment): Promise<void> {
  const updated = await ctx.client.updateStatus<Deployment>(resources.deployments, d);
  d.metadata.resourceVersion = updated.metadata.resourceVersion;
}

/** Sets the Deployment's Progressing condition True for `reason` as of now (getNewReplicaSet's two cases). */
function setProgressing(ctx: SyncContext, d: Deployment, reason: string, message: string): void {
  setDeploymentCondition(
    (d.status ??= {}),
    newDeploymentCondition(DeploymentConditionType.Progressing, 'True', reason, message, nowString(ctx)),
  );
}

function replaceReplicaSet(rs: ReplicaSet, updated: ReplicaSet): void {
  rs.metadata = updated.metadata;
  rs.spec = updated.spec;
  if (updated.status) rs.status = updated.status;
}

/**
 * The new and old ReplicaSets of `d`, with the new one's annotations synced (its revision
 * becomes max(old revisions) + 1 when lower: an old template made current again gets the
 * next revision and keeps its earlier one in revision-history) and the Deployment's revision
 * annotation following it (getAllReplicaSetsAndSyncRevision + getNewReplicaSet). With
 * `createIfNotExisted`, a missing new ReplicaSet is created: named
 * `<deployment>-<pod-template-hash>`, the hash label added to its selector, template and
 * labels, controlled by `d`, sized by newRSNewReplicas. If that name is taken by a
 * ReplicaSet with another template (a hash collision), status.collisionCount is raised and
 * the AlreadyExists error thrown, so that the retry hashes differently.
 */
export async function getAllReplicaSetsAndSyncRevision(
  ctx: SyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
  createIfNotExisted: boolean,
): Promise<ReplicaSetsOfDeployment> {
  const oldRSs = findOldReplicaSets(d, rsList);
  const newRS = await getNewReplicaSet(ctx, d, rsList, oldRSs, createIfNotExisted);
  return { newRS, oldRSs };
}

async function getNewReplicaSet(
  ctx: SyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
  oldRSs: ReplicaSet[],
  createIfNotExisted: boolean,
): Promise<ReplicaSet | undefined> {
  const existing = findNewReplicaSet(d, rsList);
  const newRevision = maxRevision(oldRSs) + 1;
  const replicas = { desired: desiredReplicas(d), max: desiredReplicas(d) + maxSurge(d) };

  if (existing) {
    const annotationsUpdated = setNewReplicaSetAnnotations(d, existing, newRevision, true, replicas);
    const minReadySeconds = d.spec.minReadySeconds ?? 0;
    if (annotationsUpdated || (existing.spec.minReadySeconds ?? 0) !== minReadySeconds) {
      existing.spec.minReadySeconds = minReadySeconds;
      replaceReplicaSet(existing, await ctx.client.update<ReplicaSet>(resources.replicasets, existing));
      // As Kubernetes: the Deployment's revision follows on the next sync, which the
      // ReplicaSet update triggers.
      return existing;
    }
    let needsUpdate = setDeploymentRevision(d, existing.metadata.annotations?.[REVISION_ANNOTATION] ?? '');
    if (hasProgressDeadline(d) && !getCondition(d.status?.conditions, DeploymentConditionType.Progressing)) {
      setProgressing(ctx, d, Reason.FoundNewReplicaSet, `Found new replica set "${existing.metadata.name}"`);
      needsUpdate = true;
    }
    if (needsUpdate) await updateDeploymentStatus(ctx, d);
    return existing;
  }

  if (!createIfNotExisted) return undefined;

  const template = structuredClone(d.spec.template);
  const hash = computeHash(template, d.status?.collisionCount);
  const labels = { ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash };
  template.metadata = { ...template.metadata, labels };
  const selector = structuredClone(d.spec.selector);
  selector.matchLabels = { ...selector.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash };
  const rs: ReplicaSet = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace,
      ownerReferences: [controllerRef(d)],
      labels: { ...labels },
    },
    spec: {
      replicas: 0,
      minReadySeconds: d.spec.minReadySeconds ?? 0,
      selector,
      template,
    },
  };
  rs.spec.replicas = newRSNewReplicas(d, [...oldRSs, rs], rs);
  setNewReplicaSetAnnotations(d, rs, newRevision, false, replicas);

  let created: ReplicaSet;
  let alreadyExists = false;
  try {
    created = await ctx.client.create<ReplicaSet>(resources.replicasets, rs);
  } catch (err) {
    if (!isAlreadyExists(err)) {
      const msg = `Failed to create new replica set "${rs.metadata.name}": ${errorMessage(err)}`;
      if (hasProgressDeadline(d)) {
        setDeploymentCondition(
          (d.status ??= {}),
          newDeploymentCondition(
            DeploymentConditionType.Progressing,
            'False',
            Reason.ReplicaSetCreateError,
            msg,
            nowString(ctx),
          ),
        );
        // The create error is the one to report; a failed status write changes nothing.
        await updateDeploymentStatus(ctx, d).catch(() => {});
      }
      ctx.recorder.event(d, 'Warning', Reason.ReplicaSetCreateError, msg);
      throw err;
    }
    alreadyExists = true;
    // A slow cache or a hash collision: look at who holds the name.
    const holder =
      ctx.rsLister.get(d.metadata.namespace, rs.metadata.name!) ??
      (await ctx.client.get<ReplicaSet>(resources.replicasets, d.metadata.namespace, rs.metadata.name!));
    const ref = controllerOf(holder);
    if (ref?.uid === d.metadata.uid && equalIgnoreHash(d.spec.template, holder.spec.template)) {
      created = structuredClone(holder);
    } else {
      const status = (d.status ??= {});
      status.collisionCount = (status.collisionCount ?? 0) + 1;
      await updateDeploymentStatus(ctx, d);
      throw err;
    }
  }
  if (!alreadyExists && specReplicas(created) > 0) {
    ctx.recorder.event(
      d,
      'Normal',
      'ScalingReplicaSet',
      `Scaled up replica set ${created.metadata.name} from 0 to ${specReplicas(created)}`,
    );
  }
  let needsUpdate = setDeploymentRevision(d, String(newRevision));
  if (!alreadyExists && hasProgressDeadline(d)) {
    setProgressing(ctx, d, Reason.NewReplicaSetCreated, `Created new replica set "${created.metadata.name}"`);
    needsUpdate = true;
  }
  if (needsUpdate) await updateDeploymentStatus(ctx, d);
  rsList.push(created);
  return created;
}

/**
 * Sets a ReplicaSet's spec.replicas to `newScale` and its desired/max-replicas annotations to
 * the Deployment's current numbers, with one compare-and-swap update (a stale cache gives a
 * 409 and a retry, never a lost write); records `ScalingReplicaSet` ("Scaled up replica set
 * NAME from A to B") when the size changed (scaleReplicaSet). Resolves true when it scaled.
 */
export async function scaleReplicaSet(
  ctx: SyncContext,
  rs: ReplicaSet,
  newScale: number,
  d: Deployment,
  operation: 'up' | 'down',
): Promise<boolean> {
  const desired = desiredReplicas(d);
  const max = desired + maxSurge(d);
  const sizeNeedsUpdate = specReplicas(rs) !== newScale;
  if (!sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, desired, max)) return false;
  const oldScale = specReplicas(rs);
  const copy = structuredClone(rs);
  copy.spec.replicas = newScale;
  setReplicasAnnotations(copy, desired, max);
  replaceReplicaSet(rs, await ctx.client.update<ReplicaSet>(resources.replicasets, copy));
  if (sizeNeedsUpdate) {
    ctx.recorder.event(
      d,
      'Normal',
      'ScalingReplicaSet',
      `Scaled ${operation} replica set ${rs.metadata.name} from ${oldScale} to ${newScale}`,
    );
  }
  return sizeNeedsUpdate;
}

/** scaleReplicaSet with the direction worked out (scaleReplicaSetAndRecordEvent); no-op when already at `newScale`. */
export async function scaleReplicaSetAndRecordEvent(
  ctx: SyncContext,
  rs: ReplicaSet,
  newScale: number,
  d: Deployment,
): Promise<boolean> {
  if (specReplicas(rs) === newScale) return false;
  return scaleReplicaSet(ctx, rs, newScale, d, specReplicas(rs) < newScale ? 'up' : 'down');
}

/**
 * Brings the ReplicaSets to the Deployment's size without moving the rollout
 * (the controller's scale()): a lone active (or else the latest) ReplicaSet goes straight
 * to spec.replicas; with a saturated new ReplicaSet the old ones go to 0; otherwise, for a
 * RollingUpdate mid-rollout, every active ReplicaSet grows or shrinks in proportion to its
 * size (proportionalSizes), so a scale during a rollout keeps the old/new ratio and the
 * surge bound.
 */
export async function scale(
  ctx: SyncContext,
  d: Deployment,
  newRS: ReplicaSet | undefined,
  oldRSs: ReplicaSet[],
): Promise<void> {
  const replicas = desiredReplicas(d);
  const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
  if (activeOrLatest) {
    if (specReplicas(activeOrLatest) !== replicas) {
      await scaleReplicaSetAndRecordEvent(ctx, activeOrLatest, replicas, d);
    }
    return;
  }
  if (isSaturated(d, newRS)) {
    for (const old of filterActive(oldRSs)) await scaleReplicaSetAndRecordEvent(ctx, old, 0, d);
    return;
  }
  if (!isRollingUpdate(d)) return;
  const active = filterActive([...oldRSs, newRS]);
  const total = replicaCount(active);
  const allowed = replicas > 0 ? replicas + maxSurge(d) : 0;
  const operation = allowed - total > 0 ? 'up' : 'down';
  for (const [rs, size] of proportionalSizes(d, active)) {
    await scaleReplicaSet(ctx, rs, size, d, operation);
  }
}

/**
 * True when some active ReplicaSet was last scaled for another spec.replicas than the
 * Deployment's now (its desired-replicas annotation differs): the user scaled, and the
 * sync should only scale, not roll (isScalingEvent).
 */
export async function isScalingEvent(
  ctx: SyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
): Promise<boolean> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false);
  for (const rs of filterActive([...oldRSs, newRS])) {
    const desired = desiredReplicasAnnotation(rs);
    if (desired !== undefined && desired !== desiredReplicas(d)) return true;
  }
  return false;
}

/**
 * Deletes old ReplicaSets beyond spec.revisionHistoryLimit, lowest revision first, skipping
 * any that still has replicas, pods, an unobserved generation or a deletionTimestamp
 * (cleanupDeployment). Without a limit nothing is deleted.
 */
export async function cleanupDeployment(
  ctx: SyncContext,
  oldRSs: ReplicaSet[],
  d: Deployment,
): Promise<void> {
  const limit = d.spec.revisionHistoryLimit;
  if (limit === undefined || limit === null) return;
  const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const diff = cleanable.length - limit;
  if (diff <= 0) return;
  cleanable.sort(byRevision);
  for (const rs of cleanable.slice(0, diff)) {
    if (
      (rs.status?.replicas ?? 0) !== 0 ||
      specReplicas(rs) !== 0 ||
      (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0)
    ) {
      continue;
    }
    try {
      await ctx.client.delete(resources.replicasets, rs.metadata.namespace, rs.metadata.name!);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/**
 * The Deployment status the ReplicaSets add up to (calculateStatus): replicas (pods),
 * updatedReplicas (pods of the new ReplicaSet), ready, available, unavailable
 * (Σ spec.replicas − available, at least 0), observedGeneration, collisionCount, and the
 * Available condition (True when available ≥ replicas − maxUnavailable). Other conditions
 * are carried over.
 */
export function calculateStatus(
  allRSs: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
  now: string,
): DeploymentStatus {
  const available = availableReplicaCount(allRSs);
  const total = replicaCount(allRSs);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: actualReplicaCount(allRSs),
    updatedReplicas: actualReplicaCount([newRS]),
    readyReplicas: readyReplicaCount(allRSs),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
  };
  // The counters are omitempty in Kubernetes' DeploymentStatus: a zero is left out.
  for (const k of COUNTERS) if (status[k] === 0) delete status[k];
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  status.conditions = (d.status?.conditions ?? []).map((c) => ({ ...c }));
  if (available >= desiredReplicas(d) - maxUnavailable(d)) {
    setDeploymentCondition(
      status,
      newDeploymentCondition(
        DeploymentConditionType.Available,
        'True',
        Reason.MinimumReplicasAvailable,
        'Deployment has minimum availability.',
        now,
      ),
    );
  } else {
    setDeploymentCondition(
      status,
      newDeploymentCondition(
        DeploymentConditionType.Available,
        'False',
        Reason.MinimumReplicasUnavailable,
        'Deployment does not have minimum availability.',
        now,
      ),
    );
  }
  return status;
}

/** DeploymentStatus counters that Kubernetes leaves out when they are 0. */
const COUNTERS = [
  'replicas',
  'updatedReplicas',
  'readyReplicas',
  'availableReplicas',
  'unavailableReplicas',
] as const;

/** Writes calculateStatus() when it differs from the current status (syncDeploymentStatus). */
export async function syncDeploymentStatus(
  ctx: SyncContext,
  allRSs: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
): Promise<void> {
  const status = calculateStatus(allRSs, newRS, d, nowString(ctx));
  if (statusEqual(d.status, status)) return;
  d.status = status;
  await updateDeploymentStatus(ctx, d);
}

/** Status equality as reflect.DeepEqual sees it on the Go struct: absent counters are 0, absent conditions are none. */
export function statusEqual(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  const norm = (s: DeploymentStatus | undefined) => ({
    observedGeneration: s?.observedGeneration ?? 0,
    replicas: s?.replicas ?? 0,
    updatedReplicas: s?.updatedReplicas ?? 0,
    readyReplicas: s?.readyReplicas ?? 0,
    availableReplicas: s?.availableReplicas ?? 0,
    unavailableReplicas: s?.unavailableReplicas ?? 0,
    collisionCount: s?.collisionCount ?? null,
    conditions: (s?.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason ?? '',
      message: c.message ?? '',
      lastUpdateTime: c.lastUpdateTime ?? '',
      lastTransitionTime: c.lastTransitionTime ?? '',
    })),
  });
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

/**
 * Only scales and writes status — what a paused Deployment or a pure scale gets (sync()):
 * no new ReplicaSet is created; a paused one also has its old ReplicaSets cleaned up.
 */
export async function sync(ctx: SyncContext, d: Deployment, rsList: ReplicaSet[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false);
  await scale(ctx, d, newRS, oldRSs);
  if (d.spec.paused) await cleanupDeployment(ctx, oldRSs, d);
  await syncDeploymentStatus(ctx, [...oldRSs, newRS], newRS, d);
}

/** Status only, for a Deployment being deleted (syncStatusOnly). */
export async function syncStatusOnly(ctx: SyncContext, d: Deployment, rsList: ReplicaSet[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false);
  await syncDeploymentStatus(ctx, [...oldRSs, newRS], newRS, d);
}

/**
 * Sets Progressing to Unknown/DeploymentPaused when spec.paused is set, and to
 * Unknown/DeploymentResumed when it was cleared, unless ProgressDeadlineExceeded is being
 * reported (checkPausedConditions). Writes status when it changed it.
 */
export async function checkPausedConditions(ctx: SyncContext, d: Deployment): Promise<void> {
  if (!hasProgressDeadline(d)) return;
  const cond = getCondition(d.status?.conditions, DeploymentConditionType.Progressing);
  if (cond?.reason === Reason.ProgressDeadlineExceeded) return;
  const pausedCondExists = cond?.reason === Reason.DeploymentPaused;
  let condition;
  if (d.spec.paused && !pausedCondExists) {
    condition = newDeploymentCondition(
      DeploymentConditionType.Progressing,
      'Unknown',
      Reason.DeploymentPaused,
      'Deployment is paused',
      nowString(ctx),
    );
  } else if (!d.spec.paused && pausedCondExists) {
    condition = newDeploymentCondition(
      DeploymentConditionType.Progressing,
      'Unknown',
      Reason.DeploymentResumed,
      'Deployment is resumed',
      nowString(ctx),
    );
  }
  if (!condition) return;
  setDeploymentCondition((d.status ??= {}), condition);
  await updateDeploymentStatus(ctx, d);
}
