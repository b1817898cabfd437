/**
 * The strategy of a custom resource (upstream's apiextensions-apiserver
 * registry/customresource/strategy.go and validator.go), built for one served version of a
 * CRD from its ResourceInfo:
 *
 * - create: `status` dropped when the status subresource is on; the schema's defaults
 *   applied; then the object checked: metadata as every kind's, the body against the
 *   version's schema (validateCustomResource: every failing field, upstream's words), the
 *   scale subresource's replicas an integer;
 * - update: `status` kept from the stored object when the status subresource is on;
 *   `.../status` writes change only status (and metadata);
 * - generation: bumped by any change but metadata (and status, with the subresource);
 * - storage: conversion `None` — objects are stored with the storage version's apiVersion
 *   and served with the request's, nothing else rewritten;
 * - fieldValidation: unknown fields are what pruning removes (the schema's, and ObjectMeta's
 *   under metadata);
 * - PATCH: JSON patch, merge patch and apply; strategic merge patch is 415, as upstream.
 */
import { isDeepStrictEqual } from 'node:util';
import { childPath, invalid, type FieldError } from '../../../api/meta/field-errors.js';
import { nameIsDNSSubdomain } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import { pruneUnknownFields as pruneByModel } from '../fieldvalidation/index.js';
import type { ResourceInfo } from '../resources.js';
import { ApiError } from '../status.js';
import { validateMetadata } from '../strategies/meta.js';
import type { KindStrategy } from '../strategies/meta.js';
import type { ScaleAccessor } from '../strategy.js';
import { evaluateJSONPath, setJSONPathField } from './jsonpath.js';
import { applyDefaults, pruneUnknownFields, validateCustomResource } from './schema-seam.js';
import type { JSONSchemaProps } from './types.js';

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
  const group = r.group;
  const servedApiVersion = `${group}/${r.version}`;
  const storageApiVersion = `${group}/${custom.storageVersion}`;
  const withStatus = custom.version.subresources?.status !== undefined;
  const scalePaths = custom.version.subresources?.scale;
  const selectable = (custom.version.selectableFields ?? []).map((f) => f.jsonPath ?? '').filter((p) => p);
  const envelope = new Set(['apiVersion', 'kind', 'metadata', ...(withStatus ? ['status'] : [])]);

  const validate = (obj: KubeObject): FieldError[] => {
    const errs = [...validateMetadata(obj, r.namespaced, false), ...validateCustomResource(schema, obj)];
    if (scalePaths?.specReplicasPath) {
      const v = evaluateJSONPath(obj, scalePaths.specReplicasPath)[0];
      if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0))
        errs.push(invalid(scalePaths.specReplicasPath.slice(1), v, 'should be a non-negative integer'));
    }
    return errs;
  };

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
    validateStatusUpdate: (obj) => validate(obj),
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
    unknownFields(obj) {
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
      fromStorage: (obj) => {
        obj.apiVersion = servedApiVersion;
        return obj;
      },
    },
  };
}
