/**
 * The Endpoints controller (`endpoint`): Endpoints objects for Services with a selector.
 * See controller.ts; subsets.ts holds the pure subset computation.
 */
export { EndpointsController, endpointsController } from './controller.js';
export type { EndpointsControllerOptions } from './controller.js';
