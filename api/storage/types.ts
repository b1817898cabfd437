/**
 * The wire shapes of core/v1 PersistentVolume and storage.k8s.io/v1 StorageClass (k8s.io/api
 * names), shared by the control side (the PV controller, the scheduler's VolumeBinding
 * plugin) and the agent (the local-path provisioner, the kubelet's claim resolution).
 * Only the fields read or written somewhere are spelled out; everything else passes
 * through KubeObject's index signature. core/v1 PersistentVolumeClaim is api/types.ts's.
 */
import type { KubeObject, ObjectMeta } from '../object.js';
import type { NodeSelectorTerm, PersistentVolumeClaim } from '../types.js';

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

/** core/v1 PersistentVolumePhase. */
export type VolumePhase = 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed';

/** core/v1 PersistentVolumeReclaimPolicy. */
export type ReclaimPolicy = 'Retain' | 'Delete' | 'Recycle';

/** core/v1 PersistentVolume (the sources k8ts's kubelet mounts: hostPath and local). */
export interface PersistentVolume extends KubeObject {
  metadata: ObjectMeta;
  spec?: {
    capacity?: Record<string, string>;
    accessModes?: string[];
    persistentVolumeReclaimPolicy?: ReclaimPolicy;
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
    phase?: VolumePhase;
    message?: string;
    reason?: string;
    [f: string]: unknown;
  };
}

/** storage.k8s.io/v1 TopologySelectorTerm (a StorageClass's allowedTopologies). */
export interface TopologySelectorTerm {
  matchLabelExpressions?: { key: string; values: string[] }[];
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
  allowedTopologies?: TopologySelectorTerm[];
}
