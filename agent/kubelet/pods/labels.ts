/**
 * What the kubelet writes on the CRI configs of its sandboxes and containers so that the
 * runtime alone rebuilds its view after a restart (pkg/kubelet/kuberuntime/labels.go): the
 * pod's namespace, name and uid and the container's name as labels (a runtime can filter
 * on them); the restart count, the spec hash and the grace period as annotations. Every
 * object also carries `io.k8ts.node=<node>`, and the kubelet lists with it as a label
 * selector, so that kubelets sharing one runtime (simulated nodes on one fake runtime)
 * each see only their own pods.
 *
 * These are the kubelet's labels only. What an adapter records for itself is the
 * adapter's: the Docker adapter stamps dockershim's `io.kubernetes.docker.type`, its node
 * ownership label and its private `io.k8ts.*` labels on the Docker objects
 * (cri/docker/labels.ts), as cri-dockerd stamps its own type and sandbox-id labels.
 */
import { NODE_LABEL } from '../../network/pod-network.js';
import type { Pod } from '../../../api/types.js';
import type { KubeletContainer } from './types.js';

export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';
export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';
export { NODE_LABEL };

/** Labels of a pod's sandbox: the pod's own labels, then the kubelet's (which win). */
export function sandboxLabels(pod: Pod, nodeName: string): Record<string, string> {
  return {
    ...pod.metadata.labels,
    [POD_NAME_LABEL]: pod.metadata.name ?? '',
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace ?? '',
    [POD_UID_LABEL]: pod.metadata.uid ?? '',
    [NODE_LABEL]: nodeName,
  };
}

/** Labels of one of the pod's containers. */
export function containerLabels(pod: Pod, containerName: string, nodeName: string): Record<string, string> {
  return {
    [POD_NAME_LABEL]: pod.metadata.name ?? '',
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace ?? '',
    [POD_UID_LABEL]: pod.metadata.uid ?? '',
    [CONTAINER_NAME_LABEL]: containerName,
    [NODE_LABEL]: nodeName,
  };
}

/** Annotations of a container: its restart count, spec hash and the pod's grace period (seconds). */
export function containerAnnotations(
  pod: Pod,
  container: KubeletContainer,
  restartCount: number,
): Record<string, string> {
  return {
    [CONTAINER_HASH_ANNOTATION]: hashContainer(container),
    [CONTAINER_RESTART_COUNT_ANNOTATION]: String(restartCount),
    [POD_TERMINATION_GRACE_PERIOD_ANNOTATION]: String(pod.spec.terminationGracePeriodSeconds ?? 30),
  };
}

/** Who a runtime object belongs to, read back from its labels (undefined: not the kubelet's). */
export interface PodRef {
  uid: string;
  name: string;
  namespace: string;
}

/** The pod a sandbox or container belongs to, from its labels. */
export function podRefOf(labels: Record<string, string>): PodRef | undefined {
  const uid = labels[POD_UID_LABEL];
  if (!uid) return undefined;
  return { uid, name: labels[POD_NAME_LABEL] ?? '', namespace: labels[POD_NAMESPACE_LABEL] ?? '' };
}

/** JSON with object keys sorted, so equal specs hash equally whatever their key order. */
function stableJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJSON).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableJSON(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** 32-bit FNV-1a of `s`'s UTF-8 bytes. */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The hash of a container's spec (kubelet's kubecontainer.HashContainer: FNV-32a of the
 * spec, as lower-case hex). `resources` is left out, as in Kubernetes since in-place
 * resize. A running container whose hash differs from its spec's is restarted
 * ("Container X definition changed").
 */
export function hashContainer(container: KubeletContainer): string {
  const { resources: _resources, ...rest } = container;
  return fnv32a(stableJSON(rest)).toString(16);
}
