/**
 * Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`),
 * which client-go's typed clients send for built-in kinds — and so kubectl 1.32's
 * `create configmap|secret|namespace|deployment|service|serviceaccount` (its `apply`,
 * `create -f`, `run` and `expose` send JSON). Decoding only: responses are JSON, which every
 * such client also accepts.
 *
 * The body is Kubernetes' envelope (k8s.io/apimachinery/pkg/runtime/serializer/protobuf):
 *
 *   "k8s\0"  runtime.Unknown { 1: typeMeta {1: apiVersion, 2: kind}, 2: raw (bytes),
 *                              3: contentEncoding, 4: contentType }
 *
 * and `raw` is the object's own message (without TypeMeta), whose fields protobuf-schema.ts
 * lists. The result is the object's JSON form — what the same Go client would have sent
 * as `application/json` — so the rest of the API server sees no difference:
 *   - field names as in JSON; embedded Go structs (Probe's handler, Volume's source,
 *     LocalObjectReference in key selectors) flattened into their parent;
 *   - scalars that are zero ("", 0, false) dropped unless their Go field is a pointer or
 *     lacks `omitempty` (gogo-protobuf writes every non-pointer field, zero or not);
 *     unset messages, empty lists and maps absent; a present empty message is `{}`;
 *   - int32/int64 → number; bytes (Secret.data, ConfigMap.binaryData) → base64;
 *   - metav1.Time → RFC 3339 in whole seconds (Kubernetes drops the nanos: its JSON has
 *     none), metav1.MicroTime → RFC 3339 with 6 fractional digits, the zero time (an empty
 *     message, which Go writes for an unset non-pointer Time such as a pod template's
 *     creationTimestamp) → null, as Go's JSON shows it; intstr.IntOrString → number or
 *     string; resource.Quantity → its string; metav1.FieldsV1 → the JSON it carries.
 * Unknown field numbers are skipped, as Go's generated unmarshallers do.
 *
 * The wire reader is our own (class Reader) rather than protobufjs, which is only a
 * transitive dependency here: Kubernetes' messages need only varints and length-delimited
 * fields, int64 must come out as a plain number (protobufjs gives Long objects), and errors
 * must become 400s that name the field that failed.
 */
import type { KubeObject } from '../../../api/object.js';
import { MESSAGES, type FieldSpec, type ScalarType } from './protobuf-schema.js';
import { badRequest } from '../status.js';
import { setOwnValue } from '../../../api/meta/maps.js';

/** The media type of Kubernetes' protobuf encoding. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The 4 bytes every protobuf-encoded object starts with: `k8s\0`. */
export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** The message of each `apiVersion kind` this decoder knows (DeleteOptions: see kindMessage). */
export const PROTOBUF_KINDS: Readonly<Record<string, string>> = {
  'v1 Namespace': 'core.v1.Namespace',
  'v1 Node': 'core.v1.Node',
  'v1 Pod': 'core.v1.Pod',
  'v1 Service': 'core.v1.Service',
  'v1 Endpoints': 'core.v1.Endpoints',
  'v1 ConfigMap': 'core.v1.ConfigMap',
  'v1 Secret': 'core.v1.Secret',
  'v1 Event': 'core.v1.Event',
  'v1 ServiceAccount': 'core.v1.ServiceAccount',
  'v1 Binding': 'core.v1.Binding',
  'apps/v1 Deployment': 'apps.v1.Deployment',
  'apps/v1 ReplicaSet': 'apps.v1.ReplicaSet',
  'coordination.k8s.io/v1 Lease': 'coordination.v1.Lease',
  'discovery.k8s.io/v1 EndpointSlice': 'discovery.v1.EndpointSlice',
  'events.k8s.io/v1 Event': 'events.v1.Event',
  'rbac.authorization.k8s.io/v1 Role': 'rbac.v1.Role',
  'rbac.authorization.k8s.io/v1 ClusterRole': 'rbac.v1.ClusterRole',
  'rbac.authorization.k8s.io/v1 RoleBinding': 'rbac.v1.RoleBinding',
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding': 'rbac.v1.ClusterRoleBinding',
  'authorization.k8s.io/v1 SelfSubjectAccessReview': 'authorization.v1.SelfSubjectAccessReview',
  'authorization.k8s.io/v1 SubjectAccessReview': 'authorization.v1.SubjectAccessReview',
  'authorization.k8s.io/v1 SelfSubjectRulesReview': 'authorization.v1.SelfSubjectRulesReview',
  'authentication.k8s.io/v1 SelfSubjectReview': 'authentication.v1.SelfSubjectReview',
  'authentication.k8s.io/v1 TokenRequest': 'authentication.v1.TokenRequest',
  'authentication.k8s.io/v1 TokenReview': 'authentication.v1.TokenReview',
  'policy/v1 Eviction': 'policy.v1.Eviction',
  'policy/v1 PodDisruptionBudget': 'policy.v1.PodDisruptionBudget',
  'autoscaling/v1 Scale': 'autoscaling.v1.Scale',
  'autoscaling/v1 HorizontalPodAutoscaler': 'autoscaling.v1.HorizontalPodAutoscaler',
  'batch/v1 Job': 'batch.v1.Job',
  'batch/v1 CronJob': 'batch.v1.CronJob',
  'meta.k8s.io/v1 DeleteOptions': 'meta.v1.DeleteOptions',
};

