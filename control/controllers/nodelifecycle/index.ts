/**
 * The node lifecycle controller (kube-controller-manager's `nodelifecycle`): node health
 * from heartbeats (health.ts), Unknown conditions and NotReady pods for silent nodes, the
 * node-condition taints (node-taints.ts) under the zone disruption rules (zones.ts). The
 * pods it leaves on NoExecute-tainted nodes are evicted by ../tainteviction.
 *
 *   controllers: { nodelifecycle: nodeLifecycleController }
 */
export {
  NODE_LIFECYCLE_CONTROLLER_NAME,
  NodeLifecycleController,
  nodeLifecycleController,
} from './controller.js';
