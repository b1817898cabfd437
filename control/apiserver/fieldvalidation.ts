/**
 * Server-side field validation: the `fieldValidation` query parameter of create, update
 * and patch (`Strict | Warn | Ignore`), unknown fields, duplicate fields, the
 * `Warning: 299` headers that carry Warn's findings, and the JSON types of fields (what
 * decoding into the Go type refuses whatever the directive).
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
 * - A value of the wrong JSON type (`replicas: "3"`) fails decoding itself, whatever the
 *   directive and before any strict decoding error: 400 BadRequest on create/update
 *   (`Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal
 *   string into Go struct field DeploymentSpec.spec.replicas of type int32`), 422 Invalid
 *   on field `patch` for a patched object. null is never wrong: Go decodes it as unset.
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
 *   checkFieldTypes(model, obj, kind, version, body)            // create/update: 400, drops nulls
 *   checkPatchedFieldTypes(model, patched, contentType, patch)  // patch: 422, drops nulls
 *   { warnings } = applyFieldValidation(directive, { unknown, duplicate }, target)
 *   for (const h of warningHeaders(warnings)) res.appendHeader('Warning', h)
 */
import { visit } from 'jsonc-parser';
import { QuantityParseError, parseQuantity } from '../../api/meta/quantity.js';
import { base64Error, goNumberLiteral, timeParseError } from './encoding/go-decode.js';
import { GO_FIELD_TYPES, GO_NAMED_COLLECTIONS } from './encoding/go-types.js';
import { buildOpenAPIV2, modelDefinitionNames } from './openapi/index.js';
import type { SchemaObject } from './openapi/index.js';
import { ApiError, badRequest } from './status.js';
import { setOwnValue } from '../../api/meta/maps.js';

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

/**
 * What Kubernetes' patch handler answers when the patched object does not decode: 422
 * Invalid on field `patch` with an empty kind and name,
 * ` "" is invalid: patch: Invalid value: "<badValue>": <detail>`.
 */
function throwPatchInvalid(badValue: string, detail: string): never {
  const body = `Invalid value: ${goQuote(badValue)}: ${detail}`;
  return throwInvalid(` "" is invalid: patch: ${body}`, {
    causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }],
  });
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
let types: ReadonlyMap<string, StructType> | undefined;
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
    const typeCompiler = new TypeCompiler(doc.definitions, new Map([...names].map(([m, d]) => [d, m])));
    const byModel = new Map<string, StructNode>();
    const typesByModel = new Map<string, StructType>();
    for (const [model, name] of names) {
      const node = compiler.definition(name);
      if (node?.kind === 'struct') byModel.set(model, node);
      const type = typeCompiler.definition(name);
      if (type.t === 'struct') typesByModel.set(model, type);
    }
    schemas = byModel;
    types = typesByModel;
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
 * as it was, values of the wrong type included (those are for checkFieldTypes to refuse).
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
// Field types: what decoding into the Go type refuses

/** A value's type as Go's decoder sees it. `go`: the Go type as reflect prints it, for errors. */
type TypeNode = StructType | MapType | ListType | LeafType;

interface StructType {
  readonly t: 'struct';
  readonly go: string;
  /** The Go struct's name (`DeploymentSpec`), as errors name the struct of a field. */
  readonly name: string;
  readonly fields: Map<string, TypeNode>;
}

interface MapType {
  readonly t: 'map';
  readonly go: string;
  readonly values: TypeNode;
}

interface ListType {
  readonly t: 'list';
  readonly go: string;
  readonly items: TypeNode;
}

/**
 * Scalars; `bytes` is a []byte (a base64 string); `free` takes any JSON (FieldsV1,
 * RawExtension); the rest have their own UnmarshalJSON in Go.
 */
interface LeafType {
  readonly t:
    | 'string'
    | 'bool'
    | 'int32'
    | 'int64'
    | 'float64'
    | 'bytes'
    | 'intOrString'
    | 'quantity'
    | 'time'
    | 'microTime'
    | 'free';
  readonly go: string;
}

/** Definitions with a Go unmarshaler of their own, by OpenAPI definition name. */
const SPECIAL_TYPES: Readonly<Record<string, LeafType>> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { t: 'time', go: 'v1.Time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { t: 'microTime', go: 'v1.MicroTime' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { t: 'intOrString', go: 'intstr.IntOrString' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { t: 'quantity', go: 'resource.Quantity' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': { t: 'free', go: 'v1.FieldsV1' },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { t: 'free', go: 'runtime.RawExtension' },
};

