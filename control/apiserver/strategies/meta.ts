/**
 * Shared pieces of the per-kind strategies (this folder: one `Strategy` per served kind,
 * listed once in `index.ts`):
 *
 * - JSON access helpers: objects arrive as plain JSON (`KubeObject`), possibly malformed,
 *   so every accessor tolerates wrong types and nothing here throws.
 * - Go-zero-value semantics: Kubernetes' Go types cannot tell "absent" from `""`, `0`,
 *   `false`, `[]` or `{}` for non-pointer fields, so defaulting (`defaultString`,
 *   `defaultZero`) and comparison (`semanticEqual`) treat them alike, as
 *   `apiequality.Semantic.DeepEqual` does for nil and empty slices and maps.
 * - ObjectMeta content validation (labels, annotations, ownerReferences, finalizers,
 *   generation) via api/meta, without the name/namespace syntax that the registry checks.
 * - `defineStrategy`: the common create/update/status flow of a kind, so each kind file
 *   only states what is specific to it.
 */
import type { FieldError, NameValidator } from '../../../api/meta/validation.js';
import {
  childPath,
  forbidden,
  indexPath,
  invalid,
  isInRange,
  isQualifiedName,
  nameIsDNSSubdomain,
  validateObjectMeta,
} from '../../../api/meta/validation.js';
import { Quantity, QuantityParseError } from '../../../api/meta/quantity.js';
import type { KubeObject } from '../../../api/object.js';
import type { Strategy } from '../strategy.js';
import { setOwnValue } from '../../../api/meta/maps.js';

