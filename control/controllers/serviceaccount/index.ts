/**
 * The ServiceAccount controller (kube-controller-manager's `serviceaccount`): a `default`
 * ServiceAccount in every active namespace. See controller.ts.
 */
import type { ControllerFactory } from '../context.js';
import { ServiceAccountsController } from './controller.js';

export { ServiceAccountsController, SERVICE_ACCOUNTS_TO_ENSURE } from './controller.js';

/** Builds the `serviceaccount` controller from the shared context. */
export const serviceAccountController: ControllerFactory = (ctx) => new ServiceAccountsController(ctx);