/** metav1.DeleteOptions is registered in every group version (metav1.AddToGroupVersion). */
const DELETE_OPTIONS_VERSIONS = new Set(Object.keys(PROTOBUF_KINDS).map((k) => k.split(' ')[0]!));

function kindMessage(apiVersion: string, kind: string): string | undefined {
  if (kind === 'DeleteOptions' && DELETE_OPTIONS_VERSIONS.has(apiVersion)) return 'meta.v1.DeleteOptions';
  return PROTOBUF_KINDS[`${apiVersion} ${kind}`];
}

/**
 * Decodes a protobuf request body into the object's JSON form (with `apiVersion` and `kind`
 * from the envelope), as described at the top of this file.
 * @param body the raw request bytes.
 * @throws ApiError 400 BadRequest when the body lacks the `k8s\0` prefix, is not a valid
 *   envelope or message, names no kind, a kind this server does not know (Kubernetes
 *   answers 400 too: the kind is not registered in its scheme), or carries a
 *   contentEncoding (Kubernetes never sets one).
 */
export function decodeProtobufObject(body: Uint8Array): KubeObject {
  if (body.length < PROTOBUF_MAGIC.length || PROTOBUF_MAGIC.some((b, i) => body[i] !== b)) {
    throw badRequest(
      `the body of the request could not be decoded as ${PROTOBUF_MEDIA_TYPE}: it does not start with the "k8s\\x00" prefix`,
    );
  }
  try {
    const unknown = readFields(new Reader(body, PROTOBUF_MAGIC.length), UNKNOWN, 'Unknown');
    const typeMeta = unknown.get(1) as Fields | undefined;
    const apiVersion = (typeMeta?.get(1) as string | undefined) ?? '';
    const kind = (typeMeta?.get(2) as string | undefined) ?? '';
    if (kind === '') throw new ProtobufError("Object 'Kind' is missing in the envelope");
    if (apiVersion === '') throw new ProtobufError(`Object 'apiVersion' is missing for kind "${kind}"`);
    const encoding = (unknown.get(3) as string | undefined) ?? '';
    if (encoding !== '') throw new ProtobufError(`unsupported contentEncoding "${encoding}"`);
    const type = kindMessage(apiVersion, kind);
    if (type === undefined) {
      throw new ProtobufError(`no kind "${kind}" is registered for version "${apiVersion}"`);
    }
    const raw = (unknown.get(2) as Uint8Array | undefined) ?? new Uint8Array(0);
    const object = toJson(readFields(new Reader(raw), MESSAGES[type]!, kind), type, kind);
    return { kind, apiVersion, ...object };
  } catch (err) {
    if (err instanceof ProtobufError) {
      throw badRequest(
        `the body of the request could not be decoded as ${PROTOBUF_MEDIA_TYPE}: ${err.message}`,
      );
    }
    throw err;
  }
}

