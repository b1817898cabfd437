/**
 * DefaultPreemption (pkg/scheduler/framework/plugins/defaultpreemption), as a PostFilter
 * that diagnoses but never evicts: k8ts does not preempt. It answers what Kubernetes'
 * preemption would say when it finds no candidate, so the FailedScheduling message reads
 * as Kubernetes' does:
 *
 * - a node that failed with UnschedulableAndUnresolvable: "Preemption is not helpful for scheduling";
 * - a node without pods of lower priority than the pod: "No preemption victims found for incoming pod";
 * - otherwise the Filter result on the node with those pods removed.
 *
 * When removing lower-priority pods would make room somewhere, Kubernetes would preempt;
 * k8ts leaves the pod pending and adds no preemption sentence. Pods with
 * `preemptionPolicy: Never` get "not eligible due to preemptionPolicy=Never.".
 */
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { fitErrorMessage } from '../../framework/fit-error.js';
import type { Handle, PostFilterPlugin, PostFilterResult } from '../../framework/interface.js';
import { NodeInfo } from '../../framework/node-info.js';
import { Code, Status } from '../../framework/status.js';

// Module constants: the hot loops compare against locals, not imported namespaces.
const CODE_UNSCHEDULABLE_AND_UNRESOLVABLE = Code.UnschedulableAndUnresolvable;

export const NAME = 'DefaultPreemption';
export const MSG_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const MSG_NO_VICTIMS = 'No preemption victims found for incoming pod';

/** What a Framework offers this plugin: the nodes and a way to rerun Filter. */
export interface PreemptionHandle extends Handle {
  runFilterPlugins(state: CycleState, pod: Pod, node: NodeInfo): Status;
}

export class DefaultPreemption implements PostFilterPlugin {
  readonly name = NAME;

  constructor(private readonly handle: PreemptionHandle) {}

  postFilter(state: CycleState, pod: Pod, statuses: ReadonlyMap<string, Status>): PostFilterResult {
    if (pod.spec.preemptionPolicy === 'Never') {
      return { status: Status.unschedulable('preemption: not eligible due to preemptionPolicy=Never.') };
    }
    const priority = pod.spec.priority ?? 0;
    const results: Status[] = [];
    let candidate = false;
    for (const ni of this.handle.nodeInfos()) {
      const st = statuses.get(ni.name);
      if (!st) continue;
      if (st.code === CODE_UNSCHEDULABLE_AND_UNRESOLVABLE) {
        results.push(Status.unresolvable(MSG_NOT_HELPFUL));
        continue;
      }
      const remaining = [...ni.pods.values()].filter((p) => (p.pod.spec.priority ?? 0) >= priority);
      if (remaining.length === ni.pods.size) {
        results.push(Status.unresolvable(MSG_NO_VICTIMS));
        continue;
      }
      const without = new NodeInfo(ni.name, ni.node);
      for (const p of remaining) without.addPod(p);
      const again = this.handle.runFilterPlugins(state, pod, without);
      if (again.isSuccess()) candidate = true;
      else results.push(again);
    }
    if (candidate) return { status: Status.unschedulable() };
    return { status: Status.unschedulable(`preemption: ${fitErrorMessage(statuses.size, results)}`) };
  }
}
