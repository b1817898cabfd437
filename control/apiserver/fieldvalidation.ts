/**
 * Server-side field validation: the `fieldValidation` query parameter of create, update
 * and patch (`Strict | Warn | Ignore`), unknown fields, duplicate fields, and the
 * `Warning: 299` headers that carry Warn's findings.
 *
 * Why the server must do this: our OpenAPI v3 documents advertise `fieldValidation` on
 * every PATCH operation, so kubectl (apply, create, replace) sends `fieldValidation=Strict`
 * and does no client-side schema check at all; a typo such as `imagePullPolcy` is caught
 * here or nowhere.
 *
 * What Kubernetes does (k8s.io/apiserver endpoints/handlers, apimachinery's strict JSON
 * decoding, v1.32):
 * - The directive defaults to Warn; anything but '', Ignore, Warn, Strict is a 422 on
 *   `CreateOptions|UpdateOptions|PatchOptions.meta.k8s.io ""` (case matters).
 * - Decoding a body into the Go type always drops fields the type does not declare. With
 *   Warn or Strict the decoder also reports them, and duplicate keys, as `unknown field
 *   "<path>"` / `duplicate field "<path>"`, paths such as
 *   `spec.template.spec.containers[0].imagePullPolcy`, in document order, each once, at
 *   most 100.
 * - Strict on create/update: 400 BadRequest `<Kind> in version "<v>" cannot be handled as
 *   a <Kind>: strict decoding error: unknown field "spec.foo", unknown field "spec.bar"`.
 *   Strict on patch (json, merge, strategic): 422 Invalid on field `patch`, its value
 *   being the patched object (or, for strategic merge patch, the patch).
 * - Warn: the request succeeds and each finding becomes a `Warning: 299 - "<text>"`
 *   header, which kubectl prints as `Warning: <text>`.
 *
 * The schema is the one our OpenAPI publishes (control/apiserver/openapi.ts, built from
 * the @kubernetes/client-node models), so what `kubectl explain` shows is exactly what is
 * accepted. Maps accept any key; IntOrString, Quantity, Time and free-form values
 * (FieldsV1, RawExtension, `any`) are never looked into.
 *
 * Usage: `await loadFieldSchemas()` once (it shares the OpenAPI catalog; later calls
 * return at once), then on every create, update and (after applying it) patch:
 *   directive = fieldValidationDirective(query, verb)          // before reading the body
 *   duplicate = duplicateFields(json, { model, parsed })        // JSON bodies, unless Ignore
 *   unknown   = pruneUnknownFields(model, obj)                  // always: Kubernetes drops them
 *   { warnings } = applyFieldValidation(directive, { unknown, duplicate }, target)
 *   for (const h of warningHeaders(warnings)) res.appendHeader('Warning', h)
 */
import { visit } from 'jsonc-parser';
import { buildOpenAPIV2, modelDefinitionNames } from './openapi.js';
import type { SchemaObject } from './openapi.js';
import { ApiError } from './status.js';

// ---------------------------------------------------------------------------------------
// The directive

/** The values of the `fieldValidation` query parameter (metav1.FieldValidation*). */
export const FIELD_VALIDATION_DIRECTIVES = ['Ignore', 'Warn', 'Strict'] as const;
export type FieldValidationDirective = (typeof FIELD_VALIDATION_DIRECTIVES)[number];

/** The writes that take `fieldValidation`; each names its options kind in errors. */
export type FieldValidationVerb = 'create' | 'update' | 'patch';

const OPTIONS_KIND: Readonly<Record<FieldValidationVerb, string>> = {
  create: 'CreateOptions',
  update: 'UpdateOptions',
  patch: 'PatchOptions',
};

/** Kubernetes' allowed set, sorted as its error lists it (the empty string included). */
const ALLOWED_DIRECTIVES = ['', 'Ignore', 'Strict', 'Warn'] as const;

function isDirective(v: string): v is FieldValidationDirective {
  return (FIELD_VALIDATION_DIRECTIVES as readonly string[]).includes(v);
}

/**
 * The directive of a create (POST), update (PUT) or patch request: `fieldValidation`
 * (its first value), Warn when absent or empty, as Kubernetes' handlers default it.
 * @throws ApiError 422 Invalid for any other value (matching is case-sensitive), worded as
 *   Kubernetes' options validation: `CreateOptions.meta.k8s.io "" is invalid:
 *   fieldValidation: Unsupported value: "strict": supported values: "", "Ignore",
 *   "Strict", "Warn"`.
 */
