/**
 * The server side of `kubectl get`: answering a GET (one object, a list, or each event
 * of a watch) as a `meta.k8s.io/v1` `Table` when the client asks for one.
 *
 * What kubectl (v1.32) sends, for `get`, `get -o wide` and `get -w` alike:
 *   Accept: application/json;as=Table;v=v1;g=meta.k8s.io,
 *           application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json
 * with `?limit=500` on lists, and `?includeObject=Object` only with `--sort-by` (it needs
 * the fields to sort on). Without includeObject each row carries the object's metadata as
 * a PartialObjectMetadata, from which kubectl takes the namespace (`-A`) and labels
 * (`--show-labels`, `-L`). The answer's Content-Type is plain `application/json`; the
 * `kind: Table` in the body is what kubectl looks at.
 *
 * As the apiserver's TableConvertor, every column is filled, the `-o wide` ones
 * (priority 1) included; kubectl hides them itself. A watch answers each event's object
 * as a one-row Table whose columnDefinitions are sent with the first event only (null
 * afterwards); ERROR events keep their Status.
 *
 * The per-kind columns live in tables/ (one printer per kind, listed in
 * tables/registry.ts).
 */
import type { KubeObject, ListMeta } from '../../api/object.js';
import type { ResourceInfo } from './resources.js';
import { groupVersion } from './resources.js';
import {
  asPartialObjectMetadata,
  META_GROUP,
  tryNegotiateOutput,
  type MetaVersion,
  type PartialObjectMetadata,
} from './negotiation.js';
import { badRequest } from './status.js';
import { printerFor } from './tables/registry.js';
import type { TableCell, TableColumnDefinition, TableRowCondition } from './tables/printer.js';

export { humanDuration } from './tables/format.js';
export type { PartialObjectMetadata } from './negotiation.js';
export type { ColumnType, TableCell, TableColumnDefinition, TableRowCondition } from './tables/printer.js';

/** The API group of Table and PartialObjectMetadata. */
export const TABLE_GROUP = META_GROUP;

/** The versions of meta.k8s.io in which a Table can be asked for. */
export type TableVersion = MetaVersion;

/** The Content-Type of a Table answer: Kubernetes answers plain JSON, the kind is in the body. */
export const TABLE_CONTENT_TYPE = 'application/json';

/** The Accept clause that asks for a meta.k8s.io/v1 Table (kubectl's first choice). */
export const TABLE_MEDIA_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** What each row's `object` holds (`?includeObject=`); Metadata is the default. */
export type IncludeObjectPolicy = 'None' | 'Metadata' | 'Object';

/** meta/v1 TableRow: one cell per column definition. */
export interface TableRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
  /** The full object (Object), its metadata (Metadata) or null (None). */
  object: KubeObject | PartialObjectMetadata | null;
}

/** meta/v1 Table. */
export interface Table {
  apiVersion: `meta.k8s.io/${TableVersion}`;
  kind: 'Table';
  /** resourceVersion (and continue, remainingItemCount) of the list, or of the single object. */
  metadata: ListMeta;
  /** null when headers are left out (the events of a watch after the first). */
  columnDefinitions: TableColumnDefinition[] | null;
  rows: TableRow[];
}

export interface ToTableOptions {
  includeObject: IncludeObjectPolicy;
  /** The reference time for AGE and other durations. */
  now: Date;
  /** The list's metadata; without it, a single object's resourceVersion is the table's. */
  listMeta?: ListMeta;
  /** meta.k8s.io version of the Table (and of PartialObjectMetadata rows); default v1. */
  version?: TableVersion;
  /** Leave columnDefinitions out (null), as on watch events after the first. */
  noHeaders?: boolean;
}

/** The column definitions of a resource's table, wide ones included. */
export function tableColumns(
  resource: Pick<ResourceInfo, 'group' | 'resource' | 'printer'>,
): readonly TableColumnDefinition[] {
  return (resource.printer ?? printerFor(resource)).columns;
}

/**
 * `objects` of `resource` as a Table: the resource's columns (Kubernetes' for the kinds
 * k8ts serves; NAME and CREATED AT otherwise) and one row per object, in order.
 * Rows share nested values with `objects` (no deep copy): treat the result as read-only.
 */
