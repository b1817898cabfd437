/**
 * The pure rules of a StatefulSet's pods and claims (Kubernetes'
 * pkg/controller/statefulset/stateful_set_utils.go): stable names and ordinals, the
 * identity and storage a pod must carry, the pod built for an ordinal, the claims of a pod,
 * the health predicates the ordered create/delete/update logic reads, and the claim
 * ownerReferences the persistentVolumeClaimRetentionPolicy asks for.
 */
import type { KubeObject, OwnerReference } from '../../../api/object.js';
import { isPodAvailable, isPodReady } from '../../../api/podutil.js';
import type { PersistentVolumeClaim, Pod, StatefulSet } from '../../../api/types.js';
import { getPodFromTemplate } from '../podcontrol.js';

/** The label naming a StatefulSet pod (apps.StatefulSetPodNameLabel): selects one pod from a Service. */
export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** The label carrying a pod's ordinal (apps.PodIndexLabel). */
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
/** The label carrying the ControllerRevision name a pod was made from (apps.ControllerRevisionHashLabelKey). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

/** The ownerReference kind of a StatefulSet. */
export const STATEFULSET_KIND = { apiVersion: 'apps/v1', kind: 'StatefulSet' } as const;

/** A pod volume as these rules read it. */
interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName?: string };
  [source: string]: unknown;
}

function volumesOf(pod: Pod): Volume[] {
  return Array.isArray(pod.spec.volumes) ? (pod.spec.volumes as Volume[]) : [];
}

const PARENT_AND_ORDINAL = /^(.*)-([0-9]+)$/;

/**
 * The parent's name and the ordinal of a pod named `<parent>-<ordinal>`
 * (getParentNameAndOrdinal); `{ parent: '', ordinal: -1 }` for any other name.
 */
export function parentAndOrdinal(pod: Pod): { parent: string; ordinal: number } {
  const m = PARENT_AND_ORDINAL.exec(pod.metadata.name ?? '');
  if (!m) return { parent: '', ordinal: -1 };
  const ordinal = Number(m[2]);
  return Number.isSafeInteger(ordinal) ? { parent: m[1]!, ordinal } : { parent: '', ordinal: -1 };
}

/** The ordinal of a pod, -1 when its name has none (getOrdinal). */
export function getOrdinal(pod: Pod): number {
  return parentAndOrdinal(pod).ordinal;
}

/** `spec.ordinals.start`, 0 by default (getStartOrdinal). */
export function startOrdinal(set: StatefulSet): number {
  return set.spec.ordinals?.start ?? 0;
}

/** `spec.replicas`, 1 by default. */
export function replicasOf(set: StatefulSet): number {
  return set.spec.replicas ?? 1;
}

/** The last ordinal in range, inclusive (getEndOrdinal): start + replicas - 1. */
export function endOrdinal(set: StatefulSet): number {
  return startOrdinal(set) + replicasOf(set) - 1;
}

/** Whether a pod's ordinal is in [start, end] (podInOrdinalRange). */
export function podInOrdinalRange(pod: Pod, set: StatefulSet): boolean {
  const o = getOrdinal(pod);
  return o >= startOrdinal(set) && o <= endOrdinal(set);
}

