/**
 * PersistentVolumeClaim (core/v1): Kubernetes' SetDefaults_PersistentVolumeClaim(Spec),
 * ValidatePersistentVolumeClaim / ValidatePersistentVolumeClaimUpdate /
 * ValidatePersistentVolumeClaimStatusUpdate (pkg/apis/core/validation) and
 * pkg/registry/core/persistentvolumeclaim/strategy.go, with the features of 1.34 on
 * (VolumeAttributesClass, RecoverVolumeExpansionFailure, AnyVolumeDataSource).
 *
 * - Defaults: volumeMode Filesystem, quantities in canonical form, status `{phase: Pending}`;
 *   on create a dataSource is mirrored into dataSourceRef and back (NormalizeDataSources).
 * - Update: the spec is immutable except that `volumeName` may be set once (the PV
 *   controller binds), a class may be set on a claim that had none (`storageClassName`
 *   from nil: the retroactive default class; or from the beta annotation), and a Bound
 *   claim's `resources.requests.storage` and `volumeAttributesClassName` may change. A
 *   smaller request is refused at or below `status.capacity` (recovery from a failed
 *   expansion may lower it to above the capacity). Whether a growth is allowed at all is
 *   PersistentVolumeClaimResize admission's (admission/persistentvolumeclaimresize.ts: the
 *   class must allow volume expansion). Upstream appends a Go cmp.Diff to `spec is
 *   immutable after creation ...`; k8ts leaves it out.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  childPath,
  forbidden,
  invalid,
  isDNS1123Subdomain,
  isQualifiedName,
  keyPath,
  nameIsDNSLabel,
  notSupported,
  required,
  validateLabelSelector,
} from '../../../api/meta/validation.js';
import type { LabelSelectorObject } from '../../../api/meta/labels.js';
import type { KubeObject } from '../../../api/object.js';
import { ACCESS_MODES, VOLUME_MODES, className, validateAccessModes } from './persistentvolumes.js';
import type { Obj } from './meta.js';
import { claimSpecWarnings } from './podspec/warnings.js';
import {
  asObj,
  canonicalizeResourceList,
  clone,
  defaultString,
  defineStrategy,
  immutable,
  isObj,
  list,
  problems,
  quantityProblem,
  section,
  semanticEqual,
  str,
  strMap,
  tryQuantity,
} from './meta.js';

export { ACCESS_MODES };

/** The beta annotation that named a claim's class before storageClassName (BetaStorageClassAnnotation). */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** The claim's class (GetPersistentVolumeClaimClass): the beta annotation first, then storageClassName; '' for none. */
export function claimClass(claim: KubeObject): string {
  const ann = claim.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION];
  if (ann !== undefined) return ann;
  return str(asObj(claim.spec)?.storageClassName);
}

/** The claim's requested storage (`spec.resources.requests.storage`), or undefined. */
function requestedStorage(spec: Obj): unknown {
  return asObj(asObj(spec.resources)?.requests)?.storage;
}

/** resizeStatusSet: the values of status.allocatedResourceStatuses, sorted. */
const RESIZE_STATUSES = [
  'ControllerResizeInProgress',
  'ControllerResizeInfeasible',
  'NodeResizeInProgress',
  'NodeResizeInfeasible',
  'NodeResizePending',
] as const;

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** SetDefaults_PersistentVolumeClaimSpec: volumeMode Filesystem; quantities in canonical form. */
export function defaultClaimSpec(spec: Obj): void {
  defaultString(spec, 'volumeMode', 'Filesystem');
  const resources = asObj(spec.resources);
  if (resources) {
    canonicalizeResourceList(resources, 'requests');
    canonicalizeResourceList(resources, 'limits');
  }
}

/** A selector as api/meta can read it (wrong JSON types dropped: decode errors in Kubernetes). */
function saneSelector(v: Obj): LabelSelectorObject {
  return {
    matchLabels: strMap(v.matchLabels),
    matchExpressions: list(v.matchExpressions)
      .filter(isObj)
      .map((e) => ({
        key: str(e.key),
        operator: str(e.operator),
        values: list(e.values).filter((x): x is string => typeof x === 'string'),
      })),
  };
}