export function fieldValidationDirective(
  q: URLSearchParams,
  verb: FieldValidationVerb,
): FieldValidationDirective {
  const value = q.get('fieldValidation') ?? '';
  if (value === '') return 'Warn';
  if (isDirective(value)) return value;
  const kind = OPTIONS_KIND[verb];
  const body = `Unsupported value: ${goQuote(value)}: supported values: ${ALLOWED_DIRECTIVES.map(goQuote).join(', ')}`;
  return throwInvalid(`${kind}.meta.k8s.io "" is invalid: fieldValidation: ${body}`, {
    group: 'meta.k8s.io',
    kind,
    causes: [{ reason: 'FieldValueNotSupported', message: body, field: 'fieldValidation' }],
  });
}

function throwInvalid(message: string, details: ApiError['details']): never {
  throw new ApiError(422, 'Invalid', message, details);
}

// ---------------------------------------------------------------------------------------
// The schema: the OpenAPI definitions, compiled into a tree that is cheap to walk

/** What a value is, as far as unknown fields go. `null`: a scalar or an opaque value. */
type FieldNode = StructNode | MapNode | ListNode | null;

interface StructNode {
  readonly kind: 'struct';
  /** By JSON name; a leaf field maps to null, so `get` → undefined means "not a field". */
  readonly fields: Map<string, FieldNode>;
}

interface MapNode {
  readonly kind: 'map';
  readonly values: FieldNode;
}

interface ListNode {
  readonly kind: 'list';
  readonly items: FieldNode;
}

/** Untyped JSON (a patch before it is applied): objects are maps, arrays lists, all the way down. */
interface JsonNode {
  readonly kind: 'json';
}

const UNTYPED_JSON: JsonNode = { kind: 'json' };

/** Compiles definitions on demand; struct nodes are registered before their fields, so cycles end. */
class SchemaCompiler {
  private readonly compiled = new Map<string, FieldNode>();

  constructor(private readonly definitions: Readonly<Record<string, SchemaObject>>) {}

  definition(name: string): FieldNode {
    const done = this.compiled.get(name);
    if (done !== undefined) return done;
    const schema = this.definitions[name];
    if (!schema) throw new Error(`fieldvalidation: the OpenAPI document has no definition ${name}`);
    if (schema.properties) {
      const node: StructNode = { kind: 'struct', fields: new Map() };
      this.compiled.set(name, node);
      for (const [field, s] of Object.entries(schema.properties)) node.fields.set(field, this.schema(s));
      return node;
    }
    const node = this.schema(schema);
    this.compiled.set(name, node);
    return node;
  }

  schema(s: SchemaObject): FieldNode {
    if (s.$ref !== undefined) return this.definition(s.$ref.slice(s.$ref.lastIndexOf('/') + 1));
    // OpenAPI v3 wraps a described reference in allOf.
    if (s.allOf && s.allOf.length > 0) return this.schema(s.allOf[0]!);
    if (s.properties) {
      const node: StructNode = { kind: 'struct', fields: new Map() };
      for (const [field, f] of Object.entries(s.properties)) node.fields.set(field, this.schema(f));
      return node;
    }
    if (s.additionalProperties) return { kind: 'map', values: this.schema(s.additionalProperties) };
    if (s.type === 'array' && s.items) return { kind: 'list', items: this.schema(s.items) };
    // Scalars, IntOrString and Quantity (oneOf), and free-form objects (FieldsV1,
    // RawExtension, `any`): Go decodes these with their own unmarshalers, which neither
    // drop nor report anything inside them.
    return null;
  }
}

let schemas: ReadonlyMap<string, StructNode> | undefined;
let loading: Promise<void> | undefined;

/**
 * Builds the schema of every model the OpenAPI documents describe (by client-node model
 * name, e.g. `V1Deployment`), from the same catalog as `/openapi/v2`. Idempotent: the
 * first call takes as long as the OpenAPI catalog (0.4–0.8 s if nothing has built it yet,
 * ~15 ms after warmOpenAPI()); later calls return at once. A failed load is retried by
 * the next call.
 */
