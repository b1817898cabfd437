/**
 * The plugin registry: every plugin k8ts's scheduler has, in the order the default
 * profile runs them, with the score weights of Kubernetes' default configuration
 * (pkg/scheduler/apis/config/v1/default_plugins.go): TaintToleration 3, NodeAffinity 2,
 * PodTopologySpread 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1,
 * ImageLocality 1. Filter order follows Kubernetes too (cheap, decisive checks first),
 * which decides the reason a node reports when several plugins would reject it.
 */
import type { RestClient } from '../../../api/client/rest.js';
import { Framework } from '../framework/framework.js';
import type { AnyPlugin } from '../framework/interface.js';
import { BalancedAllocation } from './balancedallocation/balanced-allocation.js';
import { DefaultBinder } from './defaultbinder/default-binder.js';
import { DefaultPreemption } from './defaultpreemption/default-preemption.js';
import type { PreemptionHandle } from './defaultpreemption/default-preemption.js';
import { ImageLocality } from './imagelocality/image-locality.js';
import { NodeAffinity } from './nodeaffinity/node-affinity.js';
import { NodeName } from './nodename/node-name.js';
import { NodePorts } from './nodeports/node-ports.js';
import { NodeResourcesFit } from './noderesourcesfit/node-resources-fit.js';
import { NodeUnschedulable } from './nodeunschedulable/node-unschedulable.js';
import { PodTopologySpread } from './podtopologyspread/pod-topology-spread.js';
import { TaintToleration } from './tainttoleration/taint-toleration.js';

/** What plugins are built from. */
export interface PluginDeps {
  handle: PreemptionHandle;
  client: RestClient;
}

/** A registered plugin: how to build it and its score weight (ignored unless it scores). */
export interface PluginRegistration {
  name: string;
  weight: number;
  build(deps: PluginDeps): AnyPlugin;
}

/** The default profile, in execution order. */
export const registry: readonly PluginRegistration[] = [
  { name: 'NodeUnschedulable', weight: 0, build: () => new NodeUnschedulable() },
  { name: 'NodeName', weight: 0, build: () => new NodeName() },
  { name: 'TaintToleration', weight: 3, build: () => new TaintToleration() },
  { name: 'NodeAffinity', weight: 2, build: () => new NodeAffinity() },
  { name: 'NodePorts', weight: 0, build: () => new NodePorts() },
  { name: 'NodeResourcesFit', weight: 1, build: () => new NodeResourcesFit() },
  { name: 'PodTopologySpread', weight: 2, build: (d) => new PodTopologySpread(d.handle) },
  { name: 'NodeResourcesBalancedAllocation', weight: 1, build: () => new BalancedAllocation() },
  { name: 'ImageLocality', weight: 1, build: (d) => new ImageLocality(d.handle) },
  { name: 'DefaultPreemption', weight: 0, build: (d) => new DefaultPreemption(d.handle) },
  { name: 'DefaultBinder', weight: 0, build: (d) => new DefaultBinder(d.client) },
];

/**
 * A Framework with the registry's plugins. `nodeInfos` gives the cache's nodes; the
 * handle's runFilterPlugins runs the framework being built.
 */
export function newDefaultFramework(opts: {
  client: RestClient;
  nodeInfos: PreemptionHandle['nodeInfos'];
  nodesGeneration: PreemptionHandle['nodesGeneration'];
  /** Names of registered plugins to leave out. */
  disabled?: readonly string[];
}): Framework {
  const handle: PreemptionHandle = {
    nodeInfos: opts.nodeInfos,
    nodesGeneration: opts.nodesGeneration,
    runFilterPlugins: (state, pod, node) => fwk.runFilterPlugins(state, pod, node),
  };
  const disabled = new Set(opts.disabled ?? []);
  const fwk: Framework = new Framework(
    registry
      .filter((r) => !disabled.has(r.name))
      .map((r) => ({ plugin: r.build({ handle, client: opts.client }), weight: r.weight })),
  );
  return fwk;
}
