/**
 * PodTopologySpread (pkg/scheduler/framework/plugins/podtopologyspread).
 *
 * Filter (DoNotSchedule constraints): for each constraint, count the matching pods per
 * topology domain over the nodes the pod may use (its node affinity honoured, nodes
 * carrying every topology key); a node is rejected when placing the pod there would make
 * its domain exceed the least-loaded domain by more than maxSkew — Unschedulable "node(s)
 * didn't match pod topology spread constraints" — or when it lacks a topology key —
 * UnschedulableAndUnresolvable "... (missing required label)".
 *
 * Score (ScheduleAnyway constraints, or the system defaults): fewer matching pods in the
 * node's domains is better; each constraint adds `count * log(domains + 2) + maxSkew - 1`
 * and NormalizeScore maps the lowest total to 100.
 */
import type { Pod } from '../../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType } from '../../framework/events.js';
import type { ClusterEvent } from '../../framework/events.js';
import { MAX_NODE_SCORE } from '../../framework/interface.js';
import type {
  EnqueueExtensions,
  FilterPlugin,
  Handle,
  NodeScore,
  PreFilterPlugin,
  PreScorePlugin,
  ScorePlugin,
} from '../../framework/interface.js';
import type { NodeInfo } from '../../framework/node-info.js';
import { Status } from '../../framework/status.js';
import { fits as nodeAffinityFits } from '../nodeaffinity/node-selector.js';
import {
  LABEL_HOSTNAME,
  countMatching,
  defaultConstraints,
  hasAllTopologyKeys,
  podConstraints,
} from './constraints.js';
import type { SpreadConstraint } from './constraints.js';
import { ownValue } from '../../../../api/meta/maps.js';

const SUCCESS = Status.success;
const SKIP = Status.skip;

