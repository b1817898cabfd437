/**
 * Every controller the control process runs, by name (kube-controller-manager's
 * NewControllerDescriptors). The one place a controller is added.
 */
import type { ControllerFactory } from './context.js';
import { garbageCollectorController } from './garbagecollector/index.js';
import { namespaceController } from './namespace/index.js';
import { nodeIpamController } from './nodeipam/index.js';
import { nodeLifecycleController } from './nodelifecycle/index.js';
import { replicaSetController } from './replicaset/index.js';
import { taintEvictionController } from './tainteviction/index.js';

export const CONTROLLERS: Readonly<Record<string, ControllerFactory>> = {
  // One line per controller, in alphabetical order: `name: factory,`.
  garbagecollector: garbageCollectorController,
  namespace: namespaceController,
  nodeipam: nodeIpamController,
  nodelifecycle: nodeLifecycleController,
  replicaset: replicaSetController,
  'taint-eviction-controller': taintEvictionController,
};
