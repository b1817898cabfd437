/**
 * PersistentVolume (core/v1, cluster-scoped): Kubernetes' SetDefaults_PersistentVolume,
 * ValidatePersistentVolume / ValidatePersistentVolumeUpdate / ValidatePersistentVolumeStatusUpdate
 * (pkg/apis/core/validation), volumevalidation.ValidatePersistentVolume (pkg/volume/validation)
 * and pkg/registry/core/persistentvolume/strategy.go.
 *
 * - Defaults: persistentVolumeReclaimPolicy Retain, volumeMode Filesystem, a hostPath's
 *   `type: ""`, capacity quantities in canonical form.
 * - Status: a new volume starts `{phase: Pending, lastPhaseTransitionTime: <now>}` (the PV
 *   controller makes it Available); a status write whose phase changes gets a new
 *   lastPhaseTransitionTime unless the writer set one, and one that keeps the phase keeps
 *   the old time (PersistentVolumeLastPhaseTransitionTime, GA in 1.31).
 * - Validation: access modes, capacity (`storage` only, > 0), reclaim policy, node
 *   affinity (ValidateNodeSelector), exactly one volume source, a storage class name, the
 *   volume mode, the volume attributes class (it needs csi), the mount-options annotation.
 *   Of the volume sources, hostPath, local, nfs and csi have their fields checked (the ones
 *   k8ts mounts or that a user of a small cluster writes); the others count for "one
 *   source" only.
 * - Update: the volume source is immutable (`spec.persistentvolumesource is immutable after
 *   creation`; upstream appends a Go cmp.Diff, which k8ts leaves out), so are volumeMode and
 *   a node affinity once set.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  childPath,
  forbidden,
  indexPath,
  invalid,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  keyPath,
  nameIsDNSSubdomain,
  notSupported,
  required,
  tooLong,
} from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import { rfc3339 } from '../../../api/object.js';
import {
  asObj,
  canonicalizeResourceList,
  clone,
  defaultPointer,
  defaultString,
  defineStrategy,
  eachObj,
  immutable,
  isObj,
  list,
  problems,
  quantityProblem,
  section,
  semanticEqual,
  str,
  tryQuantity,
  type Obj,
} from './meta.js';

/** supportedAccessModes, sorted as Kubernetes lists them in a NotSupported message. */
export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;
/** supportedVolumeModes, sorted. */
export const VOLUME_MODES = ['Block', 'Filesystem'] as const;
/** A PersistentVolume's supportedReclaimPolicy, sorted. */
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'] as const;
/** supportedHostPathTypes, sorted (the empty type first). */
const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
] as const;

/** The fields of a PersistentVolumeSpec that are not its PersistentVolumeSource. */
const NON_SOURCE_FIELDS = new Set([
  'capacity',
  'accessModes',
  'claimRef',
  'persistentVolumeReclaimPolicy',
  'storageClassName',
  'mountOptions',
  'volumeMode',
  'nodeAffinity',
  'volumeAttributesClassName',
]);

/**
 * The volume sources of a PersistentVolumeSpec in ValidatePersistentVolumeSpec's order,
 * with the path its "may not specify more than 1 volume type" names (upstream's, e.g.
 * `cephFS` for the `cephfs` field). flexVolume is counted without that check, as upstream.
 */
