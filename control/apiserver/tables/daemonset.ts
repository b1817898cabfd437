/**
 * DaemonSets: NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE, wide
 * CONTAINERS IMAGES SELECTOR (printDaemonSet). NODE SELECTOR is the pod template's
 * nodeSelector as `k=v,...` (`<none>` when empty).
 */
import type { KubeObject } from '../../../api/object.js';
import {
  containerCells,
  formatLabelSelector,
  formatLabels,
  since,
  type LabelSelectorWire,
} from './format.js';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  workloadColumns,
  column,
  nameOf,
  type PrintedRow,
  type TablePrinter,
} from './printer.js';

interface DaemonSetWire extends KubeObject {
  spec?: {
    selector?: LabelSelectorWire;
    template?: {
      spec?: { nodeSelector?: Record<string, string>; containers?: { name?: string; image?: string }[] };
    };
  };
  status?: {
    desiredNumberScheduled?: number;
    currentNumberScheduled?: number;
    numberReady?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
  };
}

function printDaemonSet(obj: KubeObject, now: Date): PrintedRow {
  const ds = obj as DaemonSetWire;
  const spec = ds.spec ?? {};
  const status = ds.status ?? {};
  const { names, images } = containerCells(spec.template?.spec?.containers);
  return {
    cells: [
      nameOf(ds),
      status.desiredNumberScheduled ?? 0,
      status.currentNumberScheduled ?? 0,
      status.numberReady ?? 0,
      status.updatedNumberScheduled ?? 0,
      status.numberAvailable ?? 0,
      formatLabels(spec.template?.spec?.nodeSelector),
      since(ds.metadata?.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ],
  };
}

export const daemonSetPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'integer', 'The total number of nodes that should be running the daemon pod.'),
    column('Current', 'integer', 'The number of nodes running at least one daemon pod that are supposed to.'),
    column('Ready', 'integer', 'The number of nodes that should run the daemon pod and have one Ready.'),
    column('Up-to-date', 'integer', 'The number of nodes running the updated daemon pod.'),
    column(
      'Available',
      'integer',
      'The number of nodes that should run the daemon pod and have one available.',
    ),
    column('Node Selector', 'string', "The pod template's nodeSelector."),
    AGE_COLUMN,
    ...workloadColumns('daemon set'),
  ],
  row: printDaemonSet,
};
