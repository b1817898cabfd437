/**
 * NodeResourcesFit (pkg/scheduler/framework/plugins/noderesources): Filter rejects nodes
 * without room for the pod's requests (`Insufficient cpu`, `Too many pods`, ...: code
 * Unschedulable, since evicting pods would make room); Score ranks nodes by the
 * LeastAllocated strategy.
 */
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import type {
  EnqueueExtensions,
  FilterPlugin,
  PreFilterPlugin,
  PreScorePlugin,
  ScorePlugin,
} from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { podRequests } from '../../framework/resource.js';
import type { Resource } from '../../framework/resource.js';
import { Status } from '../../framework/status.js';
import { fitsRequest } from './fit.js';
import { leastAllocatedScore } from './least-allocated.js';

const SUCCESS = Status.success;

export const NAME = 'NodeResourcesFit';
const PRE_FILTER_KEY = `PreFilter${NAME}`;
const PRE_SCORE_KEY = `PreScore${NAME}`;

interface PreScoreState {
  milliCPU: number;
  memory: number;
}

export class NodeResourcesFit
  implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions
{
  readonly name = NAME;
  // The last cycle's state, so that the per-node calls skip the CycleState lookup.
  private filterCycle: CycleState | undefined;
  private request: Resource | undefined;
  private scoreCycle: CycleState | undefined;
  private nonZero: PreScoreState | undefined;

  preFilter(state: CycleState, pod: Pod): Status {
    state.write(PRE_FILTER_KEY, podRequests(pod));
    return SUCCESS;
  }

  filter(state: CycleState, pod: Pod, node: NodeInfo): Status {
    if (state !== this.filterCycle) {
      this.filterCycle = state;
      this.request = state.read<Resource>(PRE_FILTER_KEY) ?? podRequests(pod);
    }
    const insufficient = fitsRequest(this.request!, node);
    if (insufficient.length === 0) return SUCCESS;
    return Status.unschedulable(...insufficient.map((r) => r.reason));
  }

  preScore(state: CycleState, pod: Pod): Status {
    const nz = podRequests(pod, true);
    state.write(PRE_SCORE_KEY, { milliCPU: nz.milliCPU, memory: nz.memory } satisfies PreScoreState);
    return SUCCESS;
  }

  score(state: CycleState, pod: Pod, node: NodeInfo): number {
    if (state !== this.scoreCycle) {
      this.scoreCycle = state;
      const nz = podRequests(pod, true);
      this.nonZero = state.read<PreScoreState>(PRE_SCORE_KEY) ?? { milliCPU: nz.milliCPU, memory: nz.memory };
    }
    const s = this.nonZero!;
    return leastAllocatedScore(
      node.nonZeroMilliCPU + s.milliCPU,
      node.allocatable.milliCPU,
      node.nonZeroMemory + s.memory,
      node.allocatable.memory,
    );
  }

  eventsToRegister(): readonly ClusterEvent[] {
    return [
      { resource: 'Pod', actionType: ActionType.Delete, label: NAME },
      { resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeAllocatable, label: NAME },
    ];
  }
}
