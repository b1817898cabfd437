/**
 * PersistentVolumeClaim (core/v1), a minimal one: Kubernetes' SetDefaults_PersistentVolumeClaim
 * and ValidatePersistentVolumeClaim / ValidatePersistentVolumeClaimUpdate
 * (pkg/apis/core/validation), enough for StatefulSets' volumeClaimTemplates. Nothing binds
 * or provisions a claim yet (there are no PersistentVolumes nor StorageClasses), so a claim
 * stays Pending.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { forbidden, invalid, notSupported, required } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import {
  asObj,
  canonicalizeResourceList,
  child,
  clone,
  defaultString,
  defineStrategy,
  list,
  semanticEqual,
  section,
  str,
  tryQuantity,
  quantityProblem,
} from './meta.js';

/** The access modes of core/v1, as Kubernetes lists them in its NotSupported message (sorted). */
export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;

const VOLUME_MODES = ['Block', 'Filesystem'] as const;

/** SetDefaults_PersistentVolumeClaimSpec: volumeMode Filesystem; quantities in canonical form. */
export function defaultClaimSpec(spec: Obj): void {
  defaultString(spec, 'volumeMode', 'Filesystem');
  const resources = asObj(spec.resources);
  if (resources) {
    canonicalizeResourceList(resources, 'requests');
    canonicalizeResourceList(resources, 'limits');
  }
}

/**
 * ValidatePersistentVolumeClaimSpec at `path`: at least one access mode (`at least 1 access
 * mode is required`), each a supported one and ReadWriteOncePod alone; `resources.requests.storage`
 * required (reported on `<path>.resources[storage]`, as Kubernetes) and a quantity greater
 * than zero; volumeMode Block or Filesystem.
 */
export function validateClaimSpec(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const modes = list(spec.accessModes);
  if (modes.length === 0) errs.push(required(`${path}.accessModes`, 'at least 1 access mode is required'));
  for (const m of modes) {
    if (!(ACCESS_MODES as readonly unknown[]).includes(m))
      errs.push(notSupported(`${path}.accessModes`, m, ACCESS_MODES));
  }
  if (modes.includes('ReadWriteOncePod') && modes.length > 1) {
    errs.push(forbidden(`${path}.accessModes`, 'may not use ReadWriteOncePod with other access modes'));
  }
  const requests = asObj(asObj(spec.resources)?.requests) ?? {};
  const storagePath = `${path}.resources[storage]`;
  if (requests.storage === undefined || requests.storage === null) {
    errs.push(required(storagePath));
  } else {
    const problem = quantityProblem(requests.storage);
    if (problem !== undefined) errs.push(invalid(storagePath, requests.storage, problem));
    else if ((tryQuantity(requests.storage)?.sign ?? 0) <= 0)
      errs.push(invalid(storagePath, requests.storage, 'must be greater than zero'));
  }
  if (spec.volumeMode !== undefined && !(VOLUME_MODES as readonly unknown[]).includes(spec.volumeMode)) {
    errs.push(notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  }
  return errs;
}

/**
 * The PersistentVolumeClaim strategy: volumeMode Filesystem by default; the spec rules above;
 * on update the spec is immutable except `resources.requests` (`spec is immutable after
 * creation except resources.requests and volumeAttributesClassName for bound claims`).
 * Status starts `{phase: Pending}` and has its own subresource.
 */
export const persistentVolumeClaimStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({ phase: 'Pending' }),
  generationFields: [],
  defaults(obj) {
    defaultClaimSpec(section(obj, 'spec'));
  },
  validate: (obj) => validateClaimSpec(asObj(obj.spec) ?? {}, 'spec'),
  validateUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
    const spec = clone(asObj(obj.spec) ?? {});
    const before = asObj(old.spec) ?? {};
    const requests = asObj(asObj(before.resources)?.requests);
    if (requests) child(child(spec, 'resources'), 'requests');
    const resources = asObj(spec.resources);
    if (resources) {
      if (requests) resources.requests = requests;
      else delete resources.requests;
    }
    if (!semanticEqual(spec, before)) {
      return [
        forbidden(
          'spec',
          'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
        ),
      ];
    }
    return [];
  },
  fields: (obj) => ({ 'status.phase': str(asObj(obj.status)?.phase) }),
});
