/**
 * The pod's API status as the kubelet generates it (kubelet_pods.go generateAPIPodStatus,
 * convertToAPIContainerStatuses, getPhase; pkg/kubelet/status/generate.go for the
 * conditions), from the runtime's view of the pod, the probe results and the reasons of
 * failed starts. Pure.
 *
 * - containerStatuses, in spec order: the newest container's state (running, terminated
 *   with exit code/reason/times, or waiting ContainerCreating), the one before as
 *   lastState, restartCount, image, imageID, containerID `<runtime>://<id>`, ready (running,
 *   started and readiness passing) and started (running and startup passed). A container
 *   whose last start failed (ErrImagePull, CrashLoopBackOff, ...) is `waiting` with that
 *   reason and message, its last termination moved to lastState.
 * - phase: Pending while a container has not started yet; Running while one runs (or,
 *   under Always/OnFailure, is to be restarted); Succeeded when all exited 0; Failed when
 *   all exited and one failed and none will be restarted.
 * - conditions: PodScheduled (kept; True when missing), Initialized, ContainersReady and
 *   Ready, each keeping its lastTransitionTime while its status stays. Conditions of other
 *   types (set by others) are kept.
 * - podIP(s) from the sandbox (kept once the sandbox is gone), hostIP(s) the node IP,
 *   startTime kept once set.
 */
import { rfc3339 } from '../../../api/object.js';
import type { Condition, ContainerStatus, PodPhase, PodStatus } from '../../../api/types.js';
import { shouldContainerBeRestarted } from './actions.js';
import {
  latestContainer,
  previousContainer,
  type ContainerRuntimeStatus,
  type PodRuntimeStatus,
} from './runtime-status.js';
import type { KubeletContainer, KubeletPod } from './types.js';

/** A container's last start failure (the kubelet's reasonCache entry). */
export interface StartFailure {
  reason: string;
  message: string;
}

/** Everything generateAPIPodStatus reads. */
export interface StatusInput {
  pod: KubeletPod;
  runtime: PodRuntimeStatus;
  nodeIP: string;
  /** Prefix of containerIDs (`docker`, `containerd`, `fake`). */
  runtimeName: string;
  /** Milliseconds since the epoch. */
  now: number;
  /** Last start failure per container name. */
  failures: ReadonlyMap<string, StartFailure>;
  ready(container: KubeletContainer, containerId: string): boolean;
  started(container: KubeletContainer, containerId: string): boolean;
}

const time = (ms: number) => rfc3339(new Date(ms));

/** The status fields the kubelet owns; everything else in `status` is left alone. */
export const KUBELET_STATUS_FIELDS = [
  'phase',
  'conditions',
  'hostIP',
  'hostIPs',
  'podIP',
  'podIPs',
  'startTime',
  'containerStatuses',
] as const;

function terminatedState(c: ContainerRuntimeStatus, runtimeName: string): Record<string, unknown> {
  const t: Record<string, unknown> = {
    exitCode: c.exitCode,
    reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
    startedAt: c.startedAt ? time(c.startedAt) : null,
    finishedAt: c.finishedAt ? time(c.finishedAt) : null,
    containerID: `${runtimeName}://${c.id}`,
  };
  if (c.message) t.message = c.message;
  return { terminated: t };
}

function containerState(c: ContainerRuntimeStatus, runtimeName: string): Record<string, unknown> {
  switch (c.state) {
    case 'CONTAINER_RUNNING':
      return { running: { startedAt: time(c.startedAt) } };
    case 'CONTAINER_EXITED':
      return terminatedState(c, runtimeName);
    case 'CONTAINER_CREATED':
      return { waiting: { reason: 'ContainerCreating' } };
    default:
      return {
        terminated: {
          exitCode: 137,
          reason: 'ContainerStatusUnknown',
          message: 'The container could not be located when the pod was terminated',
          containerID: `${runtimeName}://${c.id}`,
        },
      };
  }
}

