/**
 * Every controller the control process runs, by name (kube-controller-manager's
 * NewControllerDescriptors). The one place a controller is added.
 */
import type { ControllerFactory } from './context.js';

export const CONTROLLERS: Readonly<Record<string, ControllerFactory>> = {
  // One line per controller, in alphabetical order: `name: factory,`.
};