/** The element type of a Go list or map type (`[]v1.IPFamily` → `v1.IPFamily`). */
function elementGoType(go: string): string {
  const named = GO_NAMED_COLLECTIONS[go];
  if (named !== undefined) return elementGoType(named);
  if (go.startsWith('[]')) return go.slice(2);
  if (go.startsWith('map[')) return go.slice(go.indexOf(']') + 1);
  throw new Error(`fieldvalidation: ${go} is not a Go list or map type`);
}

/** `node` with the Go type `go` (a named type), its elements retyped to match. */
function withGoType(node: TypeNode, go: string): TypeNode {
  switch (node.t) {
    case 'struct':
      throw new Error(`fieldvalidation: cannot give struct ${node.go} the Go type ${go}`);
    case 'list':
      return { t: 'list', go, items: withGoType(node.items, elementGoType(go)) };
    case 'map':
      return { t: 'map', go, values: withGoType(node.values, elementGoType(go)) };
    default:
      return node.go === go ? node : { t: node.t, go };
  }
}

/** Compiles definitions into TypeNodes; struct nodes are registered before their fields, so cycles end. */
class TypeCompiler {
  private readonly compiled = new Map<string, TypeNode>();

  constructor(
    private readonly definitions: Readonly<Record<string, SchemaObject>>,
    /** Client-node model by definition name, for GO_FIELD_TYPES. */
    private readonly modelOf: ReadonlyMap<string, string>,
  ) {}

  definition(name: string): TypeNode {
    const done = this.compiled.get(name) ?? SPECIAL_TYPES[name];
    if (done !== undefined) return done;
    const schema = this.definitions[name];
    if (!schema) throw new Error(`fieldvalidation: the OpenAPI document has no definition ${name}`);
    if (schema.properties) {
      const parts = name.split('.');
      const kind = parts[parts.length - 1]!;
      const node: StructType = {
        t: 'struct',
        go: `${parts[parts.length - 2]}.${kind}`,
        name: kind,
        fields: new Map(),
      };
      this.compiled.set(name, node);
      const model = this.modelOf.get(name);
      for (const [field, s] of Object.entries(schema.properties)) {
        const go = model === undefined ? undefined : GO_FIELD_TYPES[`${model}.${field}`];
        const type = this.schema(s);
        node.fields.set(field, go === undefined ? type : withGoType(type, go));
      }
      return node;
    }
    const node = this.schema(schema);
    this.compiled.set(name, node);
    return node;
  }

  schema(s: SchemaObject): TypeNode {
    if (s.$ref !== undefined) return this.definition(s.$ref.slice(s.$ref.lastIndexOf('/') + 1));
    if (s.allOf && s.allOf.length > 0) return this.schema(s.allOf[0]!);
    if (s.properties) {
      const node: StructType = { t: 'struct', go: 'struct', name: '', fields: new Map() };
      for (const [field, f] of Object.entries(s.properties)) node.fields.set(field, this.schema(f));
      return node;
    }
    if (s.additionalProperties) {
      const values = this.schema(s.additionalProperties);
      return { t: 'map', go: `map[string]${values.go}`, values };
    }
    if (s.type === 'array' && s.items) {
      const items = this.schema(s.items);
      return { t: 'list', go: `[]${items.go}`, items };
    }
    switch (s.type) {
      case 'string':
        return s.format === 'byte' ? { t: 'bytes', go: '[]uint8' } : { t: 'string', go: 'string' };
      case 'boolean':
        return { t: 'bool', go: 'bool' };
      case 'integer':
        return s.format === 'int32' ? { t: 'int32', go: 'int32' } : { t: 'int64', go: 'int64' };
      case 'number':
        return { t: 'float64', go: 'float64' };
      default:
        // A schemaless object (`any` in the models): Go takes any JSON there.
        return { t: 'free', go: 'interface {}' };
    }
  }
}

function typeRootOf(model: string): StructType {
  if (!types) throw new Error('fieldvalidation: await loadFieldSchemas() before checking field types');
  const root = types.get(model);
  if (!root) throw new Error(`fieldvalidation: no schema for model ${model}`);
  return root;
}

