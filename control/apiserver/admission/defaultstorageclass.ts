/**
 * DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault): a new
 * PersistentVolumeClaim that asks for no class gets the default one.
 *
 * On the CREATE of a PersistentVolumeClaim (not a subresource), in the admit phase:
 *  - a claim that names a class is left alone: `spec.storageClassName` set (even to `""`,
 *    which asks for no class) or the beta annotation `volume.beta.kubernetes.io/storage-class`
 *    present (PersistentVolumeClaimHasClass);
 *  - otherwise the default class is the StorageClass annotated
 *    `storageclass.kubernetes.io/is-default-class: "true"` (or the beta annotation); of
 *    several, the newest by creationTimestamp, then the first by name (GetDefaultClass,
 *    since 1.26); none: the claim stays without a class, for the PV controller to give it
 *    one later (the retroactive default) or to bind it to a volume without a class;
 *  - `spec.storageClassName` is set to its name.
 * The mutation happens before the claim's defaults and validation (the registry's).
 */
import type { KubeObject } from '../../../api/object.js';
import { parseTime } from '../tables/format.js';
import { BETA_STORAGE_CLASS_ANNOTATION } from '../strategies/persistentvolumeclaims.js';
import { isDefaultClass } from '../strategies/storageclasses.js';
import type { AdmissionPlugin, AdmissionRequest } from './interfaces.js';

/** What the plugin reads: every StorageClass (the API server's store). */
export interface DefaultStorageClassConfig {
  listStorageClasses(): Promise<readonly KubeObject[]>;
}

/**
 * GetDefaultClass: the default StorageClass of `classes` (see the file comment), or
 * undefined when none is annotated default.
 */
export function defaultStorageClass(classes: readonly KubeObject[]): KubeObject | undefined {
  const created = (c: KubeObject) => parseTime(c.metadata?.creationTimestamp) ?? 0;
  const name = (c: KubeObject) => c.metadata?.name ?? '';
  // Names in Go's byte order, as its sort.Slice with `<` on strings.
  const byName = (a: KubeObject, b: KubeObject) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);
  return classes.filter(isDefaultClass).sort((a, b) => created(b) - created(a) || byName(a, b))[0];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The DefaultStorageClass plugin over `cfg` (see the file comment). */
export function defaultStorageClassAdmission(cfg: DefaultStorageClassConfig): AdmissionPlugin {
  return {
    name: 'DefaultStorageClass',
    async admit(r: AdmissionRequest): Promise<void> {
      if (r.operation !== 'CREATE' || r.subresource !== undefined) return;
      if (r.resource.group !== '' || r.resource.resource !== 'persistentvolumeclaims') return;
      const claim = r.body;
      if (!claim) return;
      if (claim.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] !== undefined) return;
      if (claim.spec !== undefined && claim.spec !== null && !isObj(claim.spec)) return; // a decode error upstream
      const spec = (claim.spec ?? {}) as Obj;
      if (spec.storageClassName !== undefined && spec.storageClassName !== null) return;
      const def = defaultStorageClass(await cfg.listStorageClasses());
      if (!def?.metadata?.name) return;
      spec.storageClassName = def.metadata.name;
      claim.spec = spec;
    },
  };
}
