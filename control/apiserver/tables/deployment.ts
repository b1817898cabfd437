/**
 * Deployments: NAME READY UP-TO-DATE AVAILABLE AGE, wide CONTAINERS IMAGES SELECTOR
 * (printDeployment). READY is status.readyReplicas / spec.replicas (the desired count).
 */
import type { KubeObject } from '../../../api/object.js';
import { containerCells, selectorString, since, type LabelSelectorWire } from './format.js';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  workloadColumns,
  column,
  nameOf,
  type PrintedRow,
  type TablePrinter,
} from './printer.js';

interface DeploymentWire extends KubeObject {
  spec?: {
    replicas?: number;
    selector?: LabelSelectorWire;
    template?: { spec?: { containers?: { name?: string; image?: string }[] } };
  };
  status?: { readyReplicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

function printDeployment(obj: KubeObject, now: Date): PrintedRow {
  const d = obj as DeploymentWire;
  const spec = d.spec ?? {};
  const status = d.status ?? {};
  const { names, images } = containerCells(spec.template?.spec?.containers);
  return {
    cells: [
      nameOf(d),
      // spec.replicas defaults to 1.
      `${status.readyReplicas ?? 0}/${spec.replicas ?? 1}`,
      status.updatedReplicas ?? 0,
      status.availableReplicas ?? 0,
      since(d.metadata?.creationTimestamp, now),
      names,
      images,
      selectorString(spec.selector) ?? '<invalid>',
    ],
  };
}

export const deploymentPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'Ready pods out of the desired replicas.'),
    column('Up-to-date', 'string', 'Pods that run the latest pod template.'),
    column('Available', 'string', 'Pods that have been ready for at least minReadySeconds.'),
    AGE_COLUMN,
    ...workloadColumns('deployment'),
  ],
  row: printDeployment,
};
