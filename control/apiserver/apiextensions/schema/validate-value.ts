/**
 * A custom resource checked against its version's schema, as apiextensions-apiserver
 * does it (pkg/apiserver/validation/validation.go over kube-openapi's
 * pkg/validation/validate, then pkg/apiserver/schema/listtype and objectmeta):
 *
 * - Each value meets the validators of kube-openapi's SchemaValidator in its order —
 *   type, allOf/anyOf/oneOf/not, string (maxLength, minLength, pattern), format, number
 *   (multipleOf, minimum, maximum), array (items, minItems, maxItems), enum, object
 *   (min/maxProperties, additionalProperties, properties, required) — each one applying by
 *   the kind of the value, not by the schema's type, so a string where an integer belongs
 *   gives the one type error.
 * - kube-openapi names a value by its path: `spec.replicas`, `spec.items[0]`; a required
 *   property and an additionalProperties key are appended with a dot (`.spec` at the root);
 *   every message says `<path> in body ...`. The FieldError's field is that path without a
 *   leading dot, under `fldPath`; an error with no path (anyOf, oneOf, allOf, not, a number
 *   out of its format's range) is at `fldPath`, which is `<nil>` at the root, as upstream's
 *   nil field.Path prints.
 * - Error types as kubeOpenAPIResultToFieldErrors maps them: required → Required, enum →
 *   Unsupported value, maxLength → Too long, type and format → Invalid with the type name
 *   as the value, everything else → Invalid with the value. maxItems/maxProperties are
 *   `Too many` upstream; FieldError has no such type, so they are Invalid with the count.
 * - Then x-kubernetes-list-type set (`Duplicate value` at each repeated item) and map
 *   (`Duplicate value` with the item's keys), and each nested x-kubernetes-embedded-resource
 *   object: apiVersion and kind required and well formed, metadata as ObjectMeta.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  childPath,
  duplicate,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
  tooLong,
  type FieldError,
} from '../../../../api/meta/field-errors.js';
import { isDNS1035Label, validateObjectMeta } from '../../../../api/meta/validation.js';
import { effectiveFormat, validatesFormat } from './formats.js';
import type { JSONSchemaProps } from './types.js';

/**
 * A schema's `pattern` as a RegExp: Unicode mode first (closest to RE2), else the legacy
 * mode, which accepts RE2's identity escapes such as `\\_` that Unicode mode refuses.
 * @throws SyntaxError when neither mode compiles it.
 */
export function compilePattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return new RegExp(pattern);
  }
}

