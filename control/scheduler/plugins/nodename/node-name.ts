/**
 * NodeName (pkg/scheduler/framework/plugins/nodename): a pod that names a node in
 * `spec.nodeName` fits only that node. (The scheduler only picks up pods without a
 * nodeName, so this matters for diagnosis and for other callers of the framework.)
 */
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import type { EnqueueExtensions, FilterPlugin } from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { Status } from '../../framework/status.js';

const SUCCESS = Status.success;

export const NAME = 'NodeName';
/** Filter reason (UnschedulableAndUnresolvable). */
export const ERR_REASON = "node(s) didn't match the requested node name";

/** Whether `pod` may run on the node called `nodeName`. */
export function fits(pod: Pod, nodeName: string): boolean {
  return !pod.spec.nodeName || pod.spec.nodeName === nodeName;
}

export class NodeName implements FilterPlugin, EnqueueExtensions {
  readonly name = NAME;
  private readonly rejected = Status.unresolvable(ERR_REASON);

  filter(_state: CycleState, pod: Pod, node: NodeInfo): Status {
    return fits(pod, node.name) ? SUCCESS : this.rejected;
  }

  eventsToRegister(): readonly ClusterEvent[] {
    return [{ resource: 'Node', actionType: ActionType.Add, label: NAME }];
  }
}
