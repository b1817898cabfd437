/**
 * The `kubectl get` table of a custom resource: NAME, then the version's
 * additionalPrinterColumns (each cell the first value its JSONPath reaches, formatted for
 * the column's type; a `date` column as an age), or AGE when the CRD names none — as the
 * apiextensions-apiserver's tableconvertor builds it (a `date` column is printed as the
 * time since, and a path that finds nothing leaves the cell empty).
 */
import { since } from '../tables/format.js';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  column,
  nameOf,
  type ColumnType,
  type TableCell,
  type TablePrinter,
} from '../tables/printer.js';
import { evaluateJSONPath, parseJSONPath } from './jsonpath.js';
import type { CustomResourceColumnDefinition } from './types.js';

const TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'number', 'boolean', 'date']);

function cell(type: string, values: unknown[], now: Date): TableCell {
  if (values.length === 0) return '';
  const v = values[0];
  if (type === 'date' && typeof v === 'string') return since(v, now);
  if ((type === 'integer' || type === 'number') && typeof v === 'number') return v;
  if (type === 'boolean' && typeof v === 'boolean') return v;
  const text = values.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' ');
  return text;
}

/** The printer of a custom resource version with these columns (none: NAME, AGE). */
export function customResourcePrinter(
  columns: readonly CustomResourceColumnDefinition[] | undefined,
): TablePrinter {
  const cols = (columns ?? []).filter((c) => c.name && c.jsonPath);
  if (cols.length === 0) {
    return {
      columns: [NAME_COLUMN, AGE_COLUMN],
      row: (obj, now) => ({ cells: [nameOf(obj), since(obj.metadata?.creationTimestamp, now)] }),
    };
  }
  const parsed = cols.map((c) => {
    try {
      return parseJSONPath(c.jsonPath!);
    } catch {
      return undefined;
    }
  });
  return {
    columns: [
      NAME_COLUMN,
      ...cols.map((c) =>
        column(c.name!, (TYPES.has(c.type ?? '') ? c.type : 'string') as ColumnType, c.description ?? '', {
          priority: c.priority === 1 ? 1 : 0,
        }),
      ),
    ],
    row: (obj, now) => ({
      cells: [
        nameOf(obj),
        ...cols.map((c, i) =>
          parsed[i] ? cell(c.type ?? 'string', evaluateJSONPath(obj, parsed[i]), now) : '',
        ),
      ],
    }),
  };
}
