/**
 * The one place serving reaches the structural-schema module (validation, defaulting and
 * pruning of custom resources by their CRD's openAPIV3Schema). Until
 * `./schema/index.ts` lands, this file carries a small stand-in with the same four
 * functions: types, required, enum, defaults and pruning of declared properties, with
 * `x-kubernetes-preserve-unknown-fields`, `x-kubernetes-int-or-string` and
 * `x-kubernetes-embedded-resource`. Callers import from here only.
 */
import {
  childPath,
  indexPath,
  invalid,
  notSupported,
  required,
  type FieldError,
} from '../../../api/meta/field-errors.js';
import type { JSONSchemaProps } from './types.js';

export type { JSONSchemaProps };

/** The CRD's own schema checked (non-structural schemas refused); `fldPath` prefixes the errors. */
export function validateStructuralSchema(schema: JSONSchemaProps, fldPath: string): FieldError[] {
  const errs: FieldError[] = [];
  if (schema.type !== 'object' && !schema['x-kubernetes-preserve-unknown-fields'])
    errs.push(required(childPath(fldPath, 'type'), 'must be object at the root'));
  return errs;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function matchesType(s: JSONSchemaProps, v: unknown): boolean {
  if (s['x-kubernetes-int-or-string']) return typeof v === 'string' || Number.isInteger(v);
  if (v === null) return s.nullable === true;
  if (!s.type) return true;
  const t = typeOf(v);
  return t === s.type || (s.type === 'number' && t === 'integer');
}

function validateValue(s: JSONSchemaProps, v: unknown, path: string, errs: FieldError[]): void {
  if (!matchesType(s, v)) {
    errs.push(
      invalid(path, v, `${path} in body must be of type ${s.type ?? 'int-or-string'}: "${typeOf(v)}"`),
    );
    return;
  }
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    errs.push(
      notSupported(
        path,
        v,
        s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
      ),
    );
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    for (const r of s.required ?? []) if (!(r in o)) errs.push(required(childPath(path, r), ''));
    for (const [k, child] of Object.entries(o)) {
      const ps =
        s.properties?.[k] ??
        (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (ps) validateValue(ps, child, childPath(path, k), errs);
    }
  } else if (Array.isArray(v) && s.items) {
    v.forEach((item, i) => validateValue(s.items!, item, indexPath(path, i), errs));
  }
}

/** A custom resource checked against its version's schema: the causes of a 422. */
export function validateCustomResource(schema: JSONSchemaProps, obj: unknown): FieldError[] {
  const errs: FieldError[] = [];
  if (obj === null || typeof obj !== 'object') return errs;
  const o = obj as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata') continue;
    const ps = schema.properties?.[k];
    if (ps) validateValue(ps, v, k, errs);
  }
  for (const r of schema.required ?? []) if (!(r in o)) errs.push(required(r, ''));
  return errs;
}

/** Fills `default:` values of missing properties, in place. */
export function applyDefaults(schema: JSONSchemaProps, obj: unknown): void {
  if (obj === null || typeof obj !== 'object') return;
  if (Array.isArray(obj)) {
    if (schema.items) for (const item of obj) applyDefaults(schema.items, item);
    return;
  }
  const o = obj as Record<string, unknown>;
  for (const [k, ps] of Object.entries(schema.properties ?? {})) {
    if (o[k] === undefined && ps.default !== undefined) o[k] = structuredClone(ps.default);
    if (o[k] !== undefined) applyDefaults(ps, o[k]);
  }
  if (typeof schema.additionalProperties === 'object')
    for (const k of Object.keys(o))
      if (!schema.properties?.[k]) applyDefaults(schema.additionalProperties, o[k]);
}

function prune(s: JSONSchemaProps, v: unknown, path: string, root: boolean, out: string[]): void {
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    if (s.items) v.forEach((item, i) => prune(s.items!, item, indexPath(path, i), false, out));
    return;
  }
  const o = v as Record<string, unknown>;
  const keep = root || s['x-kubernetes-embedded-resource'] === true;
  for (const k of Object.keys(o)) {
    if (keep && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const ps =
      s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (ps) prune(ps, o[k], childPath(path, k), false, out);
    else if (!(s['x-kubernetes-preserve-unknown-fields'] || s.additionalProperties === true)) {
      out.push(childPath(path, k));
      delete o[k];
    }
  }
}

/** Removes, in place, what the schema does not declare; returns the dotted paths removed. */
export function pruneUnknownFields(schema: JSONSchemaProps, obj: unknown): string[] {
  const out: string[] = [];
  prune(schema, obj, '', true, out);
  return out;
}
