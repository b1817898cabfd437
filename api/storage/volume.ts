/**
 * The rules of binding claims to volumes that the PV controller and the scheduler's
 * VolumeBinding plugin share (k8s.io/component-helpers/storage/volume, and
 * pkg/volume/util's CheckNodeAffinity), as pure functions over plain API objects:
 *
 * - the annotations both write and read (bind-completed, bound-by-controller,
 *   selected-node, storage-provisioner, provisioned-by) and the protection finalizers;
 * - a claim's and a volume's class (the beta annotation wins over `storageClassName`);
 * - whether a volume is (pre-)bound to a claim, and the volume bound to it
 *   (GetBindVolumeToClaim: claimRef to the claim, `bound-by-controller` unless the
 *   volume was pre-bound by its creator);
 * - findMatchingVolume: among candidate volumes, the one pre-bound to the claim if it is
 *   big enough, else the smallest Available, unclaimed volume of the claim's class whose
 *   volumeMode matches, whose labels match the claim's selector, that is big enough and
 *   (scheduler path) whose node affinity holds for the node and whose access modes cover
 *   the claim's; findBestMatchForClaim: the PV controller's search over groups of volumes
 *   with the same access modes, fewest modes first;
 * - whether a claim's class delays binding until a pod is scheduled (WaitForFirstConsumer).
 */
import { labelSelectorFromObject, requirementMatches } from '../meta/labels.js';
import type { SelectionOperator } from '../meta/labels.js';
import { parseQuantity, type Quantity } from '../meta/quantity.js';
import type { KubeObject } from '../object.js';
import type { NodeSelectorRequirement, NodeSelectorTerm } from '../types.js';
import type {
  ClaimReference,
  PersistentVolume,
  PersistentVolumeClaim,
  StorageClass,
  TopologySelectorTerm,
} from './types.js';

/** On a claim: its binding has been set up once (AnnBindCompleted). */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** On a volume or claim: the binding was made by the controller, not by the user (AnnBoundByController). */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** On a claim: the node the scheduler chose for a WaitForFirstConsumer claim (AnnSelectedNode). */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** On a claim: the provisioner expected to provision it (AnnStorageProvisioner). */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
/** The deprecated spelling of ANN_STORAGE_PROVISIONER, still written (AnnBetaStorageProvisioner). */
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** On a volume: the provisioner that made it (AnnDynamicallyProvisioned). */
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
/** The pre-1.6 way to name a class, still honoured before `storageClassName` (BetaStorageClassAnnotation). */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
/** A StorageClass marked as the default (storageutil.IsDefaultStorageClassAnnotation). */
export const ANN_DEFAULT_STORAGE_CLASS = 'storageclass.kubernetes.io/is-default-class';
/** The beta spelling of ANN_DEFAULT_STORAGE_CLASS. */
export const ANN_BETA_DEFAULT_STORAGE_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
/** A class provisioner meaning "no dynamic provisioning" (NotSupportedProvisioner). */
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';
/** Keeps a claim while a pod uses it (StorageObjectInUseProtection). */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
/** Keeps a volume while it is bound (StorageObjectInUseProtection). */
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** Whether `obj` carries annotation `key` (metav1.HasAnnotation: the value does not matter). */
export function hasAnnotation(obj: KubeObject, key: string): boolean {
  const a = obj.metadata?.annotations;
  return a !== undefined && a !== null && Object.hasOwn(a, key);
}

/** `namespace/name` of a claim (claimToClaimKey). */
export function claimKey(claim: PersistentVolumeClaim): string {
  return `${claim.metadata.namespace ?? ''}/${claim.metadata.name ?? ''}`;
}

/** `namespace/name` of the claim a claimRef names (claimrefToClaimKey). */
export function claimRefKey(ref: ClaimReference): string {
  return `${ref.namespace ?? ''}/${ref.name ?? ''}`;
}

/** A claim's class, '' for none (GetPersistentVolumeClaimClass: the beta annotation first). */
export function claimClass(claim: PersistentVolumeClaim): string {
  const ann = claim.metadata.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (ann !== undefined) return ann;
  return claim.spec?.storageClassName ?? '';
}

/** Whether the claim names a class at all, even '' (PersistentVolumeClaimHasClass). */
export function claimHasClass(claim: PersistentVolumeClaim): boolean {
  return hasAnnotation(claim, ANN_BETA_STORAGE_CLASS) || typeof claim.spec?.storageClassName === 'string';
}

