/**
 * Request bodies and field validation (`fieldValidation=Strict|Warn|Ignore`): a create's
 * or update's body decoded and checked against its schema, and a patched object checked
 * the way kube-apiserver checks the result of a patch.
 */
import type { KubeObject } from '../../../api/object.js';
import {
  applyFieldValidation,
  checkFieldTypes,
  duplicateFields,
  fieldValidationDirective,
  formatGoValue,
  pruneUnknownFields,
} from '../fieldvalidation/index.js';
import { decodeObjectBody, readBody } from '../request.js';
import type { RequestScope } from './scope.js';

/**
 * Reads and decodes a create/update body and applies `fieldValidation` (Strict: 400 for
 * unknown or duplicate fields, a YAML body's repeated keys included; Warn, the default:
 * `Warning` headers). Unknown fields are
 * dropped either way, as Kubernetes' decoder does. `model` undefined: no schema check
 * (bodies that are not stored, such as bindings and evictions); '' (a custom resource): the
 * registry's strategy prunes by the CRD's schema, and types are its validation's (422).
 * @throws ApiError 400 (a body that does not decode, wrong JSON types, Strict errors),
 *   413 (a body over the limit), 415 (an unsupported content type).
 */
export async function decodeChecked(
  scope: RequestScope,
  verb: 'create' | 'update',
  model: string | undefined,
): Promise<KubeObject> {
  const { req, query, rr } = scope;
  const raw = await readBody(req);
  const directive = fieldValidationDirective(query, verb);
  const kind = model === 'V1Scale' ? 'Scale' : model === undefined ? undefined : rr.resource.kind;
  const { obj, yamlStrictErrors: yaml } = decodeObjectBody(raw, req.headers['content-type'], kind);
  // A custom resource: unknown fields are what its CRD's schema prunes (Strategy.unknownFields).
  const custom = model === '' ? scope.registry.unknownFields(obj) : undefined;
  if (custom) {
    const isJson = !/yaml|protobuf/i.test(req.headers['content-type'] ?? '');
    const duplicate = directive !== 'Ignore' && isJson ? duplicateFields(raw) : [];
    const { warnings } = applyFieldValidation(
      directive,
      { unknown: custom, duplicate, yaml },
      { verb, kind: rr.resource.kind, version: rr.resource.version },
    );
    for (const w of warnings) scope.warn(w);
    return obj;
  }
  if (!model) return obj;
  const isJson = !/yaml|protobuf/i.test(req.headers['content-type'] ?? '');
  const duplicate = directive !== 'Ignore' && isJson ? duplicateFields(raw, { model, parsed: obj }) : [];
  const unknown = pruneUnknownFields(model, obj);
  // Wrong JSON types are refused before anything else looks at the object (and before
  // strict-field errors), as Go decoding does; duplicateFields above needs it untouched.
  checkFieldTypes(model, obj, model === 'V1Scale' ? 'Scale' : rr.resource.kind, rr.resource.version, raw);
  const { warnings } = applyFieldValidation(
    directive,
    { unknown, duplicate, yaml },
    { verb, kind: rr.resource.kind, version: rr.resource.version },
  );
  for (const w of warnings) scope.warn(w);
  return obj;
}

/**
 * fieldValidation for a patched object: unknown fields are pruned; Strict answers 422
 * naming the patch, as Kubernetes; Warn passes each warning to `warn` (the request's
 * `Warning` headers).
 * @throws ApiError 422 under Strict when the patch set unknown or duplicate fields.
 */
export function checkPatchedFields(
  patched: KubeObject,
  type: string,
  rawPatch: string,
  warn: (message: string) => void,
  q: URLSearchParams,
  model: string,
  prune: (obj: KubeObject) => string[] = (obj) => pruneUnknownFields(model, obj),
): void {
  const directive = fieldValidationDirective(q, 'patch');
  // An apply body's repeated keys are applyStrictDecoding's (patch.ts); a JSON patch's
  // are not fields of the object.
  const duplicate =
    directive !== 'Ignore' &&
    type !== 'application/json-patch+json' &&
    type !== 'application/apply-patch+yaml'
      ? duplicateFields(rawPatch)
      : [];
  const badValue =
    directive === 'Strict'
      ? type === 'application/strategic-merge-patch+json'
        ? formatGoValue(JSON.parse(rawPatch))
        : JSON.stringify(patched)
      : '';
  const unknown = prune(patched);
  const { warnings } = applyFieldValidation(directive, { unknown, duplicate }, { verb: 'patch', badValue });
  for (const w of warnings) warn(w);
}