/** A malformed body; decodeProtobufObject turns it into a 400. */
class ProtobufError extends Error {}

/** runtime.Unknown and runtime.TypeMeta, read by hand: the envelope is not an object. */
const TYPE_META: readonly FieldSpec[] = [
  [1, 'apiVersion', 'string'],
  [2, 'kind', 'string'],
];
const UNKNOWN: readonly FieldSpec[] = [
  [1, 'typeMeta', 'runtime.TypeMeta'],
  [2, 'raw', 'bytes'],
  [3, 'contentEncoding', 'string'],
  [4, 'contentType', 'string'],
];

// --- the wire --------------------------------------------------------------------------

const WireType = { Varint: 0, Fixed64: 1, Bytes: 2, StartGroup: 3, EndGroup: 4, Fixed32: 5 } as const;

/** A protobuf wire reader over `buf[pos, end)`. */
class Reader {
  constructor(
    readonly buf: Uint8Array,
    public pos = 0,
    readonly end = buf.length,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A base-128 varint of up to 64 bits, as its low and high 32-bit halves (unsigned). */
  varint(): { lo: number; hi: number } {
    let lo = 0;
    let hi = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= this.end) throw new ProtobufError('unexpected end of data in a varint');
      const b = this.buf[this.pos++]!;
      if (shift < 28) lo |= (b & 0x7f) << shift;
      else if (shift === 28) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (shift - 32);
      if (b < 0x80) return { lo: lo >>> 0, hi: hi >>> 0 };
    }
    throw new ProtobufError('varint longer than 10 bytes');
  }

  int32(): number {
    return this.varint().lo | 0;
  }

  /** A two's-complement int64; exact while |value| < 2^53 (beyond, like JSON.parse, not). */
  int64(): number {
    const { lo, hi } = this.varint();
    if (hi & 0x80000000) return -((~hi >>> 0) * 2 ** 32 + (~lo >>> 0) + 1);
    return hi * 2 ** 32 + lo;
  }

  bool(): boolean {
    const { lo, hi } = this.varint();
    return (lo | hi) !== 0;
  }

  /** The payload of a length-delimited field, as a reader of its own. */
  bytes(): Reader {
    const { lo, hi } = this.varint();
    if (hi !== 0 || lo > this.end - this.pos)
      throw new ProtobufError('length-delimited field runs past its end');
    const sub = new Reader(this.buf, this.pos, this.pos + lo);
    this.pos += lo;
    return sub;
  }

  /** Field number and wire type of the next field. */
  tag(): { field: number; wire: number } {
    const { lo, hi } = this.varint();
    const field = hi * 2 ** 29 + (lo >>> 3);
    if (field === 0) throw new ProtobufError('illegal field number 0');
    return { field, wire: lo & 7 };
  }

  /** Skips the value of a field of this wire type (an unknown field). */
  skip(wire: number, field: number): void {
    switch (wire) {
      case WireType.Varint:
        this.varint();
        return;
      case WireType.Fixed64:
        this.advance(8);
        return;
      case WireType.Bytes:
        this.bytes();
        return;
      case WireType.Fixed32:
        this.advance(4);
        return;
      case WireType.StartGroup:
        // Iterative, so that deeply nested groups cannot overflow the stack.
        for (let depth = 1; depth > 0;) {
          if (this.done) throw new ProtobufError(`unterminated group ${field}`);
          const t = this.tag();
          if (t.wire === WireType.StartGroup) depth++;
          else if (t.wire === WireType.EndGroup) depth--;
          else this.skip(t.wire, t.field);
        }
        return;
      default:
        throw new ProtobufError(`illegal wire type ${wire} for field ${field}`);
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) throw new ProtobufError('unexpected end of data');
    this.pos += n;
  }

  utf8(): string {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset + this.pos, this.end - this.pos).toString('utf8');
  }

  raw(): Uint8Array {
    return this.buf.subarray(this.pos, this.end);
  }
}

// --- messages --------------------------------------------------------------------------

/**
 * A message as read: field number → value. Singular scalars hold the last value seen,
 * singular messages a nested Fields (a repeated occurrence merges into it, as protobuf
 * requires), repeated fields an array, maps a Map.
 */
