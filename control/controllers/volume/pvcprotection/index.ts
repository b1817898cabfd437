/**
 * The PVC protection controller (kube-controller-manager's `pvc-protection`): the
 * `kubernetes.io/pvc-protection` finalizer, removed from a claim being deleted once no
 * pod uses it (controller.ts). Shares the pod-by-claim index with the PV controller
 * (../common.ts).
 */
import type { ControllerFactory } from '../../context.js';
import { PVCProtectionController } from './controller.js';

export { PVCProtectionController, podUsesPVC } from './controller.js';

/** Builds the `pvc-protection` controller from the shared context. */
export const pvcProtectionController: ControllerFactory = (ctx) => new PVCProtectionController(ctx);
