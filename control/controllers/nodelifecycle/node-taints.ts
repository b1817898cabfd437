/**
 * Which taints the node lifecycle controller keeps on a node (pkg/controller/nodelifecycle
 * `doNoScheduleTaintingPass` and `doNoExecuteTaintingPass`):
 * - NoSchedule taints mirror the node's conditions — Ready False → not-ready, Ready Unknown
 *   → unreachable, MemoryPressure / DiskPressure / PIDPressure / NetworkUnavailable True →
 *   memory-pressure / disk-pressure / pid-pressure / network-unavailable — and
 *   `spec.unschedulable` → unschedulable;
 * - one NoExecute taint mirrors Ready: False → not-ready, Unknown → unreachable, True or no
 *   Ready condition yet → none (a node without one gets the not-ready NoSchedule taint). The taint eviction controller evicts the pods that do not
 *   tolerate it.
 * Taints of other keys are never touched. Every taint added gets `timeAdded`.
 */
import {
  TAINT_NODE_DISK_PRESSURE,
  TAINT_NODE_MEMORY_PRESSURE,
  TAINT_NODE_NETWORK_UNAVAILABLE,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_UNSCHEDULABLE,
  taintMatches,
} from '../../../api/taints.js';
import type { Condition, Node, Taint } from '../../../api/types.js';
import { readyStatus } from './health.js';

/** Condition type → status → taint key (Kubernetes' nodeConditionToTaintKeyStatusMap). */
const CONDITION_TAINTS: Readonly<Record<string, Partial<Record<Condition['status'], string>>>> = {
  Ready: { False: TAINT_NODE_NOT_READY, Unknown: TAINT_NODE_UNREACHABLE },
  MemoryPressure: { True: TAINT_NODE_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_NODE_DISK_PRESSURE },
  NetworkUnavailable: { True: TAINT_NODE_NETWORK_UNAVAILABLE },
  PIDPressure: { True: TAINT_NODE_PID_PRESSURE },
};

/** NoSchedule taint keys this controller owns. */
const NO_SCHEDULE_KEYS = new Set<string>([
  TAINT_NODE_UNSCHEDULABLE,
  ...Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)),
]);

/** NoExecute taint keys this controller owns. */
const NO_EXECUTE_KEYS = new Set<string>([TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE]);

/** Whether the node lifecycle controller owns `taint` (adds and removes it). */
export function isNodeControllerTaint(taint: Taint): boolean {
  return taint.effect === 'NoSchedule'
    ? NO_SCHEDULE_KEYS.has(taint.key)
    : taint.effect === 'NoExecute' && NO_EXECUTE_KEYS.has(taint.key);
}

/** The NoSchedule taints `node`'s conditions and spec.unschedulable call for (without timeAdded). */
export function noScheduleTaintsFor(node: Node): Taint[] {
  const taints: Taint[] = [];
  // A node that has never reported Ready is not ready for pods either (Kubernetes' TaintNodesByCondition
  // admission puts this taint on every new Node until its kubelet reports Ready).
  if (!(node.status?.conditions ?? []).some((c) => c.type === 'Ready')) {
    taints.push({ key: TAINT_NODE_NOT_READY, effect: 'NoSchedule' });
  }
  for (const c of node.status?.conditions ?? []) {
    const key = CONDITION_TAINTS[c.type]?.[c.status];
    if (key) taints.push({ key, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) taints.push({ key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' });
  return taints;
}

/**
 * The NoExecute taint a Ready status calls for: none for True, and none while the node has
 * no Ready condition at all (as doNoExecuteTaintingPass, which skips such nodes: evicting
 * before a kubelet ever reported would only churn pods; the controller marks the node
 * Unknown once its startup grace period has passed, and that brings the taint).
 */
export function noExecuteTaintFor(ready: Condition['status'] | undefined): Taint | undefined {
  if (ready === 'True' || ready === undefined) return undefined;
  return { key: ready === 'False' ? TAINT_NODE_NOT_READY : TAINT_NODE_UNREACHABLE, effect: 'NoExecute' };
}

/**
 * How NoExecute taints may change (see zones.ts):
 * - `normal`: they follow Ready;
 * - `hold`: the node's zone is partially disrupted, so no new NoExecute taint is added, but
 *   an existing one is still swapped (not-ready ↔ unreachable) or removed when Ready;
 * - `clear`: every zone is fully disrupted (the likelier fault is this controller's view):
 *   all are removed.
 */
export type NoExecuteMode = 'normal' | 'hold' | 'clear';

/**
 * The node's taints after reconciling the ones this controller owns with its conditions,
 * or undefined when nothing changes. Kept taints keep their position, value and timeAdded;
 * new ones are appended with `timeAdded: now` (RFC 3339).
 */
export function reconcileNodeTaints(node: Node, mode: NoExecuteMode, now: string): Taint[] | undefined {
  const current = node.spec?.taints ?? [];
  const desired = noScheduleTaintsFor(node);
  const noExecute = noExecuteTaintFor(readyStatus(node));
  const hasNoExecute = current.some((t) => t.effect === 'NoExecute' && NO_EXECUTE_KEYS.has(t.key));
  if (noExecute && (mode === 'normal' || (mode === 'hold' && hasNoExecute))) desired.push(noExecute);
  const kept = current.filter((t) => !isNodeControllerTaint(t) || desired.some((d) => taintMatches(d, t)));
  const added = desired
    .filter((d) => !kept.some((t) => taintMatches(d, t)))
    .map((d) => ({ ...d, timeAdded: now }));
  if (added.length === 0 && kept.length === current.length) return undefined;
  return [...kept, ...added];
}
