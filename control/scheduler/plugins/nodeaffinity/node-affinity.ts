/**
 * NodeAffinity (pkg/scheduler/framework/plugins/nodeaffinity): Filter keeps the nodes
 * that satisfy the pod's `nodeSelector` and required node affinity (else
 * UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector");
 * Score sums the weights of the preferred terms a node matches, normalised to 0..100.
 * Pods with neither are skipped at PreFilter/PreScore.
 */
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import { MAX_NODE_SCORE } from '../../framework/interface.js';
import type {
  EnqueueExtensions,
  FilterPlugin,
  NodeScore,
  PreFilterPlugin,
  PreScorePlugin,
  ScorePlugin,
} from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { defaultNormalizeScore } from '../../framework/normalize.js';
import { Status } from '../../framework/status.js';
import { fits, preferredScore } from './node-selector.js';

const SUCCESS = Status.success;
const SKIP = Status.skip;

export const NAME = 'NodeAffinity';
/** Filter reason (UnschedulableAndUnresolvable). */
export const ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector";

export class NodeAffinity
  implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions
{
  readonly name = NAME;
  private readonly rejected = Status.unresolvable(ERR_REASON_POD);

  preFilter(_state: CycleState, pod: Pod): Status {
    const hasSelector = pod.spec.nodeSelector && Object.keys(pod.spec.nodeSelector).length > 0;
    const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    return hasSelector || required ? SUCCESS : SKIP;
  }

  filter(_state: CycleState, pod: Pod, node: NodeInfo): Status {
    if (!node.node) return Status.unresolvable('node not found');
    return fits(pod, node.node) ? SUCCESS : this.rejected;
  }

  preScore(_state: CycleState, pod: Pod): Status {
    const preferred = pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
    return preferred && preferred.length > 0 ? SUCCESS : SKIP;
  }

  score(_state: CycleState, pod: Pod, node: NodeInfo): number {
    return node.node ? preferredScore(pod, node.node) : 0;
  }

  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): void {
    defaultNormalizeScore(MAX_NODE_SCORE, false, scores);
  }

  eventsToRegister(): readonly ClusterEvent[] {
    return [{ resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeLabel, label: NAME }];
  }
}
