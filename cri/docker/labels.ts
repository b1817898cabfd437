/**
 * The docker labels that carry CRI's metadata, so that the adapter rebuilds every sandbox
 * and container from Docker alone (after an agent restart it has nothing else), as
 * dockershim did with `io.kubernetes.docker.type` and its `annotation.` labels
 * (pkg/kubelet/dockershim/naming.go, helpers.go).
 *
 * The adapter stamps these itself, whatever the CRI labels say (its keys win over
 * theirs); the kubelet's own labels (io.kubernetes.pod.*, io.kubernetes.container.name and
 * its io.k8ts.node scope label: agent/kubelet/pods/labels.ts) reach Docker as the CRI labels.
 * The pod's metadata is stamped again from CRI's metadata under the same io.kubernetes.*
 * keys, because the adapter rebuilds metadata from them (where cri-dockerd parses the
 * container name), also for CRI clients that set no such labels.
 *
 * Every object carries:
 *   io.k8ts.node          the node name: an adapter lists and touches only its own node's
 *                         containers (several agents share one engine)
 *   io.k8ts.type          `podsandbox` | `container`: the one the adapter filters on
 *   io.kubernetes.docker.type  the same, under dockershim's and cri-dockerd's name (for
 *                         tools that know it; the kubelet does not set it)
 *   io.k8ts.attempt       CRI metadata's attempt
 *   io.k8ts.created-at    creation time, ns since the epoch (Docker's list has seconds only)
 *   io.k8ts.labels        the CRI labels, JSON (exact: the CRI labels are also set as docker
 *                         labels for `docker ps --filter`, but internal keys would shadow them)
 *   io.k8ts.annotations   the CRI annotations, JSON
 *   io.kubernetes.pod.{name,namespace,uid}
 * sandboxes:  io.k8ts.network (the network joined), io.k8ts.pod-ip (the pod IP, when the
 *             agent made the sandbox's interface itself: pod-interfaces.ts)
 * containers: io.kubernetes.sandbox.id, io.kubernetes.container.name, io.k8ts.image (as asked),
 *             io.kubernetes.container.logpath (the kubelet's log path, when the sandbox has a
 *             logDirectory and the container a logPath: log-symlink.ts)
 */
import type { ContainerConfig, ContainerMetadata, PodSandboxConfig, PodSandboxMetadata } from '../api.js';
import { kubeletLogPath, LABEL_CONTAINER_LOG_PATH } from './log-symlink.js';

export const LABEL_NODE = 'io.k8ts.node';
export const LABEL_TYPE = 'io.k8ts.type';
/** dockershim's and cri-dockerd's type label (containerTypeLabelKey), `podsandbox` | `container`. */
export const LABEL_DOCKER_TYPE = 'io.kubernetes.docker.type';
export const LABEL_ATTEMPT = 'io.k8ts.attempt';
export const LABEL_CREATED_AT = 'io.k8ts.created-at';
export const LABEL_LABELS = 'io.k8ts.labels';
export const LABEL_ANNOTATIONS = 'io.k8ts.annotations';
export const LABEL_NETWORK = 'io.k8ts.network';
/** The pod IP of a sandbox whose interface the agent made (pod-interfaces.ts); absent on Docker's. */
export const LABEL_POD_IP = 'io.k8ts.pod-ip';
export const LABEL_IMAGE = 'io.k8ts.image';
export const LABEL_POD_NAME = 'io.kubernetes.pod.name';
export const LABEL_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const LABEL_POD_UID = 'io.kubernetes.pod.uid';
export const LABEL_SANDBOX_ID = 'io.kubernetes.sandbox.id';
export const LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';

export const TYPE_SANDBOX = 'podsandbox';
export const TYPE_CONTAINER = 'container';
export type ObjectType = typeof TYPE_SANDBOX | typeof TYPE_CONTAINER;

/** A sandbox's CRI view, rebuilt from its labels. */
export interface SandboxLabels {
  metadata: PodSandboxMetadata;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  createdAt: bigint;
  /** The network the sandbox joined ('' for docker's default bridge). */
  network: string;
}

/** A container's CRI view, rebuilt from its labels. */
export interface ContainerLabels {
  podSandboxId: string;
  metadata: ContainerMetadata;
  image: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  createdAt: bigint;
}

function podLabels(
  nodeName: string,
  type: ObjectType,
  pod: PodSandboxMetadata,
  attempt: number,
  cri: { labels: Record<string, string>; annotations: Record<string, string> },
  createdAt: bigint,
): Record<string, string> {
  return {
    ...cri.labels,
    [LABEL_NODE]: nodeName,
    [LABEL_TYPE]: type,
    [LABEL_DOCKER_TYPE]: type,
    [LABEL_POD_NAME]: pod.name,
    [LABEL_POD_NAMESPACE]: pod.namespace,
    [LABEL_POD_UID]: pod.uid,
    [LABEL_ATTEMPT]: String(attempt),
    [LABEL_CREATED_AT]: createdAt.toString(),
    [LABEL_LABELS]: JSON.stringify(cri.labels),
    [LABEL_ANNOTATIONS]: JSON.stringify(cri.annotations),
  };
}

