/**
 * The CronJob controller (kube-controller-manager's `cronjob`, the v2 controller):
 * controller.ts creates Jobs on schedule and keeps the CronJob's status and history.
 * Schedules are parsed by api/cron.ts.
 */
import type { ControllerFactory } from '../context.js';
import { CronJobController } from './controller.js';

export {
  CronJobController,
  CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION,
  jobNameFor,
  rfc3339In,
} from './controller.js';

/** Builds the `cronjob` controller from the shared context. */
export const cronJobController: ControllerFactory = (ctx) => new CronJobController(ctx);
