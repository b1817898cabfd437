/**
 * NodeUnschedulable (pkg/scheduler/framework/plugins/nodeunschedulable): a node with
 * `spec.unschedulable` (`kubectl cordon`) takes no new pods, except those tolerating the
 * `node.kubernetes.io/unschedulable:NoSchedule` taint (DaemonSet pods do).
 */
import { TAINT_NODE_UNSCHEDULABLE, tolerationsTolerateTaint } from '../../../../api/taints.js';
import type { Node, Pod, Taint } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import type { EnqueueExtensions, FilterPlugin } from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { Status } from '../../framework/status.js';

const SUCCESS = Status.success;

export const NAME = 'NodeUnschedulable';
/** Filter reason (UnschedulableAndUnresolvable). */
export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';

const unschedulableTaint: Taint = { key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' };

/** Whether `pod` may be placed on `node` as far as cordoning goes. */
export function fits(pod: Pod, node: Node | undefined): boolean {
  if (!node?.spec?.unschedulable) return true;
  return tolerationsTolerateTaint(pod.spec.tolerations, unschedulableTaint);
}

export class NodeUnschedulable implements FilterPlugin, EnqueueExtensions {
  readonly name = NAME;
  private readonly rejected = Status.unresolvable(ERR_REASON_UNSCHEDULABLE);

  filter(_state: CycleState, pod: Pod, node: NodeInfo): Status {
    return fits(pod, node.node) ? SUCCESS : this.rejected;
  }

  eventsToRegister(): readonly ClusterEvent[] {
    return [{ resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeTaint, label: NAME }];
  }
}
