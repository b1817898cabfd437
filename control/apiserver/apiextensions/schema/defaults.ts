/**
 * Structural defaulting (apiextensions-apiserver pkg/apiserver/schema/defaulting
 * algorithm.go and prunenulls.go), in place:
 *
 * - a property that is missing, or null where the property is not nullable, gets a deep
 *   copy of its `default:`; so does a null array item or additionalProperties value whose
 *   schema has a default and is not nullable;
 * - a null where a non-nullable property without a default is expected is removed, as
 *   PruneNonNullableNullsWithoutDefaults does before defaulting;
 * - then every property, additionalProperties value and array item is defaulted in turn,
 *   so a default's own nested properties get their defaults too.
 *
 * Defaults are stored pruned and valid (validateStructuralSchema refuses any other), so
 * they are copied as they are.
 */
import { isObject } from './validate-value.js';
import type { JSONSchemaProps } from './types.js';

function nonNullableNull(v: unknown, s: JSONSchemaProps): boolean {
  return v === null && s.nullable !== true;
}

function defaultValue(x: unknown, s: JSONSchemaProps | undefined): void {
  if (!s) return;
  if (isObject(x)) {
    const props = s.properties ?? {};
    for (const [k, ps] of Object.entries(props)) {
      const has = Object.hasOwn(x, k);
      if (ps.default !== undefined && (!has || nonNullableNull(x[k], ps))) x[k] = structuredClone(ps.default);
      else if (has && ps.default === undefined && nonNullableNull(x[k], ps)) delete x[k];
    }
    const ap = isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
    for (const k of Object.keys(x)) {
      const ps = Object.hasOwn(props, k) ? props[k] : ap;
      if (ps === ap && ap && ap.default !== undefined && nonNullableNull(x[k], ap))
        x[k] = structuredClone(ap.default);
      defaultValue(x[k], ps);
    }
  } else if (Array.isArray(x)) {
    const items = s.items;
    for (let i = 0; i < x.length; i++) {
      if (items && items.default !== undefined && nonNullableNull(x[i], items))
        x[i] = structuredClone(items.default);
      defaultValue(x[i], items);
    }
  }
}

/**
 * Applies the schema's `default:` values to `obj` in place (see the file's header). `obj`
 * is a decoded custom resource (or any JSON value); anything that is not an object or array
 * is left alone.
 */
export function applyDefaults(schema: JSONSchemaProps, obj: unknown): void {
  defaultValue(obj, schema);
}
