/**
 * The TTL-after-finished controller (kube-controller-manager's `ttl-after-finished`):
 * controller.ts deletes finished Jobs once their ttlSecondsAfterFinished has passed.
 */
import type { ControllerFactory } from '../context.js';
import { TTLAfterFinishedController } from './controller.js';

export { TTLAfterFinishedController, jobFinishTime, timeLeft } from './controller.js';

/** Builds the `ttl-after-finished` controller from the shared context. */
export const ttlAfterFinishedController: ControllerFactory = (ctx) => new TTLAfterFinishedController(ctx);
