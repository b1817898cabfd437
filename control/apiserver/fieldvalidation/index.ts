/**
 * Server-side field validation: the `fieldValidation` query parameter of create, update
 * and patch (`Strict | Warn | Ignore`), unknown fields, duplicate fields, the
 * `Warning: 299` headers that carry Warn's findings, and the JSON types of fields (what
 * decoding into the Go type refuses whatever the directive).
 *
 * Why the server must do this: our OpenAPI v3 documents advertise `fieldValidation` on
 * every PATCH operation, so kubectl (apply, create, replace) sends `fieldValidation=Strict`
 * and does no client-side schema check at all; a typo such as `imagePullPolcy` is caught
 * here or nowhere.
 *
 * What Kubernetes does (k8s.io/apiserver endpoints/handlers, apimachinery's strict JSON
 * decoding, v1.32):
 * - The directive defaults to Warn; anything but '', Ignore, Warn, Strict is a 422 on
 *   `CreateOptions|UpdateOptions|PatchOptions.meta.k8s.io ""` (case matters).
 * - Decoding a body into the Go type always drops fields the type does not declare. With
 *   Warn or Strict the decoder also reports them, and duplicate keys, as `unknown field
 *   "<path>"` / `duplicate field "<path>"`, paths such as
 *   `spec.template.spec.containers[0].imagePullPolcy`, in document order, each once, at
 *   most 100.
 * - Strict on create/update: 400 BadRequest `<Kind> in version "<v>" cannot be handled as
 *   a <Kind>: strict decoding error: unknown field "spec.foo", unknown field "spec.bar"`.
 *   Strict on patch (json, merge, strategic): 422 Invalid on field `patch`, its value
 *   being the patched object (or, for strategic merge patch, the patch).
 * - Warn: the request succeeds and each finding becomes a `Warning: 299 - "<text>"`
 *   header, which kubectl prints as `Warning: <text>`.
 * - A value of the wrong JSON type (`replicas: "3"`) fails decoding itself, whatever the
 *   directive and before any strict decoding error: 400 BadRequest on create/update
 *   (`Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal
 *   string into Go struct field DeploymentSpec.spec.replicas of type int32`), 422 Invalid
 *   on field `patch` for a patched object. null is never wrong: Go decodes it as unset.
 *
 * The schema is the one our OpenAPI publishes (control/apiserver/openapi/, built from
 * the @kubernetes/client-node models), so what `kubectl explain` shows is exactly what is
 * accepted. Maps accept any key; IntOrString, Quantity, Time and free-form values
 * (FieldsV1, RawExtension, `any`) are never looked into.
 *
 * The folder, one concern per file: directive.ts (reading the directive, acting on it),
 * schema.ts (the OpenAPI definitions compiled into walkable trees), unknown-fields.ts,
 * duplicate-fields.ts, field-types.ts (what decoding into the Go type refuses) and
 * warnings.ts (`Warning` headers); Go's quoting and `%v` are ../encoding/go-format.ts.
 *
 * Usage: `await loadFieldSchemas()` once (it shares the OpenAPI catalog; later calls
 * return at once), then on every create, update and (after applying it) patch:
 *   directive = fieldValidationDirective(query, verb)          // before reading the body
 *   duplicate = duplicateFields(json, { model, parsed })        // JSON bodies, unless Ignore
 *   unknown   = pruneUnknownFields(model, obj)                  // always: Kubernetes drops them
 *   checkFieldTypes(model, obj, kind, version, body)            // create/update: 400, drops nulls
 *   checkPatchedFieldTypes(model, patched, contentType, patch)  // patch: 422, drops nulls
 *   { warnings } = applyFieldValidation(directive, { unknown, duplicate }, target)
 *   for (const h of warningHeaders(warnings)) res.appendHeader('Warning', h)
 */
export {
  FIELD_VALIDATION_DIRECTIVES,
  applyFieldValidation,
  fieldValidationDirective,
  strictDecodingErrors,
} from './directive.js';
export type {
  FieldValidationDirective,
  FieldValidationVerb,
  StrictDecodeTarget,
  StrictFieldProblems,
} from './directive.js';
export { loadFieldSchemas } from './schema.js';
export { MAX_STRICT_ERRORS, pruneUnknownFields } from './unknown-fields.js';
export { duplicateFields } from './duplicate-fields.js';
export type { DuplicateFieldsOptions } from './duplicate-fields.js';
export { checkFieldTypes, checkPatchedFieldTypes, fieldTypeError } from './field-types.js';
export type { DecodePath } from './field-types.js';
export { ResponseWarnings, warningHeader, warningHeaders } from './warnings.js';
export type { WarningHeaderSink } from './warnings.js';
export { formatGoValue, goQuote } from '../encoding/go-format.js';