/** A volume's class, '' for none (GetPersistentVolumeClass: the beta annotation first). */
export function volumeClass(volume: PersistentVolume): string {
  const ann = volume.metadata.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (ann !== undefined) return ann;
  return volume.spec?.storageClassName ?? '';
}

/** Whether a StorageClass is marked default (IsDefaultAnnotation: either spelling, value "true"). */
export function isDefaultClass(cls: StorageClass): boolean {
  const a = cls.metadata.annotations;
  return a?.[ANN_DEFAULT_STORAGE_CLASS] === 'true' || a?.[ANN_BETA_DEFAULT_STORAGE_CLASS] === 'true';
}

/**
 * The default StorageClass among `classes` (GetDefaultClass): of those marked default, the
 * newest by creationTimestamp, then the first by name; undefined when none is marked.
 */
export function defaultClass(classes: readonly StorageClass[]): StorageClass | undefined {
  const marked = classes.filter(isDefaultClass);
  const created = (c: StorageClass) => Date.parse(c.metadata.creationTimestamp ?? '') || 0;
  marked.sort((a, b) => {
    const d = created(b) - created(a);
    if (d !== 0) return d;
    const an = a.metadata.name ?? '';
    const bn = b.metadata.name ?? '';
    return an < bn ? -1 : an > bn ? 1 : 0;
  });
  return marked[0];
}

/**
 * Whether `volume` is pre-bound or bound to `claim` (IsVolumeBoundToClaim): its claimRef
 * names the claim's namespace and name, and its uid when the claimRef has one.
 */
export function isVolumeBoundToClaim(volume: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = volume.spec?.claimRef;
  if (!ref) return false;
  if (
    (ref.name ?? '') !== (claim.metadata.name ?? '') ||
    (ref.namespace ?? '') !== (claim.metadata.namespace ?? '')
  )
    return false;
  if (ref.uid && ref.uid !== claim.metadata.uid) return false;
  return true;
}

/** The ObjectReference to a claim written into a volume's claimRef (reference.GetReference). */
export function claimReference(claim: PersistentVolumeClaim): ClaimReference {
  return {
    kind: 'PersistentVolumeClaim',
    namespace: claim.metadata.namespace ?? '',
    name: claim.metadata.name ?? '',
    uid: claim.metadata.uid ?? '',
    apiVersion: 'v1',
    ...(claim.metadata.resourceVersion ? { resourceVersion: claim.metadata.resourceVersion } : {}),
  };
}

/**
 * A copy of `volume` bound to `claim` and whether anything changed (GetBindVolumeToClaim):
 * the claimRef is written unless it already names the claim's namespace, name and uid;
 * `bound-by-controller` is added unless the volume was already (pre-)bound to the claim.
 * The input is never modified (it may be an informer's cached object).
 */
export function bindVolumeToClaim(
  volume: PersistentVolume,
  claim: PersistentVolumeClaim,
): { volume: PersistentVolume; dirty: boolean } {
  const setBoundByController = !isVolumeBoundToClaim(volume, claim);
  const clone = structuredClone(volume);
  clone.spec ??= {};
  let dirty = false;
  const ref = volume.spec?.claimRef;
  if (
    !ref ||
    (ref.name ?? '') !== (claim.metadata.name ?? '') ||
    (ref.namespace ?? '') !== (claim.metadata.namespace ?? '') ||
    (ref.uid ?? '') !== (claim.metadata.uid ?? '')
  ) {
    clone.spec.claimRef = claimReference(claim);
    dirty = true;
  }
  if (setBoundByController && !hasAnnotation(clone, ANN_BOUND_BY_CONTROLLER)) {
    clone.metadata.annotations = { ...clone.metadata.annotations, [ANN_BOUND_BY_CONTROLLER]: 'yes' };
    dirty = true;
  }
  return { volume: clone, dirty };
}

/** Whether the claim's and the volume's volumeMode differ, a missing one being Filesystem (CheckVolumeModeMismatches). */
export function volumeModeMismatches(claim: PersistentVolumeClaim, volume: PersistentVolume): boolean {
  return (claim.spec?.volumeMode ?? 'Filesystem') !== (volume.spec?.volumeMode ?? 'Filesystem');
}