/** Docker labels of a sandbox created on `nodeName` at `createdAt` (ns). */
export function sandboxLabels(
  nodeName: string,
  config: PodSandboxConfig,
  createdAt: bigint,
): Record<string, string> {
  return {
    ...podLabels(nodeName, TYPE_SANDBOX, config.metadata, config.metadata.attempt, config, createdAt),
    [LABEL_NETWORK]: config.network ?? '',
  };
}

/** Docker labels of a container of sandbox `podSandboxId`, created on `nodeName` at `createdAt` (ns). */
export function containerLabels(
  nodeName: string,
  podSandboxId: string,
  sandboxConfig: PodSandboxConfig,
  config: ContainerConfig,
  createdAt: bigint,
): Record<string, string> {
  const labels: Record<string, string> = {
    ...podLabels(
      nodeName,
      TYPE_CONTAINER,
      sandboxConfig.metadata,
      config.metadata.attempt,
      config,
      createdAt,
    ),
    [LABEL_SANDBOX_ID]: podSandboxId,
    [LABEL_CONTAINER_NAME]: config.metadata.name,
    [LABEL_IMAGE]: config.image.image,
  };
  const logPath = kubeletLogPath(sandboxConfig.logDirectory, config.logPath);
  if (logPath) labels[LABEL_CONTAINER_LOG_PATH] = logPath;
  else delete labels[LABEL_CONTAINER_LOG_PATH];
  return labels;
}

function parseRecord(json: string | undefined): Record<string, string> {
  if (json === undefined) return {};
  try {
    const v: unknown = JSON.parse(json);
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
    }
  } catch {
    // A label someone edited by hand: treated as empty rather than failing every list.
  }
  return {};
}

const toBigInt = (s: string | undefined): bigint => (s !== undefined && /^\d+$/.test(s) ? BigInt(s) : 0n);
const toInt = (s: string | undefined): number => (s !== undefined && /^\d+$/.test(s) ? Number(s) : 0);

/**
 * True when the docker labels mark an object of `type` of node `nodeName`: the only
 * objects an adapter may list or touch.
 */
export function isOwned(
  labels: Record<string, string> | undefined,
  nodeName: string,
  type: ObjectType,
): boolean {
  return labels?.[LABEL_NODE] === nodeName && labels[LABEL_TYPE] === type;
}

/** The CRI view of a sandbox from its docker labels. */
export function sandboxFromLabels(labels: Record<string, string>): SandboxLabels {
  return {
    metadata: {
      name: labels[LABEL_POD_NAME] ?? '',
      uid: labels[LABEL_POD_UID] ?? '',
      namespace: labels[LABEL_POD_NAMESPACE] ?? '',
      attempt: toInt(labels[LABEL_ATTEMPT]),
    },
    labels: parseRecord(labels[LABEL_LABELS]),
    annotations: parseRecord(labels[LABEL_ANNOTATIONS]),
    createdAt: toBigInt(labels[LABEL_CREATED_AT]),
    network: labels[LABEL_NETWORK] ?? '',
  };
}

/** The CRI view of a container from its docker labels. */
export function containerFromLabels(labels: Record<string, string>): ContainerLabels {
  return {
    podSandboxId: labels[LABEL_SANDBOX_ID] ?? '',
    metadata: { name: labels[LABEL_CONTAINER_NAME] ?? '', attempt: toInt(labels[LABEL_ATTEMPT]) },
    image: labels[LABEL_IMAGE] ?? '',
    labels: parseRecord(labels[LABEL_LABELS]),
    annotations: parseRecord(labels[LABEL_ANNOTATIONS]),
    createdAt: toBigInt(labels[LABEL_CREATED_AT]),
  };
}

/** Docker name characters: anything else in a pod or container name part becomes `-`. */
function namePart(s: string): string {
  return s.replace(/[^a-zA-Z0-9_.-]/g, '-');
}

/** The docker name of a sandbox: `k8ts_POD_<pod>_<namespace>_<uid>_<attempt>` (as dockershim's `k8s_POD_...`). */
export function sandboxName(m: PodSandboxMetadata): string {
  return ['k8ts', 'POD', m.name, m.namespace, m.uid, String(m.attempt)].map(namePart).join('_');
}

/** The docker name of a container: `k8ts_<container>_<pod>_<namespace>_<uid>_<attempt>`. */
export function containerName(pod: PodSandboxMetadata, c: ContainerMetadata): string {
  return ['k8ts', c.name, pod.name, pod.namespace, pod.uid, String(c.attempt)].map(namePart).join('_');
}
