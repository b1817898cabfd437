/**
 * The extension points of the scheduling framework (pkg/scheduler/framework/interface.go),
 * one small interface each. A plugin implements the ones it needs; the registry
 * (plugins/registry.ts) lists them, and the Framework calls them in registry order.
 *
 *   PreFilter  once per pod: compute state, or Skip this plugin's Filter, or reject the pod
 *   Filter     once per (pod, node): can the pod run here?
 *   PostFilter when no node passed: try to make room (preemption); k8ts only diagnoses
 *   PreScore   once per pod over the feasible nodes: compute state, or Skip this plugin's Score
 *   Score      once per (pod, feasible node): 0..100 (MAX_NODE_SCORE) after NormalizeScore
 *   Reserve    the chosen node is set aside (the cache assumes the pod first)
 *   PreBind    once per pod in the binding cycle, before Bind (may wait: volumes bound)
 *   Bind       POST the Binding
 *
 * Every method returns a Status value; throwing is a bug the framework turns into Error.
 */
import type { Pod } from '../../../api/types.js';
import type { CycleState } from './cycle-state.js';
import type { ClusterEvent } from './events.js';
import type { NodeInfo } from './node-info.js';
import type { Status } from './status.js';

/** Highest score a node can get from one plugin after normalisation (framework.MaxNodeScore). */
export const MAX_NODE_SCORE = 100;

export interface Plugin {
  /** The plugin's name as Kubernetes spells it, e.g. `NodeResourcesFit`. */
  readonly name: string;
}

export interface PreFilterPlugin extends Plugin {
  /** Success, Skip (do not call this plugin's Filter for this pod), or a rejection for every node. */
  preFilter(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Status;
}

export interface FilterPlugin extends Plugin {
  /** Success when `pod` can run on `node` as far as this plugin is concerned. Must be cheap: it runs per node. */
  filter(state: CycleState, pod: Pod, node: NodeInfo): Status;
}

/** What PostFilter answers: its status (its message becomes part of FailedScheduling) and a node nominated for the pod, if any. */
export interface PostFilterResult {
  status: Status;
  nominatedNodeName?: string;
}

export interface PostFilterPlugin extends Plugin {
  /** `statuses`: the Filter failure of every node (node name → status). */
  postFilter(state: CycleState, pod: Pod, statuses: ReadonlyMap<string, Status>): PostFilterResult;
}

export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Status;
}

/** One node's score from one plugin. */
export interface NodeScore {
  name: string;
  score: number;
}

export interface ScorePlugin extends Plugin {
  /** A raw score for `node` (integer, plugin-specific scale; normalizeScore brings it to 0..100). */
  score(state: CycleState, pod: Pod, node: NodeInfo): number;
  /** Rewrites `scores` in place into 0..MAX_NODE_SCORE. Optional when score() already is. */
  normalizeScore?(state: CycleState, pod: Pod, scores: NodeScore[]): void;
}

export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: Pod, nodeName: string): Status;
  unreserve(state: CycleState, pod: Pod, nodeName: string): void;
}

export interface PreBindPlugin extends Plugin {
  /**
   * Work that must be done before the pod is bound, in the binding cycle (asynchronous):
   * resolves to Success, or a failure that sends the pod back to the queue (Unreserve runs).
   * `signal` aborts when the scheduler stops. Never rejects.
   */
  preBind(state: CycleState, pod: Pod, nodeName: string, signal?: AbortSignal): Promise<Status>;
}

export interface BindPlugin extends Plugin {
  /** Binds the pod; resolves to Success or Error (never rejects), or Skip to let the next binder try. */
  bind(state: CycleState, pod: Pod, nodeName: string): Promise<Status>;
}

/** Plugins that can reject pods say which cluster events may make those pods schedulable (EnqueueExtensions). */
export interface EnqueueExtensions extends Plugin {
  eventsToRegister(): readonly ClusterEvent[];
}

/** Anything a plugin may implement. */
export type AnyPlugin = Partial<
  Omit<
    PreFilterPlugin &
      FilterPlugin &
      PostFilterPlugin &
      PreScorePlugin &
      ScorePlugin &
      ReservePlugin &
      PreBindPlugin &
      BindPlugin &
      EnqueueExtensions,
    'name'
  >
> &
  Plugin;

/** What plugins may ask of the scheduler when they are built (framework.Handle). */
export interface Handle {
  /** Every node the cache knows, in the cache's order. */
  nodeInfos(): readonly NodeInfo[];
  /** A number that changes whenever a Node object is added, changed or removed (for plugins caching per-node facts). */
  nodesGeneration(): number;
}