export function loadFieldSchemas(): Promise<void> {
  loading ??= (async () => {
    const [names, doc] = await Promise.all([modelDefinitionNames(), buildOpenAPIV2()]);
    const compiler = new SchemaCompiler(doc.definitions);
    const byModel = new Map<string, StructNode>();
    for (const [model, name] of names) {
      const node = compiler.definition(name);
      if (node?.kind === 'struct') byModel.set(model, node);
    }
    schemas = byModel;
  })().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

function rootOf(model: string): StructNode {
  if (!schemas) throw new Error('fieldvalidation: await loadFieldSchemas() before validating fields');
  const root = schemas.get(model);
  if (!root) throw new Error(`fieldvalidation: no schema for model ${model}`);
  return root;
}

// ---------------------------------------------------------------------------------------
// Unknown fields

/** Kubernetes' strict decoder keeps at most this many errors per decode. */
export const MAX_STRICT_ERRORS = 100;

function childPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

function pruneValue(node: NonNullable<FieldNode>, value: unknown, path: string, found: string[]): void {
  if (value === null || typeof value !== 'object') return;
  // A value of the wrong type is a decoding error, not an unknown field: left alone.
  if (node.kind === 'list') {
    if (node.items === null || !Array.isArray(value)) return;
    for (let i = 0; i < value.length; i++) pruneValue(node.items, value[i], `${path}[${i}]`, found);
    return;
  }
  if (Array.isArray(value)) return;
  const obj = value as Record<string, unknown>;
  if (node.kind === 'map') {
    if (node.values === null) return;
    for (const key of Object.keys(obj)) pruneValue(node.values, obj[key], childPath(path, key), found);
    return;
  }
  for (const key of Object.keys(obj)) {
    const field = node.fields.get(key);
    if (field === undefined) {
      if (found.length < MAX_STRICT_ERRORS) found.push(childPath(path, key));
      delete obj[key];
    } else if (field !== null) {
      pruneValue(field, obj[key], childPath(path, key), found);
    }
  }
}

/**
 * Removes, in place, every field of `obj` that the schema of `model` (a client-node model
 * name such as `V1Deployment`, as `ResourceInfo.model`) does not declare, as decoding into
 * the Go type does, and returns their paths in Kubernetes' wording and order: document
 * order, `spec.foo`, `spec.template.spec.containers[0].imagePullPolcy`, map entries as
 * `metadata.labels.<key>`; at most MAX_STRICT_ERRORS paths (all unknown fields are removed
 * regardless). Names match case-sensitively. What is not an unknown field is left exactly
 * as it was, values of the wrong type included (those are for validation to refuse).
 * A non-object `obj` has no fields: [].
 * @throws Error when loadFieldSchemas() has not completed, or `model` has no schema.
 */
export function pruneUnknownFields(model: string, obj: unknown): string[] {
  const root = rootOf(model);
  const found: string[] = [];
  pruneValue(root, obj, '', found);
  return found;
}

// ---------------------------------------------------------------------------------------
// Duplicate fields

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

// ---------------------------------------------------------------------------------------
// Applying the directive

/** What strict decoding found, as paths (from duplicateFields and pruneUnknownFields). */
export interface StrictFieldProblems {
  unknown: readonly string[];
  duplicate?: readonly string[];
}

/**
 * Where the object came from, for the wording of a Strict failure.
 * - create / update: the kind and version (without group: `v1`) of the decoded body.
 * - patch (JSON, merge, strategic merge): `badValue`, what Kubernetes echoes as the
 *   invalid value of `patch`: the patched object as JSON for JSON and merge patches,
 *   the patch as Go prints it (`formatGoValue(patch)`) for strategic merge patches.
 */
export type StrictDecodeTarget =
  { verb: 'create' | 'update'; kind: string; version: string } | { verb: 'patch'; badValue: string };

/** Each problem worded as Kubernetes' strict decoder: duplicates first, each once, at most 100. */
export function strictDecodingErrors(problems: StrictFieldProblems): string[] {
  const out = new Set<string>();
  for (const p of problems.duplicate ?? []) out.add(`duplicate field ${goQuote(p)}`);
  for (const p of problems.unknown) out.add(`unknown field ${goQuote(p)}`);
  return [...out].slice(0, MAX_STRICT_ERRORS);
}

/**
 * Acts on the directive, as Kubernetes' create, update and patch handlers do after a
 * strict decode:
 * - no problems, or Ignore: `{ warnings: [] }`;
 * - Warn: `{ warnings }`, one text per problem (`unknown field "spec.foo"`), for
 *   `Warning` headers (warningHeaders);
 * - Strict: throws.
 * @throws ApiError on Strict with problems — create/update: 400 BadRequest
 *   `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error:
 *   unknown field "spec.foo", unknown field "spec.bar"`; patch: 422 Invalid
 *   ` "" is invalid: patch: Invalid value: "<badValue>": strict decoding error: ...`
 *   (Kubernetes' empty kind and name included) with the cause on field `patch`.
 */
export function applyFieldValidation(
  directive: FieldValidationDirective,
  problems: StrictFieldProblems,
  target: StrictDecodeTarget,
): { warnings: string[] } {
  if (directive === 'Ignore') return { warnings: [] };
  const errors = strictDecodingErrors(problems);
  if (errors.length === 0) return { warnings: [] };
  if (directive === 'Warn') return { warnings: errors };
  const strict = `strict decoding error: ${errors.join(', ')}`;
  if (target.verb !== 'patch') {
    const { kind, version } = target;
    throw new ApiError(
      400,
      'BadRequest',
      `${kind} in version ${goQuote(version)} cannot be handled as a ${kind}: ${strict}`,
    );
  }
  const body = `Invalid value: ${goQuote(target.badValue)}: ${strict}`;
  return throwInvalid(` "" is invalid: patch: ${body}`, {
    causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }],
  });
}

