/**
 * The Job controller (kube-controller-manager's `job`). What is where in this folder:
 *
 * - controller.ts      informer handlers, expectations, reconcile(key), finalizer-based counting
 * - failure-policy.ts  spec.podFailurePolicy rule matching
 * - indexes.ts         completion indexes of Indexed Jobs
 */
import type { ControllerFactory } from '../context.js';
import { JobController } from './controller.js';

export { JobController, JOB_TRACKING_FINALIZER, isJobFinished } from './controller.js';

/** Builds the `job` controller from the shared context. */
export const jobController: ControllerFactory = (ctx) => new JobController(ctx);