/** Whether the volume offers every access mode the claim asks for (CheckAccessModes). */
export function accessModesSatisfied(claim: PersistentVolumeClaim, volume: PersistentVolume): boolean {
  const offered = new Set(volume.spec?.accessModes ?? []);
  return (claim.spec?.accessModes ?? []).every((m) => offered.has(m));
}

const ZERO = parseQuantity('0');

function quantityOf(v: unknown): Quantity {
  if (typeof v === 'number') return parseQuantity(String(v));
  if (typeof v !== 'string') return ZERO;
  try {
    return parseQuantity(v);
  } catch {
    return ZERO;
  }
}

/** The claim's `resources.requests.storage` (0 when missing or unparsable). */
export function requestedStorage(claim: PersistentVolumeClaim): Quantity {
  return quantityOf(claim.spec?.resources?.requests?.storage);
}

/** The volume's `capacity.storage` (0 when missing or unparsable). */
export function volumeCapacity(volume: PersistentVolume): Quantity {
  return quantityOf(volume.spec?.capacity?.storage);
}

const NODE_OPERATORS: Readonly<Record<NodeSelectorRequirement['operator'], SelectionOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
  Gt: 'gt',
  Lt: 'lt',
};

function termHolds(term: NodeSelectorTerm, node: KubeObject): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const holds = (r: NodeSelectorRequirement, labels: Readonly<Record<string, string>> | undefined) => {
    const operator = NODE_OPERATORS[r.operator];
    return (
      operator !== undefined && requirementMatches({ key: r.key, operator, values: r.values ?? [] }, labels)
    );
  };
  for (const e of exprs) if (!holds(e, node.metadata?.labels)) return false;
  for (const f of fields) {
    if (f.key !== 'metadata.name') return false;
    if (!holds(f, { 'metadata.name': node.metadata?.name ?? '' })) return false;
  }
  return true;
}

/**
 * Whether the volume may be used on `node` (volumeutil.CheckNodeAffinity): true without
 * a required node affinity, else when one of its terms holds for the node's labels (ORed
 * terms, ANDed expressions; a term with no expressions matches nothing).
 */
export function volumeNodeAffinityMatches(volume: PersistentVolume, node: KubeObject): boolean {
  const required = volume.spec?.nodeAffinity?.required;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => termHolds(t, node));
}

/**
 * Whether a node's labels satisfy a class's allowedTopologies (MatchTopologySelectorTerms):
 * no terms always; else one term whose every expression's key has one of its values.
 */
export function topologyMatches(
  terms: readonly TopologySelectorTerm[] | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!terms || terms.length === 0) return true;
  return terms.some((t) =>
    (t.matchLabelExpressions ?? []).every((e) => {
      const v = labels?.[e.key];
      return v !== undefined && e.values.includes(v);
    }),
  );
}

/**
 * The best volume among `volumes` for `claim` (FindMatchingVolume), or undefined; see the
 * file comment. `node` is given only by the scheduler (node affinity and access modes are
 * then checked); `excluded` names volumes already chosen for the pod's other claims;
 * `delayBinding` (PV controller path, a WaitForFirstConsumer claim) returns only a volume
 * pre-bound to the claim, leaving the choice of any other to the scheduler.
 * @throws SelectorParseError for a claim selector that does not parse (validation prevents it).
 */
export function findMatchingVolume(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  node: KubeObject | undefined,
  excluded: ReadonlySet<string> | undefined,
  delayBinding: boolean,
): PersistentVolume | undefined {
  const requested = requestedStorage(claim);
  const requestedClass = claimClass(claim);
  const selector = claim.spec?.selector ? labelSelectorFromObject(claim.spec.selector) : undefined;
  let smallest: PersistentVolume | undefined;
  let smallestQty: Quantity | undefined;
  for (const volume of volumes) {
    if (excluded?.has(volume.metadata.name ?? '')) continue;
    if (volumeModeMismatches(claim, volume)) continue;
    if (volume.metadata.deletionTimestamp) continue;
    const qty = volumeCapacity(volume);
    const affinityOK = node === undefined || volumeNodeAffinityMatches(volume, node);
    if (isVolumeBoundToClaim(volume, claim)) {
      // Pre-bound: the one answer when big enough; unsuitable for this node means no answer.
      if (qty.cmp(requested) < 0) continue;
      if (!affinityOK) return undefined;
      return volume;
    }
    if (node === undefined && delayBinding) continue;
    if (volume.status?.phase !== 'Available') continue;
    if (volume.spec?.claimRef) continue;
    if (selector && !selector.matches(volume.metadata.labels)) continue;
    if (volumeClass(volume) !== requestedClass) continue;
    if (!affinityOK) continue;
    if (node !== undefined && !accessModesSatisfied(claim, volume)) continue;
    if (qty.cmp(requested) >= 0 && (smallestQty === undefined || smallestQty.cmp(qty) > 0)) {
      smallest = volume;
      smallestQty = qty;
    }
  }
  return smallest;
}

