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
  return tallyState({ nodes: ready.length, ready: ready.filter((s) => s === 'True').length });
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
 * taints: Kubernetes keeps the healthy eviction rate there). The controller keeps a
 * ZoneCounts instead of listing every node for every node.
 */
export function disruptionView(nodes: readonly Node[], node: Node): DisruptionView {
  const counts = new ZoneCounts();
  for (const n of nodes) counts.set(n);
  return counts.view(node);
}

/** A zone's nodes: how many, how many Ready. */
interface ZoneTally {
  nodes: number;
  ready: number;
}

/** computeZoneState of a zone of `nodes` nodes, `ready` of them Ready. */
function tallyState({ nodes, ready }: ZoneTally): ZoneState {
  const notReady = nodes - ready;
  if (ready === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / nodes >= UNHEALTHY_ZONE_THRESHOLD) return 'PartialDisruption';
  return 'Normal';
}

/**
 * Every node's zone and whether it is Ready, tallied per zone, kept as Nodes come, change
 * and go (the node informer's handlers), so that `view` costs the number of zones rather
 * than the number of nodes: the controller asks for every node every monitor period, and
 * listing all nodes each time made that the square of the nodes.
 */
export class ZoneCounts {
  private readonly nodes = new Map<string, { zone: string; ready: boolean }>();
  private readonly zones = new Map<string, ZoneTally>();

  /** Counts `node` as it is now (replacing what was counted of the node of that name). */
  set(node: Node): void {
    const name = node.metadata.name ?? '';
    this.delete(name);
    const entry = { zone: zoneKey(node), ready: readyStatus(node) === 'True' };
    this.nodes.set(name, entry);
    let t = this.zones.get(entry.zone);
    if (!t) this.zones.set(entry.zone, (t = { nodes: 0, ready: 0 }));
    t.nodes++;
    if (entry.ready) t.ready++;
  }

  /** Stops counting the node `name` (it was deleted). */
  delete(name: string): void {
    const entry = this.nodes.get(name);
    if (!entry) return;
    this.nodes.delete(name);
    const t = this.zones.get(entry.zone)!;
    t.nodes--;
    if (entry.ready) t.ready--;
    if (t.nodes === 0) this.zones.delete(entry.zone);
  }

  /** disruptionView of the counted nodes, with `node` in its latest state in place of its counted one. */
  view(node: Node): DisruptionView {
    const counted = this.nodes.get(node.metadata.name ?? '');
    const zone = zoneKey(node);
    const ready = readyStatus(node) === 'True';
    const tallyOf = (key: string, t: ZoneTally | undefined): ZoneTally => {
      let nodes = t?.nodes ?? 0;
      let readyNodes = t?.ready ?? 0;
      if (counted?.zone === key) {
        nodes--;
        if (counted.ready) readyNodes--;
      }
      if (zone === key) {
        nodes++;
        if (ready) readyNodes++;
      }
      return { nodes, ready: readyNodes };
    };
    let zones = 0;
    let allFullyDisrupted = true;
    const visit = (key: string, t: ZoneTally | undefined) => {
      const tally = tallyOf(key, t);
      if (tally.nodes === 0) return;
      zones++;
      if (tallyState(tally) !== 'FullDisruption') allFullyDisrupted = false;
    };
    for (const [key, t] of this.zones) visit(key, t);
    if (!this.zones.has(zone)) visit(zone, undefined);
    allFullyDisrupted &&= zones > 0;
    if (allFullyDisrupted) return { mode: 'clear', allFullyDisrupted };
    const own = tallyOf(zone, this.zones.get(zone));
    if (tallyState(own) === 'PartialDisruption' && own.nodes <= LARGE_CLUSTER_SIZE_THRESHOLD)
      return { mode: 'hold', allFullyDisrupted };
    return { mode: 'normal', allFullyDisrupted };
  }
}
