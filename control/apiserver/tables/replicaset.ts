/**
 * ReplicaSets: NAME DESIRED CURRENT READY AGE, wide CONTAINERS IMAGES SELECTOR
 * (printReplicaSet).
 */
import type { KubeObject } from '../../../api/object.js';
import { containerCells, formatLabelSelector, since, type LabelSelectorWire } from './format.js';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  workloadColumns,
  column,
  nameOf,
  type PrintedRow,
  type TablePrinter,
} from './printer.js';

interface ReplicaSetWire extends KubeObject {
  spec?: {
    replicas?: number;
    selector?: LabelSelectorWire;
    template?: { spec?: { containers?: { name?: string; image?: string }[] } };
  };
  status?: { replicas?: number; readyReplicas?: number };
}

function printReplicaSet(obj: KubeObject, now: Date): PrintedRow {
  const rs = obj as ReplicaSetWire;
  const spec = rs.spec ?? {};
  const { names, images } = containerCells(spec.template?.spec?.containers);
  return {
    cells: [
      nameOf(rs),
      // spec.replicas defaults to 1.
      spec.replicas ?? 1,
      rs.status?.replicas ?? 0,
      rs.status?.readyReplicas ?? 0,
      since(rs.metadata?.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ],
  };
}

export const replicaSetPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'integer', 'The number of pods the replica set should run.'),
    column('Current', 'integer', 'The number of pods the replica set runs now.'),
    column('Ready', 'integer', 'The number of those pods that are ready.'),
    AGE_COLUMN,
    ...workloadColumns('replica set'),
  ],
  row: printReplicaSet,
};
