/**
 * PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize): a
 * claim grows only where its StorageClass allows it.
 *
 * On the UPDATE of a PersistentVolumeClaim (not a subresource), in the validate phase,
 * when `spec.resources.requests.storage` grows:
 *  - the stored claim must be Bound, else 403 `Only bound persistent volume claims can be
 *    expanded`;
 *  - the claim's class (the beta annotation, else storageClassName) must be set, unchanged,
 *    and a StorageClass with `allowVolumeExpansion: true`, else 403 `only dynamically
 *    provisioned pvc can be resized and the storageclass that provisions the pvc must
 *    support resize`.
 * A request that stays or shrinks passes (the strategy's validation has its own rules).
 */
import type { KubeObject } from '../../../api/object.js';
import { newForbidden } from '../status.js';
import { claimClass } from '../strategies/persistentvolumeclaims.js';
import { tryQuantity } from '../strategies/meta.js';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

/** What the plugin reads: a StorageClass by name (undefined when missing). */
export interface PersistentVolumeClaimResizeConfig {
  getStorageClass(name: string): Promise<KubeObject | undefined>;
}

const storageOf = (claim: KubeObject) =>
  tryQuantity(
    (claim.spec as { resources?: { requests?: { storage?: unknown } } } | undefined)?.resources?.requests
      ?.storage,
  );

/** The PersistentVolumeClaimResize plugin over `cfg` (see the file comment). */
export function persistentVolumeClaimResize(cfg: PersistentVolumeClaimResizeConfig): AdmissionPlugin {
  return {
    name: 'PersistentVolumeClaimResize',
    async validate(a: AdmissionAttributes): Promise<void> {
      if (a.operation !== 'UPDATE' || a.subresource !== undefined || !a.oldObject) return;
      if (a.resource.group !== '' || a.resource.resource !== 'persistentvolumeclaims') return;
      const size = storageOf(a.object);
      const oldSize = storageOf(a.oldObject);
      if (!size || !oldSize || size.cmp(oldSize) <= 0) return;
      const ref = { group: '', resource: 'persistentvolumeclaims', name: a.name };
      const phase = (a.oldObject.status as { phase?: unknown } | undefined)?.phase;
      if (phase !== 'Bound') throw newForbidden(ref, 'Only bound persistent volume claims can be expanded');
      const cls = claimClass(a.object);
      const allowed =
        cls !== '' &&
        cls === claimClass(a.oldObject) &&
        (await cfg.getStorageClass(cls))?.allowVolumeExpansion === true;
      if (!allowed)
        throw newForbidden(
          ref,
          'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
        );
    },
  };
}
