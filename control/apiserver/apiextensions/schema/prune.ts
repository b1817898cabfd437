/**
 * Pruning of unknown fields (apiextensions-apiserver pkg/apiserver/schema/pruning
 * algorithm.go), in place:
 *
 * - a field that neither `properties` nor `additionalProperties` declares is removed, and
 *   its path recorded (`spec.foo`, `spec.items[0].bar`, a map key as `spec.labels.k`);
 * - `x-kubernetes-preserve-unknown-fields: true` keeps the unknown fields of that object
 *   (and everything below it), while the declared properties under it are still pruned;
 * - `additionalProperties: true` keeps its values as they are;
 * - an `x-kubernetes-embedded-resource` object, and the resource's root, keep `apiVersion`,
 *   `kind` and `metadata` (metadata is ObjectMeta's business: its unknown fields are
 *   dropped by ObjectMeta's own schema, not here).
 *
 * The paths come back sorted, as upstream's UnknownFieldPaths, for fieldValidation
 * Strict (an error) and Warn (a warning).
 */
import { isObject } from './validate-value.js';
import type { JSONSchemaProps } from './types.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

function join(path: string, k: string): string {
  return path === '' ? k : `${path}.${k}`;
}

function childSchema(s: JSONSchemaProps, k: string): JSONSchemaProps | 'keep' | undefined {
  const ps = s.properties?.[k];
  if (ps && Object.hasOwn(s.properties!, k)) return ps;
  if (s.additionalProperties === true) return 'keep';
  if (isObject(s.additionalProperties)) return s.additionalProperties as JSONSchemaProps;
  return undefined;
}

function skipPrune(x: unknown, s: JSONSchemaProps, path: string, out: string[]): void {
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      if (s['x-kubernetes-embedded-resource'] === true && META_FIELDS.has(k)) continue;
      const c = childSchema(s, k);
      if (c && c !== 'keep') prune(v, c, join(path, k), out);
    }
  } else if (Array.isArray(x) && s.items) {
    x.forEach((v, i) => prune(v, s.items!, `${path}[${i}]`, out));
  }
}

function prune(x: unknown, s: JSONSchemaProps, path: string, out: string[]): void {
  if (s['x-kubernetes-preserve-unknown-fields'] === true) {
    skipPrune(x, s, path, out);
    return;
  }
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      if (s['x-kubernetes-embedded-resource'] === true && META_FIELDS.has(k)) continue;
      const c = childSchema(s, k);
      if (c === 'keep') continue;
      if (c) prune(v, c, join(path, k), out);
      else {
        out.push(join(path, k));
        delete x[k];
      }
    }
  } else if (Array.isArray(x)) {
    if (s.items) x.forEach((v, i) => prune(v, s.items!, `${path}[${i}]`, out));
  }
}

/**
 * Removes from `obj`, in place, every field `schema` does not declare (see the file's
 * header); `obj` is a whole custom resource, so its apiVersion, kind and metadata stay.
 * @returns the dotted paths removed, sorted.
 */
export function pruneUnknownFields(schema: JSONSchemaProps, obj: unknown): string[] {
  const out: string[] = [];
  prune(obj, { ...schema, 'x-kubernetes-embedded-resource': true }, '', out);
  return out.sort();
}

/** The same for a value that is not a resource root (a default inside the schema). */
export function pruneValue(schema: JSONSchemaProps, value: unknown): string[] {
  const out: string[] = [];
  prune(value, schema, '', out);
  return out.sort();
}