/** A JSON object. */
export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` if it is a JSON object, else undefined. */
export function asObj(v: unknown): Obj | undefined {
  return isObj(v) ? v : undefined;
}

/** `v` if it is an array, else `[]` (a missing list is an empty list, as in Go). */
export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** `v` if it is a string, else `''` (Go's zero string). */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** `v` if it is a finite number, else undefined. */
export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** A string map (labels, selectors, data), keeping only string values. */
export function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(asObj(v) ?? {}))
    if (typeof val === 'string') setOwnValue(out, k, val);
  return out;
}

/** `o[key]` as an object, created (`{}`) when absent or not an object. */
export function child(o: Obj, key: string): Obj {
  const v = o[key];
  if (isObj(v)) return v;
  const c: Obj = {};
  o[key] = c;
  return c;
}

/** Calls `fn` with each object element of `o[key]` and its index (non-objects are skipped). */
export function eachObj(v: unknown, fn: (item: Obj, index: number) => void): void {
  list(v).forEach((item, i) => {
    if (isObj(item)) fn(item, i);
  });
}

/** Sets a string field when it is empty or absent (a Go `if x == "" { x = v }` default). */
export function defaultString(o: Obj, key: string, value: string): void {
  if (str(o[key]) === '') o[key] = value;
}

/** Sets a pointer field when it is absent or null (Go's `if x == nil`). */
export function defaultPointer(o: Obj, key: string, value: unknown): void {
  if (o[key] === undefined || o[key] === null) o[key] = value;
}

/** Sets a non-pointer number field when it is absent or 0 (Go's `if x == 0`). */
export function defaultZero(o: Obj, key: string, value: number): void {
  if (!num(o[key])) o[key] = value;
}

/** Deep copy of plain JSON. */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObj(v)) return Object.values(v).every(isZero);
  return false;
}

/**
 * Equality as Kubernetes compares API values (apiequality.Semantic.DeepEqual on Go
 * structs): absent, null and zero values (`''`, `0`, `false`, `[]`, `{}`) are equal; object
 * key order is irrelevant. (Quantities are canonicalized by the defaults before objects
 * are compared, so `1.5Gi` and `1536Mi` meet as the same text.) Maps and structs look the
 * same in JSON, so a map entry with an empty value equals a missing entry here.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isZero(a) && isZero(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (isObj(a) || isObj(b)) {
    if (!isObj(a) || !isObj(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

/** A quantity from JSON (string or number), or undefined when it does not parse. */
export function tryQuantity(v: unknown): Quantity | undefined {
  try {
    return Quantity.fromJSON(v);
  } catch {
    return undefined;
  }
}

/** The parse problem of a quantity value, or undefined when it parses. */
export function quantityProblem(v: unknown): string | undefined {
  try {
    Quantity.fromJSON(v);
    return undefined;
  } catch (e) {
    if (e instanceof QuantityParseError) return e.message;
    return 'a quantity must be a string or a number';
  }
}

/**
 * A resource list value as Kubernetes stores it (SetDefaults_ResourceList, then JSON
 * serialization): rounded up to milli precision (`0.0001` → `1m`), canonical text
 * (`1.5Gi` → `1536Mi`, `0.5` → `500m`), numbers as strings. Unparseable values are
 * returned unchanged (validation reports them).
 */
export function canonicalQuantity(v: unknown): unknown {
  const q = tryQuantity(v);
  if (q === undefined) return v;
  const milli = q.milliValue();
  const rounded = Quantity.fromMilli(milli, q.format);
  return rounded.cmp(q) === 0 ? q.toString() : rounded.toString();
}

/** Canonicalizes each value of a resource list in place (see `canonicalQuantity`). */
export function canonicalizeResourceList(o: Obj, key: string): void {
  const rl = asObj(o[key]);
  if (!rl) return;
  for (const k of Object.keys(rl)) rl[k] = canonicalQuantity(rl[k]);
}

// ---------------------------------------------------------------------------------------
// Small validators shared by several kinds (Kubernetes' apivalidation helpers)
// ---------------------------------------------------------------------------------------

/** ValidateNonnegativeField: `must be greater than or equal to 0`. Absent values pass. */
export function nonNegative(v: unknown, field: string): FieldError[] {
  const n = num(v);
  return n !== undefined && n < 0 ? [invalid(field, n, 'must be greater than or equal to 0')] : [];
}

/** ValidateImmutableField: `field is immutable`, showing the new value. */
export function immutable(now: unknown, before: unknown, field: string): FieldError[] {
  return semanticEqual(now, before) ? [] : [invalid(field, now ?? null, 'field is immutable')];
}

/** Each `is*` problem of `value` as an Invalid error on `field`. */
export function problems(field: string, value: unknown, msgs: readonly string[]): FieldError[] {
  return msgs.map((m) => invalid(field, value, m));
}

/** ValidateQualifiedName on a field. */
export function qualifiedName(value: string, field: string): FieldError[] {
  return problems(field, value, isQualifiedName(value));
}

/** A port number or name (Kubernetes' ValidatePortNumOrName for IntOrString fields; unset is the int 0). */
export function portNumOrName(v: unknown, field: string, isPortName: (s: string) => string[]): FieldError[] {
  if (v === undefined || v === null) return problems(field, 0, isInRange(0, 1, 65535));
  if (typeof v === 'number') return problems(field, v, isInRange(v, 1, 65535));
  if (typeof v === 'string') return problems(field, v, isPortName(v));
  return [invalid(field, v, 'must be an integer or a port name')];
}

/** The supported port protocols, sorted as Kubernetes lists them. */
export const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;

/**
 * A reference to a missing item (Kubernetes' field.NotFound, e.g. a volumeMount naming no
 * volume). api/meta's FieldErrorType has no `FieldValueNotFound` yet, so this is reported
 * as Invalid with the detail `not found`.
 */
export function notFound(field: string, value: unknown): FieldError {
  return invalid(field, value, 'not found');
}

/**
 * More items than allowed (Kubernetes' field.TooMany: `must have at most N items`).
 * Reported as Invalid until api/meta has `FieldValueTooMany`.
 */
export function tooMany(field: string, count: number, max: number): FieldError {
  return invalid(field, count, `must have at most ${max} items`);
}

export { childPath, indexPath, forbidden };

// ---------------------------------------------------------------------------------------
// ObjectMeta
// ---------------------------------------------------------------------------------------

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/**
 * Kubernetes' validateKubeFinalizerName: a finalizer without a `/` must be one of the
 * standard names (`kubernetes`, `orphan`, `foregroundDeletion`).
 */
export function kubeFinalizerName(name: string, field: string): FieldError[] {
  if (name.includes('/') || STANDARD_FINALIZERS.has(name)) return [];
  return [invalid(field, name, 'name is neither a standard finalizer name nor is it fully qualified')];
}

const REGISTRY_FIELDS = new Set(['metadata.name', 'metadata.generateName', 'metadata.namespace']);

/**
 * The content of an object's metadata as Kubernetes' ValidateObjectMeta checks it:
 * labels, annotations (keys, 256 KiB total), ownerReferences (one controller at most),
 * finalizers (qualified names; with `kubeFinalizers`, also core's standard-or-qualified
 * rule), generation >= 0. Name and namespace syntax are the registry's (see
 * `nameValidatorFor` in index.ts) and are not reported here.
 */
export function validateMetadata(
  obj: KubeObject,
  namespaced: boolean,
  kubeFinalizers: boolean,
): FieldError[] {
  const meta = obj.metadata ?? {};
  // Only well-typed values reach api/meta (a wrong JSON type is a decode error in Kubernetes).
  const sane = {
    generation: num(meta.generation),
    labels: strMap(meta.labels),
    annotations: strMap(meta.annotations),
    finalizers: list(meta.finalizers).filter((f): f is string => typeof f === 'string'),
    ownerReferences: list(meta.ownerReferences)
      .filter(isObj)
      .map((r) => ({
        apiVersion: str(r.apiVersion),
        kind: str(r.kind),
        name: str(r.name),
        uid: str(r.uid),
        controller: r.controller === true,
      })),
  };
  const errs = validateObjectMeta(sane, { namespaced, nameFn: () => [] }).filter(
    (e) => !REGISTRY_FIELDS.has(e.field),
  );
  if (kubeFinalizers) {
    for (const f of list(meta.finalizers)) errs.push(...kubeFinalizerName(str(f), 'metadata.finalizers'));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------
// defineStrategy
// ---------------------------------------------------------------------------------------

/** What a kind states about itself; everything is optional except scope. */
export interface KindRules {
  namespaced: boolean;
  /** The rule for `metadata.name` (default: DNS-1123 subdomain). */
  nameFn?: NameValidator;
  /** Core's finalizer-name rule on metadata.finalizers (core and apps kinds); default true. */
  kubeFinalizers?: boolean;
  /**
   * Set for kinds with a status subresource: on create, `status` is replaced by this value
   * (Kubernetes' `Status = XStatus{}` in PrepareForCreate, serialized as `{}` or with its
   * non-omitempty fields); on update, `status` is kept from the old object; status writes
   * keep everything else from the old object. Omit for kinds whose main resource owns status.
   */
  initialStatus?: (obj: KubeObject) => unknown;
  generationFields?: readonly string[];
  /** See Strategy: a PUT to a missing name creates it (Services, Endpoints, Events, Leases, RBAC); default false. */
  allowCreateOnUpdate?: boolean;
  /** See Strategy: an immediate DELETE answers with the object, not a Status; default false. */
  returnDeletedObject?: boolean;
  /** See Strategy: whether an update bumps the generation; default: `generationFields` decide. */
  generationChanged?(obj: KubeObject, old: KubeObject): boolean;
  prepareForCreate?(obj: KubeObject): void;
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  prepareForStatusUpdate?(obj: KubeObject, old: KubeObject): void;
  defaults?(obj: KubeObject): void;
  /** `create` is true when `obj` came through `prepareForCreate` (create) rather than an update. */
  validate?(obj: KubeObject, create: boolean): FieldError[];
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  validateStatusUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** Kind-specific field-selector values (the kind's ToSelectableFields / GetAttrs). */
  fields?(obj: KubeObject): Record<string, string>;
  /** See Strategy: deletion hooks and the finalize subresource (Namespaces). */
  specFinalizers?(obj: KubeObject): readonly string[];
  prepareForDelete?(obj: KubeObject): void;
  prepareForFinalizeUpdate?(obj: KubeObject, old: KubeObject): void;
  validateFinalizeUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** See Strategy: escalation prevention (RBAC kinds) and what a create writes beside the object (Namespaces). */
  checkEscalation?: Strategy['checkEscalation'];
  afterCreate?: Strategy['afterCreate'];
  /** See Strategy: the conversion to and from the storage version. */
  storageCodec?: Strategy['storageCodec'];
  /** See Strategy: the warnings of a valid create and update (upstream's WarningsOnCreate / WarningsOnUpdate). */
  warningsOnCreate?: Strategy['warningsOnCreate'];
  warningsOnUpdate?: Strategy['warningsOnUpdate'];
}

/** A kind's strategy, with the `nameFn` the registry should check names with. */
export interface KindStrategy extends Strategy {
  readonly nameFn: NameValidator;
}

const ENVELOPE = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/**
 * Objects between `prepareForCreate` and validation: the registry passes one object
 * through prepareForCreate → defaults → validate on create, and validate also runs on
 * updates, where Kubernetes applies different rules (ValidatePodCreate vs
 * ValidatePodUpdate, events.k8s.io's create-only checks). Held weakly, never stored.
 */
const creating = new WeakSet<KubeObject>();

/**
 * Builds a Strategy from a kind's rules, adding what every kind shares:
 * metadata content validation, the status subresource split (status reset on create,
 * kept on update; everything but status and metadata kept on status writes, which are
 * defaulted as Kubernetes defaults every decoded object) and the
 * `metadata.name` (+ `metadata.namespace` for namespaced kinds) field-selector values
 * (Kubernetes' ObjectMetaFieldsSet; cluster-scoped kinds have no metadata.namespace).
 */
export function defineStrategy(rules: KindRules): KindStrategy {
  const kubeFinalizers = rules.kubeFinalizers ?? true;
  const withStatus = rules.initialStatus !== undefined;
  return {
    nameFn: rules.nameFn ?? nameIsDNSSubdomain,
    generationFields: rules.generationFields ?? [],
    allowCreateOnUpdate: rules.allowCreateOnUpdate ?? false,
    returnDeletedObject: rules.returnDeletedObject ?? false,
    prepareForCreate(obj) {
      creating.add(obj);
      if (rules.initialStatus) obj.status = rules.initialStatus(obj);
      rules.prepareForCreate?.(obj);
    },
    prepareForUpdate(obj, old) {
      creating.delete(obj);
      if (withStatus) {
        if (old.status === undefined) delete obj.status;
        else obj.status = clone(old.status);
      }
      rules.prepareForUpdate?.(obj, old);
    },
    prepareForStatusUpdate(obj, old) {
      for (const k of Object.keys(obj)) if (!ENVELOPE.has(k) && !Object.hasOwn(old, k)) delete obj[k];
      for (const [k, v] of Object.entries(old)) if (!ENVELOPE.has(k)) obj[k] = clone(v);
      // Kubernetes defaults every decoded object, status writes included (e.g. a Node's
      // allocatable from its capacity); the registry calls `defaults` on the main path only.
      rules.defaults?.(obj);
      rules.prepareForStatusUpdate?.(obj, old);
    },
    defaults(obj) {
      rules.defaults?.(obj);
    },
    validate(obj) {
      return [
        ...validateMetadata(obj, rules.namespaced, kubeFinalizers),
        ...(rules.validate?.(obj, creating.has(obj)) ?? []),
      ];
    },
    validateUpdate(obj, old) {
      return rules.validateUpdate?.(obj, old) ?? [];
    },
    validateStatusUpdate(obj, old) {
      return [
        ...validateMetadata(obj, rules.namespaced, kubeFinalizers),
        ...(rules.validateStatusUpdate?.(obj, old) ?? []),
      ];
    },
    selectableFields(obj) {
      const meta = obj.metadata ?? {};
      const base: Record<string, string> = { 'metadata.name': str(meta.name) };
      if (rules.namespaced) base['metadata.namespace'] = str(meta.namespace);
      return { ...base, ...(rules.fields?.(obj) ?? {}) };
    },
    ...(rules.generationChanged ? { generationChanged: rules.generationChanged } : {}),
    ...(rules.specFinalizers ? { specFinalizers: rules.specFinalizers } : {}),
    ...(rules.prepareForDelete ? { prepareForDelete: rules.prepareForDelete } : {}),
    ...(rules.prepareForFinalizeUpdate ? { prepareForFinalizeUpdate: rules.prepareForFinalizeUpdate } : {}),
    ...(rules.validateFinalizeUpdate
      ? {
          validateFinalizeUpdate: (obj: KubeObject, old: KubeObject) => [
            ...validateMetadata(obj, rules.namespaced, kubeFinalizers),
            ...rules.validateFinalizeUpdate!(obj, old),
          ],
        }
      : {}),
    ...(rules.checkEscalation ? { checkEscalation: rules.checkEscalation } : {}),
    ...(rules.afterCreate ? { afterCreate: rules.afterCreate } : {}),
    ...(rules.storageCodec ? { storageCodec: rules.storageCodec } : {}),
    ...(rules.warningsOnCreate ? { warningsOnCreate: rules.warningsOnCreate } : {}),
    ...(rules.warningsOnUpdate ? { warningsOnUpdate: rules.warningsOnUpdate } : {}),
  };
}

/** `obj[key]` as an object, created when absent (for `spec`, `status`, ...). */
export function section(obj: KubeObject, key: string): Obj {
  return child(obj as Obj, key);
}

/** Go's strconv.FormatBool / fmt.Sprint of a bool field (absent = false). */
export function boolString(v: unknown): string {
  return v === true ? 'true' : 'false';
}
