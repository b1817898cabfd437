/**
 * PATCH: the four patch types Kubernetes serves for built-in kinds, applied to a live
 * object, plus the field-ownership bookkeeping (`metadata.managedFields`) that server-side
 * apply needs from every other write. The mechanisms live in ./patch/ (one per file):
 *
 *   application/json-patch+json            RFC 6902           patch/json-patch.ts
 *   application/merge-patch+json           RFC 7386           patch/merge-patch.ts
 *   application/strategic-merge-patch+json strategic merge    patch/strategic.ts
 *   application/apply-patch+yaml           server-side apply  patch/apply.ts
 *
 * The registry owns the rest of the PATCH flow, as the apiserver's patch handler does
 * around these: reading the live object, retrying on a stale resourceVersion, name and
 * namespace checks, defaulting, validation, admission, and recording the write's
 * ownership with `recordUpdate` (not done here, except by apply itself).
 *
 * Nothing here modifies its inputs; a failed patch throws an ApiError and changes nothing.
 */
import { decodeYamlBody, parseYamlBody, yamlUnmarshalErrors } from './encoding/yaml-body.js';
import { duplicateFields } from './fieldvalidation/duplicate-fields.js';
import { yamlNestingExceeds } from './encoding/yaml-nesting.js';
import {
  forbidden,
  invalid as invalidField,
  required,
  toStatusCauses,
  tooLong,
} from '../../api/meta/validation.js';
import type { FieldError } from '../../api/meta/validation.js';
import type { KubeObject } from '../../api/object.js';
import { serverSideApply } from './patch/apply.js';
import { isObject, jsonTypeName, type JsonObject } from './patch/json.js';
import { applyJsonPatch } from './patch/json-patch.js';
import { applyMergePatch } from './patch/merge-patch.js';
import { SmpError, strategicMergePatch } from './patch/strategic.js';
import { ApiError, badRequest, invalid, unsupportedMediaType } from './status.js';
import { checkValueNesting, MAX_JSON_NESTING_DEPTH, nestedTooDeeply } from './request.js';

export { recordUpdate, type RecordUpdateOptions } from './patch/record-update.js';
export { LAST_APPLIED_ANNOTATION } from './patch/apply.js';

import { PATCH_CONTENT_TYPES, type PatchContentType } from './encoding/media-types.js';
export { PATCH_CONTENT_TYPES, type PatchContentType } from './encoding/media-types.js';

export const APPLY_PATCH_TYPE: PatchContentType = 'application/apply-patch+yaml';

/** Kubernetes' limit on the length of a fieldManager. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/**
 * The patch type of a Content-Type header (parameters such as `; charset=utf-8` ignored).
 * @throws ApiError 415 UnsupportedMediaType naming the four accepted types
 */
export function patchTypeOf(contentType: string | undefined): PatchContentType {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const found = PATCH_CONTENT_TYPES.find((t) => t === type);
  if (!found) throw unsupportedMediaType(type, PATCH_CONTENT_TYPES);
  return found;
}

/** The query options of a PATCH that matter to the patch itself. */
export interface PatchQueryOptions {
  /** `fieldManager`: required for apply, at most 128 printable characters. */
  fieldManager?: string;
  /** `force`: apply only; taking over conflicting fields. Any value (even false) is refused for other types. */
  force?: boolean;
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * Checks the PATCH options as Kubernetes' ValidatePatchOptions: apply needs a
 * fieldManager, other patch types may not set force, a fieldManager is at most 128 bytes
 * of printable characters.
 * @throws ApiError 422 Invalid on `PatchOptions.meta.k8s.io ""`, e.g.
 *   `fieldManager: Required value: is required for apply patch`
 */
export function validatePatchOptions(type: PatchContentType, options: PatchQueryOptions): void {
  const errs: FieldError[] = [];
  const manager = options.fieldManager ?? '';
  if (type !== APPLY_PATCH_TYPE) {
    if (options.force !== undefined)
      errs.push(forbidden('force', 'may not be specified for non-apply patch'));
  } else if (manager === '') {
    errs.push(required('fieldManager', 'is required for apply patch'));
  }
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) {
    errs.push(tooLong('fieldManager', FIELD_MANAGER_MAX_LENGTH));
  }
  let position = 0;
  for (const ch of manager) {
    if (!PRINTABLE.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      errs.push(
        invalidField('fieldManager', manager, `invalid character U+${code} (at position ${position})`),
      );
    }
    position += Buffer.byteLength(ch);
  }
  if (errs.length > 0) {
    throw invalid(
      'PatchOptions',
      { group: 'meta.k8s.io', resource: 'patchoptions', name: '' },
      toStatusCauses(errs),
    );
  }
}

