/**
 * Taints and tolerations: which toleration tolerates which taint, and how long a pod may
 * stay on a node with NoExecute taints. Pure functions shared by the scheduler's
 * TaintToleration plugin, the node lifecycle controller and the taint eviction controller
 * (k8s.io/api core/v1 `Toleration.ToleratesTaint`, component-helpers
 * `scheduling/corev1.FindMatchingUntoleratedTaint`, and pkg/controller/tainteviction's
 * `getMatchingTolerations` / `getMinTolerationTime`).
 */
import type { Taint, Toleration } from './types.js';

/** Taint keys the node controllers manage (k8s.io/api core/v1 well_known_taints.go). */
export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_NODE_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_NODE_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_NODE_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
export const TAINT_NODE_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';

/**
 * Whether `toleration` tolerates `taint`, as Kubernetes' `Toleration.ToleratesTaint`:
 * - an empty effect matches every effect, otherwise effects must be equal;
 * - an empty key matches every key (meaningful with operator Exists), otherwise keys must be equal;
 * - operator Exists ignores the value; Equal (also the default when the operator is
 *   omitted) needs equal values, an absent value counting as `''`.
 * tolerationSeconds does not matter here: it only bounds how long a NoExecute taint is tolerated.
 */
export function tolerationToleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? 'Equal') {
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      // An operator this version does not know (Kubernetes: Lt/Gt behind a feature gate) tolerates nothing.
      return false;
  }
}

/** Whether any of `tolerations` tolerates `taint` (component-helpers `TolerationsTolerateTaint`). */
export function tolerationsTolerateTaint(
  tolerations: readonly Toleration[] | undefined,
  taint: Taint,
): boolean {
  return (tolerations ?? []).some((t) => tolerationToleratesTaint(t, taint));
}

/**
 * The first taint of `taints` that passes `filter` (default: every taint) and that no
 * toleration of `tolerations` tolerates; undefined when all of them are tolerated
 * (component-helpers `FindMatchingUntoleratedTaint`). The scheduler passes a filter keeping
 * NoSchedule and NoExecute taints; taint eviction keeps NoExecute ones.
 */
export function findMatchingUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  filter: (taint: Taint) => boolean = () => true,
): Taint | undefined {
  return (taints ?? []).find((taint) => filter(taint) && !tolerationsTolerateTaint(tolerations, taint));
}

/** Result of getMatchingTolerations(). */
export interface MatchingTolerations {
  /** Whether every taint is tolerated by some toleration. */
  allTolerated: boolean;
  /** For each taint in order, the first toleration that tolerates it; empty when not allTolerated. */
  used: Toleration[];
}

/**
 * Which tolerations a pod uses to stay on a node with `taints` (tainteviction
 * `getMatchingTolerations`): for each taint the first toleration that tolerates it. No
 * taints: everything is tolerated with no toleration used. Any taint untolerated:
 * `{allTolerated: false, used: []}`.
 */
export function getMatchingTolerations(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
): MatchingTolerations {
  const used: Toleration[] = [];
  for (const taint of taints ?? []) {
    const match = (tolerations ?? []).find((t) => tolerationToleratesTaint(t, taint));
    if (!match) return { allTolerated: false, used: [] };
    used.push(match);
  }
  return { allTolerated: true, used };
}

/**
 * How long, in seconds, a pod using `tolerations` may stay on a node with NoExecute taints
 * (tainteviction `getMinTolerationTime`): the smallest tolerationSeconds; 0 when there are
 * no tolerations or one has tolerationSeconds <= 0 (evict now); `Infinity` when none sets
 * tolerationSeconds (tolerated forever).
 */
export function minTolerationSeconds(tolerations: readonly Toleration[]): number {
  if (tolerations.length === 0) return 0;
  let min = Infinity;
  for (const t of tolerations) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min;
}

/**
 * Whether two taints are the same taint: same key and effect, whatever their values
 * (k8s.io/api core/v1 `Taint.MatchTaint`). A node never has two taints that match.
 */
export function taintMatches(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}
