/**
 * The message of a pod that fits no node (pkg/scheduler/framework/types.go FitError.Error),
 * which becomes the FailedScheduling event and the PodScheduled condition's message:
 *
 *   0/3 nodes are available: 1 node(s) had untolerated taint {node-role: x}, 2 Insufficient cpu.
 *     preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling,
 *     2 No preemption victims found for incoming pod..
 *
 * (one line). Each node's reasons are counted, the "count reason" strings sorted as
 * strings and joined with ", ". A PreFilter rejection replaces the per-node histogram.
 * The PostFilter (preemption) message follows in its own sentence; since it is itself a
 * FitError message ending in ".", Kubernetes' output ends in "..", kept here.
 */
import type { Status } from './status.js';

/** `0/N nodes are available` (NoNodeAvailableMsg). */
export function noNodeAvailable(numAllNodes: number): string {
  return `0/${numAllNodes} nodes are available`;
}

/** The sorted "count reason" histogram of the reasons in `statuses`. */
export function reasonHistogram(statuses: Iterable<Status>): string[] {
  const counts = new Map<string, number>();
  for (const s of statuses) for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const out = [...counts].map(([reason, n]) => `${n} ${reason}`);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** FitError.Error(): see the file comment. */
export function fitErrorMessage(
  numAllNodes: number,
  statuses: Iterable<Status>,
  preFilterMsg = '',
  postFilterMsg = '',
): string {
  let msg = `${noNodeAvailable(numAllNodes)}:`;
  if (preFilterMsg !== '') {
    msg += ` ${preFilterMsg}.`;
  } else {
    const reasons = reasonHistogram(statuses);
    if (reasons.length > 0) msg += ` ${reasons.join(', ')}.`;
  }
  if (postFilterMsg !== '') msg += ` ${postFilterMsg}.`;
  return msg;
}
