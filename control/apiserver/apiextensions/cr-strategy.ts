/**
 * The strategy of a custom resource (upstream's apiextensions-apiserver
 * registry/customresource/strategy.go and validator.go), built for one served version of a
 * CRD from its ResourceInfo:
 *
 * - create: `status` dropped when the status subresource is on; the schema's defaults
 *   applied (./schema applyDefaults); then the object checked as upstream's
 *   customResourceValidator: metadata as every kind's, the whole object against the
 *   version's schema (./schema validateCustomResource: every failing field, upstream's
 *   words), then the scale subresource's spec and status replicas (integers in 0..2^31-1)
 *   and label selector (a string), with upstream's accessor errors;
 * - update: `status` kept from the stored object when the status subresource is on, and
 *   validated as on create; `.../status` writes change only status (and metadata), and
 *   only the status is validated, by the schema's `status` property (as upstream's status
 *   validator), then the scale status;
 * - generation: bumped by any change but metadata (and status, with the subresource);
 * - storage: conversion `None` — objects are stored with the storage version's apiVersion
 *   and served with the request's; what is read from the store is pruned and defaulted by
 *   the storage version's schema first, as upstream's storage decoder does;
 * - decoding: metadata that does not decode as ObjectMeta is a 400 (coerce.ts);
 * - fieldValidation: unknown fields are what pruning removes (./schema pruneUnknownFields,
 *   and ObjectMeta's under metadata); the handlers prune before the strategy runs, so
 *   defaults are applied to the pruned object, as upstream's decoder prunes and then
 *   defaults;
 * - PATCH: JSON patch, merge patch and apply; strategic merge patch is 415, as upstream.
 */
import { isDeepStrictEqual } from 'node:util';
import { childPath, invalid, type FieldError } from '../../../api/meta/field-errors.js';
import { formatGoValue } from '../encoding/go-format.js';
import { nameIsDNSSubdomain } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import { pruneUnknownFields as pruneByModel } from '../fieldvalidation/index.js';
import type { ResourceInfo } from '../resources.js';
import { ApiError } from '../status.js';
import { validateMetadata } from '../strategies/meta.js';
import type { KindStrategy } from '../strategies/meta.js';
import type { ScaleAccessor } from '../strategy.js';
import { coerceObjectMeta } from './coerce.js';
import { evaluateJSONPath, setJSONPathField } from './jsonpath.js';
import {
  applyDefaults,
  pruneUnknownFields,
  validateCustomResource,
  validateCustomResourceValue,
  type JSONSchemaProps,
} from './schema/index.js';

/** The PATCH types a custom resource accepts (no strategic merge patch: there is no Go struct to take merge keys from). */
export const CUSTOM_RESOURCE_PATCH_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];

function scaleAccessor(paths: {
  specReplicasPath?: string;
  statusReplicasPath?: string;
  labelSelectorPath?: string;
}): ScaleAccessor {
  const first = (obj: KubeObject, path: string | undefined): unknown =>
    path ? evaluateJSONPath(obj, path)[0] : undefined;
  return {
    read(obj) {
      const spec = first(obj, paths.specReplicasPath);
      const status = first(obj, paths.statusReplicasPath);
      const selector = first(obj, paths.labelSelectorPath);
      return {
        specReplicas: typeof spec === 'number' ? spec : 0,
        statusReplicas: typeof status === 'number' ? status : 0,
        selector: typeof selector === 'string' ? selector : '',
      };
    },
    setReplicas(obj, replicas) {
      setJSONPathField(obj as Record<string, unknown>, paths.specReplicasPath ?? '.spec.replicas', replicas);
    },
  };
}

/**
 * unstructured.NestedInt64 / NestedString at a scale path (`.spec.replicas`): the value when
 * found, or the accessor error with apimachinery's words
 * (`.spec.replicas accessor error: two is of the type string, expected int64`). A missing
 * field (or a null on the way to it) is neither.
 */
function nestedField(
  obj: KubeObject,
  path: string,
  want: 'int64' | 'string',
): { value?: unknown; error?: string } {
  const fields = path.replace(/^\./, '').split('.');
  const at = (n: number) => `.${fields.slice(0, n).join('.')}`;
  let v: unknown = obj;
  for (let i = 0; i < fields.length; i++) {
    if (v === null || v === undefined) return {};
    if (typeof v !== 'object' || Array.isArray(v))
      return {
        error: `${at(i + 1)} accessor error: ${formatGoValue(v)} is of the type ${goTypeName(v)}, expected map[string]interface{}`,
      };
    const o = v as Record<string, unknown>;
    if (!Object.hasOwn(o, fields[i]!)) return {};
    v = o[fields[i]!];
  }
  const ok = want === 'int64' ? typeof v === 'number' && Number.isInteger(v) : typeof v === 'string';
  if (!ok)
    return {
      error: `${at(fields.length)} accessor error: ${formatGoValue(v)} is of the type ${goTypeName(v)}, expected ${want}`,
    };
  return { value: v };
}

/** Go's %T of a decoded JSON value. */
function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/** ValidateScaleSpec / ValidateScaleStatus for one replicas path: an integer in 0..MaxInt32. */
function replicasErrors(obj: KubeObject, path: string): FieldError[] {
  if (!path) return [];
  const got = nestedField(obj, path, 'int64');
  if (got.error !== undefined) return [invalid(path, 0, got.error)];
  const n = got.value as number | undefined;
  if (n === undefined) return [];
  if (n < 0) return [invalid(path, n, 'should be a non-negative integer')];
  if (n > 2 ** 31 - 1) return [invalid(path, n, `should be less than or equal to ${2 ** 31 - 1}`)];
  return [];
}

