/** The client machinery in one import: REST client, reflector, indexer, listers, informers. */
export * from './backoff.js';
export { realClock, type Clock } from '../clock.js';
export * from './errors.js';
export * from './events.js';
export * from './factory.js';
export * from './indexer.js';
export * from './informer.js';
export * from './kubeconfig.js';
export * from './lister.js';
export * from './listwatch.js';
export * from './reflector.js';
export * from './resource.js';
export * from './rest.js';
export * from './store.js';
export * from './watch.js';
