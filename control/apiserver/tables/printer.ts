/**
 * What one kind contributes to a `kubectl get` table: its column definitions and a
 * function from one object to one row of cells. The column names, types and priorities
 * are Kubernetes' own (pkg/printers/internalversion AddHandlers); kubectl upper-cases the
 * names for the header and hides priority-1 columns unless `-o wide`.
 *
 * The server always fills every column, wide ones included (the apiserver's
 * TableConvertor generates with Wide=true and leaves the choice of columns to the client).
 */
import type { KubeObject } from '../../../api/object.js';

/** An OpenAPI type name, as meta/v1 TableColumnDefinition.type carries it. */
export type ColumnType = 'string' | 'integer' | 'number' | 'boolean' | 'date';

/** meta/v1 TableColumnDefinition. Every field is always present on the wire. */
export interface TableColumnDefinition {
  /** Human-readable name, e.g. `Cluster-IP`; kubectl prints it upper-cased. */
  name: string;
  type: ColumnType;
  /** `name` marks the column holding the object's name; otherwise ''. */
  format: string;
  description: string;
  /** 0 = always shown; 1 = shown by kubectl only with `-o wide`. */
  priority: number;
}

/** One cell: a string, or a number (integer columns) or boolean; kubectl prints each as it is. */
export type TableCell = string | number | boolean;

/** meta/v1 TableRowCondition; the only type Kubernetes defines is `Completed`. */
export interface TableRowCondition {
  type: 'Completed';
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

/** The cells (one per column, in column order) and conditions of one object's row. */
export interface PrintedRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
}

export interface TablePrinter {
  readonly columns: readonly TableColumnDefinition[];
  /** The row of `obj`; `now` is the reference for ages. Never throws on missing fields. */
  row(obj: KubeObject, now: Date): PrintedRow;
}

/** A column definition; `priority: 1` for the `-o wide` columns. */
export function column(
  name: string,
  type: ColumnType,
  description: string,
  opts: { priority?: 0 | 1; format?: 'name' } = {},
): TableColumnDefinition {
  return { name, type, format: opts.format ?? '', description, priority: opts.priority ?? 0 };
}

/** The NAME column every kind's table starts with. */
export const NAME_COLUMN: TableColumnDefinition = column(
  'Name',
  'string',
  "The object's name, unique within its namespace.",
  {
    format: 'name',
  },
);

/** The AGE column: time since metadata.creationTimestamp, as humanDuration. */
export const AGE_COLUMN: TableColumnDefinition = column(
  'Age',
  'string',
  'Time since the object was created.',
);

/**
 * The wide CONTAINERS, IMAGES and SELECTOR columns of a workload kind (one with a pod
 * template and a selector); `kind` is how the selector's description names it
 * (`deployment`, `replica set`).
 */
export function workloadColumns(kind: string): TableColumnDefinition[] {
  return [
    column('Containers', 'string', 'The names of the containers in the pod template.', { priority: 1 }),
    column('Images', 'string', 'The images of the containers in the pod template.', { priority: 1 }),
    column('Selector', 'string', `The label selector of the pods the ${kind} manages.`, { priority: 1 }),
  ];
}

/** metadata.name, '' when absent. */
export function nameOf(obj: KubeObject): string {
  return obj.metadata?.name ?? '';
}
