/**
 * JSON patch (`application/json-patch+json`, RFC 6902) with fast-json-patch, answering
 * failures as Kubernetes' patch handler does (it uses evanphx/json-patch):
 *   - a body that is not a JSON array of operations → 400 BadRequest;
 *   - more than 10000 operations → 413 RequestEntityTooLarge;
 *   - an operation that cannot be applied (a failed `test`, a missing path, an unknown
 *     `op`) → 422 Invalid, "the server rejected our request due to an error in our request".
 *     A path through `__proto__` (or `constructor/prototype`) is one too: fast-json-patch
 *     refuses it to keep Object.prototype safe, where evanphx/json-patch would write a map
 *     key of that name (the other patch types do).
 */
import jsonpatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { ApiError, badRequest } from '../status.js';
import { isObject, jsonTypeName } from './json.js';

/** Kubernetes' limit on the operations of one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/**
 * Applies the JSON patch `body` to `doc`, which is not modified.
 * @throws ApiError 400, 413 or 422 as described above
 */
export function applyJsonPatch(doc: unknown, body: string): unknown {
  let ops: unknown;
  try {
    ops = JSON.parse(body);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  if (!Array.isArray(ops)) {
    throw badRequest(`json: cannot unmarshal ${jsonTypeName(ops)} into Go value of type jsonpatch.Patch`);
  }
  const bad = ops.find((op) => !isObject(op));
  if (bad !== undefined) {
    throw badRequest(`json: cannot unmarshal ${jsonTypeName(bad)} into Go value of type jsonpatch.Operation`);
  }
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new ApiError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
    );
  }
  try {
    // validate: check each operation before applying it; mutateDocument=false: work on a copy.
    return jsonpatch.applyPatch(doc, ops as Operation[], true, false).newDocument;
  } catch {
    // Kubernetes answers every apply failure with this generic 422 and passes none of the
    // library's reason on (kubectl prints "The request is invalid: ..."); so do we.
    throw new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  }
}
