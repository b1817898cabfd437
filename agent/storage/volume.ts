/**
 * The local-path provisioner's rulebook, as pure functions over plain API objects (what
 * rancher/local-path-provisioner's Provision and Delete decide, under the rules of
 * sig-storage-lib-external-provisioner's ProvisionController):
 *
 * - A claim is this node's to provision (shouldProvision) when it has no
 *   `spec.volumeName`, is not being deleted, its StorageClass's provisioner is
 *   `rancher.io/local-path`, and the scheduler's VolumeBinding PreBind annotated it
 *   `volume.kubernetes.io/selected-node: <this node>` (a WaitForFirstConsumer claim
 *   waits for that; k8ts provisions an Immediate one only once a node is chosen too,
 *   since a local volume must live on some node).
 * - A claim it cannot serve (provisionRefusal) is refused with the provisioner's words:
 *   a selector, volumeMode Block, an access mode other than ReadWriteOnce or
 *   ReadWriteOncePod.
 * - The volume (provisionedVolume) is named `pvc-<claim uid>`, a hostPath
 *   (DirectoryOrCreate) under the agent's `DATA_DIR/storage/`, with node affinity
 *   `kubernetes.io/hostname In [<the node's hostname label>]`, the claim's request as its
 *   capacity, its access modes, the class's reclaim policy (default Delete), and a
 *   claimRef to the claim; the PV controller then binds the two.
 * - A volume is deleted (shouldDelete) when this provisioner made it
 *   (`pv.kubernetes.io/provisioned-by`), it lives on this node, it is Released, its
 *   reclaim policy is Delete and it is not being deleted already.
 */
import type { KubeObject } from '../../api/object.js';
import type { NodeSelectorTerm } from '../../api/types.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from './types.js';

/** The provisioner's name (a StorageClass's `provisioner`), as k3s's. */
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';
/** The node the scheduler chose for a WaitForFirstConsumer claim (VolumeBinding PreBind). */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** Which provisioner made a PV (annDynamicallyProvisioned). */
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
/** The pre-1.6 way to name a claim's class, still honoured by the PV controller. */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
/** The node label a local volume's node affinity names. */
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';

/** A claim's StorageClass name (GetPersistentVolumeClaimClass: the beta annotation first), '' for none. */
export function claimClassName(claim: PersistentVolumeClaim): string {
  return claim.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] ?? claim.spec.storageClassName ?? '';
}

/** The PV name for a claim (getProvisionedVolumeNameForClaim). */
export function volumeNameFor(claim: PersistentVolumeClaim): string {
  return `pvc-${claim.metadata.uid ?? ''}`;
}

/** The hostname label value of a node (local-path-provisioner falls back to the node name). */
export function nodeHostname(node: KubeObject): string {
  return node.metadata?.labels?.[LABEL_HOSTNAME] ?? node.metadata?.name ?? '';
}

/** Whether `claim` is for this node's provisioner to provision (see the file comment). */
export function shouldProvision(
  claim: PersistentVolumeClaim,
  storageClass: StorageClass | undefined,
  nodeName: string,
): boolean {
  if (claim.spec.volumeName) return false;
  if (claim.metadata.deletionTimestamp) return false;
  if (storageClass?.provisioner !== LOCAL_PATH_PROVISIONER) return false;
  return claim.metadata.annotations?.[ANN_SELECTED_NODE] === nodeName;
}

/** Why the provisioner cannot provision `claim` (local-path-provisioner's words), or undefined. */
export function provisionRefusal(claim: PersistentVolumeClaim): string | undefined {
  if (claim.spec.selector) return 'claim.Spec.Selector is not supported';
  if (claim.spec.volumeMode === 'Block')
    return `${LOCAL_PATH_PROVISIONER} does not support block volume provisioning`;
  for (const mode of claim.spec.accessModes ?? []) {
    if (mode !== 'ReadWriteOnce' && mode !== 'ReadWriteOncePod')
      return 'Only support ReadWriteOnce, ReadWriteOncePod and ReadWriteMany (on shared filesystems) access mode';
  }
  return undefined;
}

/** What provisionedVolume needs. */
export interface VolumeInput {
  claim: PersistentVolumeClaim;
  storageClass: StorageClass;
  /** The node's hostname label value (nodeHostname). */
  hostname: string;
  /** The volume's directory on the node (absolute). */
  path: string;
}

/** The PersistentVolume the provisioner creates for a claim (see the file comment). */
export function provisionedVolume({ claim, storageClass, hostname, path }: VolumeInput): PersistentVolume {
  const storage = claim.spec.resources?.requests?.storage ?? '0';
  const term: NodeSelectorTerm = {
    matchExpressions: [{ key: LABEL_HOSTNAME, operator: 'In', values: [hostname] }],
  };
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: volumeNameFor(claim),
      annotations: { [ANN_PROVISIONED_BY]: LOCAL_PATH_PROVISIONER },
    },
    spec: {
      capacity: { storage },
      accessModes: [...(claim.spec.accessModes ?? ['ReadWriteOnce'])],
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      storageClassName: claimClassName(claim),
      volumeMode: 'Filesystem',
      hostPath: { path, type: 'DirectoryOrCreate' },
      nodeAffinity: { required: { nodeSelectorTerms: [term] } },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: claim.metadata.namespace ?? 'default',
        name: claim.metadata.name ?? '',
        uid: claim.metadata.uid ?? '',
        ...(claim.metadata.resourceVersion ? { resourceVersion: claim.metadata.resourceVersion } : {}),
      },
      ...(storageClass.mountOptions ? { mountOptions: [...storageClass.mountOptions] } : {}),
    },
  };
}

/**
 * Whether `pv`'s required node affinity is exactly `kubernetes.io/hostname In [hostname]`
 * in some term: the shape provisionedVolume writes, so a volume of another node (or one
 * an administrator wrote by hand) is never taken for this node's.
 */
export function volumeOnNode(pv: PersistentVolume, hostname: string): boolean {
  for (const term of pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) {
    for (const e of term.matchExpressions ?? []) {
      if (
        e.key === LABEL_HOSTNAME &&
        e.operator === 'In' &&
        e.values?.length === 1 &&
        e.values[0] === hostname
      )
        return true;
    }
  }
  return false;
}

/** Whether this provisioner made `pv` for the node of `hostname`. */
export function isOwnVolume(pv: PersistentVolume, hostname: string): boolean {
  return (
    pv.metadata.annotations?.[ANN_PROVISIONED_BY] === LOCAL_PATH_PROVISIONER && volumeOnNode(pv, hostname)
  );
}

/** Whether the node's provisioner should remove `pv`'s directory and delete it (see the file comment). */
export function shouldDelete(pv: PersistentVolume, hostname: string): boolean {
  if (!isOwnVolume(pv, hostname)) return false;
  if (pv.metadata.deletionTimestamp) return false;
  if (pv.status?.phase !== 'Released') return false;
  return (pv.spec?.persistentVolumeReclaimPolicy ?? 'Retain') === 'Delete';
}
