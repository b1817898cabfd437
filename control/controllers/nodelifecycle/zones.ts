/**
 * Zone disruption states (pkg/controller/nodelifecycle `ComputeZoneState` and
 * `handleDisruption`): when many nodes of a zone stop reporting at once, the fault is more
 * likely the network or this controller than every kubelet, so evicting their pods would do
 * harm. Nodes are grouped by topology.kubernetes.io/region + zone (or the deprecated
 * failure-domain.beta.kubernetes.io labels); nodes without them share one zone.
 */
import type { Node } from '../../../api/types.js';
import { readyStatus } from './health.js';
import type { NoExecuteMode } from './node-taints.js';

/** --unhealthy-zone-threshold: the share of not-Ready nodes (of more than 2) that makes a zone PartialDisruption. */
export const UNHEALTHY_ZONE_THRESHOLD = 0.55;
/**
 * --large-cluster-size-threshold: in a partially disrupted zone of at most this many nodes
 * Kubernetes stops tainting (its secondary eviction rate applies above); k8ts has no rate
 * limit, so larger zones taint as usual.
 */
export const LARGE_CLUSTER_SIZE_THRESHOLD = 50;

/** A zone's state: no Ready node → FullDisruption; > 2 not Ready and ≥ 55 % → PartialDisruption. */
export type ZoneState = 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** The zone key of a node (Kubernetes' GetZoneKey: region and zone, '' when unlabeled). */
export function zoneKey(node: Node): string {
  const l = node.metadata.labels ?? {};
  const region = l['topology.kubernetes.io/region'] ?? l['failure-domain.beta.kubernetes.io/region'] ?? '';
  const zone = l['topology.kubernetes.io/zone'] ?? l['failure-domain.beta.kubernetes.io/zone'] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\x00:${zone}`;
}

/** The state of a zone from its nodes' Ready statuses (a missing Ready counts as not Ready). */
export function computeZoneState(ready: readonly (string | undefined)[]): ZoneState {
  const readyNodes = ready.filter((s) => s === 'True').length;
  const notReady = ready.length - readyNodes;
  if (readyNodes === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / ready.length >= UNHEALTHY_ZONE_THRESHOLD) return 'PartialDisruption';
  return 'Normal';
}

/** What the zones say about NoExecute tainting of `node`, given every node of the cluster. */
export interface DisruptionView {
  mode: NoExecuteMode;
  /** Every zone is FullDisruption (Kubernetes' "master disruption mode"). */
  allFullyDisrupted: boolean;
}

/**
 * The NoExecute mode for `node` (in its latest state, which wins over its copy in `nodes`):
 * `clear` when every zone is fully disrupted, `hold` when the node's zone is partially
 * disrupted and small, `normal` otherwise (a fully disrupted zone among healthy ones still
 * taints: Kubernetes keeps the healthy eviction rate there).
 */
export function disruptionView(nodes: readonly Node[], node: Node): DisruptionView {
  const byZone = new Map<string, (string | undefined)[]>();
  const others = nodes.filter((n) => n.metadata.name !== node.metadata.name);
  for (const latest of [...others, node]) {
    const key = zoneKey(latest);
    const list = byZone.get(key) ?? [];
    list.push(readyStatus(latest));
    byZone.set(key, list);
  }
  const states = new Map([...byZone].map(([k, v]) => [k, computeZoneState(v)] as const));
  const allFullyDisrupted = states.size > 0 && [...states.values()].every((s) => s === 'FullDisruption');
  if (allFullyDisrupted) return { mode: 'clear', allFullyDisrupted };
  const zone = zoneKey(node);
  const size = byZone.get(zone)?.length ?? 0;
  if (states.get(zone) === 'PartialDisruption' && size <= LARGE_CLUSTER_SIZE_THRESHOLD)
    return { mode: 'hold', allFullyDisrupted };
  return { mode: 'normal', allFullyDisrupted };
}