type Fields = Map<number, unknown>;

const indexes = new WeakMap<readonly FieldSpec[], Map<number, FieldSpec>>();
function indexOf(spec: readonly FieldSpec[]): Map<number, FieldSpec> {
  let index = indexes.get(spec);
  if (!index) indexes.set(spec, (index = new Map(spec.map((f) => [f[0], f]))));
  return index;
}

function specOf(type: string): readonly FieldSpec[] {
  if (type === 'runtime.TypeMeta') return TYPE_META;
  const spec = MESSAGES[type];
  if (!spec) throw new Error(`protobuf schema: no message ${type}`);
  return spec;
}

function isScalar(type: string): type is ScalarType {
  return type === 'string' || type === 'bool' || type === 'int32' || type === 'int64' || type === 'bytes';
}

/** Reads one message into `into` (fresh, or an earlier occurrence to merge into). */
function readFields(r: Reader, spec: readonly FieldSpec[], path: string, into: Fields = new Map()): Fields {
  const index = indexOf(spec);
  while (!r.done) {
    const { field, wire } = r.tag();
    const f = index.get(field);
    if (f === undefined) {
      r.skip(wire, field);
      continue;
    }
    const [, name, type, kind] = f;
    const where = `${path}.${name || type}`;
    if (kind === 'repeated') {
      const list = (into.get(field) as unknown[] | undefined) ?? [];
      into.set(field, list);
      if (wire === WireType.Bytes && isScalar(type) && type !== 'string' && type !== 'bytes') {
        // A packed repeated scalar: several varints in one length-delimited field.
        const packed = r.bytes();
        while (!packed.done) list.push(readScalar(packed, type));
      } else {
        list.push(readValue(r, wire, type, where));
      }
    } else if (kind === 'map') {
      expectWire(wire, WireType.Bytes, where);
      const map = (into.get(field) as Map<string, unknown> | undefined) ?? new Map<string, unknown>();
      into.set(field, map);
      const entry = readFields(r.bytes(), mapEntry(type), where);
      map.set((entry.get(1) as string | undefined) ?? '', entry.has(2) ? entry.get(2) : zeroOf(type));
    } else if (isScalar(type)) {
      into.set(field, readValue(r, wire, type, where));
    } else {
      expectWire(wire, WireType.Bytes, where);
      const previous = into.get(field) as Fields | undefined;
      into.set(field, readFields(r.bytes(), specOf(type), where, previous));
    }
  }
  return into;
}

const mapEntries = new Map<string, readonly FieldSpec[]>();
function mapEntry(valueType: string): readonly FieldSpec[] {
  let spec = mapEntries.get(valueType);
  if (!spec)
    mapEntries.set(
      valueType,
      (spec = [
        [1, 'key', 'string'],
        [2, 'value', valueType],
      ]),
    );
  return spec;
}

function expectWire(got: number, want: number, where: string): void {
  if (got !== want) throw new ProtobufError(`wrong wire type ${got} for ${where}`);
}

/** One value of a non-repeated-style read: a scalar, or a message as Fields. */
function readValue(r: Reader, wire: number, type: string, where: string): unknown {
  if (!isScalar(type)) {
    expectWire(wire, WireType.Bytes, where);
    return readFields(r.bytes(), specOf(type), where);
  }
  expectWire(wire, type === 'string' || type === 'bytes' ? WireType.Bytes : WireType.Varint, where);
  return readScalar(r, type);
}

function readScalar(r: Reader, type: ScalarType): unknown {
  switch (type) {
    case 'string':
      return r.bytes().utf8();
    case 'bytes':
      return r.bytes().raw();
    case 'bool':
      return r.bool();
    case 'int32':
      return r.int32();
    case 'int64':
      return r.int64();
  }
}

/** The value a map entry without a value stands for: the Go zero value of its type. */
function zeroOf(type: string): unknown {
  if (type === 'string') return '';
  if (type === 'bytes') return new Uint8Array(0);
  if (type === 'bool') return false;
  if (type === 'int32' || type === 'int64') return 0;
  return new Map();
}

// --- JSON ------------------------------------------------------------------------------

