/**
 * The `local-path` StorageClass every k8ts cluster starts with, as k3s ships its
 * local-storage manifest: the default class (`storageclass.kubernetes.io/is-default-class:
 * "true"`), provisioner `rancher.io/local-path` (the provisioner every agent runs for its
 * own node, agent/storage/), volumeBindingMode WaitForFirstConsumer (a claim is provisioned
 * on the node its first pod is scheduled to) and reclaimPolicy Delete.
 *
 * The control process creates it at start unless it exists (`--disable-local-storage`:
 * never). An existing class is left as it is, so a user who made another class the default
 * or edited this one keeps that; one who deleted it gets it back at the next start, as k3s
 * re-applies its manifests.
 */
import type { KubeObject } from '../api/object.js';
import type { Registry } from './apiserver/registry.js';
import { ApiError } from './apiserver/status.js';
import { IS_DEFAULT_CLASS_ANNOTATION } from './apiserver/strategies/storageclasses.js';

/** The class's name. */
export const LOCAL_PATH_STORAGE_CLASS = 'local-path';
/** The agents' provisioner name (agent/storage/volume.ts LOCAL_PATH_PROVISIONER; agent/ is not imported here). */
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';

/** The StorageClass object (see the file comment). */
export function localPathStorageClass(): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: LOCAL_PATH_STORAGE_CLASS, annotations: { [IS_DEFAULT_CLASS_ANNOTATION]: 'true' } },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  };
}

/**
 * Creates the `local-path` StorageClass through `classes` (the storage.k8s.io/v1
 * storageclasses registry) unless it exists; another control process creating it at the
 * same moment is not an error.
 * @returns whether this call created it.
 * @throws ApiError from the registry (e.g. the store is unavailable).
 */
export async function ensureLocalPathStorageClass(classes: Registry): Promise<boolean> {
  try {
    await classes.get(undefined, LOCAL_PATH_STORAGE_CLASS);
    return false;
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 404)) throw err;
  }
  try {
    await classes.create(undefined, localPathStorageClass());
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.code === 409) return false;
    throw err;
  }
}
