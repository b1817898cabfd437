/**
 * The EndpointSlice controller (`endpointslice`): EndpointSlices for Services with a
 * selector. controller.ts wires informers and writes; reconciler.ts plans the writes;
 * endpoint.ts builds endpoints, ports and labels; tracker.ts holds the expectations.
 */
export { EndpointSliceController, endpointSliceController } from './controller.js';
export type { EndpointSliceControllerOptions } from './controller.js';
