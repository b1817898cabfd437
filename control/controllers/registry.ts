/**
 * Every controller the control process runs, by name (kube-controller-manager's
 * NewControllerDescriptors). The one place a controller is added.
 */
import type { ControllerFactory } from './context.js';
import { cronJobController } from './cronjob/index.js';
import { daemonSetController } from './daemon/index.js';
import { deploymentController } from './deployment/index.js';
import { disruptionController } from './disruption/index.js';
import { endpointsController } from './endpoints/index.js';
import { endpointSliceController } from './endpointslice/index.js';
import { garbageCollectorController } from './garbagecollector/index.js';
import { horizontalPodAutoscalerController } from './podautoscaler/index.js';
import { jobController } from './job/index.js';
import { namespaceController } from './namespace/index.js';
import { nodeIpamController } from './nodeipam/index.js';
import { nodeLifecycleController } from './nodelifecycle/index.js';
import { persistentVolumeBinderController } from './volume/persistentvolume/index.js';
import { podGCController } from './podgc/index.js';
import { pvcProtectionController } from './volume/pvcprotection/index.js';
import { pvProtectionController } from './volume/pvprotection/index.js';
import { replicaSetController } from './replicaset/index.js';
import { rootCACertPublisherController } from './rootcacertpublisher/index.js';
import { serviceAccountController } from './serviceaccount/index.js';
import { serviceLBController } from './servicelb/index.js';
import { statefulSetController } from './statefulset/index.js';
import { taintEvictionController } from './tainteviction/index.js';
import { tokenCleanerController } from './tokencleaner/index.js';
import { ttlAfterFinishedController } from './ttlafterfinished/index.js';

export const CONTROLLERS: Readonly<Record<string, ControllerFactory>> = {
  // One line per controller, in alphabetical order: `name: factory,`.
  cronjob: cronJobController,
  daemonset: daemonSetController,
  deployment: deploymentController,
  disruption: disruptionController,
  endpoint: endpointsController,
  endpointslice: endpointSliceController,
  garbagecollector: garbageCollectorController,
  horizontalpodautoscaling: horizontalPodAutoscalerController,
  job: jobController,
  namespace: namespaceController,
  nodeipam: nodeIpamController,
  nodelifecycle: nodeLifecycleController,
  'persistentvolume-binder': persistentVolumeBinderController,
  podgc: podGCController,
  'pv-protection': pvProtectionController,
  'pvc-protection': pvcProtectionController,
  replicaset: replicaSetController,
  'root-ca-cert-publisher': rootCACertPublisherController,
  serviceaccount: serviceAccountController,
  servicelb: serviceLBController,
  statefulset: statefulSetController,
  'taint-eviction-controller': taintEvictionController,
  tokencleaner: tokenCleanerController,
  'ttl-after-finished': ttlAfterFinishedController,
};
