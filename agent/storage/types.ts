/**
 * The wire fields of core/v1 PersistentVolume and storage.k8s.io/v1 StorageClass that the
 * local-path provisioner and the kubelet's claim resolution read and write (k8s.io/api
 * names; everything else passes through KubeObject's index signature).
 */
import type { KubeObject, ObjectMeta } from '../../api/object.js';
import type { NodeSelectorTerm, PersistentVolumeClaim } from '../../api/types.js';

export type { PersistentVolumeClaim };

/** core/v1 ObjectReference as a PV's claimRef holds it. */
export interface ClaimReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

/** core/v1 PersistentVolume (the sources k8ts's kubelet mounts: hostPath and local). */
export interface PersistentVolume extends KubeObject {
  metadata: ObjectMeta;
  spec?: {
    capacity?: Record<string, string>;
    accessModes?: string[];
    persistentVolumeReclaimPolicy?: 'Retain' | 'Delete' | 'Recycle';
    storageClassName?: string;
    volumeMode?: 'Filesystem' | 'Block';
    mountOptions?: string[];
    hostPath?: { path: string; type?: string };
    local?: { path: string; fsType?: string };
    nodeAffinity?: { required?: { nodeSelectorTerms: NodeSelectorTerm[] } };
    claimRef?: ClaimReference;
    [field: string]: unknown;
  };
  status?: {
    phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed';
    message?: string;
    [f: string]: unknown;
  };
}

/** storage.k8s.io/v1 StorageClass. */
export interface StorageClass extends KubeObject {
  metadata: ObjectMeta;
  provisioner: string;
  parameters?: Record<string, string>;
  reclaimPolicy?: 'Retain' | 'Delete';
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  mountOptions?: string[];
  allowVolumeExpansion?: boolean;
}
