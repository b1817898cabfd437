/**
 * The `kubectl get` table of a custom resource: NAME, then the version's
 * additionalPrinterColumns (each cell the first value its JSONPath reaches, typed by the
 * column; a `date` column as an age), or AGE when the CRD names none — as the
 * apiextensions-apiserver's tableconvertor builds it (see cell()).
 */
import { formatGoValue } from '../encoding/go-format.js';
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

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Go's json.Marshal of a decoded value: compact, object keys sorted. */
function goJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${goJSON(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * One cell, as the tableconvertor's rowFn and cellForJSONValue: only the first value found
 * counts; a string column prints it as JSONPath prints (scalars as Go prints them, objects
 * and arrays as JSON); the other types take only a value of their type (an integer column
 * truncates a float; a date column a string, `<invalid>` when it is not RFC 3339);
 * anything else, or nothing found, is an empty cell (upstream's nil, which kubectl prints
 * as nothing).
 */
function cell(type: string, values: unknown[], now: Date): TableCell {
  if (values.length === 0) return '';
  const v = values[0];
  if (v === null || v === undefined) return '';
  switch (type) {
    case 'string':
      return typeof v === 'object' ? goJSON(v) : formatGoValue(v);
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : '';
    case 'number':
      return typeof v === 'number' ? v : '';
    case 'boolean':
      return typeof v === 'boolean' ? v : '';
    case 'date':
      if (typeof v !== 'string') return '';
      if (v === '') return '<unknown>';
      return RFC3339.test(v) ? since(v, now) : '<invalid>';
    default:
      return '';
  }
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
