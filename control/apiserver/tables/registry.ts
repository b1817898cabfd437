/**
 * The one list of table printers, by `<group>/<resource>` ('' group for core). A served
 * resource without an entry gets the default table (NAME, CREATED AT), as resources
 * without a printer do in Kubernetes (the apiserver's default TableConvertor).
 */
import { rfc3339 } from '../../../api/object.js';
import { parseTime } from './format.js';
import { controllerRevisionPrinter } from './controllerrevision.js';
import { daemonSetPrinter } from './daemonset.js';
import { deploymentPrinter } from './deployment.js';
import { endpointsPrinter } from './endpoints.js';
import { endpointSlicePrinter } from './endpointslice.js';
import { eventPrinter, eventsV1Printer } from './event.js';
import { horizontalPodAutoscalerPrinter } from './horizontalpodautoscaler.js';
import { cronJobPrinter, jobPrinter } from './job.js';
import { nodePrinter } from './node.js';
import { persistentVolumePrinter } from './persistentvolume.js';
import { persistentVolumeClaimPrinter } from './persistentvolumeclaim.js';
import { podPrinter } from './pod.js';
import { podDisruptionBudgetPrinter } from './poddisruptionbudget.js';
import { NAME_COLUMN, column, nameOf, type TablePrinter } from './printer.js';
import { replicaSetPrinter } from './replicaset.js';
import { servicePrinter } from './service.js';
import { statefulSetPrinter } from './statefulset.js';
import { storageClassPrinter } from './storageclass.js';
import {
  configMapPrinter,
  leasePrinter,
  namespacePrinter,
  secretPrinter,
  serviceAccountPrinter,
} from './simple.js';

const PRINTERS: ReadonlyMap<string, TablePrinter> = new Map([
  ['/pods', podPrinter],
  ['/persistentvolumeclaims', persistentVolumeClaimPrinter],
  ['/persistentvolumes', persistentVolumePrinter],
  ['apps/statefulsets', statefulSetPrinter],
  ['/nodes', nodePrinter],
  ['/services', servicePrinter],
  ['/namespaces', namespacePrinter],
  ['/endpoints', endpointsPrinter],
  ['/configmaps', configMapPrinter],
  ['/secrets', secretPrinter],
  ['/serviceaccounts', serviceAccountPrinter],
  ['/events', eventPrinter],
  ['apps/deployments', deploymentPrinter],
  ['apps/replicasets', replicaSetPrinter],
  ['apps/controllerrevisions', controllerRevisionPrinter],
  ['apps/daemonsets', daemonSetPrinter],
  ['autoscaling/horizontalpodautoscalers', horizontalPodAutoscalerPrinter],
  ['batch/jobs', jobPrinter],
  ['batch/cronjobs', cronJobPrinter],
  ['coordination.k8s.io/leases', leasePrinter],
  ['discovery.k8s.io/endpointslices', endpointSlicePrinter],
  ['events.k8s.io/events', eventsV1Printer],
  ['policy/poddisruptionbudgets', podDisruptionBudgetPrinter],
  ['storage.k8s.io/storageclasses', storageClassPrinter],
]);

/** The go zero time, which Kubernetes prints for an object without creationTimestamp. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * The default table: NAME and CREATED AT, the creation time as an RFC 3339 UTC string
 * (not an age — that is what Kubernetes' default TableConvertor does).
 */
export const defaultPrinter: TablePrinter = {
  columns: [NAME_COLUMN, column('Created At', 'date', 'The time the object was created.')],
  row: (obj) => {
    const t = parseTime(obj.metadata?.creationTimestamp);
    return { cells: [nameOf(obj), t === undefined ? ZERO_TIME : rfc3339(new Date(t))] };
  },
};

/** The printer of a resource: its own, or the default table. */
export function printerFor(resource: { group: string; resource: string }): TablePrinter {
  return PRINTERS.get(`${resource.group}/${resource.resource}`) ?? defaultPrinter;
}
