/**
 * The garbage collector (Kubernetes' pkg/controller/garbagecollector): graph.ts is the
 * owner→dependents graph, garbagecollector.ts the controller that watches every deletable
 * resource and deletes or orphans dependents.
 */
export { garbageCollectorController, GarbageCollector } from './garbagecollector.js';