/**
 * Which of Kubernetes' decoders turns the object into its Go type; each words its errors
 * its own way.
 * - `json`: encoding/json (sigs.k8s.io/json) decoding the request body: create, update,
 *   and the patched object of a JSON patch or merge patch.
 * - `unstructured`: runtime.DefaultUnstructuredConverter, from the patched map of a
 *   strategic merge patch.
 */
export type DecodePath = 'json' | 'unstructured';

/** Thrown inside the walk to stop at an error that ends decoding (Go returns it at once). */
class DecodeAbort {
  constructor(readonly message: string) {}
}

/** Marks an edit that deletes the key. */
const DELETE = Symbol('delete');

interface Walk {
  readonly json: boolean;
  /** The first error Go's JSON decoder saves and goes on after (it reports it at the end). */
  saved: string | undefined;
  /** The Go struct whose field is being decoded, and the JSON names of the fields down to it (no indices, no map keys). */
  struct: string;
  readonly path: string[];
  /** Edits made only if the whole object decodes: [container, key, value | DELETE] triples. */
  readonly edits: unknown[];
}

const INT_RANGE: Readonly<Record<'int32' | 'int64', readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  // 2^63 - 1 is not a double; a literal that large parses to 2^63, which is let through.
  int64: [-(2 ** 63), 2 ** 63],
};

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** What encoding/json calls a JSON value in errors. */
function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

/** The Go kind of a value in an unstructured map (kjson keeps integers as int64). */
function unstructuredKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? 'int64' : 'float64';
  return Array.isArray(v) ? 'slice' : 'map';
}

/** encoding/json's UnmarshalTypeError text, with the field context when there is one. */
function unmarshalTypeError(w: Walk, value: string, go: string): string {
  return w.path.length > 0
    ? `json: cannot unmarshal ${value} into Go struct field ${w.struct}.${w.path.join('.')} of type ${go}`
    : `json: cannot unmarshal ${value} into Go value of type ${go}`;
}

/** An error Go's JSON decoder saves (the first one wins, decoding goes on); the converter stops at any. */
function save(w: Walk, message: string): void {
  if (!w.json) throw new DecodeAbort(message);
  w.saved ??= message;
}

/** Go's zero value for a null list element or map value, as it is encoded back; undefined: stays null. */
function zeroValue(node: TypeNode): unknown {
  switch (node.t) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    case 'int32':
    case 'int64':
    case 'float64':
    case 'intOrString':
      return 0;
    case 'quantity':
      return '0';
    case 'struct':
      return {};
    default:
      // Lists, maps and times encode their zero as null; free-form values keep it.
      return undefined;
  }
}

/** The elements of a list or the values of a map: null becomes Go's zero value. */
function walkElement(w: Walk, node: TypeNode, container: object, key: string | number, v: unknown): void {
  if (v === null) {
    const zero = zeroValue(node);
    if (zero !== undefined) w.edits.push(container, key, zero);
    return;
  }
  walkValue(w, node, v, container, key);
}

function walkStruct(w: Walk, node: StructType, obj: Record<string, unknown>): void {
  const outer = w.struct;
  for (const key of Object.keys(obj)) {
    const field = node.fields.get(key);
    // Unknown fields are not decoded at all (pruneUnknownFields reports them).
    if (field === undefined) continue;
    const v = obj[key];
    if (v === null) {
      // null leaves a field unset.
      w.edits.push(obj, key, DELETE);
      continue;
    }
    w.path.push(key);
    w.struct = node.name;
    walkValue(w, field, v, obj, key);
    w.path.pop();
    w.struct = outer;
  }
}

