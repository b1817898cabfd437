/**
 * Strategic-merge-patch metadata: which lists merge by a key instead of being replaced,
 * and which structs retain only the keys a patch names. These are the
 * `patchStrategy`/`patchMergeKey` tags of Kubernetes' Go types (published in OpenAPI as
 * `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`), which the
 * client-node models do not carry. One table serves both the OpenAPI documents (kubectl
 * computes its apply patches from them) and the server's strategic merge patch.
 *
 * Keys are `<client-node model>.<field>`; fields not listed are replaced whole (atomic).
 */

export interface PatchMeta {
  /** 'merge': merge list items (by `mergeKey`, or as a set of primitives without one). */
  strategy: 'merge' | 'retainKeys' | 'merge,retainKeys';
  mergeKey?: string;
}

export const PATCH_META: Readonly<Record<string, PatchMeta>> = {
  'V1ObjectMeta.finalizers': { strategy: 'merge' },
  'V1ObjectMeta.ownerReferences': { strategy: 'merge', mergeKey: 'uid' },

  'V1PodSpec.containers': { strategy: 'merge', mergeKey: 'name' },
  'V1PodSpec.initContainers': { strategy: 'merge', mergeKey: 'name' },
  'V1PodSpec.ephemeralContainers': { strategy: 'merge', mergeKey: 'name' },
  'V1PodSpec.volumes': { strategy: 'merge,retainKeys', mergeKey: 'name' },
  'V1PodSpec.imagePullSecrets': { strategy: 'merge', mergeKey: 'name' },
  'V1PodSpec.hostAliases': { strategy: 'merge', mergeKey: 'ip' },
  'V1PodSpec.topologySpreadConstraints': { strategy: 'merge', mergeKey: 'topologyKey' },
  'V1PodSpec.resourceClaims': { strategy: 'merge,retainKeys', mergeKey: 'name' },
  'V1PodSpec.schedulingGates': { strategy: 'merge', mergeKey: 'name' },

  'V1Container.ports': { strategy: 'merge', mergeKey: 'containerPort' },
  'V1Container.env': { strategy: 'merge', mergeKey: 'name' },
  'V1Container.volumeMounts': { strategy: 'merge', mergeKey: 'mountPath' },
  'V1Container.volumeDevices': { strategy: 'merge', mergeKey: 'devicePath' },
  'V1EphemeralContainer.ports': { strategy: 'merge', mergeKey: 'containerPort' },
  'V1EphemeralContainer.env': { strategy: 'merge', mergeKey: 'name' },
  'V1EphemeralContainer.volumeMounts': { strategy: 'merge', mergeKey: 'mountPath' },
  'V1EphemeralContainer.volumeDevices': { strategy: 'merge', mergeKey: 'devicePath' },

  'V1PodStatus.conditions': { strategy: 'merge', mergeKey: 'type' },
  'V1PodStatus.podIPs': { strategy: 'merge', mergeKey: 'ip' },
  'V1PodStatus.hostIPs': { strategy: 'merge', mergeKey: 'ip' },

  'V1ServiceSpec.ports': { strategy: 'merge', mergeKey: 'port' },

  'V1DeploymentSpec.strategy': { strategy: 'retainKeys' },
  'V1DeploymentStatus.conditions': { strategy: 'merge', mergeKey: 'type' },
  'V1ReplicaSetStatus.conditions': { strategy: 'merge', mergeKey: 'type' },

  'V1NodeSpec.podCIDRs': { strategy: 'merge' },
  'V1NodeStatus.conditions': { strategy: 'merge', mergeKey: 'type' },
  'V1NodeStatus.addresses': { strategy: 'merge', mergeKey: 'type' },

  'V1NamespaceStatus.conditions': { strategy: 'merge', mergeKey: 'type' },
  'V1ServiceAccount.secrets': { strategy: 'merge', mergeKey: 'name' },
};

/** The patch metadata of `field` of the client-node model `model`, if it is not atomic. */
export function patchMetaOf(model: string, field: string): PatchMeta | undefined {
  return PATCH_META[`${model}.${field}`];
}
