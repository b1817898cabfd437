/**
 * PodDisruptionBudgets: NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE
 * (printPodDisruptionBudget: an unset bound prints `N/A`).
 */
import type { KubeObject } from '../../../api/object.js';
import type { PodDisruptionBudget } from '../../../api/policy.js';
import { since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

/** intstr.IntOrString.String(), or `N/A` when unset. */
function bound(v: number | string | undefined | null): string {
  return v === undefined || v === null ? 'N/A' : String(v);
}

function printPodDisruptionBudget(obj: KubeObject, now: Date): PrintedRow {
  const pdb = obj as Partial<PodDisruptionBudget>;
  return {
    cells: [
      nameOf(obj),
      bound(pdb.spec?.minAvailable),
      bound(pdb.spec?.maxUnavailable),
      pdb.status?.disruptionsAllowed ?? 0,
      since(obj.metadata?.creationTimestamp, now),
    ],
  };
}

export const podDisruptionBudgetPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column(
      'Min Available',
      'string',
      'An eviction is allowed if at least "minAvailable" pods selected by "selector" will still be available after the eviction, i.e. even in the absence of the evicted pod.',
    ),
    column(
      'Max Unavailable',
      'string',
      'An eviction is allowed if at most "maxUnavailable" pods selected by "selector" are unavailable after the eviction, i.e. even in absence of the evicted pod.',
    ),
    column('Allowed Disruptions', 'integer', 'Number of pod disruptions that are currently allowed.'),
    AGE_COLUMN,
  ],
  row: printPodDisruptionBudget,
};
