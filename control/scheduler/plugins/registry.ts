/**
 * The plugin registry: every plugin k8ts's scheduler has, in the order the default
 * profile runs them, with the score weights of Kubernetes' default configuration
 * (pkg/scheduler/apis/config/v1/default_plugins.go): TaintToleration 3, NodeAffinity 2,
 * PodTopologySpread 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1,
 * ImageLocality 1; VolumeBinding (after NodeResourcesFit, as there) does not score.
 * Filter order follows Kubernetes too (cheap, decisive checks first), which decides the
 * reason a node reports when several plugins would reject it.
 */
import type { InformerFactory } from '../../../api/client/factory.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { Clock } from '../../../api/clock.js';
import { realClock } from '../../../api/clock.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../api/storage/types.js';
import type { Node, Pod } from '../../../api/types.js';
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
import { VolumeBinding } from './volumebinding/volume-binding.js';

/** What plugins are built from. */
export interface PluginDeps {
  handle: PreemptionHandle;
  client: RestClient;
  /** The scheduler's shared informers; without them, plugins that read other objects (VolumeBinding) are left out. */
  informers?: InformerFactory;
  clock: Clock;
}

/** A registered plugin: how to build it (undefined: not available with these deps) and its score weight (ignored unless it scores). */
export interface PluginRegistration {
  name: string;
  weight: number;
  build(deps: PluginDeps): AnyPlugin | undefined;
}

/** VolumeBinding over the informers' claims, volumes, classes, nodes and pods. */
function volumeBinding(d: PluginDeps): VolumeBinding | undefined {
  const f = d.informers;
  if (!f) return undefined;
  return new VolumeBinding({
    claims: f.informerFor<PersistentVolumeClaim>(resources.persistentvolumeclaims).lister(),
    volumes: f.informerFor<PersistentVolume>(resources.persistentvolumes).lister(),
    classes: f.informerFor<StorageClass>(resources.storageclasses).lister(),
    nodes: f.informerFor<Node>(resources.nodes).lister(),
    pods: f.informerFor<Pod>(resources.pods).lister(),
    api: {
      updateVolume: (pv) => d.client.update(resources.persistentvolumes, pv),
      updateClaim: (pvc) => d.client.update(resources.persistentvolumeclaims, pvc),
    },
    clock: d.clock,
  });
}

/** The default profile, in execution order. */
export const registry: readonly PluginRegistration[] = [
  { name: 'NodeUnschedulable', weight: 0, build: () => new NodeUnschedulable() },
  { name: 'NodeName', weight: 0, build: () => new NodeName() },
  { name: 'TaintToleration', weight: 3, build: () => new TaintToleration() },
  { name: 'NodeAffinity', weight: 2, build: () => new NodeAffinity() },
  { name: 'NodePorts', weight: 0, build: () => new NodePorts() },
  { name: 'NodeResourcesFit', weight: 1, build: () => new NodeResourcesFit() },
  { name: 'VolumeBinding', weight: 0, build: volumeBinding },
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
  /** The scheduler's informers (see PluginDeps.informers). */
  informers?: InformerFactory;
  clock?: Clock;
  /** Names of registered plugins to leave out. */
  disabled?: readonly string[];
}): Framework {
  const handle: PreemptionHandle = {
    nodeInfos: opts.nodeInfos,
    nodesGeneration: opts.nodesGeneration,
    runFilterPlugins: (state, pod, node) => fwk.runFilterPlugins(state, pod, node),
  };
  const disabled = new Set(opts.disabled ?? []);
  const deps: PluginDeps = {
    handle,
    client: opts.client,
    clock: opts.clock ?? realClock,
    ...(opts.informers ? { informers: opts.informers } : {}),
  };
  const fwk: Framework = new Framework(
    registry
      .filter((r) => !disabled.has(r.name))
      .flatMap((r) => {
        const plugin = r.build(deps);
        return plugin ? [{ plugin, weight: r.weight }] : [];
      }),
  );
  return fwk;
}
