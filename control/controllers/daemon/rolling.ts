/**
 * The RollingUpdate strategy of DaemonSets (Kubernetes' pkg/controller/daemon/update.go
 * rollingUpdate, findUpdatedPodsOnNode, updatedDesiredNodeCounts). Pure: returns which old
 * pods to delete and on which nodes to create new pods; the controller does it.
 *
 * maxSurge 0 (the default): an old pod is replaced by deleting it first (manage then
 * creates the new one). Old pods that are not available are replaced at once; others only
 * while fewer than maxUnavailable nodes (new pods not yet available, nodes without a pod,
 * nodes with two) are unavailable.
 *
 * maxSurge > 0: a new pod is created next to the old one, at most maxSurge at a time (and at
 * once where the old one is unavailable); the old pod is deleted once the new one is
 * available. maxUnavailable and maxSurge are IntOrStrings scaled against the number of
 * nodes that should run the pod, rounding up; both 0 means maxUnavailable 1.
 */
import { isPodAvailable } from '../../../api/podutil.js';
import type { Pod } from '../../../api/types.js';
import type { SyncState } from './controller.js';
import { isPodUpdated } from './controller.js';
import { scaledValue } from './placement.js';

/** findUpdatedPodsOnNode: the one new and one old pod on a node; ok false with more of either. */
export function findUpdatedPodsOnNode(
  pods: readonly Pod[],
  hash: string,
  generation: number | undefined,
): { newPod?: Pod; oldPod?: Pod; ok: boolean } {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (newPod) return { ok: false };
      newPod = pod;
    } else {
      if (oldPod) return { ok: false };
      oldPod = pod;
    }
  }
  return { newPod, oldPod, ok: true };
}

/** The result of rollingUpdate: pods to delete and node names to create a pod on. */
export interface RollingUpdateActions {
  deletes: Pod[];
  creates: string[];
}

/** rollingUpdate: see the file comment. */
export function rollingUpdate(s: SyncState): RollingUpdateActions {
  const ds = s.ds;
  const minReady = ds.spec.minReadySeconds ?? 0;
  const available = (p: Pod) => isPodAvailable(p, minReady, s.nowMs);
  // updatedDesiredNodeCounts: every node that should run the pod takes part, with or without one.
  const perNode = new Map<string, readonly Pod[]>();
  let desired = 0;
  for (const node of s.nodes) {
    const name = node.metadata.name ?? '';
    if (s.placement(node).shouldRun) {
      desired++;
      perNode.set(name, s.nodeToDaemonPods.get(name) ?? []);
    }
  }
  for (const [name, pods] of s.nodeToDaemonPods) if (!perNode.has(name)) perNode.set(name, pods);
  const ru = ds.spec.updateStrategy?.rollingUpdate;
  let maxUnavailable = scaledValue(ru?.maxUnavailable ?? 1, desired);
  const maxSurge = scaledValue(ru?.maxSurge ?? 0, desired);
  if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;

  if (maxSurge === 0) {
    let numUnavailable = 0;
    const allowedReplacement: Pod[] = [];
    const candidates: Pod[] = [];
    for (const pods of perNode.values()) {
      const { newPod, oldPod, ok } = findUpdatedPodsOnNode(pods, s.hash, s.generation);
      if (!ok || (!oldPod && !newPod) || (oldPod && newPod)) {
        numUnavailable++;
      } else if (newPod) {
        if (!available(newPod)) numUnavailable++;
      } else if (oldPod) {
        if (!available(oldPod)) allowedReplacement.push(oldPod);
        else if (numUnavailable < maxUnavailable) candidates.push(oldPod);
      }
    }
    const remaining = Math.min(Math.max(maxUnavailable - numUnavailable, 0), candidates.length);
    return { deletes: [...allowedReplacement, ...candidates.slice(0, remaining)], creates: [] };
  }

  const oldPodsToDelete: Pod[] = [];
  const shouldNotRunPodsToDelete: Pod[] = [];
  const candidateNewNodes: string[] = [];
  const allowedNewNodes: string[] = [];
  let numSurge = 0;
  let numAvailable = 0;
  for (const [nodeName, pods] of perNode) {
    const { newPod, oldPod, ok } = findUpdatedPodsOnNode(pods, s.hash, s.generation);
    if (!ok) {
      numSurge++;
      continue;
    }
    if (oldPod) {
      if (available(oldPod)) numAvailable++;
    } else if (newPod && available(newPod)) numAvailable++;
    if (!oldPod) continue;
    const node = s.nodesByName.get(nodeName);
    const shouldRun = node !== undefined && s.placement(node).shouldRun;
    if (!newPod) {
      if (!available(oldPod)) {
        if (!shouldRun) oldPodsToDelete.push(oldPod);
        else allowedNewNodes.push(nodeName);
      } else if (!shouldRun) {
        shouldNotRunPodsToDelete.push(oldPod);
      } else if (numSurge < maxSurge) {
        candidateNewNodes.push(nodeName);
      }
    } else if (!available(newPod)) {
      numSurge++;
    } else {
      oldPodsToDelete.push(oldPod);
    }
  }
  const deletable = Math.min(Math.max(numAvailable - desired, 0), shouldNotRunPodsToDelete.length);
  oldPodsToDelete.push(...shouldNotRunPodsToDelete.slice(0, deletable));
  const remainingSurge = Math.min(Math.max(maxSurge - numSurge, 0), candidateNewNodes.length);
  return {
    deletes: oldPodsToDelete,
    creates: [...allowedNewNodes, ...candidateNewNodes.slice(0, remainingSurge)],
  };
}
