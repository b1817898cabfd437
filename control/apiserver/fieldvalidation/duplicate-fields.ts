/**
 * Duplicate fields: keys that occur twice in one JSON object of the body, which JSON.parse
 * silently resolves and Go's strict decoder reports, found in the body's text.
 */
import { visit } from 'jsonc-parser';
import { UNTYPED_JSON, rootOf } from './schema.js';
import type { FieldNode, JsonNode, ListNode, MapNode, StructNode } from './schema.js';
import { MAX_STRICT_ERRORS, childPath } from './unknown-fields.js';

type JsonPath = (string | number)[];

function pathString(path: JsonPath): string {
  let out = '';
  for (const seg of path) out = typeof seg === 'number' ? `${out}[${seg}]` : childPath(out, seg);
  return out;
}

/**
 * Every JSON string token, and whether a colon follows it (then it is an object key). The
 * loop is unrolled (`[^"\\]*(?:\\.[^"\\]*)*`) so that megabyte strings do not grow the
 * regexp backtracking stack.
 */
const JSON_STRING = /"[^"\\]*(?:\\.[^"\\]*)*"\s*(:?)/g;

function keysInText(json: string): number {
  let n = 0;
  JSON_STRING.lastIndex = 0;
  for (let m = JSON_STRING.exec(json); m !== null; m = JSON_STRING.exec(json)) if (m[1]) n++;
  return n;
}

function keysInValue(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (const item of v) n += keysInValue(item);
    return n;
  }
  const keys = Object.keys(v);
  n += keys.length;
  for (const k of keys) n += keysInValue((v as Record<string, unknown>)[k]);
  return n;
}

/** Options of duplicateFields. */
export interface DuplicateFieldsOptions {
  /** The client-node model of a create or update body; absent for a patch (untyped). */
  model?: string;
  /**
   * `JSON.parse(json)`, untouched (before pruning or defaulting), if the caller has it:
   * spares a second parse in the fast check.
   */
  parsed?: unknown;
}

interface Frame {
  /** The type of this object or array; undefined: not looked into (opaque, unknown, wrong type). */
  readonly node: StructNode | MapNode | ListNode | JsonNode | undefined;
  /** Keys seen so far in this object (struct fields: only declared ones, as Go). */
  readonly seen: Set<string> | undefined;
  /** The type of the value that comes next in this object or array. */
  next: FieldNode | JsonNode;
}

/**
 * The duplicate keys of a JSON text, as Kubernetes' strict decoder reports them
 * (`duplicate field "<path>"`; this returns the paths, e.g. `metadata.labels.app`,
 * `spec.template.spec.containers[0].name`), in document order, each once, at most
 * MAX_STRICT_ERRORS. With `model` (a create or update body) only what the Go type decodes
 * key by key is checked: struct fields it declares, maps, lists; nothing inside unknown
 * fields or opaque values (FieldsV1, RawExtension, IntOrString, ...). Without `model`
 * (a merge or strategic merge patch, which Kubernetes decodes into an untyped map) every
 * object is checked. `json` must be valid JSON (parse it first).
 *
 * Cost: JSON.parse keeps only the last of duplicate keys, so a second look at the text is
 * needed. The common case (no duplicates anywhere: as many keys in the text as in the
 * parsed value) is a regexp count, about as fast as JSON.parse; only a text with
 * duplicates gets the exact, path-tracking scan (jsonc-parser, ~5x slower).
 * @throws Error when `model` is given and loadFieldSchemas() has not completed.
 */
export function duplicateFields(json: string, opts: DuplicateFieldsOptions = {}): string[] {
  const root: FieldNode | JsonNode = opts.model === undefined ? UNTYPED_JSON : rootOf(opts.model);
  const parsed: unknown = 'parsed' in opts ? opts.parsed : JSON.parse(json);
  if (keysInText(json) === keysInValue(parsed)) return [];
  const found: string[] = [];
  const reported = new Set<string>();
  const stack: Frame[] = [];
  const upcoming = (): FieldNode | JsonNode => (stack.length === 0 ? root : stack[stack.length - 1]!.next);
  const skipped = (): false => {
    stack.push({ node: undefined, seen: undefined, next: null });
    return false; // jsonc-parser: do not visit the contents
  };
  visit(
    json,
    {
      onObjectBegin: () => {
        const node = upcoming();
        if (node === null || node.kind === 'list') return skipped();
        stack.push({ node, seen: new Set(), next: null });
      },
      onObjectProperty: (key, _offset, _length, _line, _column, pathSupplier) => {
        const frame = stack[stack.length - 1]!;
        const node = frame.node!;
        if (node.kind === 'struct') {
          const field = node.fields.get(key);
          // A key the type does not declare is an unknown field (reported once, by
          // pruneUnknownFields), never a duplicate; its value is not looked into.
          frame.next = field ?? null;
          if (field === undefined) return;
        } else {
          frame.next = node.kind === 'map' ? node.values : UNTYPED_JSON;
        }
        if (!frame.seen!.has(key)) {
          frame.seen!.add(key);
          return;
        }
        const path = childPath(pathString(pathSupplier()), key);
        if (found.length < MAX_STRICT_ERRORS && !reported.has(path)) {
          reported.add(path);
          found.push(path);
        }
      },
      onObjectEnd: () => {
        stack.pop();
      },
      onArrayBegin: () => {
        const node = upcoming();
        if (node === null || (node.kind !== 'list' && node.kind !== 'json')) return skipped();
        stack.push({ node, seen: undefined, next: node.kind === 'list' ? node.items : UNTYPED_JSON });
      },
      onArrayEnd: () => {
        stack.pop();
      },
    },
    { disallowComments: true },
  );
  return found;
}