/** Types whose JSON form is not their message form: Fields → JSON value. */
const SPECIAL_TYPES: Readonly<Record<string, (m: Fields, where: string) => unknown>> = {
  'meta.v1.Time': (m, where) => formatTime(m, false, where),
  'meta.v1.MicroTime': (m, where) => formatTime(m, true, where),
  'resource.Quantity': (m) => (m.get(1) as string | undefined) || '0',
  'intstr.IntOrString': (m, where) => {
    const type = (m.get(1) as number | undefined) ?? 0;
    if (type === 0) return (m.get(2) as number | undefined) ?? 0;
    if (type === 1) return (m.get(3) as string | undefined) ?? '';
    throw new ProtobufError(`${where}: IntOrString type ${type} is neither 0 (int) nor 1 (string)`);
  },
  'meta.v1.FieldsV1': (m, where) => {
    const raw = m.get(1) as Uint8Array | undefined;
    if (!raw || raw.length === 0) return null;
    try {
      return JSON.parse(Buffer.from(raw).toString('utf8')) as unknown;
    } catch {
      throw new ProtobufError(`${where}: FieldsV1 is not JSON`);
    }
  },
};

/** Seconds of Go's zero time.Time (0001-01-01T00:00:00Z), which JSON shows as null. */
const GO_ZERO_TIME_SECONDS = -62135596800;
/** Seconds of 10000-01-01T00:00:00Z: RFC 3339 has four-digit years. */
const YEAR_10000_SECONDS = 253402300800;

function formatTime(m: Fields, micro: boolean, where: string): string | null {
  // An empty message is the zero time (metav1.Time's Marshal writes nothing for it).
  if (m.size === 0) return null;
  const nanos = (m.get(2) as number | undefined) ?? 0;
  // metav1.Time drops the nanos on decode (its JSON has whole seconds); MicroTime keeps µs.
  let seconds = (m.get(1) as number | undefined) ?? 0;
  let micros = 0;
  if (micro) {
    seconds += Math.floor(nanos / 1e9);
    micros = Math.floor((((nanos % 1e9) + 1e9) % 1e9) / 1000);
  }
  if (seconds === GO_ZERO_TIME_SECONDS && micros === 0) return null;
  if (seconds < GO_ZERO_TIME_SECONDS || seconds >= YEAR_10000_SECONDS) {
    throw new ProtobufError(`${where}: time ${seconds} s is outside years 0001-9999`);
  }
  const base = new Date(seconds * 1000).toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
  return micro ? `${base}.${String(micros).padStart(6, '0')}Z` : `${base}Z`;
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || (v instanceof Uint8Array && v.length === 0);
}

/** A Fields of `type` as its JSON object. */
function toJson(m: Fields, type: string, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, name, fieldType, kind] of specOf(type)) {
    if (!m.has(field)) continue;
    const value = m.get(field);
    const where = `${path}.${name || fieldType}`;
    if (kind === 'inline') {
      Object.assign(out, toJson(value as Fields, fieldType, path));
    } else if (kind === 'repeated') {
      const list = value as unknown[];
      if (list.length > 0) out[name] = list.map((v, i) => jsonValue(v, fieldType, `${where}[${i}]`));
    } else if (kind === 'map') {
      const map = value as Map<string, unknown>;
      if (map.size > 0) {
        const obj: Record<string, unknown> = {};
        // A key such as "__proto__" (a valid ConfigMap key) stays a key (api/meta/maps.ts).
        for (const [k, v] of map) setOwnValue(obj, k, jsonValue(v, fieldType, `${where}[${k}]`));
        out[name] = obj;
      }
    } else if (isScalar(fieldType)) {
      if (kind === 'keepZero' || !isZero(value)) out[name] = jsonValue(value, fieldType, where);
    } else {
      out[name] = jsonValue(value, fieldType, where);
    }
  }
  return out;
}

function jsonValue(v: unknown, type: string, where: string): unknown {
  if (type === 'bytes') return Buffer.from(v as Uint8Array).toString('base64');
  if (isScalar(type)) return v;
  const special = SPECIAL_TYPES[type];
  return special ? special(v as Fields, where) : toJson(v as Fields, type, where);
}
