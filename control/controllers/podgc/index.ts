/**
 * The Pod garbage collector (`podgc`): force-deletes terminated pods beyond the threshold,
 * orphaned pods of vanished nodes and unscheduled terminating pods. See controller.ts;
 * select.ts holds the pure ordering.
 */
export { PodGCController, podGCController } from './controller.js';