/** Checks `v` (not null) against `node`; `container[key]` is where it is, for edits. */
function walkValue(w: Walk, node: TypeNode, v: unknown, container: object, key: string | number): void {
  switch (node.t) {
    case 'struct':
      if (isObject(v)) return walkStruct(w, node, v);
      return save(
        w,
        w.json
          ? unmarshalTypeError(w, jsonKind(v), node.go)
          : `cannot restore struct from: ${unstructuredKind(v)}`,
      );
    case 'map':
      if (isObject(v)) {
        for (const k of Object.keys(v)) walkElement(w, node.values, v, k, v[k]);
        return;
      }
      return save(
        w,
        w.json
          ? unmarshalTypeError(w, jsonKind(v), node.go)
          : `cannot restore map from ${unstructuredKind(v)}`,
      );
    case 'list':
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) walkElement(w, node.items, v, i, v[i]);
        return;
      }
      return save(
        w,
        w.json
          ? unmarshalTypeError(w, jsonKind(v), node.go)
          : `cannot restore slice from ${unstructuredKind(v)}`,
      );
    case 'string':
      if (typeof v === 'string') return;
      if (w.json) return save(w, unmarshalTypeError(w, jsonKind(v), node.go));
      // The converter converts an int64 to a string type only to refuse it.
      return save(
        w,
        unstructuredKind(v) === 'int64' ? `cannot convert int64 to ${node.go}` : 'unrecognized type: string',
      );
    case 'bool':
      if (typeof v === 'boolean') return;
      return save(w, w.json ? unmarshalTypeError(w, jsonKind(v), node.go) : 'unrecognized type: bool');
    case 'float64':
      if (typeof v === 'number') return;
      return save(w, w.json ? unmarshalTypeError(w, jsonKind(v), node.go) : 'unrecognized type: float64');
    case 'int32':
    case 'int64':
      return checkInteger(w, node.t, node.go, v);
    case 'bytes':
      return checkBytes(w, node, v, container, key);
    case 'intOrString':
      return checkIntOrString(w, v);
    case 'quantity':
      return checkQuantity(v);
    case 'time':
    case 'microTime':
      return checkTime(w, node, v);
    case 'free':
      return;
  }
}

function checkInteger(w: Walk, t: 'int32' | 'int64', go: string, v: unknown): void {
  if (typeof v === 'number') {
    const [min, max] = INT_RANGE[t];
    if (Number.isInteger(v) && v >= min && v <= max) return;
    if (!w.json && !Number.isInteger(v)) return save(w, `cannot convert float64 to ${go}`);
    // Out of range: the JSON decoder refuses it; the converter would wrap it around
    // silently, which is refused here in the JSON decoder's words.
    const message = unmarshalTypeError(w, `number ${goNumberLiteral(v)}`, go);
    if (w.json) return save(w, message);
    throw new DecodeAbort(message);
  }
  return save(w, w.json ? unmarshalTypeError(w, jsonKind(v), go) : `unrecognized type: ${t}`);
}

/**
 * A []byte: a base64 string, or (Go takes this too) an array of byte values, which is
 * stored as the base64 string it decodes to.
 */
function checkBytes(w: Walk, node: LeafType, v: unknown, container: object, key: string | number): void {
  if (typeof v === 'string') {
    const bad = base64Error(v);
    if (bad !== undefined) save(w, w.json ? bad : `error decoding from json: ${bad}`);
    return;
  }
  if (Array.isArray(v)) {
    const bytes: number[] = [];
    for (const b of v) {
      if (b === null) bytes.push(0);
      else if (typeof b === 'number' && Number.isInteger(b) && b >= 0 && b <= 255) bytes.push(b);
      else if (typeof b === 'number' && !w.json && !Number.isInteger(b))
        return save(w, 'cannot convert float64 to uint8');
      else if (typeof b === 'number') {
        const message = unmarshalTypeError(w, `number ${goNumberLiteral(b)}`, 'uint8');
        if (w.json) return save(w, message);
        throw new DecodeAbort(message);
      } else
        return save(w, w.json ? unmarshalTypeError(w, jsonKind(b), 'uint8') : 'unrecognized type: uint8');
    }
    w.edits.push(container, key, Buffer.from(bytes).toString('base64'));
    return;
  }
  save(
    w,
    w.json ? unmarshalTypeError(w, jsonKind(v), node.go) : `cannot restore slice from ${unstructuredKind(v)}`,
  );
}

/**
 * IntOrString's UnmarshalJSON: a string, else an int32. Its errors end decoding; the JSON
 * decoder gives them the field's context (the converter does not).
 */
function checkIntOrString(w: Walk, v: unknown): void {
  if (typeof v === 'string') return;
  let value: string;
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= INT_RANGE.int32[0] && v <= INT_RANGE.int32[1]) return;
    value = `number ${goNumberLiteral(v)}`;
  } else {
    value = jsonKind(v);
  }
  throw new DecodeAbort(
    w.json
      ? unmarshalTypeError(w, value, 'int32')
      : `json: cannot unmarshal ${value} into Go value of type int32`,
  );
}

