/**
 * NodePorts (pkg/scheduler/framework/plugins/nodeports): a pod asking for a `hostPort`
 * fits only nodes where no other pod holds that port on the same address (or on
 * 0.0.0.0); else Unschedulable, "node(s) didn't have free ports for the requested pod
 * ports". Pods without host ports are skipped at PreFilter.
 */
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import type { EnqueueExtensions, FilterPlugin, PreFilterPlugin } from '../../framework/interface.js';
import { hostPortsOf } from '../../framework/node-info.js';
import type { HostPort, NodeInfo } from '../../framework/node-info.js';
import { Status } from '../../framework/status.js';

const SUCCESS = Status.success;
const SKIP = Status.skip;

export const NAME = 'NodePorts';
/** Filter reason (Unschedulable). */
export const ERR_REASON = "node(s) didn't have free ports for the requested pod ports";
const PRE_FILTER_KEY = `PreFilter${NAME}`;

/** Whether every port in `wanted` is free on `node`. */
export function fits(wanted: readonly HostPort[], node: NodeInfo): boolean {
  for (const p of wanted) if (node.usedPorts.conflicts(p)) return false;
  return true;
}

export class NodePorts implements PreFilterPlugin, FilterPlugin, EnqueueExtensions {
  readonly name = NAME;
  private readonly rejected = Status.unschedulable(ERR_REASON);

  preFilter(state: CycleState, pod: Pod): Status {
    const wanted = hostPortsOf(pod);
    if (wanted.length === 0) return SKIP;
    state.write(PRE_FILTER_KEY, wanted);
    return SUCCESS;
  }

  filter(state: CycleState, pod: Pod, node: NodeInfo): Status {
    const wanted = state.read<readonly HostPort[]>(PRE_FILTER_KEY) ?? hostPortsOf(pod);
    return fits(wanted, node) ? SUCCESS : this.rejected;
  }

  eventsToRegister(): readonly ClusterEvent[] {
    return [
      { resource: 'Pod', actionType: ActionType.Delete, label: NAME },
      { resource: 'Node', actionType: ActionType.Add, label: NAME },
    ];
  }
}