/** `<set>-<ordinal>` (getPodName). */
export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata.name ?? ''}-${ordinal}`;
}

/** `<template>-<set>-<ordinal>`: the claim a pod of `ordinal` mounts for a claim template (getPersistentVolumeClaimName). */
export function claimName(set: StatefulSet, template: PersistentVolumeClaim, ordinal: number): string {
  return `${template.metadata.name ?? ''}-${set.metadata.name ?? ''}-${ordinal}`;
}

/** Whether the pod's name says it belongs to `set` (isMemberOf). */
export function isMemberOf(set: StatefulSet, pod: Pod): boolean {
  return parentAndOrdinal(pod).parent === set.metadata.name;
}

/** Name, namespace and the pod-name label are those of its ordinal (identityMatches). */
export function identityMatches(set: StatefulSet, pod: Pod): boolean {
  const { parent, ordinal } = parentAndOrdinal(pod);
  return (
    ordinal >= 0 &&
    set.metadata.name === parent &&
    pod.metadata.name === podName(set, ordinal) &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[STATEFULSET_POD_NAME_LABEL] === pod.metadata.name
  );
}

/** Each claim template's volume names the pod's own claim (storageMatches). */
export function storageMatches(set: StatefulSet, pod: Pod): boolean {
  const ordinal = getOrdinal(pod);
  if (ordinal < 0) return false;
  const volumes = new Map(volumesOf(pod).map((v) => [v.name, v]));
  for (const t of set.spec.volumeClaimTemplates ?? []) {
    const v = volumes.get(t.metadata.name ?? '');
    if (v?.persistentVolumeClaim?.claimName !== claimName(set, t, ordinal)) return false;
  }
  return true;
}

/**
 * Gives the pod its identity (updateIdentity): name `<set>-<ordinal>`, the set's namespace,
 * the pod-name and pod-index labels, `spec.hostname` its name and `spec.subdomain` the
 * governing Service (`spec.serviceName`), so the cluster DNS serves
 * `<pod>.<service>.<namespace>.svc.<domain>` from the headless Service's EndpointSlices.
 */
export function updateIdentity(set: StatefulSet, pod: Pod): void {
  const ordinal = getOrdinal(pod);
  pod.metadata.name = podName(set, ordinal);
  pod.metadata.namespace = set.metadata.namespace;
  pod.metadata.labels = {
    ...pod.metadata.labels,
    [STATEFULSET_POD_NAME_LABEL]: pod.metadata.name,
    [POD_INDEX_LABEL]: String(ordinal),
  };
  pod.spec.hostname = pod.metadata.name;
  if (set.spec.serviceName) pod.spec.subdomain = set.spec.serviceName;
}

/**
 * Points the pod's volumes at its claims (updateStorage): one `persistentVolumeClaim` volume
 * per claim template, replacing a template volume of the same name; the others are kept.
 */
export function updateStorage(set: StatefulSet, pod: Pod): void {
  const templates = set.spec.volumeClaimTemplates ?? [];
  if (templates.length === 0) return;
  const ordinal = getOrdinal(pod);
  const claimVolumes = templates.map((t) => ({
    name: t.metadata.name ?? '',
    persistentVolumeClaim: { claimName: claimName(set, t, ordinal) },
  }));
  const names = new Set(claimVolumes.map((v) => v.name));
  const kept = volumesOf(pod).filter((v) => !names.has(v.name));
  pod.spec.volumes = [...claimVolumes, ...kept];
}

/** The set's controllerRef (`controller: true`, `blockOwnerDeletion: true`). */
export function setControllerRef(set: StatefulSet): OwnerReference {
  return {
    ...STATEFULSET_KIND,
    name: set.metadata.name ?? '',
    uid: set.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The pod of `ordinal` from the set's template, identity and storage set (newStatefulSetPod). */
export function newStatefulSetPod(set: StatefulSet, ordinal: number): Pod {
  const pod = getPodFromTemplate(set.spec.template, set, setControllerRef(set));
  delete pod.metadata.generateName;
  pod.metadata.name = podName(set, ordinal);
  updateIdentity(set, pod);
  updateStorage(set, pod);
  return pod;
}

/** The revision label of a pod ('' without one). */
export function podRevision(pod: Pod): string {
  return pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
}

/** Labels the pod with its revision (setPodRevision). */
export function setPodRevision(pod: Pod, revision: string): void {
  pod.metadata.labels = { ...pod.metadata.labels, [CONTROLLER_REVISION_HASH_LABEL]: revision };
}

/**
 * The pod of `ordinal` at the revision the update strategy gives it (newVersionedStatefulSetPod):
 * with RollingUpdate, ordinals below the partition (relative to ordinals.start) keep the
 * current revision; every other one gets the update revision.
 */
export function newVersionedStatefulSetPod(
  currentSet: StatefulSet,
  updateSet: StatefulSet,
  currentRevision: string,
  updateRevision: string,
  ordinal: number,
): Pod {
  const strategy = currentSet.spec.updateStrategy;
  const rolling = (strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
  const start = startOrdinal(currentSet);
  const keepCurrent =
    rolling &&
    (strategy?.rollingUpdate === undefined
      ? ordinal < start + (currentSet.status?.currentReplicas ?? 0)
      : ordinal < start + (strategy.rollingUpdate.partition ?? 0));
  const pod = newStatefulSetPod(keepCurrent ? currentSet : updateSet, ordinal);
  setPodRevision(pod, keepCurrent ? currentRevision : updateRevision);
  return pod;
}

/** The claims of a pod, by claim template name (getPersistentVolumeClaims): template copies named for the ordinal, labelled with the selector's matchLabels. */
export function claimsOf(set: StatefulSet, pod: Pod): Map<string, PersistentVolumeClaim> {
  const ordinal = getOrdinal(pod);
  const out = new Map<string, PersistentVolumeClaim>();
  for (const t of set.spec.volumeClaimTemplates ?? []) {
    const claim = structuredClone(t);
    delete claim.status;
    claim.apiVersion = 'v1';
    claim.kind = 'PersistentVolumeClaim';
    claim.metadata = {
      ...claim.metadata,
      name: claimName(set, t, ordinal),
      namespace: set.metadata.namespace,
      labels: { ...claim.metadata.labels, ...set.spec.selector.matchLabels },
    };
    out.set(t.metadata.name ?? '', claim);
  }
  return out;
}

/** Phase set: the API server has the pod (isCreated; a pod built here has no phase). */
export function isCreated(pod: Pod): boolean {
  return !!pod.status?.phase;
}

export function isPending(pod: Pod): boolean {
  return pod.status?.phase === 'Pending';
}

/** Failed or Succeeded: the pod is recreated (isFailed, isSucceeded). */
export function isFinished(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

export function isTerminating(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp;
}

/** Running with the Ready condition True (isRunningAndReady). */
export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

/** Running and Ready for minReadySeconds at nowMs (isRunningAndAvailable). */
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  return pod.status?.phase === 'Running' && isPodAvailable(pod, minReadySeconds, nowMs);
}

/** Running, Ready and not terminating (isHealthy). */
export function isHealthy(pod: Pod): boolean {
  return isRunningAndReady(pod) && !isTerminating(pod);
}

/** A plain (non-controller) ownerReference to `owner`, as the retention policy writes them. */
function plainRef(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '' };
}

/**
 * The ownerReferences a claim of `pod` should have under the set's
 * persistentVolumeClaimRetentionPolicy (updateClaimOwnerRefForSetAndPod): whenDeleted Delete
 * → a reference to the set (the garbage collector deletes the claim with it); whenScaled
 * Delete → a reference to the pod once its ordinal is out of range (the claim goes with the
 * condemned pod); Retain removes the references. Other owners are kept. Returns the new list
 * and whether it differs.
 */
export function claimOwnerRefs(
  claim: PersistentVolumeClaim,
  set: StatefulSet,
  pod: Pod,
): { refs: OwnerReference[]; changed: boolean } {
  const policy = set.spec.persistentVolumeClaimRetentionPolicy ?? {};
  const deleteWithSet = policy.whenDeleted === 'Delete';
  const scaledDown = !podInOrdinalRange(pod, set);
  const deleteWithPod = policy.whenScaled === 'Delete' && scaledDown;
  // Both Delete and scaled down: the pod, not the set, owns it (the set may live on).
  const wantSet = deleteWithSet && !deleteWithPod;
  const refs = (claim.metadata.ownerReferences ?? []).filter(
    (r) => r.uid !== set.metadata.uid && r.uid !== pod.metadata.uid,
  );
  if (wantSet) refs.push(plainRef(set, STATEFULSET_KIND.apiVersion, STATEFULSET_KIND.kind));
  if (deleteWithPod) refs.push(plainRef(pod, 'v1', 'Pod'));
  const before = claim.metadata.ownerReferences ?? [];
  const key = (r: OwnerReference) => `${r.uid}/${r.kind}/${r.name}`;
  const changed = before.length !== refs.length || before.some((r) => !refs.some((n) => key(n) === key(r)));
  return { refs, changed };
}

/** The scaled value of an IntOrString maxUnavailable for `replicas`, rounded down and at least 1 (getStatefulSetMaxUnavailable). */
export function maxUnavailableOf(set: StatefulSet, replicas: number): number {
  const v = set.spec.updateStrategy?.rollingUpdate?.maxUnavailable;
  let n = 1;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^[0-9]+%$/.test(v))
    n = Math.floor((Number(v.slice(0, -1)) * replicas) / 100);
  return n < 1 ? 1 : n;
}
