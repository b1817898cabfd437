/**
 * Small pure helpers over Pod and owner metadata, shared by the controllers, the scheduler
 * and the kubelet (Kubernetes' pkg/api/v1/pod and apimachinery's metav1.GetControllerOf).
 */
import type { KubeObject, OwnerReference } from './object.js';
import type { Condition, Pod } from './types.js';

/** The condition of `type` in `conditions`, or undefined. */
export function getCondition<C extends Condition>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the pod's `Ready` condition is `True` (podutil.IsPodReady). */
export function isPodReady(pod: Pod): boolean {
  return getCondition(pod.status?.conditions, 'Ready')?.status === 'True';
}

/**
 * True when the pod has been Ready for at least `minReadySeconds` at `nowMs` (milliseconds
 * since the epoch), judged by the Ready condition's lastTransitionTime
 * (podutil.IsPodAvailable). With minReadySeconds 0, available is ready.
 */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  const ready = getCondition(pod.status?.conditions, 'Ready');
  if (ready?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : NaN;
  return !Number.isNaN(since) && since + minReadySeconds * 1000 <= nowMs;
}

/** True when the pod has finished: phase Succeeded or Failed. */
export function isPodTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/**
 * True for a pod that counts towards its controller's replicas: not terminal and not being
 * deleted (controller.IsPodActive).
 */
export function isPodActive(pod: Pod): boolean {
  return !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;
}

/** The ownerReference with `controller: true`, if any (metav1.GetControllerOf). */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/**
 * An ownerReference that makes `owner` the controller of a dependent (metav1.NewControllerRef):
 * `controller: true`, `blockOwnerDeletion: true`.
 * @throws Error when the owner lacks apiVersion, kind, name or uid.
 */
export function controllerRef(owner: KubeObject): OwnerReference {
  const { apiVersion, kind } = owner;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!apiVersion || !kind || !name || !uid) {
    throw new Error(`controllerRef: owner needs apiVersion, kind, metadata.name and metadata.uid`);
  }
  return { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
}
