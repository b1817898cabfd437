/**
 * Node health as the node lifecycle controller sees it (pkg/controller/nodelifecycle
 * `nodeHealthMap` and `tryUpdateNodeHealth`): a node is alive while its kubelet keeps
 * changing something — the Ready condition's lastHeartbeatTime or its Lease's renewTime.
 * The time of the last change is the *probe timestamp*, taken from this controller's own
 * clock when it sees the change, so that skew between the kubelet's clock and ours never
 * matters; only whether the timestamps moved does.
 */
import { getCondition } from '../../../api/podutil.js';
import type { Condition, Lease, Node } from '../../../api/types.js';

/** The node conditions set to Unknown when a kubelet stops posting (not NetworkUnavailable, which the control plane owns). */
export const MONITORED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

/** What the tracker remembers of one node. */
interface NodeHealthData {
  /** Clock ms when a heartbeat was last seen change. */
  probeTimestamp: number;
  /** The Ready condition's lastHeartbeatTime when last observed (undefined: no Ready condition). */
  readyHeartbeat: string | undefined;
  /** The Lease's renewTime when last observed, ms since the epoch (undefined: no Lease seen). */
  leaseRenewMs: number | undefined;
}

/** Grace periods of a NodeHealthTracker, ms. */
export interface NodeHealthTrackerOptions {
  /** --node-monitor-grace-period, for nodes that have posted a Ready condition. */
  gracePeriodMs: number;
  /** --node-startup-grace-period, for nodes that never posted one. */
  startupGracePeriodMs: number;
}

/** The health verdict of one observation. */
export interface NodeHealthObservation {
  /** Clock ms of the last observed heartbeat. */
  probeTimestamp: number;
  /** The grace period that applies to this node, ms. */
  gracePeriodMs: number;
  /** Whether the grace period has run out at the observation's `now`. */
  expired: boolean;
}

/** Remembers, per node, when this controller last saw its kubelet alive. */
export class NodeHealthTracker {
  private readonly opts: NodeHealthTrackerOptions;
  private readonly nodes = new Map<string, NodeHealthData>();

  constructor(opts: NodeHealthTrackerOptions) {
    this.opts = opts;
  }

  /**
   * Records what `node` and its `lease` (from kube-node-lease, if any) show at `now` (clock
   * ms): a node seen for the first time, a changed Ready lastHeartbeatTime or a newer Lease
   * renewTime set the probe timestamp to `now`. A Lease whose renewTime goes backwards is
   * not a heartbeat (Kubernetes compares with Before()).
   */
  observe(node: Node, lease: Lease | undefined, now: number): NodeHealthObservation {
    const name = node.metadata.name ?? '';
    const ready = getCondition(node.status?.conditions, 'Ready');
    const heartbeat = ready?.lastHeartbeatTime;
    const renew = lease?.spec?.renewTime ? Date.parse(lease.spec.renewTime) : NaN;
    let data = this.nodes.get(name);
    if (!data) {
      data = { probeTimestamp: now, readyHeartbeat: heartbeat, leaseRenewMs: undefined };
      this.nodes.set(name, data);
    } else if (data.readyHeartbeat !== heartbeat) {
      data.probeTimestamp = now;
      data.readyHeartbeat = heartbeat;
    }
    if (Number.isFinite(renew) && (data.leaseRenewMs === undefined || renew > data.leaseRenewMs)) {
      if (data.leaseRenewMs !== undefined) data.probeTimestamp = now;
      data.leaseRenewMs = renew;
    }
    const gracePeriodMs = ready ? this.opts.gracePeriodMs : this.opts.startupGracePeriodMs;
    return {
      probeTimestamp: data.probeTimestamp,
      gracePeriodMs,
      expired: now > data.probeTimestamp + gracePeriodMs,
    };
  }

  /** Forgets a deleted node. */
  forget(name: string): void {
    this.nodes.delete(name);
  }

  /**
   * Gives every known node a fresh grace period from `now`: when the whole cluster was seen
   * down and comes back, the likelier cause is this controller's own view, not every
   * kubelet at once (Kubernetes' handleDisruption on leaving full disruption).
   */
  resetProbeTimestamps(now: number): void {
    for (const data of this.nodes.values()) data.probeTimestamp = now;
  }
}

/**
 * The node's conditions after its kubelet stopped posting, or undefined when the Ready
 * condition would not change (then nothing is written, as Kubernetes compares Ready only).
 * Each of MONITORED_CONDITIONS becomes status Unknown: an existing one not yet Unknown gets
 * reason `NodeStatusUnknown`, message "Kubelet stopped posting node status." and
 * lastTransitionTime `now` (its lastHeartbeatTime stays); a missing one is added with reason
 * `NodeStatusNeverUpdated`, message "Kubelet never posted node status.", lastHeartbeatTime
 * the node's creationTimestamp. `now` is an RFC 3339 time.
 */
export function unknownConditions(node: Node, now: string): Condition[] | undefined {
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
  const before = getCondition(node.status?.conditions, 'Ready');
  for (const type of MONITORED_CONDITIONS) {
    const cur = conditions.find((c) => c.type === type);
    if (!cur) {
      conditions.push({
        type,
        status: 'Unknown',
        reason: 'NodeStatusNeverUpdated',
        message: 'Kubelet never posted node status.',
        ...(node.metadata.creationTimestamp ? { lastHeartbeatTime: node.metadata.creationTimestamp } : {}),
        lastTransitionTime: now,
      });
    } else if (cur.status !== 'Unknown') {
      cur.status = 'Unknown';
      cur.reason = 'NodeStatusUnknown';
      cur.message = 'Kubelet stopped posting node status.';
      cur.lastTransitionTime = now;
    }
  }
  const after = getCondition(conditions, 'Ready')!;
  if (before && JSON.stringify(before) === JSON.stringify(after)) return undefined;
  return conditions;
}

/** The status of the node's Ready condition; undefined when it has none. */
export function readyStatus(node: Node): Condition['status'] | undefined {
  return getCondition(node.status?.conditions, 'Ready')?.status;
}