/** The JSON type name of a decoded value, as kube-openapi's schemaInfoForType reports it. */
export function jsonTypeOf(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    default:
      return 'object';
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A kube-openapi error: `name` is its path, `field` the FieldError made of it. */
interface Walk {
  fldPath: string;
  errs: FieldError[];
}

function fieldOf(w: Walk, name: string): string {
  if (name === '' || name === '.') return w.fldPath === '' ? '<nil>' : w.fldPath;
  return childPath(w.fldPath, name.startsWith('.') ? name.slice(1) : name);
}

/** The schema's types, as ConvertJSONSchemaProps sets them (int-or-string: integer,string). */
function typesOf(s: JSONSchemaProps): string[] {
  if (s['x-kubernetes-int-or-string']) return ['integer', 'string'];
  return s.type ? [s.type] : [];
}

/** Go's %v of a float64 bound, for the common cases. */
function num(n: number): string {
  return String(n).replace('e+', 'e+');
}

function typeErr(w: Walk, name: string, typeName: string, got: string): void {
  w.errs.push(invalid(fieldOf(w, name), got, `${name} in body must be of type ${typeName}: "${got}"`));
}

function checkType(w: Walk, s: JSONSchemaProps, v: unknown, name: string): void {
  const types = typesOf(s);
  const format = effectiveFormat(s.type, s.format);
  if (types.length === 0 && format === '') return;
  if (v === null || v === undefined) {
    if (types.length > 0 && !types.includes('null') && s.nullable !== true)
      typeErr(w, name, types.join(','), 'null');
    return;
  }
  const t = jsonTypeOf(v);
  // A JSON integer is a float64 whose value is integral: number accepts it, and an integer
  // schema accepts 3.0 (which JSON.parse already made 3).
  const ok = types.includes(t) || (t === 'integer' && types.includes('number'));
  const isStringOrSlice = t === 'string' || t === 'array';
  const dataFormat = t === 'integer' ? 'int64' : t === 'number' ? 'float64' : '';
  if (!isStringOrSlice && format !== '' && !ok && dataFormat !== format) {
    typeErr(w, name, format, dataFormat);
    return;
  }
  if (!(types.includes('number') || types.includes('integer')) && format !== '' && isStringOrSlice) return;
  if (!ok) typeErr(w, name, types.join(','), t);
}

function composite(w: Walk, message: string): void {
  w.errs.push(invalid(w.fldPath === '' ? '<nil>' : w.fldPath, '', message));
}

function checkSchemaProps(w: Walk, s: JSONSchemaProps, v: unknown, name: string): void {
  const sub = (alt: JSONSchemaProps): FieldError[] => {
    const inner: Walk = { fldPath: w.fldPath, errs: [] };
    validateNode(inner, alt, v, name);
    return inner.errs;
  };
  if (s.anyOf && s.anyOf.length > 0) {
    let best: FieldError[] | undefined;
    let ok = false;
    for (const alt of s.anyOf) {
      const errs = sub(alt);
      if (errs.length === 0) {
        ok = true;
        break;
      }
      if (!best || errs.length < best.length) best = errs;
    }
    if (!ok) {
      composite(w, `"${name}" must validate at least one schema (anyOf)`);
      w.errs.push(...(best ?? []));
    }
  }
  if (s.oneOf && s.oneOf.length > 0) {
    let valid = 0;
    let best: FieldError[] | undefined;
    for (const alt of s.oneOf) {
      const errs = sub(alt);
      if (errs.length === 0) valid++;
      else if (valid === 0 && (!best || errs.length < best.length)) best = errs;
    }
    if (valid !== 1) {
      const more = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
      composite(w, `"${name}" must validate one and only one schema (oneOf). ${more}`);
      if (valid === 0) w.errs.push(...(best ?? []));
    }
  }
  if (s.allOf && s.allOf.length > 0) {
    let valid = 0;
    for (const alt of s.allOf) {
      const errs = sub(alt);
      if (errs.length === 0) valid++;
      w.errs.push(...errs);
    }
    if (valid !== s.allOf.length)
      composite(w, `"${name}" must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`);
  }
  if (s.not && sub(s.not).length === 0) composite(w, `"${name}" must not validate the schema (not)`);
}

function checkString(w: Walk, s: JSONSchemaProps, v: string, name: string): void {
  const field = fieldOf(w, name);
  const runes = [...v].length;
  if (s.maxLength !== undefined && runes > s.maxLength) {
    w.errs.push(tooLong(field, s.maxLength));
    return;
  }
  if (s.minLength !== undefined && runes < s.minLength) {
    w.errs.push(invalid(field, v, `${name} in body should be at least ${s.minLength} chars long`));
    return;
  }
  if (s.pattern) {
    let re: RegExp | undefined;
    try {
      re = compilePattern(s.pattern);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      w.errs.push(
        invalid(field, v, `${name} in body should match '${s.pattern}, but pattern is invalid: ${why}'`),
      );
      return;
    }
    if (!re.test(v)) w.errs.push(invalid(field, v, `${name} in body should match '${s.pattern}'`));
  }
}

function checkFormat(w: Walk, s: JSONSchemaProps, v: string, name: string): void {
  const format = effectiveFormat(s.type, s.format);
  if (format === '' || format === 'int32' || format === 'int64' || format === 'float' || format === 'double')
    return;
  if (!validatesFormat(format, v))
    w.errs.push(invalid(fieldOf(w, name), v, `${name} in body must be of type ${format}: "${v}"`));
}

const INT32 = [-2147483648, 2147483647] as const;
const FLOAT32_MAX = 3.4028234663852886e38;

function checkNumber(w: Walk, s: JSONSchemaProps, v: number, name: string): void {
  const field = fieldOf(w, name);
  const isInt = Number.isInteger(v);
  const single = s.type;
  // IsValueValidAgainstRange: a value outside its format's range is a plain error (no path).
  if (single === 'integer' && s.format === 'int32' && (v < INT32[0] || v > INT32[1]))
    composite(w, `strconv.ParseInt: parsing "${v}": value out of range`);
  if (single === 'number' && s.format === 'float' && Math.abs(v) > FLOAT32_MAX)
    composite(w, `strconv.ParseFloat: parsing "${v}": value out of range`);
  if (s.multipleOf !== undefined) {
    const f = s.multipleOf;
    if (f <= 0) {
      w.errs.push(invalid(field, f, `factor MultipleOf declared for ${name} must be positive: ${num(f)}`));
    } else {
      const mult = f < 1 ? (1 / f) * v : v / f;
      const bad = isInt && Number.isInteger(f) ? v % f !== 0 : !Number.isInteger(mult);
      if (bad) w.errs.push(invalid(field, v, `${name} in body should be a multiple of ${num(f)}`));
    }
  }
  if (s.minimum !== undefined) {
    const min = isInt ? Math.trunc(s.minimum) : s.minimum;
    const ex = s.exclusiveMinimum === true;
    if (ex ? v <= min : v < min)
      w.errs.push(
        invalid(field, v, `${name} in body should be greater than ${ex ? '' : 'or equal to '}${num(min)}`),
      );
  }
  if (s.maximum !== undefined) {
    const max = isInt ? Math.trunc(s.maximum) : s.maximum;
    const ex = s.exclusiveMaximum === true;
    if (ex ? v >= max : v > max)
      w.errs.push(
        invalid(field, v, `${name} in body should be less than ${ex ? '' : 'or equal to '}${num(max)}`),
      );
  }
}

function checkArray(w: Walk, s: JSONSchemaProps, v: unknown[], name: string): void {
  if (s.items) v.forEach((item, i) => validateNode(w, s.items!, item, `${name}[${i}]`));
  const field = fieldOf(w, name);
  if (s.minItems !== undefined && v.length < s.minItems)
    w.errs.push(invalid(field, v.length, `${name} in body should have at least ${s.minItems} items`));
  if (s.maxItems !== undefined && v.length > s.maxItems)
    w.errs.push(
      invalid(field, v.length, `must have at most ${s.maxItems} ${s.maxItems === 1 ? 'item' : 'items'}`),
    );
  if (s.uniqueItems === true) {
    const seen = new Set<string>();
    for (const item of v) {
      const k = JSON.stringify(item);
      if (seen.has(k)) {
        w.errs.push(invalid(field, '', `${name} in body shouldn't contain duplicates`));
        break;
      }
      seen.add(k);
    }
  }
}

function checkEnum(w: Walk, s: JSONSchemaProps, v: unknown, name: string): void {
  if (!s.enum || s.enum.length === 0) return;
  if (v !== null && v !== undefined && s.enum.some((e) => isDeepStrictEqual(e, v))) return;
  const values = s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  w.errs.push(notSupported(fieldOf(w, name), v ?? null, values));
}

function checkObject(w: Walk, s: JSONSchemaProps, v: Record<string, unknown>, name: string): void {
  const field = fieldOf(w, name);
  const keys = Object.keys(v);
  if (s.minProperties !== undefined && keys.length < s.minProperties)
    w.errs.push(
      invalid(field, keys.length, `${name} in body should have at least ${s.minProperties} properties`),
    );
  if (s.maxProperties !== undefined && keys.length > s.maxProperties)
    w.errs.push(
      invalid(
        field,
        keys.length,
        `must have at most ${s.maxProperties} ${s.maxProperties === 1 ? 'item' : 'items'}`,
      ),
    );
  const props = s.properties ?? {};
  if (s.additionalProperties === false) {
    for (const k of keys)
      if (!Object.hasOwn(props, k))
        w.errs.push(invalid(field, k, `${name}.${k} in body is a forbidden property`));
  } else if (isObject(s.additionalProperties)) {
    for (const k of keys)
      if (!Object.hasOwn(props, k)) validateNode(w, s.additionalProperties, v[k], `${name}.${k}`);
  }
  for (const [k, ps] of Object.entries(props))
    if (Object.hasOwn(v, k)) validateNode(w, ps, v[k], name === '' ? k : `${name}.${k}`);
  for (const k of s.required ?? [])
    if (!Object.hasOwn(v, k)) w.errs.push(required(fieldOf(w, `${name}.${k}`), ''));
}

function validateNode(w: Walk, s: JSONSchemaProps, v: unknown, name: string): void {
  checkType(w, s, v, name);
  if (v === null || v === undefined) {
    checkEnum(w, s, v, name);
    return;
  }
  checkSchemaProps(w, s, v, name);
  if (typeof v === 'string') {
    checkString(w, s, v, name);
    checkFormat(w, s, v, name);
  }
  if (typeof v === 'number') checkNumber(w, s, v, name);
  if (Array.isArray(v)) checkArray(w, s, v, name);
  checkEnum(w, s, v, name);
  if (isObject(v)) checkObject(w, s, v, name);
}

/**
 * `value` checked against `schema` as kube-openapi's SchemaValidator does (see the file's
 * header); errors under `fldPath` ('' for a custom resource, `<schema path>.default` for a
 * default). The OpenAPI part only: list types and embedded resources are separate.
 */
export function validateOpenAPIValue(schema: JSONSchemaProps, value: unknown, fldPath: string): FieldError[] {
  const w: Walk = { fldPath, errs: [] };
  validateNode(w, schema, value, '');
  return w.errs;
}

/** The indices of the items that repeat an earlier one (the second occurrence only), as listtype's validateListSet. */
function nonUnique(items: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  items.forEach((x, i) => {
    const k = x === UNSPECIFIED ? '\u0000unspecified' : JSON.stringify(x);
    const times = seen.get(k) ?? 0;
    if (times === 1) out.push(i);
    seen.set(k, times + 1);
  });
  return out;
}

const UNSPECIFIED = Symbol('unspecified key');

function listMap(path: string, s: JSONSchemaProps, v: unknown[], errs: FieldError[]): void {
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (x !== null && !isObject(x)) {
      errs.push(invalid(indexPath(path, i), x, 'must be an object for an array of list-type map'));
      return;
    }
  }
  if (v.length <= 1) return;
  const keyFields = s['x-kubernetes-list-map-keys'] ?? [];
  if (keyFields.length === 1) {
    const f = keyFields[0]!;
    const keys = v.map((x) => (isObject(x) && Object.hasOwn(x, f) ? x[f] : UNSPECIFIED));
    for (const i of nonUnique(keys))
      errs.push(duplicate(indexPath(path, i), keys[i] === UNSPECIFIED ? {} : { [f]: keys[i] }));
    return;
  }
  const keys = v.map((x) => {
    const key: Record<string, unknown> = {};
    if (isObject(x)) for (const f of keyFields) if (Object.hasOwn(x, f)) key[f] = x[f];
    return key;
  });
  for (const i of nonUnique(keys)) errs.push(duplicate(indexPath(path, i), keys[i]));
}