export function toTable(resource: ResourceInfo, objects: readonly KubeObject[], opts: ToTableOptions): Table {
  const version = opts.version ?? 'v1';
  // A custom resource's columns come with its ResourceInfo (its CRD's additionalPrinterColumns).
  const printer = resource.printer ?? printerFor(resource);
  const rows = objects.map((obj): TableRow => {
    const printed = printer.row(obj, opts.now);
    const row: TableRow = {
      cells: printed.cells,
      object: rowObject(resource, obj, opts.includeObject, version),
    };
    if (printed.conditions) row.conditions = printed.conditions;
    return row;
  });
  return {
    apiVersion: `${TABLE_GROUP}/${version}`,
    kind: 'Table',
    metadata: tableMeta(objects, opts.listMeta),
    columnDefinitions: opts.noHeaders ? null : [...printer.columns],
    rows,
  };
}

function tableMeta(objects: readonly KubeObject[], listMeta: ListMeta | undefined): ListMeta {
  const meta: ListMeta = {};
  if (listMeta) {
    if (listMeta.resourceVersion) meta.resourceVersion = listMeta.resourceVersion;
    if (listMeta.continue) meta.continue = listMeta.continue;
    if (listMeta.remainingItemCount !== undefined) meta.remainingItemCount = listMeta.remainingItemCount;
  } else if (objects.length === 1 && objects[0].metadata?.resourceVersion) {
    meta.resourceVersion = objects[0].metadata.resourceVersion;
  }
  return meta;
}

function rowObject(
  resource: ResourceInfo,
  obj: KubeObject,
  policy: IncludeObjectPolicy,
  version: TableVersion,
): KubeObject | PartialObjectMetadata | null {
  switch (policy) {
    case 'None':
      return null;
    case 'Metadata':
      return asPartialObjectMetadata(obj, version);
    case 'Object': {
      const { apiVersion, kind, ...rest } = obj;
      return { apiVersion: apiVersion ?? groupVersion(resource), kind: kind ?? resource.kind, ...rest };
    }
  }
}

/**
 * The includeObject policy of a request from its `?includeObject=` value: absent or ''
 * means Metadata. Throws a 400 BadRequest ApiError for any other unknown value, with
 * Kubernetes' message.
 */
export function parseIncludeObject(value: string | null | undefined): IncludeObjectPolicy {
  if (value === undefined || value === null || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw badRequest(`unrecognized includeObject value: "${value}"`);
}

/**
 * Which Table version an Accept header asks for, negotiating as the apiserver does
 * (negotiation.ts): the first clause the server can satisfy decides, and it gives a
 * version when it is a JSON (or YAML) clause with `as=Table;g=meta.k8s.io` and `v=v1` or
 * `v=v1beta1`; a plain clause, another conversion, or a header nothing satisfies gives
 * undefined. kubectl's header gives 'v1'; one listing only the v1beta1 Table (and JSON)
 * gives 'v1beta1'.
 */
export function negotiateTable(acceptHeader: string | null | undefined): TableVersion | undefined {
  const media = tryNegotiateOutput(acceptHeader ?? undefined);
  return media?.convert?.kind === 'Table' ? media.convert.version : undefined;
}

/** Whether an Accept header asks for a Table (negotiateTable gives a version). */
export function wantsTable(acceptHeader: string | null | undefined): boolean {
  return negotiateTable(acceptHeader) !== undefined;
}

export interface TableWatchOptions {
  includeObject: IncludeObjectPolicy;
  version?: TableVersion;
  /** The clock for ages, read at every event; default the wall clock. */
  now?: () => Date;
}

/**
 * The object transform of one Table watch: call it with each ADDED/MODIFIED/DELETED
 * event's object, in order, to get the event's `object` — a one-row Table carrying the
 * object's resourceVersion, with columnDefinitions on the first call only (as the
 * apiserver, which sets NoHeaders after the first event). ERROR events are not
 * transformed: send their Status as it is.
 */
export function tableWatchTransformer(
  resource: ResourceInfo,
  opts: TableWatchOptions,
): (obj: KubeObject) => Table {
  let first = true;
  const now = opts.now ?? (() => new Date());
  return (obj) => {
    const table = toTable(resource, [obj], {
      includeObject: opts.includeObject,
      version: opts.version,
      now: now(),
      noHeaders: !first,
    });
    first = false;
    return table;
  };
}