/** validateDataSource / validateDataSourceRef at `field`. */
function dataSource(ref: Obj, field: string, withNamespace: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (str(ref.name) === '') errs.push(required(childPath(field, 'name')));
  const kind = str(ref.kind);
  if (kind === '') errs.push(required(childPath(field, 'kind')));
  const group = str(ref.apiGroup);
  if (group === '' && kind !== 'PersistentVolumeClaim')
    errs.push(invalid(field, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (group !== '') errs.push(...problems(childPath(field, 'apiGroup'), group, isDNS1123Subdomain(group)));
  const ns = str(ref.namespace);
  if (withNamespace && ns !== '')
    errs.push(...problems(childPath(field, 'namespace'), ns, nameIsDNSLabel(ns, false)));
  return errs;
}

/**
 * ValidatePersistentVolumeClaimSpec at `path`: at least one access mode (`at least 1 access
 * mode is required`), each a supported one and ReadWriteOncePod alone; a valid selector;
 * `resources.requests.storage` required (reported on `<path>.resources[storage]`, as
 * Kubernetes) and a quantity greater than zero; a class name; volumeMode Block or
 * Filesystem; dataSource and dataSourceRef (the same object unless the ref names a
 * namespace); a volume attributes class name.
 */
export function validateClaimSpec(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const modes = list(spec.accessModes);
  if (modes.length === 0) errs.push(required(`${path}.accessModes`, 'at least 1 access mode is required'));
  const selector = asObj(spec.selector);
  if (selector) errs.push(...validateLabelSelector(saneSelector(selector), `${path}.selector`));
  errs.push(...validateAccessModes(modes, `${path}.accessModes`));
  const storage = requestedStorage(spec);
  const storagePath = `${path}.resources[storage]`;
  if (!present(storage)) {
    errs.push(required(storagePath));
  } else {
    const problem = quantityProblem(storage);
    if (problem !== undefined) errs.push(invalid(storagePath, storage, problem));
    else if ((tryQuantity(storage)?.sign ?? 0) <= 0)
      errs.push(invalid(storagePath, tryQuantity(storage)!.toString(), 'must be greater than zero'));
  }
  errs.push(...className(spec.storageClassName, `${path}.storageClassName`));
  if (present(spec.volumeMode) && !(VOLUME_MODES as readonly unknown[]).includes(spec.volumeMode)) {
    errs.push(notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  }
  const source = asObj(spec.dataSource);
  const ref = asObj(spec.dataSourceRef);
  if (source) errs.push(...dataSource(source, `${path}.dataSource`, false));
  if (ref) errs.push(...dataSource(ref, `${path}.dataSourceRef`, true));
  if (ref && str(ref.namespace) !== '') {
    if (source)
      errs.push(
        invalid(path, `${path}.dataSource`, 'may not be specified when dataSourceRef.namespace is specified'),
      );
  } else if (source && ref) {
    const same =
      str(source.apiGroup) === str(ref.apiGroup) && source.kind === ref.kind && source.name === ref.name;
    if (!same) errs.push(invalid(path, `${path}.dataSource`, 'must match dataSourceRef'));
  }
  errs.push(...className(spec.volumeAttributesClassName, `${path}.volumeAttributesClassName`));
  return errs;
}

/** NormalizeDataSources: a dataSource without a ref gets one; a ref without a namespace gives a dataSource. */
function normalizeDataSources(spec: Obj): void {
  const source = asObj(spec.dataSource);
  const ref = asObj(spec.dataSourceRef);
  const copy = (o: Obj) => ({
    ...(present(o.apiGroup) ? { apiGroup: o.apiGroup } : {}),
    kind: o.kind,
    name: o.name,
  });
  if (source && !ref) spec.dataSourceRef = copy(source);
  else if (ref && !source && str(ref.namespace) === '') spec.dataSource = copy(ref);
}

/**
 * ValidatePersistentVolumeClaimUpdate's rules beyond the object's own validation (see
 * the file comment).
 */
export function validateClaimUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObj(obj.spec) ?? {};
  const before = asObj(old.spec) ?? {};
  const next = clone(spec);
  const prev = clone(before);
  // PVController sets volumeName once.
  if (str(before.volumeName) === '') {
    if (present(next.volumeName)) prev.volumeName = next.volumeName;
    else delete prev.volumeName;
  }
  const oldAnn = old.metadata?.annotations ?? {};
  const newAnn = obj.metadata?.annotations ?? {};
  const oldBeta = oldAnn[BETA_STORAGE_CLASS_ANNOTATION];
  const newBeta = newAnn[BETA_STORAGE_CLASS_ANNOTATION];
  const oldClassSet = present(before.storageClassName);
  const newClassSet = present(spec.storageClassName);
  if (
    oldBeta !== undefined &&
    !oldClassSet &&
    newClassSet &&
    spec.storageClassName === oldBeta &&
    (newBeta === undefined || newBeta === oldBeta)
  ) {
    // validateStorageClassUpgradeFromAnnotation: the beta annotation moves into the field.
    delete next.storageClassName;
  } else {
    if ((newBeta ?? '') !== (oldBeta ?? ''))
      errs.push(
        invalid(
          childPath('metadata', 'annotations', BETA_STORAGE_CLASS_ANNOTATION),
          newBeta ?? '',
          'field is immutable',
        ),
      );
    // validateStorageClassUpgradeFromNil: a class for a claim that had none.
    if (newClassSet && !oldClassSet && (oldBeta === undefined || spec.storageClassName === oldBeta))
      delete next.storageClassName;
  }
  const bound = str(asObj(obj.status)?.phase) === 'Bound';
  const nextRequests = asObj(asObj(next.resources)?.requests);
  if (bound && nextRequests) {
    const oldStorage = requestedStorage(before);
    if (present(oldStorage)) nextRequests.storage = clone(oldStorage);
    else delete nextRequests.storage;
  }
  if (bound && present(next.volumeAttributesClassName)) {
    if (present(prev.volumeAttributesClassName))
      next.volumeAttributesClassName = prev.volumeAttributesClassName;
    else delete next.volumeAttributesClassName;
  }
  if (!specEqual(next, prev)) {
    errs.push(
      forbidden(
        'spec',
        'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      ),
    );
  }
  const newSize = tryQuantity(requestedStorage(spec));
  const oldSize = tryQuantity(requestedStorage(before));
  if (newSize && oldSize && newSize.cmp(oldSize) < 0) {
    const capacity = tryQuantity(asObj(asObj(old.status)?.capacity)?.storage);
    if (!capacity || newSize.cmp(capacity) <= 0)
      errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  }
  errs.push(...immutable(spec.volumeMode, before.volumeMode, 'volumeMode'));
  if (present(before.volumeAttributesClassName)) {
    if (!present(spec.volumeAttributesClassName))
      errs.push(forbidden('spec.volumeAttributesClassName', 'update from non-nil value to nil is forbidden'));
    else if (spec.volumeAttributesClassName === '')
      errs.push(
        forbidden(
          'spec.volumeAttributesClassName',
          'update from non-nil value to an empty string is forbidden',
        ),
      );
  }
  return errs;
}

/**
 * Go's semantic equality of two claim specs: as semanticEqual, except that the pointer
 * fields storageClassName and volumeAttributesClassName tell unset from `""`.
 */
function specEqual(a: Obj, b: Obj): boolean {
  for (const k of ['storageClassName', 'volumeAttributesClassName']) {
    if (present(a[k]) !== present(b[k])) return false;
  }
  return semanticEqual(a, b);
}

/** validatePersistentVolumeClaimResourceKey: a qualified name, and `storage` if it is a native resource. */
function resourceKey(key: string, field: string): FieldError[] {
  const errs = problems(field, key, isQualifiedName(key));
  if (errs.length > 0) return errs;
  const native = !key.includes('/') || key.includes('kubernetes.io/');
  return native && key !== 'storage' ? [notSupported(field, key, ['storage'])] : [];
}

/** validateBasicResource: a quantity not below zero (`must be a valid resource quantity`). */
function basicResource(v: unknown, field: string): FieldError[] {
  const problem = quantityProblem(v);
  if (problem !== undefined) return [invalid(field, v, problem)];
  const q = tryQuantity(v)!;
  return q.sign < 0 ? [invalid(field, Number(q.value()), 'must be a valid resource quantity')] : [];
}

/** ValidatePersistentVolumeClaimStatusUpdate (the metadata rules are defineStrategy's). */
export function validateClaimStatusUpdate(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  // Upstream's path is `Spec.accessModes`, capital S.
  if (list(asObj(obj.spec)?.accessModes).length === 0) errs.push(required('Spec.accessModes'));
  const status = asObj(obj.status) ?? {};
  for (const [k, v] of Object.entries(asObj(status.capacity) ?? {}))
    errs.push(...basicResource(v, keyPath('status.capacity', k)));
  const resizePath = 'status.allocatedResourceStatus';
  for (const [k, v] of Object.entries(asObj(status.allocatedResourceStatuses) ?? {})) {
    errs.push(...resourceKey(k, resizePath));
    if (!(RESIZE_STATUSES as readonly unknown[]).includes(v))
      errs.push(notSupported(resizePath, k, RESIZE_STATUSES));
  }
  for (const [k, v] of Object.entries(asObj(status.allocatedResources) ?? {})) {
    const keyErrs = resourceKey(k, 'status.allocatedResources');
    if (keyErrs.length > 0) {
      errs.push(...keyErrs);
      continue;
    }
    errs.push(...basicResource(v, keyPath('status.allocatedResources', k)));
  }
  return errs;
}

/**
 * pkg/api/persistentvolumeclaim GetWarningsForPersistentVolumeClaim (1.32): the deprecated
 * `volume.beta.kubernetes.io/storage-class` annotation, then fractional bytes in the claim's
 * storage requests and limits.
 */
export function claimWarnings(obj: KubeObject): string[] {
  const out: string[] = [];
  if (Object.hasOwn(obj.metadata?.annotations ?? {}, BETA_STORAGE_CLASS_ANNOTATION))
    out.push(
      `metadata.annotations[${BETA_STORAGE_CLASS_ANNOTATION}]: deprecated since v1.8; use "storageClassName" attribute instead`,
    );
  out.push(...claimSpecWarnings('spec', obj.spec));
  return out;
}

/**
 * The PersistentVolumeClaim strategy (see the file comment). Status starts `{phase:
 * Pending}` and has its own subresource.
 */
export const persistentVolumeClaimStrategy = defineStrategy({
  namespaced: true,
  // Its storage.go sets ReturnDeletedObject: a DELETE answers with the object.
  returnDeletedObject: true,
  initialStatus: () => ({ phase: 'Pending' }),
  generationFields: [],
  prepareForCreate(obj) {
    const spec = asObj(obj.spec);
    if (spec) normalizeDataSources(spec);
  },
  defaults(obj) {
    defaultClaimSpec(section(obj, 'spec'));
    if (isObj(obj.status)) defaultString(obj.status, 'phase', 'Pending');
  },
  validate: (obj) => validateClaimSpec(asObj(obj.spec) ?? {}, 'spec'),
  validateUpdate: validateClaimUpdate,
  // As upstream's claim strategy, on create and every update (pvcutil.GetWarningsForPersistentVolumeClaim).
  warningsOnCreate: claimWarnings,
  warningsOnUpdate: (obj) => claimWarnings(obj),
  validateStatusUpdate: validateClaimStatusUpdate,
  fields: (obj) => ({ 'status.phase': str(asObj(obj.status)?.phase) }),
});
