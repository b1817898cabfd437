/**
 * JSON merge patch (`application/merge-patch+json`, RFC 7386): objects merge key by key,
 * `null` deletes a key, anything else (arrays included) replaces. Nulls inside values
 * that are added are dropped, as evanphx/json-patch (Kubernetes' library) does.
 */
import { ownValue, setOwnValue } from '../../../api/meta/maps.js';
import { badRequest } from '../status.js';
import { deepCopy, isObject, type JsonObject } from './json.js';

/**
 * Applies the merge patch `body` to `doc`, which is not modified.
 * @throws ApiError 400 BadRequest ("Invalid JSON Patch", Kubernetes' words) for a body
 *   that is not a JSON object
 */
export function applyMergePatch(doc: JsonObject, body: string): JsonObject {
  let patch: unknown;
  try {
    patch = JSON.parse(body);
  } catch {
    throw badRequest('Invalid JSON Patch');
  }
  if (!isObject(patch)) throw badRequest('Invalid JSON Patch');
  return mergePatch(doc, patch) as JsonObject;
}

/**
 * RFC 7386 MergePatch(target, patch); neither input is modified. The target is copied once,
 * and the patch merged into the copy: copying again at every object the patch descends into
 * copied a pod's status twice for each status patch.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return withoutNulls(patch);
  return mergeInto(isObject(target) ? deepCopy(target) : {}, patch);
}

/** Merges `patch` into `out`, which is this module's own copy (changed in place), and returns it. */
function mergeInto(out: JsonObject, patch: JsonObject): JsonObject {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isObject(v)) {
      const current = ownValue(out, k);
      setOwnValue(out, k, mergeInto(isObject(current) ? current : {}, v));
    } else setOwnValue(out, k, withoutNulls(v));
  }
  return out;
}

/** A copy of `v` without null members of objects (also inside arrays). */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const [k, cv] of Object.entries(v)) if (cv !== null) setOwnValue(out, k, withoutNulls(cv));
    return out;
  }
  return v;
}
