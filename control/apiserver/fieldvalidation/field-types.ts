/**
 * Field types: what decoding into the Go type refuses whatever the directive (a string
 * where an int32 goes, a bad Quantity, Time or base64 value), worded as Go's decoders word
 * it; create and update answer 400, a patched object 422. null is never wrong (Go decodes
 * it as unset) and is dropped.
 */
import { QuantityParseError, parseQuantity } from '../../../api/meta/quantity.js';
import { setOwnValue } from '../../../api/meta/maps.js';
import { base64Error, goNumberLiteral, timeParseError } from '../encoding/go-decode.js';
import { formatGoValue, goQuote } from '../encoding/go-format.js';
import { summarizeData } from '../encoding/go-json.js';
import { badRequest } from '../status.js';
import { throwPatchInvalid } from './directive.js';
import { typeRootOf } from './schema.js';
import type { LeafType, StructType, TypeNode } from './schema.js';

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
  const summary = summarizeData(body ?? JSON.stringify(obj) ?? '');
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
