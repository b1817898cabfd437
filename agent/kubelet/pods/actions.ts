/**
 * What a sync must do to bring a pod's runtime state to its spec: kuberuntime's
 * computePodActions (pkg/kubelet/kuberuntime/kuberuntime_manager.go), as a pure function of
 * the pod, the runtime's view of it and the liveness/startup probe results.
 *
 * - A pod needs a (new) sandbox when it has none, when the newest is not ready or has no
 *   IP, or when more than one is ready; then everything is killed first and every
 *   container (but, under OnFailure, those that succeeded) is started again — except for a
 *   `restartPolicy: Never` pod that already ran, whose sandbox is not recreated.
 * - A container that is not running is started when ShouldContainerBeRestarted says so:
 *   never started, or exited and the restart policy allows (Always; OnFailure with a
 *   non-zero exit code).
 * - A running container whose spec hash changed, or whose liveness or startup probe
 *   failed, is killed — and restarted unless the policy is Never.
 * - When nothing keeps running and nothing is to start, the whole pod (its sandbox) is
 *   killed.
 * - Init containers (findNextInitContainerToRun): the regular init containers run one at
 *   a time, in spec order, each to exit code 0, before any app container is looked at. A
 *   new sandbox starts them again from the first. Only containers of the newest sandbox
 *   count as progress. A failed one (non-zero exit, OOMKilled, unknown state) is started
 *   again unless the policy is Never, in which case the pod is killed (and fails). Once an
 *   app container of the sandbox has run, the pod counts as initialized.
 */
import type { KubeletContainer, KubeletPod } from './types.js';
import { regularInitContainers } from './types.js';
import { hashContainer } from './labels.js';
import { latestContainer, type ContainerRuntimeStatus, type PodRuntimeStatus } from './runtime-status.js';

/** A running container to kill, and why (the message of its Killing event). */
export interface ContainerToKill {
  id: string;
  name: string;
  /** E.g. `Container app failed liveness probe, will be restarted`. */
  message: string;
}

/** The result of computePodActions (kuberuntime's podActions). */
export interface PodActions {
  /** Stop every container and the sandbox first. */
  killPod: boolean;
  /** Run a new sandbox (after killPod). */
  createSandbox: boolean;
  /** The sandbox containers go into when none is created ('' when there is none). */
  sandboxId: string;
  /** Attempt number of the sandbox to create. */
  attempt: number;
  /** Names of the spec containers to start, in spec order. */
  containersToStart: string[];
  /** Running containers to kill (when killPod is false). */
  containersToKill: ContainerToKill[];
  /** The init container to start next (NextInitContainerToStart); app containers then wait. */
  initContainerToStart?: string;
}

/** What the probes say about a running container (prober results; Unknown = no verdict yet). */
export interface ProbeVerdicts {
  liveness(containerName: string, containerId: string): 'Success' | 'Failure' | 'Unknown';
  startup(containerName: string, containerId: string): 'Success' | 'Failure' | 'Unknown';
}

const NO_VERDICTS: ProbeVerdicts = { liveness: () => 'Unknown', startup: () => 'Unknown' };

/** True unless `restartPolicy: Never` (shouldRestartOnFailure). */
export function shouldRestartOnFailure(pod: KubeletPod): boolean {
  return (pod.spec.restartPolicy ?? 'Always') !== 'Never';
}

/** The newest container of `name` exited with code 0 (containerSucceeded). */
function containerSucceeded(name: string, status: PodRuntimeStatus): boolean {
  const c = latestContainer(status, name);
  return c !== undefined && c.state === 'CONTAINER_EXITED' && c.exitCode === 0;
}

/**
 * kubecontainer.ShouldContainerBeRestarted: true for a container never started (or only
 * created, or in an unknown state), false for a running one, and for an exited one as
 * the restart policy says (Always: yes; OnFailure: when the exit code is not 0; Never: no).
 */
export function shouldContainerBeRestarted(
  container: KubeletContainer,
  pod: KubeletPod,
  status: PodRuntimeStatus,
): boolean {
  const c = latestContainer(status, container.name);
  if (!c) return true;
  if (c.state === 'CONTAINER_RUNNING') return false;
  if (c.state === 'CONTAINER_UNKNOWN' || c.state === 'CONTAINER_CREATED') return true;
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && c.exitCode === 0) return false;
  return true;
}

/**
 * podSandboxChanged: whether a new sandbox is needed, its attempt number, and the id of
 * the newest sandbox ('' when there is none).
 */
export function podSandboxChanged(
  pod: KubeletPod,
  status: PodRuntimeStatus,
): { changed: boolean; attempt: number; sandboxId: string } {
  const latest = status.sandboxes[0];
  if (!latest) return { changed: true, attempt: 0, sandboxId: '' };
  const next = { changed: true, attempt: latest.attempt + 1, sandboxId: latest.id };
  if (status.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length > 1) return next;
  if (latest.state !== 'SANDBOX_READY') return next;
  if (!pod.spec.hostNetwork && latest.ip === '') return next;
  return { changed: false, attempt: latest.attempt, sandboxId: latest.id };
}

