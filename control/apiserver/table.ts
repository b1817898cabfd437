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
import type { KubeObject, ListMeta, ObjectMeta } from '../../api/object.js';
import type { ResourceInfo } from './resources.js';
import { groupVersion } from './resources.js';
import { badRequest } from './status.js';
import { printerFor } from './tables/registry.js';
import type { TableCell, TableColumnDefinition, TableRowCondition } from './tables/printer.js';

export { humanDuration } from './tables/format.js';
export type { ColumnType, TableCell, TableColumnDefinition, TableRowCondition } from './tables/printer.js';

/** The API group of Table and PartialObjectMetadata. */
export const TABLE_GROUP = 'meta.k8s.io';

/** The versions of meta.k8s.io in which a Table can be asked for. */
export type TableVersion = 'v1' | 'v1beta1';

/** The Content-Type of a Table answer: Kubernetes answers plain JSON, the kind is in the body. */
export const TABLE_CONTENT_TYPE = 'application/json';

/** The Accept clause that asks for a meta.k8s.io/v1 Table (kubectl's first choice). */
export const TABLE_MEDIA_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** What each row's `object` holds (`?includeObject=`); Metadata is the default. */
export type IncludeObjectPolicy = 'None' | 'Metadata' | 'Object';

/** An object's metadata alone, as rows carry it with includeObject=Metadata. */
export interface PartialObjectMetadata {
  apiVersion: `meta.k8s.io/${TableVersion}`;
  kind: 'PartialObjectMetadata';
  metadata: ObjectMeta;
}

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
      return {
        apiVersion: `${TABLE_GROUP}/${version}`,
        kind: 'PartialObjectMetadata',
        metadata: obj.metadata ?? {},
      };
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

interface AcceptClause {
  type: string;
  subtype: string;
  params: Map<string, string>;
  q: number;
}

function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of header.split(',')) {
    const [range, ...rawParams] = part.split(';').map((s) => s.trim());
    if (!range) continue;
    const slash = range.indexOf('/');
    const type = (slash < 0 ? range : range.slice(0, slash)).toLowerCase();
    const subtype = (slash < 0 ? '*' : range.slice(slash + 1)).toLowerCase();
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'q') {
        const n = Number(value);
        q = Number.isFinite(n) ? n : 0;
      } else {
        params.set(key, value);
      }
    }
    clauses.push({ type, subtype, params, q });
  }
  // Client preference: higher q first, then concrete types before wildcards; otherwise
  // the client's order (Array.prototype.sort is stable).
  const specificity = (c: AcceptClause): number => (c.type === '*' ? 0 : c.subtype === '*' ? 1 : 2);
  return clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a));
}

/** Media types the API server can answer without conversion (`*` for wildcards). */
const PLAIN_TYPES = new Set([
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/*',
  '*/*',
]);

/**
 * Which Table version an Accept header asks for, negotiating as the apiserver does: the
 * clauses are tried in the client's order of preference and the first one the server can
 * satisfy decides. A JSON clause with `as=Table;g=meta.k8s.io` and `v=v1` or `v=v1beta1`
 * answers that version; a plain clause (JSON, YAML, protobuf, a wildcard) means "not a
 * table" and gives undefined; clauses the server cannot satisfy (another `as=`, an
 * unknown version, q=0) are skipped. kubectl's header gives 'v1'; one listing only the
 * v1beta1 Table (and JSON) gives 'v1beta1'.
 *
 * A caller that also serves other conversions (e.g. `as=PartialObjectMetadataList`)
 * must negotiate those before asking this.
 */
export function negotiateTable(acceptHeader: string | null | undefined): TableVersion | undefined {
  if (!acceptHeader) return undefined;
  for (const c of parseAccept(acceptHeader)) {
    if (c.q <= 0) continue;
    const mediaType = `${c.type}/${c.subtype}`;
    const as = c.params.get('as');
    if (as === undefined) {
      if (PLAIN_TYPES.has(mediaType)) return undefined;
      continue;
    }
    const v = c.params.get('v');
    if (
      as === 'Table' &&
      c.params.get('g') === TABLE_GROUP &&
      (v === 'v1' || v === 'v1beta1') &&
      (mediaType === 'application/json' || mediaType === 'application/*' || mediaType === '*/*')
    ) {
      return v;
    }
  }
  return undefined;
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