function listTypes(path: string, s: JSONSchemaProps, v: unknown, errs: FieldError[]): void {
  if (Array.isArray(v)) {
    const lt = s['x-kubernetes-list-type'];
    if (lt === 'set') for (const i of nonUnique(v)) errs.push(duplicate(indexPath(path, i), v[i]));
    else if (lt === 'map') listMap(path, s, v, errs);
    if (s.items) v.forEach((item, i) => listTypes(indexPath(path, i), s.items!, item, errs));
  } else if (isObject(v)) {
    const ap = s.additionalProperties;
    for (const [k, x] of Object.entries(v)) {
      const ps = s.properties?.[k];
      if (ps) listTypes(childPath(path, k), ps, x, errs);
      if (isObject(ap) && !ps) listTypes(keyPath(path, k), ap, x, errs);
    }
  }
}

/** x-kubernetes-list-type set and map over `obj` (pkg/apiserver/schema/listtype). */
export function validateListSetsAndMaps(schema: JSONSchemaProps, obj: unknown, fldPath = ''): FieldError[] {
  const errs: FieldError[] = [];
  listTypes(fldPath, schema, obj, errs);
  return errs;
}

/** apimachinery's path segment name check (content.IsPathSegmentName) as an ObjectMeta name rule. */
function pathSegmentName(name: string, prefix: boolean): string[] {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  for (const c of ['/', '%']) if (name.includes(c)) return [`may not contain '${c}'`];
  return [];
}

