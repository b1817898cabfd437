/**
 * The PersistentVolume controller (kube-controller-manager's `persistentvolume-binder`):
 * binds PersistentVolumeClaims to PersistentVolumes, statically or through a provisioner,
 * sets their phases and applies reclaim policies. What is where in this folder:
 *
 * - binder.ts      the decisions: syncClaim, syncVolume, bind/unbind, provisioning's
 *                  annotations, reclaiming, over the controller's own caches
 * - controller.ts  informers, the two queues (one worker each), the 15 s resync
 *
 * The matching rules it shares with the scheduler's VolumeBinding plugin are
 * api/storage/volume.ts's; the pod index by claim is ../common.ts's.
 */
import type { ControllerFactory } from '../../context.js';
import { PersistentVolumeController } from './controller.js';

export { PersistentVolumeController, PV_CONTROLLER_COMPONENT } from './controller.js';
export type { PersistentVolumeControllerOptions } from './controller.js';

/** Builds the `persistentvolume-binder` controller from the shared context. */
export const persistentVolumeBinderController: ControllerFactory = (ctx) =>
  new PersistentVolumeController(ctx);