/**
 * The strategy of custom resource `r` (a ResourceInfo with `custom` set).
 * @throws Error when `r` is not a custom resource.
 */
export function customResourceStrategy(r: ResourceInfo): KindStrategy {
  const custom = r.custom;
  if (!custom) throw new Error(`customResourceStrategy: ${r.resource} is not a custom resource`);
  const schema: JSONSchemaProps = custom.version.schema?.openAPIV3Schema ?? {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  };
  const storageSchema: JSONSchemaProps =
    custom.crd.spec.versions?.find((v) => v.name === custom.storageVersion)?.schema?.openAPIV3Schema ??
    schema;
  const group = r.group;
  const servedApiVersion = `${group}/${r.version}`;
  const storageApiVersion = `${group}/${custom.storageVersion}`;
  const withStatus = custom.version.subresources?.status !== undefined;
  const scalePaths = custom.version.subresources?.scale;
  const selectable = (custom.version.selectableFields ?? []).map((f) => f.jsonPath ?? '').filter((p) => p);
  const envelope = new Set(['apiVersion', 'kind', 'metadata', ...(withStatus ? ['status'] : [])]);

  const statusSchema = schema.properties?.status;
  const scaleSpec = (obj: KubeObject): FieldError[] =>
    scalePaths ? replicasErrors(obj, scalePaths.specReplicasPath ?? '') : [];
  const scaleStatus = (obj: KubeObject): FieldError[] => {
    if (!scalePaths) return [];
    const errs = replicasErrors(obj, scalePaths.statusReplicasPath ?? '');
    const sel = scalePaths.labelSelectorPath;
    if (sel) {
      const got = nestedField(obj, sel, 'string');
      if (got.error !== undefined) errs.push(invalid(sel, '', got.error));
    }
    return errs;
  };
  // customResourceValidator.Validate / ValidateUpdate (type meta is the registry's).
  const validate = (obj: KubeObject): FieldError[] => [
    ...validateMetadata(obj, r.namespaced, false),
    ...validateCustomResource(schema, obj),
    ...scaleSpec(obj),
    ...scaleStatus(obj),
  ];
  // ValidateStatusUpdate: only the status, by the schema's status property.
  const validateStatus = (obj: KubeObject): FieldError[] => [
    ...validateMetadata(obj, r.namespaced, false),
    ...(statusSchema && Object.hasOwn(obj, 'status')
      ? validateCustomResourceValue(statusSchema, obj.status, 'status')
      : []),
    ...scaleStatus(obj),
  ];

  return {
    nameFn: nameIsDNSSubdomain,
    generationFields: [],
    allowCreateOnUpdate: false,
    patchTypes: CUSTOM_RESOURCE_PATCH_TYPES,
    ...(scalePaths ? { scale: scaleAccessor(scalePaths) } : {}),
    prepareForCreate(obj) {
      // As upstream's crdHandler: no new objects while the CRD is being deleted.
      if (custom.crd.metadata?.deletionTimestamp)
        throw new ApiError(
          405,
          'MethodNotAllowed',
          'create not allowed while custom resource definition is terminating',
        );
      if (withStatus) delete obj.status;
    },
    prepareForUpdate(obj, old) {
      if (!withStatus) return;
      if (old.status === undefined) delete obj.status;
      else obj.status = structuredClone(old.status);
    },
    prepareForStatusUpdate(obj, old) {
      for (const k of Object.keys(obj))
        if (k !== 'status' && k !== 'metadata' && !Object.hasOwn(old, k)) delete obj[k];
      for (const [k, v] of Object.entries(old))
        if (k !== 'status' && k !== 'metadata') obj[k] = structuredClone(v);
      applyDefaults(schema, obj);
    },
    defaults(obj) {
      applyDefaults(schema, obj);
    },
    validate,
    validateUpdate: () => [],
    validateStatusUpdate: (obj) => validateStatus(obj),
    generationChanged(obj, old) {
      const keys = new Set([...Object.keys(obj), ...Object.keys(old)]);
      for (const k of keys) if (!envelope.has(k) && !isDeepStrictEqual(obj[k], old[k])) return true;
      return false;
    },
    selectableFields(obj) {
      const meta = obj.metadata ?? {};
      const fields: Record<string, string> = { 'metadata.name': meta.name ?? '' };
      if (r.namespaced) fields['metadata.namespace'] = meta.namespace ?? '';
      for (const path of selectable) {
        const v = evaluateJSONPath(obj, path)[0];
        fields[path.slice(1)] =
          v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
      }
      return fields;
    },
    // The decode step of a body (create, update, and the result of a patch): metadata must
    // decode as ObjectMeta (400 otherwise, coerce.ts), then unknown fields are pruned.
    unknownFields(obj) {
      coerceObjectMeta(obj, r.kind, r.version);
      const found = pruneUnknownFields(schema, obj);
      if (obj.metadata && typeof obj.metadata === 'object') {
        try {
          for (const p of pruneByModel('V1ObjectMeta', obj.metadata)) found.push(childPath('metadata', p));
        } catch {
          // The field schemas are not loaded (a registry used outside a started server).
        }
      }
      return found;
    },
    storageCodec: {
      toStorage: (obj) =>
        obj.apiVersion === storageApiVersion ? obj : { ...obj, apiVersion: storageApiVersion },
      // As upstream's storage decoder: what is read is pruned and defaulted by the storage
      // version's schema as it is now (a field the CRD dropped is gone, a new default shows),
      // then served in the request's version. Decoded values are fresh, so in place is safe.
      fromStorage: (obj) => {
        pruneUnknownFields(storageSchema, obj);
        applyDefaults(storageSchema, obj);
        obj.apiVersion = servedApiVersion;
        return obj;
      },
    },
  };
}
