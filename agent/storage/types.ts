/**
 * The wire fields of core/v1 PersistentVolume and storage.k8s.io/v1 StorageClass that the
 * local-path provisioner and the kubelet's claim resolution read and write: the shapes are
 * api/storage/types.ts's, shared with the control side (the PV controller and the
 * scheduler's VolumeBinding plugin).
 */
export type {
  ClaimReference,
  PersistentVolume,
  PersistentVolumeClaim,
  StorageClass,
} from '../../api/storage/types.js';
