/**
 * The Framework (pkg/scheduler/framework/runtime/framework.go): the configured plugins of
 * one scheduler profile and the code that runs each extension point over them, turning
 * every plugin result into a Status attributed to the plugin. A plugin that throws yields
 * an Error status: one broken plugin fails the pod's cycle, never the scheduler.
 */
import type { Pod } from '../../../api/types.js';
import type { CycleState } from './cycle-state.js';
import type { ClusterEvent } from './events.js';
import type {
  AnyPlugin,
  BindPlugin,
  FilterPlugin,
  NodeScore,
  PostFilterPlugin,
  PostFilterResult,
  PreBindPlugin,
  PreFilterPlugin,
  PreScorePlugin,
  ReservePlugin,
  ScorePlugin,
} from './interface.js';
import type { NodeInfo } from './node-info.js';
import { Code, Status } from './status.js';

const SUCCESS = Status.success;
// Module constants: the hot loops compare against locals, not imported namespaces.
const CODE_ERROR = Code.Error;
const CODE_SUCCESS = Code.Success;
const CODE_UNSCHEDULABLE = Code.Unschedulable;

/** A plugin and its score weight (only used when it scores). */
export interface ConfiguredPlugin {
  plugin: AnyPlugin;
  weight: number;
}

function has<K extends keyof AnyPlugin>(p: AnyPlugin, method: K): boolean {
  return typeof p[method] === 'function';
}

/** Runs the extension points of a list of plugins, in list order. */
export class Framework {
  readonly preFilterPlugins: PreFilterPlugin[];
  readonly filterPlugins: FilterPlugin[];
  readonly postFilterPlugins: PostFilterPlugin[];
  readonly preScorePlugins: PreScorePlugin[];
  readonly scorePlugins: { plugin: ScorePlugin; weight: number }[];
  readonly reservePlugins: ReservePlugin[];
  readonly preBindPlugins: PreBindPlugin[];
  readonly bindPlugins: BindPlugin[];
  /** Plugin name → the cluster events that may make pods it rejected schedulable. */
  readonly eventsByPlugin = new Map<string, readonly ClusterEvent[]>();

  /** @throws Error for a duplicate plugin name or a non-positive score weight. */
  constructor(plugins: readonly ConfiguredPlugin[]) {
    const names = new Set<string>();
    for (const { plugin, weight } of plugins) {
      if (names.has(plugin.name)) throw new Error(`plugin ${plugin.name} is configured twice`);
      names.add(plugin.name);
      if (has(plugin, 'score') && !(weight > 0))
        throw new Error(`score plugin ${plugin.name} needs a positive weight`);
    }
    const all = plugins.map((c) => c.plugin);
    this.preFilterPlugins = all.filter((p) => has(p, 'preFilter')) as PreFilterPlugin[];
    this.filterPlugins = all.filter((p) => has(p, 'filter')) as FilterPlugin[];
    this.postFilterPlugins = all.filter((p) => has(p, 'postFilter')) as PostFilterPlugin[];
    this.preScorePlugins = all.filter((p) => has(p, 'preScore')) as PreScorePlugin[];
    this.scorePlugins = plugins
      .filter((c) => has(c.plugin, 'score'))
      .map((c) => ({ plugin: c.plugin as ScorePlugin, weight: c.weight }));
    this.reservePlugins = all.filter((p) => has(p, 'reserve')) as ReservePlugin[];
    this.preBindPlugins = all.filter((p) => has(p, 'preBind')) as PreBindPlugin[];
    this.bindPlugins = all.filter((p) => has(p, 'bind')) as BindPlugin[];
    for (const p of all) {
      if (has(p, 'eventsToRegister')) this.eventsByPlugin.set(p.name, p.eventsToRegister!());
    }
  }

