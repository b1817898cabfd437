/**
 * The StatefulSet controller (kube-controller-manager's `statefulset`). What is where:
 *
 * - controller.ts   informer handlers, reconcile(key), status
 * - control.ts      one sync: revisions, ordered/parallel create and delete, rolling update
 * - history.ts      ControllerRevisions: the stored template patch, hash, apply, order
 * - pod-control.ts  creating pods and their PersistentVolumeClaims, deleting, events
 * - utils.ts        names, ordinals, identity, storage, health, claim ownerReferences
 *
 * Shared with other workload controllers: ../ref-manager.ts, ../podcontrol.ts (the pod
 * from a template), ../deployment/hash.ts (canonical JSON, SafeEncodeString).
 */
import type { ControllerFactory } from '../context.js';
import { StatefulSetController } from './controller.js';

export { StatefulSetController, STATEFULSET_CONTROLLER_COMPONENT } from './controller.js';
export type { StatefulSetControllerOptions } from './controller.js';

/** Builds the `statefulset` controller from the shared context. */
export const statefulSetController: ControllerFactory = (ctx) => new StatefulSetController(ctx);