/** isInitContainerFailed: exited non-zero, OOMKilled, or in an unknown state. */
export function isInitContainerFailed(c: ContainerRuntimeStatus): boolean {
  if (c.reason === 'OOMKilled') return true;
  if (c.state === 'CONTAINER_EXITED' && c.exitCode !== 0) return true;
  return c.state === 'CONTAINER_UNKNOWN';
}

/** The newest container of `name` in sandbox `sandboxId`. */
function latestIn(
  status: PodRuntimeStatus,
  name: string,
  sandboxId: string,
): ContainerRuntimeStatus | undefined {
  return status.containers.find((c) => c.name === name && c.podSandboxId === sandboxId);
}

/** What findNextInitContainerToRun found. */
export interface InitProgress {
  /** Every init container succeeded (or there are none, or an app container already ran). */
  done: boolean;
  /** The init container to start now (undefined while one runs, or when done). */
  next?: KubeletContainer;
  /** The newest container of `next` when it failed (it is a restart). */
  failed?: ContainerRuntimeStatus;
}

/**
 * findNextInitContainerToRun (kuberuntime_manager.go) over the regular init containers and
 * the containers of sandbox `sandboxId`: done when there are none or an app container of
 * the sandbox has run; else the last failed one (to restart), else the one after the last
 * that exited 0, else the first; nothing while one runs.
 */
export function findNextInitContainerToRun(
  pod: KubeletPod,
  status: PodRuntimeStatus,
  sandboxId: string,
): InitProgress {
  const inits = regularInitContainers(pod);
  if (inits.length === 0) return { done: true };
  if (pod.spec.containers.some((c) => latestIn(status, c.name, sandboxId) !== undefined))
    return { done: true };
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = latestIn(status, inits[i]!.name, sandboxId);
    if (c && isInitContainerFailed(c)) return { done: false, next: inits[i]!, failed: c };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = latestIn(status, inits[i]!.name, sandboxId);
    if (!c) continue;
    if (c.state === 'CONTAINER_RUNNING') return { done: false };
    if (c.state === 'CONTAINER_CREATED') return { done: false, next: inits[i]! };
    // Exited 0: the next one, or all done.
    if (i === inits.length - 1) return { done: true };
    return { done: false, next: inits[i + 1]! };
  }
  return { done: false, next: inits[0]! };
}

/** See the file comment. Pure. */
export function computePodActions(
  pod: KubeletPod,
  status: PodRuntimeStatus,
  probes: ProbeVerdicts = NO_VERDICTS,
): PodActions {
  const sandbox = podSandboxChanged(pod, status);
  const actions: PodActions = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxId: sandbox.sandboxId,
    attempt: sandbox.attempt,
    containersToStart: [],
    containersToKill: [],
  };
  const containers = pod.spec.containers;
  if (sandbox.changed) {
    // A Never pod whose sandbox went away after its containers ran is done: it is not
    // run again in a new sandbox.
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && status.containers.length > 0) {
      actions.createSandbox = false;
      return actions;
    }
    actions.containersToStart = containers
      .filter((c) => !(pod.spec.restartPolicy === 'OnFailure' && containerSucceeded(c.name, status)))
      .map((c) => c.name);
    if (actions.containersToStart.length === 0) {
      actions.createSandbox = false;
      return actions;
    }
    const first = regularInitContainers(pod)[0];
    if (first) {
      actions.containersToStart = [];
      actions.initContainerToStart = first.name;
    }
    return actions;
  }

  const init = findNextInitContainerToRun(pod, status, sandbox.sandboxId);
  if (!init.done) {
    if (init.next) {
      if (init.failed && !shouldRestartOnFailure(pod)) actions.killPod = true;
      else {
        if (init.failed?.state === 'CONTAINER_UNKNOWN') {
          actions.containersToKill.push({
            id: init.failed.id,
            name: init.failed.name,
            message: `Container ${init.failed.name} is in an unknown state, will be restarted`,
          });
        }
        actions.initContainerToStart = init.next.name;
      }
    }
    // Initialization failed or is in progress: the app containers wait.
    return actions;
  }

  let keep = 0;
  for (const container of containers) {
    const c = latestContainer(status, container.name);
    if (!c || c.state !== 'CONTAINER_RUNNING') {
      if (shouldContainerBeRestarted(container, pod, status)) actions.containersToStart.push(container.name);
      continue;
    }
    let message: string;
    let restart = shouldRestartOnFailure(pod);
    if (c.hash !== '' && c.hash !== hashContainer(container)) {
      message = `Container ${container.name} definition changed`;
      restart = true;
    } else if (probes.liveness(container.name, c.id) === 'Failure') {
      message = `Container ${container.name} failed liveness probe`;
    } else if (probes.startup(container.name, c.id) === 'Failure') {
      message = `Container ${container.name} failed startup probe`;
    } else {
      keep++;
      continue;
    }
    if (restart) {
      message += ', will be restarted';
      actions.containersToStart.push(container.name);
    }
    actions.containersToKill.push({ id: c.id, name: container.name, message });
  }
  if (keep === 0 && actions.containersToStart.length === 0) actions.killPod = true;
  return actions;
}