/** `500m`, `1.5Gi`, `2`: quantities that certainly parse (the parser proper takes about a microsecond). */
const PLAIN_QUANTITY = /^[+-]?\d{1,18}(?:\.\d{0,18})?(?:[numkMGTPE]|[KMGTPE]i)?$/;

/** Quantity's UnmarshalJSON: ParseQuantity of the string, or of the JSON text of anything else. */
function checkQuantity(v: unknown): void {
  let text: string;
  if (typeof v === 'string') text = v.trim();
  else if (typeof v === 'number') text = goNumberLiteral(v);
  else text = JSON.stringify(v);
  if (PLAIN_QUANTITY.test(text)) return;
  try {
    parseQuantity(text);
  } catch (err) {
    if (err instanceof QuantityParseError) throw new DecodeAbort(err.message);
    throw err;
  }
}

/** Time's and MicroTime's UnmarshalJSON: a string that time.Parse takes. */
function checkTime(w: Walk, node: LeafType, v: unknown): void {
  if (typeof v !== 'string') {
    throw new DecodeAbort(
      w.json
        ? unmarshalTypeError(w, jsonKind(v), 'string')
        : `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`,
    );
  }
  const bad = timeParseError(v, node.t === 'microTime');
  if (bad !== undefined) throw new DecodeAbort(bad);
}

interface DecodeError {
  message: string;
  /** From reading apiVersion and kind, before the object itself (the JSON decoder only). */
  typeMeta: boolean;
}

function decodeError(model: string, obj: unknown, path: DecodePath): DecodeError | undefined {
  const root = typeRootOf(model);
  const w: Walk = { json: path === 'json', saved: undefined, struct: '', path: [], edits: [] };
  if (obj === null) return undefined;
  if (!isObject(obj)) {
    const message = w.json
      ? unmarshalTypeError(w, jsonKind(obj), root.go)
      : `cannot restore struct from: ${unstructuredKind(obj)}`;
    return { message, typeMeta: false };
  }
  if (w.json) {
    // The serializer reads apiVersion and kind first, into a struct of its own.
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      if ((key === 'apiVersion' || key === 'kind') && v !== null && typeof v !== 'string') {
        const message = `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(v)} into Go struct field .${key} of type string`;
        return { message, typeMeta: true };
      }
    }
  }
  try {
    walkStruct(w, root, obj);
  } catch (err) {
    if (err instanceof DecodeAbort) return { message: err.message, typeMeta: false };
    throw err;
  }
  if (w.saved !== undefined) return { message: w.saved, typeMeta: false };
  const { edits } = w;
  for (let i = 0; i < edits.length; i += 3) {
    const container = edits[i] as Record<string | number, unknown>;
    const key = edits[i + 1] as string | number;
    const value = edits[i + 2];
    if (value === DELETE) delete container[key];
    // A map key may be "__proto__": set it as an own property (api/meta/maps.ts).
    else setOwnValue(container as Record<string, unknown>, String(key), value);
  }
  return undefined;
}

/**
 * Checks the JSON types of `obj` against the Go type of `model` (a client-node model
 * name, e.g. `V1Deployment`), as decoding it into that type does, and returns the error
 * Kubernetes' decoder reports for the first mismatch (`path` chooses the decoder: see
 * DecodePath), e.g. `json: cannot unmarshal string into Go struct field
 * DeploymentSpec.spec.replicas of type int32`; undefined when it decodes.
 *
 * What Go takes: integers for int32/int64 fields (in range; `1.5`, `"3"` refused), any
 * number for float fields, booleans, strings, base64 strings (or byte arrays) for []byte,
 * a string or int32 for IntOrString, a string or number that parses as a quantity for
 * Quantity, an RFC 3339 string for Time (MicroTime: with six fractional digits), objects
 * for structs and maps (values of the element type), arrays for lists, anything for
 * free-form values (FieldsV1). Unknown fields are not looked at (pruneUnknownFields).
 *
 * null is accepted anywhere: Go decodes it into the zero value. So, only when the object
 * decodes, nulls are rewritten in place as Go leaves them: a null field is removed
 * (unset), a null list element or map value becomes the element type's zero value (`""`,
 * `0`, `false`, `{}`, `"0"` for a quantity; null for lists, maps and times), and nothing
 * inside free-form values is touched. Byte arrays become base64 strings. On error `obj`
 * is left exactly as it was.
 *
 * Which mismatch is first: the JSON decoder goes on after most mismatches and reports the
 * first in document order, but an error inside a value with its own Go unmarshaler
 * (IntOrString, Quantity, Time) ends decoding and is reported instead; apiVersion and kind
 * are read before everything else. The converter stops at the first mismatch in the Go
 * struct's field order; this walks in document order (the same as soon as one patch does
 * not break two fields at once).
 *
 * Not like Go: the number literal of the request is gone once parsed, so `1.0` is taken
 * as an integer (Go refuses it for an integer field) and numbers are echoed as JavaScript
 * prints them (`number 1e+21`); the converter's silent wrap-around of an integer too
 * large for its field (strategic merge patch) is refused with the JSON decoder's error.
 * @throws Error when loadFieldSchemas() has not completed, or `model` has no schema.
 */