// ---------------------------------------------------------------------------------------
// Warning headers

/** The apiserver's warning recorder: past this many runes in all, each text is cut to TRUNCATE_ITEM_RUNES. */
const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024;
const TRUNCATE_ITEM_RUNES = 256;

// Go's unicode.IsControl: C0, DEL and C1.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The value of one `Warning` header, as Kubernetes writes it (RFC 7234 warn-code 299,
 * no agent): `299 - "unknown field \"spec.foo\""` — `"` and `\` escaped, nothing else.
 * Non-ASCII text is returned as the latin1 rendering of its UTF-8 bytes, which is how
 * Node's `setHeader`/`appendHeader` put a string's bytes on the wire (Go sends UTF-8 and
 * kubectl reads UTF-8). undefined for text Kubernetes will not send (control characters).
 */
export function warningHeader(text: string): string | undefined {
  if (CONTROL.test(text)) return undefined;
  const value = `299 - "${text.replace(/["\\]/g, '\\$&')}"`;
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u007f]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
}

function runes(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function truncateRunes(s: string, max: number): string {
  let out = '';
  let n = 0;
  for (const ch of s) {
    if (n++ === max) break;
    out += ch;
  }
  return out;
}

/**
 * The `Warning` header values for all the warnings of one request, as the apiserver's
 * warning recorder emits them: empty texts skipped, repeats dropped, and once the texts
 * pass 4096 runes in all, every text (those already emitted included) cut to 256 runes
 * and further texts dropped once 4096 runes are written again. Set them with
 * `res.appendHeader('Warning', v)` for each (or `setHeader('Warning', values)`).
 */
export function warningHeaders(texts: Iterable<string>): string[] {
  const recorded = new Set<string>();
  const ordered: string[] = [];
  let headers: string[] = [];
  let written = 0;
  let truncating = false;
  for (const text of texts) {
    if (text === '') continue;
    if (truncating && written >= TRUNCATE_AT_TOTAL_RUNES) break;
    if (recorded.has(text)) continue;
    recorded.add(text);
    ordered.push(text);
    let t = text;
    let length = runes(t);
    if (truncating && length > TRUNCATE_ITEM_RUNES) {
      t = truncateRunes(t, TRUNCATE_ITEM_RUNES);
      length = TRUNCATE_ITEM_RUNES;
    }
    const header = warningHeader(t);
    if (header === undefined) continue;
    if (truncating || written + length <= TRUNCATE_AT_TOTAL_RUNES) {
      written += length;
      headers.push(header);
      continue;
    }
    // Over the limit: start again with every text so far cut to the per-item limit.
    truncating = true;
    written = 0;
    headers = [];
    for (const w of ordered) {
      const cut = truncateRunes(w, TRUNCATE_ITEM_RUNES);
      const h = warningHeader(cut);
      if (h === undefined) continue;
      written += runes(cut);
      headers.push(h);
    }
  }
  return headers;
}

// ---------------------------------------------------------------------------------------
// Go's renderings

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

const GO_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/**
 * A string quoted as Go's strconv.Quote (`%q`) quotes it: `"` and `\` escaped, \a \b \f
 * \n \r \t \v, other ASCII controls as \xNN, non-printable characters as \uNNNN or
 * \UNNNNNNNN; printable Unicode kept. (A lone UTF-16 surrogate, which has no UTF-8 form,
 * is written as U+FFFD, as Node would encode it.)
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x20 && c < 0x7f && ch !== '"' && ch !== '\\') {
      out += ch;
      continue;
    }
    const escape = GO_ESCAPES[ch];
    if (escape !== undefined) out += escape;
    else if (c < 0x80) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\U${c.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/**
 * A float64 as Go's `%v` prints it: strconv's shortest `g`, which switches to exponent
 * form below 1e-4 and from 1e6 (`1.2345675e+06`, `1e-05`).
 */
function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp >= -4 && exp < 6) return String(n);
  // JS writes 1e-7 and 1.5e+21; Go pads the exponent to two digits: 1e-07, 1.5e+21.
  return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
}

/**
 * A decoded JSON value as Go's `fmt` prints it with `%v`/`%+v` (how Kubernetes echoes a
 * strategic merge patch in errors): objects as `map[k1:v1 k2:v2]` with keys sorted,
 * arrays as `[a b]`, strings bare, null as `<nil>`, integers in decimal, other numbers as
 * float64.
 */
export function formatGoValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number')
    return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? BigInt(v).toString() : goFloat(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[${v.map(formatGoValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${keys.map((k) => `${k}:${formatGoValue(o[k])}`).join(' ')}]`;
  }
  return String(v);
}