/** The status of one spec container (convertToAPIContainerStatuses). */
export function containerStatusOf(container: KubeletContainer, input: StatusInput): ContainerStatus {
  const { runtime, runtimeName, failures, pod } = input;
  const latest = latestContainer(runtime, container.name);
  const failure = failures.get(container.name);
  if (!latest) {
    return {
      name: container.name,
      state: {
        waiting: failure
          ? { reason: failure.reason, message: failure.message }
          : { reason: 'ContainerCreating' },
      },
      lastState: {},
      ready: false,
      started: false,
      restartCount: 0,
      image: container.image ?? '',
      imageID: '',
    };
  }
  const prev = previousContainer(runtime, container.name);
  const running = latest.state === 'CONTAINER_RUNNING';
  const status: ContainerStatus = {
    name: container.name,
    state: containerState(latest, runtimeName),
    lastState: prev && prev.state === 'CONTAINER_EXITED' ? terminatedState(prev, runtimeName) : {},
    ready: running && input.ready(container, latest.id),
    started: running && input.started(container, latest.id),
    restartCount: latest.restartCount,
    image: latest.image || container.image || '',
    imageID: latest.imageRef,
    containerID: `${runtimeName}://${latest.id}`,
  };
  if (failure && !running && shouldContainerBeRestarted(container, pod, runtime)) {
    if (status.state?.terminated) status.lastState = status.state;
    status.state = { waiting: { reason: failure.reason, message: failure.message } };
  }
  return status;
}

/** getPhase: the pod phase from its container statuses and restart policy. */
export function podPhase(pod: KubeletPod, statuses: readonly ContainerStatus[]): PodPhase {
  let pending = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of statuses) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if ((s.state.terminated as { exitCode?: number }).exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else pending++;
    } else pending++;
  }
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (pending > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function condition(
  old: readonly Condition[] | undefined,
  type: string,
  status: Condition['status'],
  now: number,
  reason?: string,
  message?: string,
): Condition {
  const prev = old?.find((c) => c.type === type);
  const c: Condition = {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime:
      prev && prev.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : time(now),
  };
  if (reason) c.reason = reason;
  if (message) c.message = message;
  return c;
}

/** See the file comment. `phaseOverride` forces a phase (the pod is known terminal). */
export function generateAPIPodStatus(input: StatusInput, phaseOverride?: PodPhase): PodStatus {
  const { pod, now } = input;
  const old = pod.status ?? {};
  const containerStatuses = pod.spec.containers.map((c) => containerStatusOf(c, input));
  let phase = phaseOverride ?? podPhase(pod, containerStatuses);
  // A pod in a terminal phase never leaves it (the kubelet's status manager refuses to).
  if (old.phase === 'Succeeded' || old.phase === 'Failed') phase = old.phase;

  const unready = containerStatuses.filter((s) => !s.ready).map((s) => s.name);
  const completed = phase === 'Succeeded';
  const readyStatus = unready.length === 0 && !completed && phase !== 'Failed' ? 'True' : 'False';
  const [reason, message] = completed
    ? ['PodCompleted', undefined]
    : unready.length > 0
      ? ['ContainersNotReady', `containers with unready status: [${unready.join(' ')}]`]
      : phase === 'Failed'
        ? ['PodFailed', undefined]
        : [undefined, undefined];
  const mine = new Set(['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']);
  const scheduled = old.conditions?.find((c) => c.type === 'PodScheduled');
  const conditions: Condition[] = [
    ...(old.conditions ?? []).filter((c) => !mine.has(c.type)),
    condition(old.conditions, 'Initialized', 'True', now, completed ? 'PodCompleted' : undefined),
    condition(
      old.conditions,
      'Ready',
      readyStatus,
      now,
      readyStatus === 'True' ? undefined : reason,
      message,
    ),
    condition(
      old.conditions,
      'ContainersReady',
      readyStatus,
      now,
      readyStatus === 'True' ? undefined : reason,
      message,
    ),
    scheduled ?? condition(undefined, 'PodScheduled', 'True', now),
  ];

  const sandbox = input.runtime.sandboxes[0];
  const podIP = (sandbox?.state === 'SANDBOX_READY' ? sandbox.ip : '') || old.podIP || '';
  const status: PodStatus = {
    phase,
    conditions,
    hostIP: input.nodeIP,
    hostIPs: [{ ip: input.nodeIP }],
    startTime: old.startTime ?? time(now),
    containerStatuses,
  };
  if (podIP) {
    status.podIP = podIP;
    status.podIPs = [{ ip: podIP }];
  }
  return status;
}

/** JSON with object keys sorted (for comparing statuses whatever their key order). */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => `${JSON.stringify(k)}:${stable(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** True when `next` differs from `current` in a field the kubelet owns (a patch is needed). */
export function statusChanged(current: PodStatus | undefined, next: PodStatus): boolean {
  const pick = (s: PodStatus | undefined) =>
    Object.fromEntries(KUBELET_STATUS_FIELDS.map((k) => [k, s?.[k]]));
  return stable(pick(current)) !== stable(pick(next));
}