/** GroupVersion parse errors, as schema.ParseGroupVersion words them. */
function parseGroupVersion(apiVersion: string): string | undefined {
  const parts = apiVersion.split('/');
  if (parts.length > 2) return `unexpected GroupVersion string: ${apiVersion}`;
  return undefined;
}

function strMap(v: unknown): Record<string, string> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function embeddedResource(path: string, x: Record<string, unknown>, errs: FieldError[]): void {
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(required(childPath(path, 'apiVersion'), ''));
  if (!Object.hasOwn(x, 'kind')) errs.push(required(childPath(path, 'kind'), ''));
  for (const [k, v] of Object.entries(x)) {
    const p = childPath(path, k);
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(invalid(p, v, 'must be a string'));
      else if (v === '') errs.push(invalid(p, v, 'must not be empty'));
      else {
        const why = parseGroupVersion(v);
        if (why) errs.push(invalid(p, v, why));
      }
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(invalid(p, v, 'must be a string'));
      else if (v === '') errs.push(invalid(p, v, 'must not be empty'));
      else {
        const msgs = isDNS1035Label(v.toLowerCase());
        if (msgs.length > 0)
          errs.push(invalid(p, v, `may have mixed case, but should otherwise match: ${msgs.join(',')}`));
      }
    } else if (k === 'metadata') {
      if (!isObject(v)) {
        errs.push(invalid(p, v, 'must be an object'));
        continue;
      }
      const name = typeof v.name === 'string' && v.name !== '' ? v.name : 'fakename';
      const namespace = typeof v.namespace === 'string' ? v.namespace : '';
      const labels = strMap(v.labels);
      const annotations = strMap(v.annotations);
      errs.push(
        ...validateObjectMeta(
          {
            name,
            ...(typeof v.generateName === 'string' ? { generateName: v.generateName } : {}),
            namespace,
            ...(labels ? { labels } : {}),
            ...(annotations ? { annotations } : {}),
            ...(Array.isArray(v.finalizers)
              ? { finalizers: v.finalizers.filter((f): f is string => typeof f === 'string') }
              : {}),
          },
          { namespaced: namespace !== '', nameFn: pathSegmentName },
          p,
        ),
      );
    }
  }
}

function embedded(path: string, s: JSONSchemaProps | undefined, v: unknown, errs: FieldError[]): void {
  if (!s) return;
  if (isObject(v)) {
    if (s['x-kubernetes-embedded-resource'] === true) embeddedResource(path, v, errs);
    for (const [k, x] of Object.entries(v)) {
      const ps = s.properties?.[k];
      if (ps) embedded(childPath(path, k), ps, x, errs);
      else if (isObject(s.additionalProperties)) embedded(keyPath(path, k), s.additionalProperties, x, errs);
    }
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => embedded(indexPath(path, i), s.items, x, errs));
  }
}

/** Every nested x-kubernetes-embedded-resource object of `obj` checked (pkg/apiserver/schema/objectmeta Validate). */
export function validateEmbeddedResources(
  schema: JSONSchemaProps,
  obj: unknown,
  fldPath = '',
  isResourceRoot = false,
): FieldError[] {
  const errs: FieldError[] = [];
  embedded(
    fldPath,
    isResourceRoot ? { ...schema, 'x-kubernetes-embedded-resource': true } : schema,
    obj,
    errs,
  );
  return errs;
}
