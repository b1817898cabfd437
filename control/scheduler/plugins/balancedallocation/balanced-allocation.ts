/**
 * NodeResourcesBalancedAllocation (pkg/scheduler/framework/plugins/noderesources/
 * balanced_allocation.go): prefers nodes whose cpu and memory would be used in similar
 * fractions after placing the pod, so that neither runs out while the other idles.
 * Score = (1 - standard deviation of the fractions) * 100; fractions use the plain
 * requests (not the non-zero defaults) and are capped at 1. Pods that request no cpu or
 * memory (best effort) are skipped.
 */
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { MAX_NODE_SCORE } from '../../framework/interface.js';
import type { PreScorePlugin, ScorePlugin } from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { podRequests } from '../../framework/resource.js';
import { Status } from '../../framework/status.js';

const SUCCESS = Status.success;
const SKIP = Status.skip;

export const NAME = 'NodeResourcesBalancedAllocation';
const PRE_SCORE_KEY = `PreScore${NAME}`;

/**
 * The score for fractions cpu = requestedMilliCPU/allocatableMilliCPU and memory =
 * requestedMemory/allocatableMemory (resources with zero allocatable are left out).
 */
export function balancedResourceScore(
  requestedMilliCPU: number,
  allocatableMilliCPU: number,
  requestedMemory: number,
  allocatableMemory: number,
): number {
  // With two resources the standard deviation is half their difference; with one, 0.
  let std = 0;
  if (allocatableMilliCPU > 0 && allocatableMemory > 0) {
    const cpu = Math.min(1, requestedMilliCPU / allocatableMilliCPU);
    const mem = Math.min(1, requestedMemory / allocatableMemory);
    std = Math.abs(cpu - mem) / 2;
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

interface PreScoreState {
  milliCPU: number;
  memory: number;
}

export class BalancedAllocation implements PreScorePlugin, ScorePlugin {
  readonly name = NAME;
  // The last cycle's state, so that the per-node calls skip the CycleState lookup.
  private cycle: CycleState | undefined;
  private request: PreScoreState | undefined;

  preScore(state: CycleState, pod: Pod): Status {
    const r = podRequests(pod);
    if (r.milliCPU === 0 && r.memory === 0) return SKIP;
    state.write(PRE_SCORE_KEY, { milliCPU: r.milliCPU, memory: r.memory } satisfies PreScoreState);
    return SUCCESS;
  }

  score(state: CycleState, pod: Pod, node: NodeInfo): number {
    if (state !== this.cycle) {
      this.cycle = state;
      const r = podRequests(pod);
      this.request = state.read<PreScoreState>(PRE_SCORE_KEY) ?? { milliCPU: r.milliCPU, memory: r.memory };
    }
    const s = this.request!;
    return balancedResourceScore(
      node.requested.milliCPU + s.milliCPU,
      node.allocatable.milliCPU,
      node.requested.memory + s.memory,
      node.allocatable.memory,
    );
  }
}
