/**
 * One pod's scheduling decision (pkg/scheduler/schedule_one.go `schedulePod`): PreFilter,
 * Filter over the nodes until enough feasible ones are found, PreScore, Score, and the
 * pick of the best node. Synchronous: it reads the cache between informer events, so
 * nothing changes under it.
 *
 * Not every node is examined: once `numFeasibleNodesToFind` nodes pass Filter the search
 * stops, and the next pod's search starts where this one stopped (nextStartNodeIndex), so
 * that all nodes get their turn. With `percentageOfNodesToScore` unset (0) the share is
 * adaptive as in Kubernetes: 50% - 1% per 125 nodes, at least 5%, and never fewer than 100
 * nodes.
 */
import type { Pod } from '../../api/types.js';
import type { SchedulerCache } from './cache/cache.js';
import { CycleState } from './framework/cycle-state.js';
import { fitErrorMessage } from './framework/fit-error.js';
import type { Framework } from './framework/framework.js';
import type { NodeInfo } from './framework/node-info.js';
import { Code, Status } from './framework/status.js';

const SUCCESS = Status.success;
// Module constants: the hot loops compare against locals, not imported namespaces.
const CODE_ERROR = Code.Error;
const CODE_SUCCESS = Code.Success;

/** minFeasibleNodesToFind. */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** minFeasibleNodesPercentageToFind. */
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;
/** ErrNoNodesAvailable's message. */
export const ERR_NO_NODES_AVAILABLE = 'no nodes available to schedule pods';

/**
 * How many feasible nodes to look for among `numAllNodes` (numFeasibleNodesToFind):
 * all of them below 100 nodes; else `percentage`% (adaptive when 0), at least 100.
 */
export function numFeasibleNodesToFind(numAllNodes: number, percentage: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let p = percentage;
  if (p <= 0) {
    p = 50 - Math.trunc(numAllNodes / 125);
    if (p < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND) p = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
  }
  if (p >= 100) return numAllNodes;
  const n = Math.trunc((numAllNodes * p) / 100);
  return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : n;
}

/** Why a pod fits nowhere: each rejected node's status, and the PreFilter/PostFilter messages. */
export class FitError {
  postFilterMsg = '';

  constructor(
    readonly numAllNodes: number,
    readonly statuses: Map<string, Status>,
    readonly preFilterMsg = '',
  ) {}

  /** Names of the plugins that rejected the pod (UnschedulablePlugins). */
  unschedulablePlugins(): Set<string> {
    const out = new Set<string>();
    for (const s of this.statuses.values()) if (s.plugin) out.add(s.plugin);
    return out;
  }

  /** Kubernetes' FitError message (see framework/fit-error.ts). */
  message(): string {
    return fitErrorMessage(this.numAllNodes, this.statuses.values(), this.preFilterMsg, this.postFilterMsg);
  }
}

/** What schedulePod decided. */
export type ScheduleResult =
  | { kind: 'scheduled'; state: CycleState; host: string; evaluatedNodes: number; feasibleNodes: number }
  | { kind: 'unschedulable'; state: CycleState; fitError: FitError }
  | { kind: 'error'; state: CycleState; status: Status };

/** Settings of a SchedulingAlgorithm. */
export interface SchedulingAlgorithmConfig {
  framework: Framework;
  cache: SchedulerCache;
  /** 0 (adaptive) or 1..100. */
  percentageOfNodesToScore?: number;
  /** Uniform [0, 1) for tie-breaking; default Math.random. */
  random?: () => number;
}

/** Filters and scores nodes for one pod at a time. */
export class SchedulingAlgorithm {
  private readonly fwk: Framework;
  private readonly cache: SchedulerCache;
  private readonly percentage: number;
  private readonly random: () => number;
  /** Where the next pod's node search starts. */
  nextStartNodeIndex = 0;
  // Reused between cycles: the hot loop allocates nothing per node.
  private feasible: NodeInfo[] = [];

  constructor(cfg: SchedulingAlgorithmConfig) {
    const p = cfg.percentageOfNodesToScore ?? 0;
    if (!(p >= 0 && p <= 100)) throw new Error(`percentageOfNodesToScore must be 0..100, got ${p}`);
    this.fwk = cfg.framework;
    this.cache = cfg.cache;
    this.percentage = p;
    this.random = cfg.random ?? Math.random;
  }

  /** Decides where `pod` goes. Never throws: plugin failures come back as `error`. */
  schedulePod(pod: Pod): ScheduleResult {
    const state = new CycleState();
    const nodes = this.cache.nodeInfos();
    if (nodes.length === 0) {
      return { kind: 'error', state, status: new Status(CODE_ERROR, [ERR_NO_NODES_AVAILABLE]) };
    }
    const statuses = new Map<string, Status>();
    const pre = this.fwk.runPreFilterPlugins(state, pod, nodes);
    if (pre.code === CODE_ERROR) return { kind: 'error', state, status: pre };
    if (!pre.isSuccess()) {
      for (const n of nodes) statuses.set(n.name, pre);
      return { kind: 'unschedulable', state, fitError: new FitError(nodes.length, statuses, pre.message()) };
    }

    const want = numFeasibleNodesToFind(nodes.length, this.percentage);
    const feasible = this.feasible;
    feasible.length = 0;
    const n = nodes.length;
    let processed = 0;
    let start = this.nextStartNodeIndex % n;
    for (; processed < n && feasible.length < want; processed++) {
      const ni = nodes[start]!;
      if (++start === n) start = 0;
      const st = this.fwk.runFilterPlugins(state, pod, ni);
      if (st === SUCCESS || st.code === CODE_SUCCESS) {
        feasible.push(ni);
        continue;
      }
      if (st.code === CODE_ERROR) return { kind: 'error', state, status: st };
      statuses.set(ni.name, st);
    }
    this.nextStartNodeIndex = (this.nextStartNodeIndex + processed) % n;

    if (feasible.length === 0) {
      return { kind: 'unschedulable', state, fitError: new FitError(n, statuses) };
    }
    if (feasible.length === 1) {
      return {
        kind: 'scheduled',
        state,
        host: feasible[0]!.name,
        evaluatedNodes: processed,
        feasibleNodes: 1,
      };
    }
    const ps = this.fwk.runPreScorePlugins(state, pod, feasible);
    if (!ps.isSuccess()) return { kind: 'error', state, status: ps };
    const totals = this.fwk.runScorePlugins(state, pod, feasible);
    return {
      kind: 'scheduled',
      state,
      host: this.selectHost(feasible, totals),
      evaluatedNodes: processed,
      feasibleNodes: feasible.length,
    };
  }

  /** The highest-scoring node; ties broken uniformly at random (reservoir sampling, as selectHost). */
  selectHost(nodes: readonly NodeInfo[], totals: readonly number[]): string {
    let best = 0;
    let ties = 1;
    for (let i = 1; i < nodes.length; i++) {
      if (totals[i]! > totals[best]!) {
        best = i;
        ties = 1;
      } else if (totals[i] === totals[best]) {
        ties++;
        if (Math.floor(this.random() * ties) === 0) best = i;
      }
    }
    return nodes[best]!.name;
  }
}