/**
 * The manager a write is recorded under when the request names none: the User-Agent up
 * to its first '/' (`kubectl/v1.32.0 (linux/amd64) ...` → `kubectl`), printable
 * characters only, at most 128 (Kubernetes' managerOrUserAgent). kubectl names its own
 * managers: kubectl-client-side-apply, kubectl-edit, kubectl-patch, kubectl-create,
 * kubectl-replace, kubectl-label, kubectl-annotate, kubectl (server-side apply), ...
 */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const prefix = (userAgent ?? '').split('/')[0]!;
  return [...prefix]
    .filter((ch) => PRINTABLE.test(ch))
    .slice(0, FIELD_MANAGER_MAX_LENGTH)
    .join('');
}

export interface ApplyPatchOptions extends PatchQueryOptions {
  /** The request's Content-Type. */
  contentType: string;
  /** The live object (with apiVersion, kind, metadata.managedFields). Never modified. */
  original: KubeObject;
  /** The raw request body. */
  patch: string;
  /** The client-node model of the kind, e.g. 'V1Deployment' (ResourceInfo.model). */
  model: string;
  /** The request's group/version and kind; default: the original's. */
  apiVersion?: string;
  kind?: string;
  /** For apply: the time recorded in managedFields. Default: now. */
  now?: Date;
  /** 'status', 'scale', ... when patching through a subresource. */
  subresource?: string;
  /** Top-level fields the strategy resets on this path (e.g. `['status']`): apply never owns them. */
  resetFields?: readonly string[];
}

/**
 * Applies a PATCH body to the live object and returns the patched object (a new one).
 *
 * Failures (ApiError):
 * - 415 UnsupportedMediaType: another Content-Type.
 * - 422 Invalid (`PatchOptions.meta.k8s.io "" is invalid: ...`): apply without
 *   fieldManager, `force` on another patch type, a malformed fieldManager.
 * - JSON patch: 400 BadRequest for a body that is not an array of operations, 413 for
 *   more than 10000 operations, 422 Invalid ("the server rejected our request due to an
 *   error in our request") when an operation fails — a `test` included.
 * - Merge patch: 400 BadRequest "Invalid JSON Patch" for a body that is not an object.
 * - Strategic merge patch: 400 BadRequest for a malformed body or directive, 422 for
 *   lists of lists or a `$retainKeys` the patch contradicts.
 * - Apply: 400 BadRequest for YAML that does not decode (`error decoding YAML: ...`),
 *   another apiVersion/kind (`invalid object type: ...`) or managedFields in the body;
 *   500 without a reason for a body that does not fit the schema (`failed to create
 *   typed patch object ...: .metadata.labels.v: expected string, got ...`); 409
 *   Conflict (`Apply failed with 1 conflict: conflict with "m" using apps/v1:
 *   .spec.replicas`) unless `force`.
 * - Any type: 422 Invalid (`patch: Invalid value: ...`) when the patched document is not
 *   an object or names another apiVersion/kind. A removed apiVersion/kind is restored.
 */
export function applyPatch(opts: ApplyPatchOptions): KubeObject {
  const type = patchTypeOf(opts.contentType);
  validatePatchOptions(type, opts);
  const original = opts.original;
  const apiVersion = opts.apiVersion ?? original.apiVersion ?? '';
  const kind = opts.kind ?? original.kind ?? '';
  let patched: unknown;
  switch (type) {
    case 'application/json-patch+json':
      patched = applyJsonPatch(original, opts.patch);
      break;
    case 'application/merge-patch+json':
      patched = applyMergePatch(original as JsonObject, opts.patch);
      break;
    case 'application/strategic-merge-patch+json':
      try {
        patched = strategicMergePatch(original as JsonObject, opts.patch, opts.model);
      } catch (err) {
        throw smpApiError(err);
      }
      break;
    case 'application/apply-patch+yaml':
      return serverSideApply({
        live: original,
        applied: decodeApplyPatch(opts.patch),
        model: opts.model,
        apiVersion,
        kind,
        fieldManager: opts.fieldManager ?? '',
        force: opts.force ?? false,
        now: opts.now ?? new Date(),
        ...(opts.subresource !== undefined ? { subresource: opts.subresource } : {}),
        ...(opts.resetFields !== undefined ? { resetFields: opts.resetFields } : {}),
      });
  }
  return checkTypeMeta(patched, apiVersion, kind);
}

export interface CreateFromApplyOptions {
  /** The raw apply body (YAML or JSON). */
  patch: string;
  model: string;
  /** The request's group/version and kind. */
  apiVersion: string;
  kind: string;
  fieldManager?: string;
  force?: boolean;
  now?: Date;
  subresource?: string;
  resetFields?: readonly string[];
}

