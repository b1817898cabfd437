/**
 * The DaemonSet controller (kube-controller-manager's `daemonset`): a daemon pod on every
 * eligible node. What is where in this folder:
 *
 * - controller.ts  the controller: informer handlers, expectations, reconcile(key), manage
 * - placement.ts   which nodes should run the pod, the default tolerations, the pod template
 *                  and its `metadata.name In [node]` node affinity
 * - history.ts     ControllerRevisions: the current revision and hash, rollback data, cleanup
 * - rolling.ts     the RollingUpdate strategy (maxUnavailable, maxSurge)
 * - status.ts      status from the pods and nodes, and the status-subresource write
 */
import type { ControllerFactory } from '../context.js';
import { DaemonSetController } from './controller.js';

export { DaemonSetController, BURST_REPLICAS, DAEMONSET_KIND } from './controller.js';
export type { DaemonSetControllerOptions } from './controller.js';

/** Builds the `daemonset` controller from the shared context (CONCURRENT_DAEMONSET_SYNCS workers). */
export const daemonSetController: ControllerFactory = (ctx) => new DaemonSetController(ctx);
