/**
 * StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection):
 * every new PersistentVolume gets the finalizer `kubernetes.io/pv-protection` and every
 * new PersistentVolumeClaim `kubernetes.io/pvc-protection` (once; not on subresources), in
 * the admit phase of a CREATE. The PV and PVC protection controllers remove them when the
 * object is deleted and nothing uses it any more (a claim: no pod; a volume: no bound claim).
 */
import type { AdmissionPlugin, AdmissionRequest } from './interfaces.js';

/** The finalizer that keeps a PersistentVolume bound to a claim from going away. */
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';
/** The finalizer that keeps a PersistentVolumeClaim a pod uses from going away. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

/** The StorageObjectInUseProtection plugin (see the file comment). */
export function storageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: 'StorageObjectInUseProtection',
    admit(r: AdmissionRequest): void {
      if (r.operation !== 'CREATE' || r.subresource !== undefined || r.resource.group !== '') return;
      const finalizer =
        r.resource.resource === 'persistentvolumes'
          ? PV_PROTECTION_FINALIZER
          : r.resource.resource === 'persistentvolumeclaims'
            ? PVC_PROTECTION_FINALIZER
            : undefined;
      const obj = r.body;
      if (!finalizer || !obj) return;
      const meta = obj.metadata ?? {};
      const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
      if (finalizers.includes(finalizer)) return;
      obj.metadata = { ...meta, finalizers: [...finalizers, finalizer] };
    },
  };
}