const PV_SOURCES: readonly (readonly [field: string, forbiddenPath: string])[] = [
  ['hostPath', 'hostPath'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['nfs', 'nfs'],
  ['rbd', 'rbd'],
  ['quobyte', 'quobyte'],
  ['cephfs', 'cephFS'],
  ['iscsi', 'iscsi'],
  ['cinder', 'cinder'],
  ['fc', 'fc'],
  ['flexVolume', 'flexVolume'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['scaleIO', 'scaleIO'],
  ['local', 'local'],
  ['storageos', 'storageos'],
  ['csi', 'csi'],
];

/** Volume sources that support mount options (volumevalidation.checkMountOption). */
const MOUNT_OPTION_SOURCES = new Set([
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'iscsi',
  'cinder',
  'cephfs',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
  'flocker',
  'scaleIO',
  'fc',
  'portworxVolume',
  'csi',
]);

/** The deprecated annotation that carried a PV's mount options (MountOptionAnnotation). */
const MOUNT_OPTION_ANNOTATION = 'volume.beta.kubernetes.io/mount-options';

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** validatePathNoBacksteps: no `..` element (`must not contain '..'`). */
function noBacksteps(path: string, field: string): FieldError[] {
  return path.split('/').includes('..') ? [invalid(field, path, "must not contain '..'")] : [];
}

/** ValidateCSIDriverName: required, at most 63 bytes, a DNS-1123 subdomain once lower-cased. */
export function validateCSIDriverName(driver: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (driver === '') errs.push(required(field));
  if (Buffer.byteLength(driver) > 63) errs.push(tooLong(field, 63));
  errs.push(...problems(field, driver, isDNS1123Subdomain(driver.toLowerCase())));
  return errs;
}

/** The field checks of the sources k8ts validates (see the file comment). */
function validateSource(kind: string, src: Obj, field: string): FieldError[] {
  const errs: FieldError[] = [];
  switch (kind) {
    case 'hostPath': {
      // validateHostPathVolumeSource
      const path = str(src.path);
      if (path === '') return [required(childPath(field, 'path'))];
      errs.push(...noBacksteps(path, childPath(field, 'path')));
      if (present(src.type) && !(HOST_PATH_TYPES as readonly unknown[]).includes(src.type))
        errs.push(notSupported(childPath(field, 'type'), src.type, HOST_PATH_TYPES));
      break;
    }
    case 'local': {
      // validateLocalVolumeSource
      const path = str(src.path);
      if (path === '') return [required(childPath(field, 'path'))];
      errs.push(...noBacksteps(path, childPath(field, 'path')));
      break;
    }
    case 'nfs': {
      // validateNFSVolumeSource
      if (str(src.server) === '') errs.push(required(childPath(field, 'server')));
      const path = str(src.path);
      if (path === '') errs.push(required(childPath(field, 'path')));
      else if (!path.startsWith('/'))
        errs.push(invalid(childPath(field, 'path'), path, 'must be an absolute path'));
      break;
    }
    case 'csi': {
      // validateCSIPersistentVolumeSource (driver and volumeHandle)
      errs.push(...validateCSIDriverName(str(src.driver), childPath(field, 'driver')));
      if (str(src.volumeHandle) === '') errs.push(required(childPath(field, 'volumeHandle')));
      break;
    }
  }
  return errs;
}

/** ValidateNodeSelectorRequirement (label keys and values: required node affinity). */
function nodeSelectorRequirement(req: Obj, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const values = list(req.values);
  const valuesPath = childPath(field, 'values');
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0)
        errs.push(required(valuesPath, "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0)
        errs.push(
          forbidden(valuesPath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        );
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1)
        errs.push(required(valuesPath, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(invalid(childPath(field, 'operator'), req.operator ?? '', 'not a valid selector operator'));
  }
  const key = str(req.key);
  errs.push(...problems(childPath(field, 'key'), key, isQualifiedName(key)));
  if (req.operator === 'In' || req.operator === 'NotIn') {
    values.forEach((v, i) => errs.push(...problems(indexPath(valuesPath, i), v, isValidLabelValue(str(v)))));
  }
  return errs;
}

/** ValidateNodeFieldSelectorRequirement: only `metadata.name`, In or NotIn with one value. */
function nodeFieldSelectorRequirement(req: Obj, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const values = list(req.values);
  if (req.operator === 'In' || req.operator === 'NotIn') {
    if (values.length !== 1)
      errs.push(
        required(
          childPath(field, 'values'),
          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        ),
      );
  } else {
    errs.push(invalid(childPath(field, 'operator'), req.operator ?? '', 'not a valid selector operator'));
  }
  if (req.key !== 'metadata.name') {
    errs.push(invalid(childPath(field, 'key'), req.key ?? '', 'not a valid field selector key'));
  } else {
    values.forEach((v, i) =>
      errs.push(...problems(indexPath(childPath(field, 'values'), i), v, nameIsDNSSubdomain(str(v), false))),
    );
  }
  return errs;
}

/**
 * ValidateNodeSelector at `field`: at least one term (`must have at least one node selector
 * term`), each term's matchExpressions and matchFields valid.
 */
export function validateNodeSelector(selector: Obj, field: string): FieldError[] {
  const termsPath = childPath(field, 'nodeSelectorTerms');
  const terms = list(selector.nodeSelectorTerms);
  if (terms.length === 0) return [required(termsPath, 'must have at least one node selector term')];
  const errs: FieldError[] = [];
  terms.forEach((t, i) => {
    const term = asObj(t) ?? {};
    const p = indexPath(termsPath, i);
    eachObj(term.matchExpressions, (req, j) =>
      errs.push(...nodeSelectorRequirement(req, indexPath(childPath(p, 'matchExpressions'), j))),
    );
    eachObj(term.matchFields, (req, j) =>
      errs.push(...nodeFieldSelectorRequirement(req, indexPath(childPath(p, 'matchFields'), j))),
    );
  });
  return errs;
}

/**
 * The access-mode rules shared by volumes and claims: each a supported mode (NotSupported
 * with the sorted list), ReadWriteOncePod alone (`may not use ReadWriteOncePod with other
 * access modes`). Whether the list may be empty is the caller's rule.
 */
export function validateAccessModes(modes: readonly unknown[], field: string): FieldError[] {
  const errs: FieldError[] = [];
  let rwop = false;
  let other = false;
  for (const m of modes) {
    if (!(ACCESS_MODES as readonly unknown[]).includes(m)) errs.push(notSupported(field, m, ACCESS_MODES));
    else if (m === 'ReadWriteOncePod') rwop = true;
    else other = true;
  }
  if (rwop && other) errs.push(forbidden(field, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

/** ValidatePositiveQuantityValue and validateBasicResource for one quantity at `field`. */
function positiveQuantity(v: unknown, field: string): FieldError[] {
  const problem = quantityProblem(v);
  if (problem !== undefined) return [invalid(field, v, problem)];
  const q = tryQuantity(v)!;
  const errs: FieldError[] = [];
  if (q.sign < 0) errs.push(invalid(field, Number(q.value()), 'must be a valid resource quantity'));
  if (q.sign <= 0) errs.push(invalid(field, q.toString(), 'must be greater than zero'));
  return errs;
}

/** ValidateClassName (a DNS-1123 subdomain) of a class name at `field`, when not empty. */
export function className(v: unknown, field: string): FieldError[] {
  const name = str(v);
  return name === '' ? [] : problems(field, name, nameIsDNSSubdomain(name, false));
}

/** ValidatePersistentVolumeSpec for a PersistentVolume object's spec (see the file comment). */
export function validatePersistentVolumeSpec(spec: Obj, path = 'spec'): FieldError[] {
  const errs: FieldError[] = [];
  const modes = list(spec.accessModes);
  if (modes.length === 0) errs.push(required(childPath(path, 'accessModes')));
  errs.push(...validateAccessModes(modes, childPath(path, 'accessModes')));

  const capPath = childPath(path, 'capacity');
  const capacity = asObj(spec.capacity) ?? {};
  const keys = Object.keys(capacity);
  if (keys.length === 0) errs.push(required(capPath));
  if (!Object.hasOwn(capacity, 'storage') || keys.length > 1)
    errs.push(notSupported(capPath, capacity, ['storage']));
  for (const k of keys) errs.push(...positiveQuantity(capacity[k], keyPath(capPath, k)));

  const policy = spec.persistentVolumeReclaimPolicy;
  if (str(policy) !== '' && !(RECLAIM_POLICIES as readonly unknown[]).includes(policy))
    errs.push(notSupported(childPath(path, 'persistentVolumeReclaimPolicy'), policy, RECLAIM_POLICIES));

  let nodeAffinitySpecified = false;
  const nodeAffinity = asObj(spec.nodeAffinity);
  if (nodeAffinity) {
    // validateVolumeNodeAffinity
    nodeAffinitySpecified = true;
    const req = asObj(nodeAffinity.required);
    const reqPath = childPath(path, 'nodeAffinity', 'required');
    if (req) errs.push(...validateNodeSelector(req, reqPath));
    else errs.push(required(reqPath, 'must specify required node constraints'));
  }

  let numVolumes = 0;
  for (const [kind, forbiddenPath] of PV_SOURCES) {
    const src = spec[kind];
    if (!present(src)) continue;
    if (numVolumes > 0 && kind !== 'flexVolume') {
      errs.push(forbidden(childPath(path, forbiddenPath), 'may not specify more than 1 volume type'));
      continue;
    }
    numVolumes++;
    // Upstream's paths for the source's own fields (gcePersistentDisk's are `persistentDisk`).
    const inner = kind === 'gcePersistentDisk' ? 'persistentDisk' : kind;
    errs.push(...validateSource(kind, asObj(src) ?? {}, childPath(path, inner)));
    if (kind === 'local' && !nodeAffinitySpecified)
      errs.push(required(childPath(path, 'nodeAffinity'), 'Local volume requires node affinity'));
  }
  if (numVolumes === 0) errs.push(required(path, 'must specify a volume type'));

  const hostPath = asObj(spec.hostPath);
  if (hostPath && cleanPath(str(hostPath.path)) === '/' && policy === 'Recycle')
    errs.push(
      forbidden(
        childPath(path, 'persistentVolumeReclaimPolicy'),
        "may not be 'recycle' for a hostPath mount of '/'",
      ),
    );

  errs.push(...className(spec.storageClassName, childPath(path, 'storageClassName')));
  if (present(spec.volumeMode) && !(VOLUME_MODES as readonly unknown[]).includes(spec.volumeMode))
    errs.push(notSupported(childPath(path, 'volumeMode'), spec.volumeMode, VOLUME_MODES));
  if (present(spec.volumeAttributesClassName)) {
    const vac = str(spec.volumeAttributesClassName);
    const vacPath = childPath(path, 'volumeAttributesClassName');
    if (vac === '') errs.push(required(vacPath, 'an empty string is disallowed'));
    else errs.push(...className(vac, vacPath));
    if (!present(spec.csi))
      errs.push(required(childPath(path, 'csi'), 'has to be specified when using volumeAttributesClassName'));
  }
  return errs;
}

/** Go's path.Clean for the one question asked of it here: does the path name `/`? */
function cleanPath(p: string): string {
  if (!p.startsWith('/')) return p;
  const parts: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** volumevalidation.checkMountOption: the mount-options annotation only on sources that take options. */
function checkMountOption(pv: KubeObject, spec: Obj): FieldError[] {
  if ([...MOUNT_OPTION_SOURCES].some((k) => present(spec[k]))) return [];
  const annotations = pv.metadata?.annotations ?? {};
  if (!Object.hasOwn(annotations, MOUNT_OPTION_ANNOTATION)) return [];
  return [
    forbidden(
      childPath('metadata', 'annotations', MOUNT_OPTION_ANNOTATION),
      'may not specify mount options for this volume type',
    ),
  ];
}

/** The PersistentVolumeSource of a spec: every field that is not NON_SOURCE_FIELDS. */
function volumeSource(spec: Obj): Obj {
  return Object.fromEntries(Object.entries(spec).filter(([k]) => !NON_SOURCE_FIELDS.has(k)));
}

/** ValidatePersistentVolumeUpdate's own rules (ValidatePersistentVolume runs too, in validate). */
export function validatePersistentVolumeUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const before = asObj(old.spec) ?? {};
  const errs: FieldError[] = [];
  const source = volumeSource(spec);
  const oldSource = volumeSource(before);
  // A CSI volume may gain a controllerExpandSecretRef it did not have.
  const csi = asObj(source.csi);
  const oldCsi = asObj(oldSource.csi);
  if (csi && oldCsi && !present(oldCsi.controllerExpandSecretRef) && present(csi.controllerExpandSecretRef)) {
    source.csi = { ...csi };
    delete (source.csi as Obj).controllerExpandSecretRef;
  }
  if (!semanticEqual(source, oldSource))
    errs.push(
      forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation'),
    );
  errs.push(...immutable(spec.volumeMode, before.volumeMode, 'volumeMode'));
  if (present(before.nodeAffinity))
    errs.push(...immutable(spec.nodeAffinity, before.nodeAffinity, 'nodeAffinity'));
  if (present(before.volumeAttributesClassName) && !present(spec.volumeAttributesClassName))
    errs.push(forbidden('spec.volumeAttributesClassName', 'update from non-nil value to nil is forbidden'));
  return errs;
}

/** Injected for tests: the time a phase change is stamped with. */
let now: () => Date = () => new Date();

/** Replaces the clock of lastPhaseTransitionTime (tests); returns the previous one. */
export function setPersistentVolumeClock(clock: () => Date): () => Date {
  const previous = now;
  now = clock;
  return previous;
}

/** SetDefaults_PersistentVolume and the defaults of its sources (see the file comment). */
function defaultPersistentVolume(obj: KubeObject): void {
  const spec = section(obj, 'spec');
  defaultString(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  defaultPointer(spec, 'volumeMode', 'Filesystem');
  canonicalizeResourceList(spec, 'capacity');
  const hostPath = asObj(spec.hostPath);
  if (hostPath) defaultPointer(hostPath, 'type', '');
  if (isObj(obj.status)) defaultString(obj.status, 'phase', 'Pending');
}

/**
 * The PersistentVolume strategy (see the file comment): cluster-scoped, a status
 * subresource, no generation.
 */
export const persistentVolumeStrategy = defineStrategy({
  namespaced: false,
  // Its storage.go sets ReturnDeletedObject: a DELETE answers with the object.
  returnDeletedObject: true,
  initialStatus: () => ({ phase: 'Pending', lastPhaseTransitionTime: rfc3339(now()) }),
  generationFields: [],
  defaults: defaultPersistentVolume,
  validate: (obj) => [
    ...validatePersistentVolumeSpec(asObj(obj.spec) ?? {}),
    ...checkMountOption(obj, asObj(obj.spec) ?? {}),
  ],
  validateUpdate: validatePersistentVolumeUpdate,
  prepareForStatusUpdate(obj, old) {
    const status = asObj(obj.status);
    const before = asObj(old.status) ?? {};
    if (!status) return;
    const samePhase = str(status.phase) === str(before.phase);
    if (samePhase && !present(status.lastPhaseTransitionTime)) {
      if (present(before.lastPhaseTransitionTime))
        status.lastPhaseTransitionTime = clone(before.lastPhaseTransitionTime);
    } else if (
      !samePhase &&
      (!present(status.lastPhaseTransitionTime) ||
        status.lastPhaseTransitionTime === before.lastPhaseTransitionTime)
    ) {
      status.lastPhaseTransitionTime = rfc3339(now());
    }
  },
});
