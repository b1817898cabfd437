/**
 * The disruption controller's arithmetic, pure (Kubernetes' pkg/controller/disruption:
 * getExpectedPodCount, buildDisruptedPodMap, countHealthyPods, updatePdbStatus):
 *
 *   maxUnavailable set:       expectedPods = Σ scale of the pods' controllers,
 *                             desiredHealthy = max(0, expectedPods − ⌈maxUnavailable⌉)
 *   minAvailable an integer:  expectedPods = number of selected pods, desiredHealthy = it
 *   minAvailable a percent:   expectedPods = Σ scale, desiredHealthy = ⌈p·expectedPods/100⌉
 *   currentHealthy = ready pods that are not terminating and not in disruptedPods
 *                    (an entry counts for DELETION_TIMEOUT_MS after its time)
 *   disruptionsAllowed = max(0, currentHealthy − desiredHealthy), 0 when expectedPods ≤ 0
 */
import { isPodReady } from '../../../api/podutil.js';
import {
  DISRUPTION_ALLOWED_CONDITION,
  INSUFFICIENT_PODS_REASON,
  scaledValueFromIntOrPercent,
  SUFFICIENT_PODS_REASON,
  type PodDisruptionBudget,
} from '../../../api/policy.js';
import type { Pod } from '../../../api/types.js';

/** How long a pod in status.disruptedPods is taken as about to go (DeletionTimeout: 2 minutes). */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

/** expectedPods and desiredHealthy of a budget. */
export interface ExpectedCount {
  expectedPods: number;
  desiredHealthy: number;
}

/**
 * getExpectedPodCount. `expectedScale` gives Σ scale of the selected pods' controllers
 * (called only when the budget needs it: maxUnavailable or a percentage minAvailable).
 * @throws Error from `expectedScale` or for a malformed percentage.
 */
export async function expectedPodCount(
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  expectedScale: () => Promise<number>,
): Promise<ExpectedCount> {
  const { maxUnavailable, minAvailable } = pdb.spec;
  if (maxUnavailable !== undefined && maxUnavailable !== null) {
    const expectedPods = await expectedScale();
    const unavailable = scaledValueFromIntOrPercent(maxUnavailable, expectedPods, true);
    return { expectedPods, desiredHealthy: Math.max(0, expectedPods - unavailable) };
  }
  if (typeof minAvailable === 'number') return { expectedPods: pods.length, desiredHealthy: minAvailable };
  if (typeof minAvailable === 'string') {
    const expectedPods = await expectedScale();
    return { expectedPods, desiredHealthy: scaledValueFromIntOrPercent(minAvailable, expectedPods, true) };
  }
  return { expectedPods: 0, desiredHealthy: 0 };
}

/**
 * buildDisruptedPodMap: the entries of status.disruptedPods still current at `nowMs` for
 * pods that exist and are not terminating; `expired` names the pods whose entry outlived
 * DELETION_TIMEOUT_MS (they were not deleted after all); `recheckAtMs` is when the next
 * current entry expires (undefined: none).
 */
export function buildDisruptedPodMap(
  pods: readonly Pod[],
  pdb: PodDisruptionBudget,
  nowMs: number,
): { disruptedPods: Record<string, string>; expired: string[]; recheckAtMs: number | undefined } {
  const recorded = pdb.status?.disruptedPods ?? {};
  const disruptedPods: Record<string, string> = {};
  const expired: string[] = [];
  let recheckAtMs: number | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const name = pod.metadata.name!;
    const at = Object.hasOwn(recorded, name) ? recorded[name] : undefined;
    if (at === undefined) continue;
    const expectedDeletion = Date.parse(at) + DELETION_TIMEOUT_MS;
    // At the instant itself the entry has expired too (upstream's Before/After meet there;
    // a recheck enqueued for that instant would otherwise find it still current, forever).
    if (expectedDeletion <= nowMs) {
      expired.push(name);
    } else {
      if (recheckAtMs === undefined || expectedDeletion < recheckAtMs) recheckAtMs = expectedDeletion;
      disruptedPods[name] = at;
    }
  }
  return { disruptedPods, expired, recheckAtMs };
}

/** countHealthyPods: ready, not terminating, not disrupted (entry younger than DELETION_TIMEOUT_MS). */
export function countHealthyPods(
  pods: readonly Pod[],
  disruptedPods: Readonly<Record<string, string>>,
  nowMs: number,
): number {
  let healthy = 0;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const name = pod.metadata.name!;
    const at = Object.hasOwn(disruptedPods, name) ? disruptedPods[name] : undefined;
    if (at !== undefined && Date.parse(at) + DELETION_TIMEOUT_MS > nowMs) continue;
    if (isPodReady(pod)) healthy++;
  }
  return healthy;
}

/** updatePdbStatus's rule: currentHealthy − desiredHealthy, never negative, 0 without expected pods. */
export function disruptionsAllowed(
  currentHealthy: number,
  desiredHealthy: number,
  expectedPods: number,
): number {
  const allowed = currentHealthy - desiredHealthy;
  return expectedPods <= 0 || allowed <= 0 ? 0 : allowed;
}

/** pdbhelper.ConditionsAreUpToDate: the DisruptionAllowed condition agrees with the status and its generation. */
export function conditionsAreUpToDate(pdb: PodDisruptionBudget): boolean {
  const status = pdb.status;
  const cond = status?.conditions?.find((c) => c.type === DISRUPTION_ALLOWED_CONDITION);
  if (!status || !cond || (cond.observedGeneration ?? 0) !== (status.observedGeneration ?? 0)) return false;
  return status.disruptionsAllowed > 0
    ? cond.status === 'True' && cond.reason === SUFFICIENT_PODS_REASON
    : cond.status === 'False' && cond.reason === INSUFFICIENT_PODS_REASON;
}
