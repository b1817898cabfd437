/**
 * What the volume controllers share (pkg/controller/volume/common and protectionutil): the
 * pod informer's index of pods by the claims they name, so that "which pods use claim
 * ns/x" is a lookup, not a scan; a pod's claim names (its persistentVolumeClaim volumes and
 * the claims of its generic ephemeral volumes, `<pod>-<volume>`); when a pod is done with
 * its volumes; and the protection finalizers' add/remove rules.
 */
import type { IndexFunc } from '../../../api/client/indexer.js';
import type { KubeObject } from '../../../api/object.js';
import type { Pod } from '../../../api/types.js';

/** Name of the pod index by `namespace/claim` (common.PodPVCIndex). */
export const POD_PVC_INDEX = 'pod-pvc-index';

/** One entry of `pod.spec.volumes`, as far as claims go. */
interface ClaimVolume {
  name?: string;
  persistentVolumeClaim?: { claimName?: string; readOnly?: boolean };
  ephemeral?: unknown;
}

/**
 * The names of the claims `pod` uses, in volume order: `persistentVolumeClaim.claimName`,
 * and `<pod name>-<volume name>` for a generic ephemeral volume (ephemeral.VolumeClaimName).
 */
export function podClaimNames(pod: Pod): string[] {
  const out: string[] = [];
  const volumes = pod.spec.volumes;
  if (!Array.isArray(volumes)) return out;
  for (const v of volumes as ClaimVolume[]) {
    if (v?.persistentVolumeClaim?.claimName) out.push(v.persistentVolumeClaim.claimName);
    else if (v?.ephemeral && v.name) out.push(`${pod.metadata.name ?? ''}-${v.name}`);
  }
  return out;
}

/** Indexes a pod under `namespace/claim` for every claim it names (common.PodPVCIndexFunc). */
export const podPVCIndexFunc: IndexFunc<Pod> = (pod) =>
  podClaimNames(pod).map((c) => `${pod.metadata.namespace ?? ''}/${c}`);

/**
 * Whether the kubelet is done with the pod or it was force-deleted (podIsShutDown): it has
 * a deletionTimestamp and a deletion grace period of 0. Such a pod no longer holds its
 * claims, which also breaks a pod-finalizer ↔ claim-protection cycle.
 */
export function podIsShutDown(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp && pod.metadata.deletionGracePeriodSeconds === 0;
}

/**
 * Whether the pod has finished (volumeutil.IsPodTerminated): phase Failed or Succeeded, or
 * deleted with every (init, regular, ephemeral) container terminated or waiting.
 */
export function isPodTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return true;
  if (!pod.metadata.deletionTimestamp) return false;
  const status = pod.status as Record<string, unknown> | undefined;
  const notRunning = (list: unknown) =>
    !Array.isArray(list) ||
    list.every((s: { state?: Record<string, unknown> }) => !!s?.state?.terminated || !!s?.state?.waiting);
  return (
    notRunning(status?.initContainerStatuses) &&
    notRunning(status?.containerStatuses) &&
    notRunning(status?.ephemeralContainerStatuses)
  );
}

/** Whether `obj` is being deleted and still carries `finalizer` (protectionutil.IsDeletionCandidate). */
export function isDeletionCandidate(obj: KubeObject, finalizer: string): boolean {
  return !!obj.metadata?.deletionTimestamp && (obj.metadata.finalizers ?? []).includes(finalizer);
}

/** Whether `obj` is not being deleted and lacks `finalizer` (protectionutil.NeedToAddFinalizer). */
export function needToAddFinalizer(obj: KubeObject, finalizer: string): boolean {
  return !obj.metadata?.deletionTimestamp && !(obj.metadata?.finalizers ?? []).includes(finalizer);
}

/** A copy of `obj` with `finalizer` added or removed (the protection controllers' update). */
export function withFinalizer<T extends KubeObject>(obj: T, finalizer: string, present: boolean): T {
  const clone = structuredClone(obj);
  const rest = (clone.metadata!.finalizers ?? []).filter((f) => f !== finalizer);
  clone.metadata!.finalizers = present ? [...rest, finalizer] : rest;
  return clone;
}