export const NAME = 'PodTopologySpread';
/** Filter reason when the skew would be exceeded (Unschedulable). */
export const ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
/** Filter reason for a node without a topology key (UnschedulableAndUnresolvable). */
export const ERR_REASON_NODE_LABEL_NOT_MATCH = `${ERR_REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;
const PRE_FILTER_KEY = `PreFilter${NAME}`;
const PRE_SCORE_KEY = `PreScore${NAME}`;

/** PreFilter's result: per constraint, matching pods per domain value. */
export interface FilterState {
  constraints: SpreadConstraint[];
  counts: Map<string, number>[];
}

/** Counts matching pods per domain for `constraints` over `nodes` (calPreFilterState). */
export function filterState(
  pod: Pod,
  constraints: SpreadConstraint[],
  nodes: readonly NodeInfo[],
): FilterState {
  const counts = constraints.map(() => new Map<string, number>());
  for (const ni of nodes) {
    const node = ni.node;
    if (!node || !nodeAffinityFits(pod, node) || !hasAllTopologyKeys(ni.labels, constraints)) continue;
    constraints.forEach((c, i) => {
      const value = ownValue(ni.labels, c.topologyKey)!;
      const m = counts[i]!;
      m.set(value, (m.get(value) ?? 0) + countMatching(ni, c, pod.metadata.namespace));
    });
  }
  return { constraints, counts };
}

/** The Filter decision for `node` given `state` (pure). */
export function filterNode(pod: Pod, state: FilterState, node: NodeInfo): Status {
  const labels = node.labels ?? {};
  for (let i = 0; i < state.constraints.length; i++) {
    const c = state.constraints[i]!;
    const value = ownValue(labels, c.topologyKey);
    if (value === undefined) return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
    const counts = state.counts[i]!;
    let min = counts.size < c.minDomains ? 0 : Infinity;
    for (const n of counts.values()) if (n < min) min = n;
    if (min === Infinity) min = 0;
    const self = c.selects(pod) ? 1 : 0;
    const skew = (counts.get(value) ?? 0) + self - min;
    if (skew > c.maxSkew) return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
  }
  return SUCCESS;
}

interface ScoreState {
  constraints: SpreadConstraint[];
  /** Nodes lacking a topology key of the pod's own constraints: scored 0. */
  ignored: Set<string>;
  /** Per constraint (not hostname), matching pods per domain value. */
  counts: Map<string, number>[];
  weights: number[];
}

/** count * weight + (maxSkew - 1) (scoreForCount). */
export function scoreForCount(count: number, maxSkew: number, weight: number): number {
  return count * weight + (maxSkew - 1);
}

export class PodTopologySpread
  implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions
{
  readonly name = NAME;

  constructor(private readonly handle: Handle) {}

  preFilter(state: CycleState, pod: Pod): Status {
    const constraints = podConstraints(pod, 'DoNotSchedule');
    if (constraints.length === 0) return SKIP;
    state.write(PRE_FILTER_KEY, filterState(pod, constraints, this.handle.nodeInfos()));
    return SUCCESS;
  }

  filter(state: CycleState, pod: Pod, node: NodeInfo): Status {
    const s = state.read<FilterState>(PRE_FILTER_KEY);
    return s ? filterNode(pod, s, node) : SUCCESS;
  }

  preScore(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Status {
    const own = (pod.spec.topologySpreadConstraints ?? []).length > 0;
    const constraints = own ? podConstraints(pod, 'ScheduleAnyway') : defaultConstraints(pod);
    if (constraints.length === 0) return SKIP;
    const ignored = new Set<string>();
    const counts = constraints.map(() => new Map<string, number>());
    const domains = constraints.map(() => 0);
    for (const ni of nodes) {
      if (own && !hasAllTopologyKeys(ni.labels, constraints)) {
        ignored.add(ni.name);
        continue;
      }
      constraints.forEach((c, i) => {
        if (c.topologyKey === LABEL_HOSTNAME) return;
        const value = ownValue(ni.labels, c.topologyKey);
        if (value === undefined || counts[i]!.has(value)) return;
        counts[i]!.set(value, 0);
        domains[i]!++;
      });
    }
    const weights = constraints.map((c, i) =>
      Math.log((c.topologyKey === LABEL_HOSTNAME ? nodes.length - ignored.size : domains[i]!) + 2),
    );
    // Domain counts cover every node the pod may use, not only the feasible ones.
    for (const ni of this.handle.nodeInfos()) {
      const node = ni.node;
      if (!node || !nodeAffinityFits(pod, node)) continue;
      if (own && !hasAllTopologyKeys(ni.labels, constraints)) continue;
      constraints.forEach((c, i) => {
        if (c.topologyKey === LABEL_HOSTNAME) return;
        const value = ownValue(ni.labels, c.topologyKey);
        const m = counts[i]!;
        if (value === undefined || !m.has(value)) return;
        m.set(value, m.get(value)! + countMatching(ni, c, pod.metadata.namespace));
      });
    }
    state.write(PRE_SCORE_KEY, { constraints, ignored, counts, weights } satisfies ScoreState);
    return SUCCESS;
  }

  score(state: CycleState, pod: Pod, node: NodeInfo): number {
    const s = state.read<ScoreState>(PRE_SCORE_KEY);
    if (!s || s.ignored.has(node.name)) return 0;
    let score = 0;
    s.constraints.forEach((c, i) => {
      const value = ownValue(node.labels, c.topologyKey);
      if (value === undefined) return;
      const count =
        c.topologyKey === LABEL_HOSTNAME
          ? countMatching(node, c, pod.metadata.namespace)
          : (s.counts[i]!.get(value) ?? 0);
      score += scoreForCount(count, c.maxSkew, s.weights[i]!);
    });
    return Math.round(score);
  }

  normalizeScore(state: CycleState, _pod: Pod, scores: NodeScore[]): void {
    const s = state.read<ScoreState>(PRE_SCORE_KEY);
    if (!s) return;
    let min = Infinity;
    let max = 0;
    for (const x of scores) {
      if (s.ignored.has(x.name)) continue;
      if (x.score < min) min = x.score;
      if (x.score > max) max = x.score;
    }
    for (const x of scores) {
      if (s.ignored.has(x.name)) x.score = 0;
      else if (max === 0) x.score = MAX_NODE_SCORE;
      else x.score = Math.trunc((MAX_NODE_SCORE * (max + min - x.score)) / max);
    }
  }

  eventsToRegister(): readonly ClusterEvent[] {
    return [
      {
        resource: 'Pod',
        actionType: ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete,
        label: NAME,
      },
      {
        resource: 'Node',
        actionType: ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel,
        label: NAME,
      },
    ];
  }
}
