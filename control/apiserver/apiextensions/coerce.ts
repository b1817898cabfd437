/**
 * The ObjectMeta coercion of a custom resource's request decoder (apiextensions-apiserver
 * pkg/apiserver/schema/objectmeta coerce.go, as the crdHandler's schemaCoercingDecoder runs
 * it on every body with invalid metadata not dropped): `metadata` must decode into
 * metav1.ObjectMeta, else the body is a 400 before pruning, defaulting or validation look
 * at it. The decoder's error is a field error whose value Go prints with %#v, wrapped as
 * the create and update handlers word decode errors:
 *
 *   Widget in version "v1" cannot be handled as a Widget: metadata: Invalid value:
 *   map[string]interface {}{"name":true}: json: cannot unmarshal bool into Go struct field
 *   ObjectMeta.name of type string
 *
 * Nested embedded resources' metadata are checked by the schema's validation instead (422).
 */
import type { KubeObject } from '../../../api/object.js';
import { formatGoValue, goQuote } from '../encoding/go-format.js';
import { fieldTypeError } from '../fieldvalidation/index.js';
import { badRequest } from '../status.js';

/** Go's %#v of a value decoded from JSON into interface{} (inside a map or slice). */
function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharpV(o[k])}`).join(', ')}}`;
  }
  return formatGoValue(v);
}

/** field.Error's ErrorBody value for Invalid: simple types with %v, strings quoted, the rest %#v. */
function badValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return formatGoValue(v);
  return goSharpV(v);
}

/**
 * Throws when `obj.metadata` does not decode as ObjectMeta (see the file comment); `kind`
 * and `version` (`v1`) name the body. A decodable metadata has its nulls dropped as the
 * round trip through ObjectMeta drops them.
 * @throws ApiError 400 BadRequest with the decoder's words.
 */
export function coerceObjectMeta(obj: KubeObject, kind: string, version: string): void {
  if (!Object.hasOwn(obj, 'metadata')) return;
  let err: string | undefined;
  try {
    err = fieldTypeError('V1ObjectMeta', obj.metadata);
  } catch {
    // The field schemas are not loaded (a registry used outside a started server).
    return;
  }
  if (err === undefined) return;
  throw badRequest(
    `${kind} in version ${goQuote(version)} cannot be handled as a ${kind}: metadata: Invalid value: ${badValue(obj.metadata)}: ${err}`,
  );
}