/** The access modes of a volume as a canonical key (GetAccessModesAsString's set). */
function modesKey(modes: readonly string[] | undefined): string {
  return [...new Set(modes ?? [])].sort().join(',');
}

/**
 * The PV controller's search (persistentVolumeOrderedIndex.findBestMatchForClaim): the
 * volumes are grouped by their set of access modes; the groups offering every mode the
 * claim asks for are tried fewest modes first, and the first match wins, so a claim for
 * ReadWriteOnce takes a ReadWriteOnce volume before a ReadWriteOnce+ReadWriteMany one.
 */
export function findBestMatchForClaim(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  delayBinding: boolean,
): PersistentVolume | undefined {
  const groups = new Map<string, PersistentVolume[]>();
  for (const v of volumes) {
    const key = modesKey(v.spec?.accessModes);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(v);
  }
  const wanted = claim.spec?.accessModes ?? [];
  const candidates = [...groups.entries()]
    .map(([key, vols]) => ({ modes: key === '' ? [] : key.split(','), vols }))
    .filter((g) => wanted.every((m) => g.modes.includes(m)))
    .sort((a, b) => a.modes.length - b.modes.length);
  for (const g of candidates) {
    const found = findMatchingVolume(claim, g.vols, undefined, undefined, delayBinding);
    if (found) return found;
  }
  return undefined;
}

/**
 * Why `volume`, which the claim names in `spec.volumeName`, cannot serve it
 * (checkVolumeSatisfyClaim), or undefined when it can.
 */
export function volumeSatisfyClaimError(
  volume: PersistentVolume,
  claim: PersistentVolumeClaim,
): string | undefined {
  if (volume.metadata.deletionTimestamp)
    return `the volume is marked for deletion "${volume.metadata.name ?? ''}"`;
  if (volumeCapacity(volume).cmp(requestedStorage(claim)) < 0) return 'requested PV is too small';
  if (volumeClass(volume) !== claimClass(claim)) return 'storageClassName does not match';
  if (volumeModeMismatches(claim, volume)) return 'incompatible volumeMode';
  if (!accessModesSatisfied(claim, volume)) return 'incompatible accessMode';
  return undefined;
}

/** A StorageClass's volumeBindingMode is missing (IsDelayBindingMode's error). */
export class BindingModeError extends Error {
  constructor(className: string) {
    super(`VolumeBindingMode not set for StorageClass "${className}"`);
    this.name = 'BindingModeError';
  }
}

/**
 * Whether binding of `claim` waits for its first consumer (IsDelayBindingMode): false for
 * a claim without a class or whose class does not exist, else the class's
 * volumeBindingMode is WaitForFirstConsumer.
 * @throws BindingModeError for a class without a volumeBindingMode.
 */
export function isDelayBindingMode(
  claim: PersistentVolumeClaim,
  getClass: (name: string) => StorageClass | undefined,
): boolean {
  const name = claimClass(claim);
  if (name === '') return false;
  const cls = getClass(name);
  if (!cls) return false;
  if (!cls.volumeBindingMode) throw new BindingModeError(name);
  return cls.volumeBindingMode === 'WaitForFirstConsumer';
}

/** Whether the scheduler has asked for the claim to be provisioned on a node (IsDelayBindingProvisioning). */
export function isDelayBindingProvisioning(claim: PersistentVolumeClaim): boolean {
  return hasAnnotation(claim, ANN_SELECTED_NODE);
}

/** A resourceVersion as a number for ordering; NaN when it is not one. */
export function resourceVersionNumber(obj: KubeObject | undefined): number {
  const rv = obj?.metadata?.resourceVersion;
  return rv === undefined || rv === '' ? NaN : Number(rv);
}