  /**
   * PreFilter: Success, or the first rejection/error (attributed to its plugin). Plugins
   * answering Skip are recorded in `state.skipFilterPlugins`.
   */
  runPreFilterPlugins(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Status {
    const st = runSkippable(
      this.preFilterPlugins,
      (p) => p.preFilter(state, pod, nodes),
      state.skipFilterPlugins,
    );
    if (!st.isSuccess()) return st;
    state.filters =
      state.skipFilterPlugins.size === 0
        ? this.filterPlugins
        : this.filterPlugins.filter((p) => !state.skipFilterPlugins.has(p.name));
    return SUCCESS;
  }

  /** Filter on one node: Success, or the first failing plugin's status (Kubernetes stops there too). */
  runFilterPlugins(state: CycleState, pod: Pod, node: NodeInfo): Status {
    const filters = state.filters ?? this.filterPlugins;
    const skip = state.filters ? undefined : state.skipFilterPlugins;
    for (let i = 0; i < filters.length; i++) {
      const p = filters[i]!;
      if (skip !== undefined && skip.size > 0 && skip.has(p.name)) continue;
      let st: Status;
      try {
        st = p.filter(state, pod, node);
      } catch (err) {
        st = Status.error(err);
      }
      if (st !== SUCCESS && st.code !== CODE_SUCCESS) return st.withPlugin(p.name);
    }
    return SUCCESS;
  }

  /** PostFilter: the first plugin that does not answer Unschedulable decides; else the last answer. */
  runPostFilterPlugins(state: CycleState, pod: Pod, statuses: ReadonlyMap<string, Status>): PostFilterResult {
    let last: PostFilterResult = { status: Status.unschedulable() };
    for (const p of this.postFilterPlugins) {
      let r: PostFilterResult;
      try {
        r = p.postFilter(state, pod, statuses);
      } catch (err) {
        r = { status: Status.error(err) };
      }
      if (r.status.code !== CODE_UNSCHEDULABLE) return { ...r, status: r.status.withPlugin(p.name) };
      last = { ...r, status: r.status.withPlugin(p.name) };
    }
    return last;
  }

  /** PreScore: Success or the first error; Skip answers go to `state.skipScorePlugins`. */
  runPreScorePlugins(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Status {
    return runSkippable(this.preScorePlugins, (p) => p.preScore(state, pod, nodes), state.skipScorePlugins);
  }

  /**
   * Score + NormalizeScore + weights: the total score of each of `nodes` (same order),
   * i.e. Σ weight × normalised score. Throws nothing; a plugin that throws scores 0.
   */
  runScorePlugins(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): number[] {
    const n = nodes.length;
    const totals = this.totalsBuf;
    totals.length = n;
    totals.fill(0);
    // NodeScore objects are reused from cycle to cycle; a plugin only sees the first n.
    const scores = this.scoresBuf;
    while (scores.length < n) scores.push({ name: '', score: 0 });
    if (scores.length > n) scores.length = n;
    for (let i = 0; i < n; i++) scores[i]!.name = nodes[i]!.name;
    for (const { plugin, weight } of this.scorePlugins) {
      if (state.skipScorePlugins.size > 0 && state.skipScorePlugins.has(plugin.name)) continue;
      try {
        for (let i = 0; i < n; i++) scores[i]!.score = plugin.score(state, pod, nodes[i]!);
        plugin.normalizeScore?.(state, pod, scores);
      } catch {
        for (const s of scores) s.score = 0;
      }
      for (let i = 0; i < n; i++) totals[i]! += scores[i]!.score * weight;
    }
    return totals;
  }

  private readonly totalsBuf: number[] = [];
  private readonly scoresBuf: NodeScore[] = [];

  /** Reserve on every reserve plugin; on a failure, unreserves those already run and returns it. */
  runReservePlugins(state: CycleState, pod: Pod, nodeName: string): Status {
    for (let i = 0; i < this.reservePlugins.length; i++) {
      const p = this.reservePlugins[i]!;
      const st = guard(() => p.reserve(state, pod, nodeName));
      if (!st.isSuccess()) {
        for (let j = i; j >= 0; j--) this.reservePlugins[j]!.unreserve(state, pod, nodeName);
        return st.withPlugin(p.name);
      }
    }
    return SUCCESS;
  }

  /** Unreserve in reverse order (after a failed bind). */
  runUnreservePlugins(state: CycleState, pod: Pod, nodeName: string): void {
    for (let i = this.reservePlugins.length - 1; i >= 0; i--) {
      try {
        this.reservePlugins[i]!.unreserve(state, pod, nodeName);
      } catch {
        // Unreserve must not fail the scheduler; the plugin's own state is its business.
      }
    }
  }

  /**
   * PreBind: every plugin in order; the first failure is returned (attributed to its
   * plugin, its message prefixed as upstream's `running PreBind plugin "X": …`).
   */
  async runPreBindPlugins(
    state: CycleState,
    pod: Pod,
    nodeName: string,
    signal?: AbortSignal,
  ): Promise<Status> {
    for (const p of this.preBindPlugins) {
      let st: Status;
      try {
        st = await p.preBind(state, pod, nodeName, signal);
      } catch (err) {
        st = Status.error(err);
      }
      if (!st.isSuccess())
        return new Status(
          st.code === CODE_UNSCHEDULABLE || st.code === Code.UnschedulableAndUnresolvable
            ? st.code
            : CODE_ERROR,
          [`running PreBind plugin "${p.name}": ${st.message()}`],
          p.name,
        );
    }
    return SUCCESS;
  }

  /** Bind: the first plugin not answering Skip decides. */
  async runBindPlugins(state: CycleState, pod: Pod, nodeName: string): Promise<Status> {
    for (const p of this.bindPlugins) {
      let st: Status;
      try {
        st = await p.bind(state, pod, nodeName);
      } catch (err) {
        st = Status.error(err);
      }
      if (!st.isSkip()) return st.withPlugin(p.name);
    }
    return new Status(CODE_ERROR, ['no bind plugin bound the pod']);
  }
}

/**
 * Runs `call` on each of `plugins` in order (PreFilter, PreScore): a plugin answering Skip
 * is added to `skipped`; the first other non-success is returned, attributed to its plugin.
 */
function runSkippable<P extends { name: string }>(
  plugins: readonly P[],
  call: (plugin: P) => Status,
  skipped: Set<string>,
): Status {
  for (const p of plugins) {
    const st = guard(() => call(p));
    if (st.isSkip()) {
      skipped.add(p.name);
      continue;
    }
    if (!st.isSuccess()) return st.withPlugin(p.name);
  }
  return SUCCESS;
}

function guard(fn: () => Status): Status {
  try {
    return fn();
  } catch (err) {
    return Status.error(err);
  }
}
