/**
 * The namespace controller (kube-controller-manager's `namespace`): empties namespaces
 * being deleted and finalizes them. What is where in this folder:
 *
 * - controller.ts  the controller: informer handler, reconcile(name), finalize
 * - deleter.ts     deletes the content of every namespaced resource, reports what is left
 * - conditions.ts  the five NamespaceDeletion* / *Remaining conditions
 *
 * Shared: ../discovery.ts (which resources exist).
 */
import type { ControllerFactory } from '../context.js';
import { NamespaceController } from './controller.js';

export { NamespaceController, FINALIZER_KUBERNETES } from './controller.js';

/** Builds the `namespace` controller from the shared context (workers: config.concurrentNamespaceSyncs). */
export const namespaceController: ControllerFactory = (ctx) => new NamespaceController(ctx);
