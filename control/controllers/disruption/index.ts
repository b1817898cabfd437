/**
 * The disruption controller (kube-controller-manager's `disruption`): keeps
 * PodDisruptionBudgets' status, which the Eviction API reads. What is where:
 *
 * - controller.ts  informer handlers, reconcile(key), the controllers' scale, failSafe
 * - budget.ts      the arithmetic (expectedPods, desiredHealthy, currentHealthy,
 *                  disruptionsAllowed, disruptedPods' 2-minute timeout), pure
 */
import type { ControllerFactory } from '../context.js';
import { DisruptionController } from './controller.js';

export { DisruptionController, DISRUPTION_CONTROLLER_COMPONENT } from './controller.js';

/** Builds the `disruption` controller from the shared context. */
export const disruptionController: ControllerFactory = (ctx) => new DisruptionController(ctx);
