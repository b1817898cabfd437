/**
 * The ReplicaSet controller (kube-controller-manager's `replicaset`): keeps the desired
 * number of pods for every ReplicaSet. What is where in this folder:
 *
 * - controller.ts      the controller: informer handlers, expectations, reconcile(key)
 * - pods-to-delete.ts  which pods go first on scale-down (ActivePodsWithRanks)
 * - slow-start.ts      creates in batches of 1, 2, 4, ... (slowStartBatch)
 * - status.ts          status from the pods and the status-subresource write
 *
 * Shared with other workload controllers: ../expectations.ts, ../podcontrol.ts,
 * ../ref-manager.ts.
 */
import type { ControllerFactory } from '../context.js';
import { ReplicaSetController } from './controller.js';

export { ReplicaSetController, BURST_REPLICAS, REPLICASET_KIND } from './controller.js';
export type { ReplicaSetControllerOptions } from './controller.js';

/** Builds the `replicaset` controller from the shared context (workers: config.concurrentReplicaSetSyncs). */
export const replicaSetController: ControllerFactory = (ctx) => new ReplicaSetController(ctx);