/**
 * The object a server-side apply creates when there is none yet: the applied
 * configuration with managedFields naming its manager (operation Apply), without the
 * system fields a create may not set (uid, creationTimestamp, deletionTimestamp,
 * deletionGracePeriodSeconds, selfLink). The caller then creates it as a POST would
 * (name/namespace checks, defaults, validation) and answers 201.
 * @throws ApiError as `applyPatch` does for apply (422 without fieldManager, 400 for a
 *   bad body)
 */
export function createFromApply(opts: CreateFromApplyOptions): KubeObject {
  validatePatchOptions(APPLY_PATCH_TYPE, opts);
  return serverSideApply({
    live: undefined,
    applied: decodeApplyPatch(opts.patch),
    model: opts.model,
    apiVersion: opts.apiVersion,
    kind: opts.kind,
    fieldManager: opts.fieldManager ?? '',
    force: opts.force ?? false,
    now: opts.now ?? new Date(),
    ...(opts.subresource !== undefined ? { subresource: opts.subresource } : {}),
    ...(opts.resetFields !== undefined ? { resetFields: opts.resetFields } : {}),
  });
}

/**
 * Decodes an apply body: JSON (what kubectl sends) or YAML as go-yaml v2 reads it
 * (encoding/yaml-body.ts: YAML 1.1, the first document, a repeated key's last value, as
 * Kubernetes' decoder). An empty body is an empty object.
 * @throws ApiError 400 `error decoding YAML: ...`
 */
export function decodeApplyPatch(body: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    // Before the parser, which recurses once per level (encoding/yaml-nesting.ts).
    if (yamlNestingExceeds(body, MAX_JSON_NESTING_DEPTH)) throw nestedTooDeeply();
    try {
      value = parseYamlBody(body);
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
    checkValueNesting(value);
  }
  if (value === null || value === undefined) return {};
  if (!isObject(value)) {
    throw badRequest(
      `error decoding YAML: json: cannot unmarshal ${jsonTypeName(value)} into Go value of type map[string]interface {}`,
    );
  }
  return value;
}

/**
 * What the apply patcher does after a successful apply when fieldValidation is Warn or
 * Strict: it decodes the body again with yaml.UnmarshalStrict, whose go-yaml v2 errors
 * are the keys the body sets twice (a JSON body's too: JSON is YAML). Returns the Warn
 * warnings (`line 1: key "a" already set in map`, one each); none for Ignore or a clean
 * body.
 * @throws ApiError 400 under Strict: `error strict decoding YAML: error converting YAML to
 *   JSON: yaml: unmarshal errors:\n  line 1: key "a" already set in map`
 */
export function applyStrictDecoding(body: string, directive: 'Ignore' | 'Warn' | 'Strict'): string[] {
  if (directive === 'Ignore') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  // A JSON body without a repeated key (kubectl's) needs no second parse.
  if (parsed !== undefined && duplicateFields(body, { parsed }).length === 0) return [];
  let errors: string[];
  try {
    errors = decodeYamlBody(body).strictErrors;
  } catch (err) {
    const message = `error converting YAML to JSON: ${(err as Error).message}`;
    if (directive === 'Warn') return [message];
    throw badRequest(`error strict decoding YAML: ${message}`);
  }
  if (errors.length === 0) return [];
  if (directive === 'Warn') return errors;
  throw badRequest(
    `error strict decoding YAML: error converting YAML to JSON: ${yamlUnmarshalErrors(errors)}`,
  );
}

function smpApiError(err: unknown): ApiError {
  if (err instanceof SmpError) {
    if (err.code === 422) {
      return new ApiError(
        422,
        'Invalid',
        'the server rejected our request due to an error in our request',
        {},
      );
    }
    return badRequest(err.message);
  }
  throw err;
}

/** The patched document as an object of the request's kind (see `applyPatch`). */
function checkTypeMeta(patched: unknown, apiVersion: string, kind: string): KubeObject {
  const reject = (why: string): ApiError =>
    invalid('', { group: '', resource: '', name: '' }, [
      {
        reason: 'FieldValueInvalid',
        field: 'patch',
        message: `Invalid value: ${JSON.stringify(JSON.stringify(patched) ?? 'null')}: ${why}`,
      },
    ]);
  if (!isObject(patched)) throw reject('the patched document must be a JSON object');
  const obj = patched as KubeObject;
  if (obj.apiVersion === undefined && apiVersion) obj.apiVersion = apiVersion;
  if (obj.kind === undefined && kind) obj.kind = kind;
  if ((apiVersion && obj.apiVersion !== apiVersion) || (kind && obj.kind !== kind)) {
    throw reject(`the patched object must remain of apiVersion "${apiVersion}" and kind "${kind}"`);
  }
  return obj;
}
