/**
 * The PV protection controller (kube-controller-manager's `pv-protection`): the
 * `kubernetes.io/pv-protection` finalizer, removed from a volume being deleted once it is
 * not Bound (controller.ts).
 */
import type { ControllerFactory } from '../../context.js';
import { PVProtectionController } from './controller.js';

export { PVProtectionController, pvProtectionAction } from './controller.js';

/** Builds the `pv-protection` controller from the shared context. */
export const pvProtectionController: ControllerFactory = (ctx) => new PVProtectionController(ctx);
