/**
 * Which pods a ReplicaSet deletes when it has too many (Kubernetes' getPodsToDelete and
 * controller.ActivePodsWithRanks). Pods are sorted so that the ones furthest from being
 * useful go first; the first rule that tells two pods apart decides:
 *
 *  1. unscheduled (no `spec.nodeName`) before scheduled;
 *  2. phase Pending before Unknown before Running (no phase counts as Pending);
 *  3. not Ready before Ready;
 *  4. lower `controller.kubernetes.io/pod-deletion-cost` annotation before higher
 *     (an int32; missing or malformed counts as 0) — the PodDeletionCost feature, on by
 *     default;
 *  5. higher rank before lower: the rank is how many active pods of the same family (this
 *     ReplicaSet and its siblings under the same controller, e.g. one Deployment's
 *     ReplicaSets) run on the pod's node, so doubled-up nodes are thinned first;
 *  6. both Ready: Ready for less time before more (Ready lastTransitionTime later first;
 *     a missing time first);
 *  7. more container restarts (the highest restartCount of its containers) before fewer;
 *  8. newer before older (creationTimestamp later first; a missing one first).
 *
 * Rules 6 and 8 compare as LogarithmicScaleDown does (on by default) when `now` is given:
 * each time becomes the bucket floor(log2(now - t in nanoseconds)), and two pods in the
 * same bucket are ordered by uid — a pseudo-random pick among pods of about the same age,
 * so repeated scale-downs do not always hit the same failure domain. Without `now`
 * (or with a zero time on either side) times compare exactly.
 */
import { getCondition, isPodActive, isPodReady } from '../../../api/podutil.js';
import type { Pod, PodPhase } from '../../../api/types.js';

/** The annotation whose int32 value orders pods for deletion (rule 4). */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

const PHASE_ORDINAL: Partial<Record<PodPhase, number>> = { Pending: 0, Unknown: 1, Running: 2 };
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** The pod-deletion-cost of a pod: the annotation as an int32, 0 when missing or malformed. */
export function podDeletionCost(pod: Pod): number {
  const v = pod.metadata.annotations?.[POD_DELETION_COST_ANNOTATION];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return 0;
  const n = Number(v);
  return n >= INT32_MIN && n <= INT32_MAX ? n : 0;
}

/** ms since the epoch of an RFC 3339 time; 0 ("zero time") when missing or unparseable. */
function timeMs(t: string | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : ms;
}

/** When the pod became Ready (its Ready condition's lastTransitionTime), 0 when not Ready. */
function readyTimeMs(pod: Pod): number {
  if (!isPodReady(pod)) return 0;
  return timeMs(getCondition(pod.status?.conditions, 'Ready')?.lastTransitionTime);
}

function maxContainerRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

/** True when t1 sorts first: zero before non-zero, else later before earlier (afterOrZero). */
function afterOrZero(t1: number, t2: number): boolean {
  if (t1 === 0 || t2 === 0) return t1 === 0;
  return t1 > t2;
}

/** floor(log2(age in ns)) per time, the difference of the two; -1 for an age <= 0 (logarithmicRankDiff). */
function logarithmicRankDiff(t1: number, t2: number, now: number): number {
  const bucket = (t: number): number => {
    const ns = (now - t) * 1e6;
    return ns > 0 ? Math.floor(Math.log2(ns)) : -1;
  };
  return bucket(t1) - bucket(t2);
}

/** Compares two times for rules 6 and 8; undefined when they are equal. */
function compareTimes(a: Pod, b: Pod, t1: number, t2: number, now: number | undefined): boolean | undefined {
  if (t1 === t2) return undefined;
  if (now === undefined || t1 === 0 || t2 === 0) return afterOrZero(t1, t2);
  const diff = logarithmicRankDiff(t1, t2, now);
  if (diff === 0) return (a.metadata.uid ?? '') < (b.metadata.uid ?? '');
  return diff < 0;
}

/**
 * True when pod `a` (with rank `rankA`) should be deleted before `b` (ActivePodsWithRanks.Less).
 * `now`: ms since the epoch for the logarithmic comparisons; undefined compares exactly.
 */
export function deletesBefore(a: Pod, rankA: number, b: Pod, rankB: number, now?: number): boolean {
  const nodeA = a.spec.nodeName ?? '';
  const nodeB = b.spec.nodeName ?? '';
  if (nodeA !== nodeB && (nodeA === '' || nodeB === '')) return nodeA === '';
  const phaseA = PHASE_ORDINAL[a.status?.phase ?? 'Pending'] ?? 0;
  const phaseB = PHASE_ORDINAL[b.status?.phase ?? 'Pending'] ?? 0;
  if (phaseA !== phaseB) return phaseA < phaseB;
  const readyA = isPodReady(a);
  const readyB = isPodReady(b);
  if (readyA !== readyB) return !readyA;
  const costA = podDeletionCost(a);
  const costB = podDeletionCost(b);
  if (costA !== costB) return costA < costB;
  if (rankA !== rankB) return rankA > rankB;
  if (readyA && readyB) {
    const r = compareTimes(a, b, readyTimeMs(a), readyTimeMs(b), now);
    if (r !== undefined) return r;
  }
  const restartsA = maxContainerRestarts(a);
  const restartsB = maxContainerRestarts(b);
  if (restartsA !== restartsB) return restartsA > restartsB;
  const r = compareTimes(
    a,
    b,
    timeMs(a.metadata.creationTimestamp),
    timeMs(b.metadata.creationTimestamp),
    now,
  );
  return r ?? false;
}

/**
 * Ranks each pod of `podsToRank` by the number of active pods of `relatedPods` on the same
 * node (getPodsRankedByRelatedPodsOnSameNode); `relatedPods` is usually a superset.
 * Returns the ranks in the order of `podsToRank`.
 */
export function ranksByRelatedPodsOnSameNode(
  podsToRank: readonly Pod[],
  relatedPods: readonly Pod[],
): number[] {
  const onNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (!isPodActive(p)) continue;
    const node = p.spec.nodeName ?? '';
    onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  return podsToRank.map((p) => onNode.get(p.spec.nodeName ?? '') ?? 0);
}

/**
 * The `diff` pods of `filteredPods` to delete, in deletion order (getPodsToDelete). When
 * all must go, they are returned unsorted. Does not modify its arguments.
 * @param now ms since the epoch, for the logarithmic time comparisons (see the file comment).
 */
export function getPodsToDelete(
  filteredPods: readonly Pod[],
  relatedPods: readonly Pod[],
  diff: number,
  now?: number,
): Pod[] {
  if (diff >= filteredPods.length) return filteredPods.slice(0, diff);
  const ranks = ranksByRelatedPodsOnSameNode(filteredPods, relatedPods);
  const ranked = filteredPods.map((pod, i) => ({ pod, rank: ranks[i]! }));
  ranked.sort((x, y) => {
    if (deletesBefore(x.pod, x.rank, y.pod, y.rank, now)) return -1;
    if (deletesBefore(y.pod, y.rank, x.pod, x.rank, now)) return 1;
    return 0;
  });
  return ranked.slice(0, diff).map((r) => r.pod);
}
