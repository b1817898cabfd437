/**
 * The runtime's view of one pod, rebuilt from the runtime alone (kubelet's
 * kubecontainer.PodStatus, from kuberuntime's GetPodStatus): the pod's sandboxes and
 * containers, found by the `io.kubernetes.pod.uid` and `io.k8ts.node` labels, newest
 * first, with the container name, restart count and spec hash read back from their
 * labels and annotations. Times are milliseconds since the epoch (the runtime's
 * nanoseconds / 10^6), 0 when unset.
 */
import type {
  Container,
  ContainerState,
  PodSandbox,
  PodSandboxState,
  RuntimeService,
} from '../../../cri/index.js';
import { isCriError } from '../../../cri/index.js';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  NODE_LABEL,
  POD_UID_LABEL,
} from './labels.js';

/** One sandbox of the pod. */
export interface SandboxStatus {
  id: string;
  state: PodSandboxState;
  attempt: number;
  createdAt: number;
  /** The pod IP ('' when the sandbox has none or is not ready). */
  ip: string;
}

/** One container of the pod (current or dead). */
export interface ContainerRuntimeStatus {
  id: string;
  podSandboxId: string;
  /** The spec container's name (label `io.kubernetes.container.name`). */
  name: string;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  /** Runtime reason when exited: Completed, Error, OOMKilled. */
  reason: string;
  message: string;
  /** The image as asked for. */
  image: string;
  /** The image id (`sha256:...`). */
  imageRef: string;
  /** Spec hash it was created from (annotation `io.kubernetes.container.hash`). */
  hash: string;
  /** Annotation `io.kubernetes.container.restartCount`. */
  restartCount: number;
}

/** A pod as the runtime sees it. */
export interface PodRuntimeStatus {
  uid: string;
  /** Newest first. */
  sandboxes: SandboxStatus[];
  /** Newest first (all attempts, including dead ones kept for lastState). */
  containers: ContainerRuntimeStatus[];
}

const nsToMs = (ns: bigint): number => Number(ns / 1_000_000n);

/** The newest container named `name`, if any. */
export function latestContainer(s: PodRuntimeStatus, name: string): ContainerRuntimeStatus | undefined {
  return s.containers.find((c) => c.name === name);
}

/** The container before the newest one named `name` (its lastState), if any. */
export function previousContainer(s: PodRuntimeStatus, name: string): ContainerRuntimeStatus | undefined {
  return s.containers.filter((c) => c.name === name)[1];
}

function byNewest<T extends { createdAt: number; attempt?: number; restartCount?: number }>(
  a: T,
  b: T,
): number {
  return b.createdAt - a.createdAt || (b.attempt ?? b.restartCount ?? 0) - (a.attempt ?? a.restartCount ?? 0);
}

/**
 * Reads the pod `uid`'s sandboxes and containers from `runtime`, keeping to those labelled
 * with `nodeName`. Objects removed while this runs are skipped.
 * @throws CriError from the runtime (Unavailable when it is down).
 */
export async function getPodRuntimeStatus(
  runtime: RuntimeService,
  uid: string,
  nodeName: string,
): Promise<PodRuntimeStatus> {
  const selector = { [POD_UID_LABEL]: uid, [NODE_LABEL]: nodeName };
  const [sandboxes, containers] = await Promise.all([
    runtime.listPodSandbox({ labelSelector: selector }),
    runtime.listContainers({ labelSelector: selector }),
  ]);
  return {
    uid,
    sandboxes: (await Promise.all(sandboxes.map((s) => sandboxStatus(runtime, s))))
      .filter(isDefined)
      .sort(byNewest),
    containers: (
      await Promise.all(containers.filter(isAppContainer).map((c) => containerStatus(runtime, c.id)))
    )
      .filter(isDefined)
      .sort(byNewest),
  };
}

/**
 * The pod's status again without listing: every sandbox and container of `known` (read
 * before by getPodRuntimeStatus) and those with ids in `made` (created since by the pod's
 * own worker, the only one that creates the pod's objects) inspected anew. So it is what
 * getPodRuntimeStatus would read now, two list calls fewer (Docker lists every container
 * of the engine to filter them). Objects gone meanwhile are skipped.
 * @throws CriError from the runtime (Unavailable when it is down).
 */
export async function refreshPodRuntimeStatus(
  runtime: RuntimeService,
  known: PodRuntimeStatus,
  made: { sandboxes: string[]; containers: string[] },
): Promise<PodRuntimeStatus> {
  const sandboxIds = new Set([...known.sandboxes.map((s) => s.id), ...made.sandboxes]);
  const containerIds = new Set([...known.containers.map((c) => c.id), ...made.containers]);
  const [sandboxes, containers] = await Promise.all([
    Promise.all([...sandboxIds].map((id) => inspectedSandbox(runtime, id))),
    Promise.all([...containerIds].map((id) => containerStatus(runtime, id))),
  ]);
  return {
    uid: known.uid,
    sandboxes: sandboxes.filter(isDefined).sort(byNewest),
    containers: containers.filter(isDefined).sort(byNewest),
  };
}

async function inspectedSandbox(runtime: RuntimeService, id: string): Promise<SandboxStatus | undefined> {
  try {
    const s = await runtime.podSandboxStatus(id);
    return {
      id: s.id,
      state: s.state,
      attempt: s.metadata.attempt,
      createdAt: nsToMs(s.createdAt),
      ip: s.state === 'SANDBOX_READY' ? s.network.ip : '',
    };
  } catch (err) {
    if (isCriError(err, 'NotFound')) return undefined;
    throw err;
  }
}

function isDefined<T>(v: T | undefined): v is T {
  return v !== undefined;
}

/** Containers the kubelet made for a spec container (not sandboxes, which some runtimes list too). */
export function isAppContainer(c: Container): boolean {
  return Boolean(c.labels[CONTAINER_NAME_LABEL]) && c.labels[CONTAINER_NAME_LABEL] !== 'POD';
}

async function sandboxStatus(runtime: RuntimeService, s: PodSandbox): Promise<SandboxStatus | undefined> {
  let ip = '';
  if (s.state === 'SANDBOX_READY') {
    try {
      ip = (await runtime.podSandboxStatus(s.id)).network.ip;
    } catch (err) {
      if (isCriError(err, 'NotFound')) return undefined;
      throw err;
    }
  }
  return { id: s.id, state: s.state, attempt: s.metadata.attempt, createdAt: nsToMs(s.createdAt), ip };
}

async function containerStatus(
  runtime: RuntimeService,
  id: string,
): Promise<ContainerRuntimeStatus | undefined> {
  try {
    const st = await runtime.containerStatus(id);
    const count = Number(st.annotations[CONTAINER_RESTART_COUNT_ANNOTATION] ?? st.metadata.attempt);
    return {
      id: st.id,
      podSandboxId: st.podSandboxId,
      name: st.labels[CONTAINER_NAME_LABEL] ?? st.metadata.name,
      state: st.state,
      createdAt: nsToMs(st.createdAt),
      startedAt: nsToMs(st.startedAt),
      finishedAt: nsToMs(st.finishedAt),
      exitCode: st.exitCode,
      reason: st.reason,
      message: st.message,
      image: st.image,
      imageRef: st.imageRef,
      hash: st.annotations[CONTAINER_HASH_ANNOTATION] ?? '',
      restartCount: Number.isFinite(count) ? count : st.metadata.attempt,
    };
  } catch (err) {
    if (isCriError(err, 'NotFound')) return undefined;
    throw err;
  }
}