export function fieldTypeError(model: string, obj: unknown, path: DecodePath = 'json'): string | undefined {
  return decodeError(model, obj, path)?.message;
}

/** Go's summarizeData: the first 30 bytes of a request body, as text if it starts with `{`, else in hex. */
function summarizeBody(body: string): string {
  const bytes = Buffer.from(body, 'utf8');
  if (bytes.length === 0) return '<empty>';
  const head = bytes.subarray(0, 30);
  const more = bytes.length > 30 ? ' ...' : '';
  return bytes[0] === 0x7b ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}

/**
 * The type check of a create or update body (see fieldTypeError), before anything else
 * looks at the object (defaulting, validation): drops nulls as Go does, or throws.
 * `kind` and `version` (without group: `v1`) are the decoded body's; `body` is the
 * request body as received (JSON or YAML), which Kubernetes quotes (30 bytes of it) when
 * apiVersion or kind is not a string; without it, the object's JSON stands in.
 * @throws ApiError 400 BadRequest worded as Kubernetes' create and update handlers:
 *   `Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal
 *   string into Go struct field DeploymentSpec.spec.replicas of type int32`; for
 *   apiVersion or kind: `the object provided is unrecognized (must be of type Deployment):
 *   couldn't get version/kind; json parse error: json: cannot unmarshal number into Go
 *   struct field .kind of type string ({"apiVersion":"apps/v1","kin ...)`.
 */
export function checkFieldTypes(
  model: string,
  obj: unknown,
  kind: string,
  version: string,
  body?: string,
): void {
  const err = decodeError(model, obj, 'json');
  if (err === undefined) return;
  if (!err.typeMeta) {
    throw badRequest(`${kind} in version ${goQuote(version)} cannot be handled as a ${kind}: ${err.message}`);
  }
  // A type meta error comes before any edit: obj is as received.
  const summary = summarizeBody(body ?? JSON.stringify(obj) ?? '');
  throw badRequest(
    `the object provided is unrecognized (must be of type ${kind}): ${err.message} (${summary})`,
  );
}

/**
 * The type check of a patched object (see fieldTypeError): after the patch is applied,
 * before anything else looks at the result. `contentType` is the patch's media type and
 * `patch` its body as received. Drops nulls as Go does, or throws. Server-side apply
 * (`application/apply-patch+yaml`) is left alone: patch/apply.ts checks the configuration
 * against the schema itself.
 * @throws ApiError 422 Invalid on field `patch`, as Kubernetes' patch handler:
 *   - JSON patch, merge patch (the patched JSON decoded as a body):
 *     ` "" is invalid: patch: Invalid value: "<patched object as JSON>": json: cannot
 *     unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`;
 *   - strategic merge patch (the patched map converted): ` "" is invalid: patch: Invalid
 *     value: "map[spec:map[replicas:3]]": unrecognized type: int32`, the patch printed as
 *     Go's `%+v` prints it.
 */
export function checkPatchedFieldTypes(
  model: string,
  patched: unknown,
  contentType: string,
  patch: string,
): void {
  if (contentType === 'application/apply-patch+yaml' || contentType === 'application/apply-patch+cbor')
    return;
  const strategic = contentType === 'application/strategic-merge-patch+json';
  const badValue = (): string => (strategic ? formatGoValue(JSON.parse(patch)) : JSON.stringify(patched));
  const err = decodeError(model, patched, strategic ? 'unstructured' : 'json');
  if (err !== undefined) throwPatchInvalid(badValue(), err.message);
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
  return throwPatchInvalid(target.badValue, strict);
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
