/**
 * The taint eviction controller (kube-controller-manager's `taint-eviction-controller`):
 * deletes pods from nodes with NoExecute taints they do not tolerate, at once or when their
 * tolerationSeconds run out (schedule.ts). Matching of taints and tolerations: api/taints.ts.
 *
 *   controllers: { 'taint-eviction-controller': taintEvictionController }
 */
export {
  TAINT_EVICTION_CONTROLLER_NAME,
  TaintEvictionController,
  taintEvictionController,
} from './controller.js';
