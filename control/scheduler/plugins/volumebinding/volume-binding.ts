/**
 * VolumeBinding (pkg/scheduler/framework/plugins/volumebinding): a pod goes only where its
 * PersistentVolumeClaims can be had, and its WaitForFirstConsumer claims are bound or
 * provisioned for the node it goes to.
 *
 *   PreFilter  Skip for a pod without claims. A missing claim, one being deleted or Lost,
 *              or an unbound Immediate claim (the PV controller binds those: "pod has
 *              unbound immediate PersistentVolumeClaims") rejects the pod on every node
 *              (UnschedulableAndUnresolvable); the claims are sorted out into the cycle state.
 *   Filter     binder.findPodVolumes for the node: its reasons reject it
 *              (UnschedulableAndUnresolvable, e.g. "node(s) had volume node affinity
 *              conflict"); otherwise what the pod needs there is kept per node.
 *   Reserve    the chosen node's static bindings and provisionings are assumed.
 *   PreBind    they are written (volume claimRef; claim volume.kubernetes.io/selected-node)
 *              and awaited until the PV controller has bound every claim.
 *   Unreserve  the assumptions are dropped.
 *
 * No Score: upstream scores only with StorageCapacityScoring, which needs capacity k8ts
 * does not track. Pods it rejected come back on StorageClass, claim and volume additions
 * and changes, and on node additions, label and taint changes.
 */
import type { Node, Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import type {
  EnqueueExtensions,
  FilterPlugin,
  PreBindPlugin,
  PreFilterPlugin,
  ReservePlugin,
} from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { Code, Status } from '../../framework/status.js';
import {
  SchedulerVolumeBinder,
  type PodVolumeClaims,
  type PodVolumes,
  type SchedulerVolumeBinderConfig,
} from './binder.js';

export const NAME = 'VolumeBinding';
const STATE_KEY = NAME;

/** PreFilter's reason for a pod with an unbound Immediate claim. */
export const ERR_REASON_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';

/** What the plugin keeps in the cycle state (stateData). */
interface StateData {
  claims: PodVolumeClaims | undefined;
  podVolumesByNode: Map<string, PodVolumes>;
  allBound: boolean;
}

/** The VolumeBinding plugin; see the file comment. */
export class VolumeBinding
  implements PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, EnqueueExtensions
{
  readonly name = NAME;
  readonly binder: SchedulerVolumeBinder;

  constructor(cfg: SchedulerVolumeBinderConfig) {
    this.binder = new SchedulerVolumeBinder(cfg);
  }

  eventsToRegister(): readonly ClusterEvent[] {
    const addOrUpdate = ActionType.Add | ActionType.Update;
    return [
      { resource: 'StorageClass', actionType: addOrUpdate, label: 'StorageClassChange' },
      { resource: 'PersistentVolumeClaim', actionType: addOrUpdate, label: 'PersistentVolumeClaimChange' },
      { resource: 'PersistentVolume', actionType: addOrUpdate, label: 'PersistentVolumeChange' },
      {
        resource: 'Node',
        actionType: ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint,
        label: 'NodeChange',
      },
    ];
  }

  preFilter(state: CycleState, pod: Pod): Status {
    const { hasPVC, problem } = this.binder.podHasPVCs(pod);
    if (!hasPVC) {
      state.write(STATE_KEY, {
        claims: undefined,
        podVolumesByNode: new Map(),
        allBound: true,
      } satisfies StateData);
      return Status.skip;
    }
    if (problem) return Status.unresolvable(problem);
    let claims: PodVolumeClaims;
    try {
      claims = this.binder.getPodVolumeClaims(pod);
    } catch (err) {
      return Status.error(err);
    }
    if (claims.unboundClaimsImmediate.length > 0) return Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE);
    state.write(STATE_KEY, { claims, podVolumesByNode: new Map(), allBound: false } satisfies StateData);
    return Status.success;
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status {
    const s = state.read<StateData>(STATE_KEY);
    if (!s?.claims) return new Status(Code.Error, [`reading "${STATE_KEY}" from cycleState: not found`]);
    const node: Node = nodeInfo.node ?? { metadata: { name: nodeInfo.name } };
    let found: ReturnType<SchedulerVolumeBinder['findPodVolumes']>;
    try {
      found = this.binder.findPodVolumes(s.claims, node);
    } catch (err) {
      return Status.error(err);
    }
    if (found.reasons.length > 0) return Status.unresolvable(...found.reasons);
    s.podVolumesByNode.set(nodeInfo.name, found.podVolumes);
    return Status.success;
  }

  reserve(state: CycleState, pod: Pod, nodeName: string): Status {
    const s = state.read<StateData>(STATE_KEY);
    if (!s) return Status.success;
    const podVolumes = s.podVolumesByNode.get(nodeName);
    if (!podVolumes) {
      // The pod names no claims (PreFilter skipped the plugin).
      s.allBound = true;
      return Status.success;
    }
    try {
      s.allBound = this.binder.assumePodVolumes(pod, nodeName, podVolumes);
    } catch (err) {
      return Status.error(err);
    }
    return Status.success;
  }

  unreserve(state: CycleState, _pod: Pod, nodeName: string): void {
    const podVolumes = state.read<StateData>(STATE_KEY)?.podVolumesByNode.get(nodeName);
    if (podVolumes) this.binder.revert(podVolumes);
  }

  async preBind(state: CycleState, pod: Pod, nodeName: string, signal?: AbortSignal): Promise<Status> {
    const s = state.read<StateData>(STATE_KEY);
    if (!s || s.allBound) return Status.success;
    const podVolumes = s.podVolumesByNode.get(nodeName);
    if (!podVolumes) return Status.error(new Error(`no pod volumes found for node "${nodeName}"`));
    try {
      await this.binder.bindPodVolumes(pod, nodeName, podVolumes, signal);
    } catch (err) {
      return Status.error(err);
    }
    return Status.success;
  }
}
