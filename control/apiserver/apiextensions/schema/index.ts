/**
 * Structural schemas of CustomResourceDefinitions (apiextensions-apiserver
 * pkg/apiserver/schema and pkg/apiserver/validation over kube-openapi's
 * pkg/validation): the CRD's own schema checked, custom resources validated, defaulted and
 * pruned by it. Pure functions over decoded JSON; see README.md.
 */
export type { JSONSchemaProps, ValidationRule } from './types.js';
export { validateStructuralSchema } from './validate-schema.js';
export { applyDefaults } from './defaults.js';
export { pruneUnknownFields } from './prune.js';
import type { FieldError } from '../../../../api/meta/field-errors.js';
import type { JSONSchemaProps } from './types.js';
import {
  validateEmbeddedResources,
  validateListSetsAndMaps,
  validateOpenAPIValue,
} from './validate-value.js';

/**
 * A custom resource (the whole decoded object) checked against its version's schema:
 * every failing field as one FieldError with upstream's wording — the OpenAPI validation
 * (`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer:
 * "string"`), then list-type set/map duplicates, then nested embedded resources.
 * `oldObj` is accepted for transition rules; k8ts evaluates no CEL rules (schemas with
 * x-kubernetes-validations are refused by validateStructuralSchema), so it is unused.
 */
export function validateCustomResource(
  schema: JSONSchemaProps,
  obj: unknown,
  oldObj?: unknown,
): FieldError[] {
  void oldObj;
  return [
    ...validateOpenAPIValue(schema, obj, ''),
    ...validateListSetsAndMaps(schema, obj),
    ...validateEmbeddedResources(schema, obj),
  ];
}

/**
 * A part of a custom resource checked against the schema of that part, with errors under
 * `fldPath` and messages relative to the part, as upstream validates `status` on a status
 * write with a validator built from the schema's `status` property
 * (`status.ready: Invalid value: "string": ready in body must be of type boolean: "string"`).
 */
export function validateCustomResourceValue(
  schema: JSONSchemaProps,
  value: unknown,
  fldPath: string,
): FieldError[] {
  return [
    ...validateOpenAPIValue(schema, value, fldPath),
    ...validateListSetsAndMaps(schema, value, fldPath),
    ...validateEmbeddedResources(schema, value, fldPath),
  ];
}
