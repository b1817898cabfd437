/**
 * The HorizontalPodAutoscaler controller (kube-controller-manager's
 * `horizontalpodautoscaling`, Kubernetes' pkg/controller/podautoscaler). What is where:
 *
 * - controller.ts          informer handlers, the sync period, reconcile(key): scale,
 *                          metrics, rescale, status and conditions
 * - replica-calculator.ts  pods + samples + target → replica count (pure)
 * - behavior.ts            stabilization windows and scaling policies (per-HPA memory)
 * - metrics.ts             the MetricsSource and its metrics.k8s.io implementation
 */
import type { ControllerFactory } from '../context.js';
import { HorizontalController } from './controller.js';

export {
  HorizontalController,
  HPA_CONTROLLER_COMPONENT,
  DEFAULT_HPA_SYNC_PERIOD_SECONDS,
} from './controller.js';
export type { HorizontalControllerOptions } from './controller.js';

/** Builds the `horizontalpodautoscaling` controller from the shared context. */
export const horizontalPodAutoscalerController: ControllerFactory = (ctx) => new HorizontalController(ctx);
