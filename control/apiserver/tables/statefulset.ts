/**
 * StatefulSets: NAME READY AGE, wide CONTAINERS IMAGES (printStatefulSet). READY is
 * status.readyReplicas / spec.replicas.
 */
import type { KubeObject } from '../../../api/object.js';
import { containerCells, since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

interface StatefulSetWire extends KubeObject {
  spec?: {
    replicas?: number;
    template?: { spec?: { containers?: { name?: string; image?: string }[] } };
  };
  status?: { readyReplicas?: number };
}

function printStatefulSet(obj: KubeObject, now: Date): PrintedRow {
  const sts = obj as StatefulSetWire;
  const spec = sts.spec ?? {};
  const { names, images } = containerCells(spec.template?.spec?.containers);
  return {
    cells: [
      nameOf(sts),
      // spec.replicas defaults to 1.
      `${sts.status?.readyReplicas ?? 0}/${spec.replicas ?? 1}`,
      since(sts.metadata?.creationTimestamp, now),
      names,
      images,
    ],
  };
}

export const statefulSetPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'Number of the pod with ready state'),
    AGE_COLUMN,
    column('Containers', 'string', 'Names of each container in the template.', { priority: 1 }),
    column('Images', 'string', 'Images referenced by each container in the template.', { priority: 1 }),
  ],
  row: printStatefulSet,
};
