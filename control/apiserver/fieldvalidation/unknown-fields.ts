/**
 * Unknown fields: what decoding into the Go type drops, found and removed in place
 * (Kubernetes always drops them; the directive decides whether anyone hears of it).
 */
import { rootOf } from './schema.js';
import type { FieldNode } from './schema.js';

/** Kubernetes' strict decoder keeps at most this many errors per decode. */
export const MAX_STRICT_ERRORS = 100;

export function childPath(parent: string, key: string): string {
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
