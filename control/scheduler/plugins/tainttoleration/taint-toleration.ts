/**
 * TaintToleration (pkg/scheduler/framework/plugins/tainttoleration): Filter rejects a
 * node with a NoSchedule or NoExecute taint the pod does not tolerate
 * (UnschedulableAndUnresolvable, "node(s) had untolerated taint {key: value}", naming the
 * first such taint); Score counts the PreferNoSchedule taints the pod does not tolerate,
 * fewer being better (normalised in reverse to 0..100).
 */
import { findMatchingUntoleratedTaint, tolerationsTolerateTaint } from '../../../../api/taints.js';
import type { Pod, Taint, Toleration } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import { MAX_NODE_SCORE } from '../../framework/interface.js';
import type {
  EnqueueExtensions,
  FilterPlugin,
  NodeScore,
  PreScorePlugin,
  ScorePlugin,
} from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { defaultNormalizeScore } from '../../framework/normalize.js';
import { Status } from '../../framework/status.js';

const SUCCESS = Status.success;

export const NAME = 'TaintToleration';
const PRE_SCORE_KEY = `PreScore${NAME}`;

const doNotSchedule = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';

/** The first NoSchedule/NoExecute taint of `taints` that `tolerations` do not tolerate, if any. */
export function untoleratedTaint(
  taints: readonly Taint[],
  tolerations: readonly Toleration[] | undefined,
): Taint | undefined {
  if (taints.length === 0) return undefined;
  return findMatchingUntoleratedTaint(taints, tolerations, doNotSchedule);
}

/** The filter reason for `taint`, worded as Kubernetes. */
export function untoleratedReason(taint: Taint): string {
  return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
}

/** How many PreferNoSchedule taints of `taints` none of `tolerations` tolerates. */
export function countIntolerablePreferNoSchedule(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
): number {
  let n = 0;
  for (const t of taints) {
    if (t.effect === 'PreferNoSchedule' && !tolerationsTolerateTaint(tolerations, t)) n++;
  }
  return n;
}

export class TaintToleration implements FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {
  readonly name = NAME;

  filter(_state: CycleState, pod: Pod, node: NodeInfo): Status {
    const taint = untoleratedTaint(node.taints, pod.spec.tolerations);
    return taint ? Status.unresolvable(untoleratedReason(taint)) : SUCCESS;
  }

  preScore(state: CycleState, pod: Pod): Status {
    // Only tolerations that can apply to PreferNoSchedule taints matter for the score.
    const tolerations = (pod.spec.tolerations ?? []).filter(
      (t) => !t.effect || t.effect === 'PreferNoSchedule',
    );
    state.write(PRE_SCORE_KEY, tolerations);
    return SUCCESS;
  }

  score(state: CycleState, _pod: Pod, node: NodeInfo): number {
    const taints = node.taints;
    if (taints.length === 0) return 0;
    return countIntolerablePreferNoSchedule(taints, state.read<Toleration[]>(PRE_SCORE_KEY) ?? []);
  }

  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): void {
    defaultNormalizeScore(MAX_NODE_SCORE, true, scores);
  }

  eventsToRegister(): readonly ClusterEvent[] {
    return [
      {
        resource: 'Node',
        actionType: ActionType.Add | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel,
        label: NAME,
      },
    ];
  }
}
