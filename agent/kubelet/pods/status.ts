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
 *   reason and message, its last termination moved to lastState. A container the runtime
 *   has none of (not created yet, or removed behind the kubelet's back) keeps what the
 *   status before said (statusWithoutContainer: restartCount and lastState, or the whole
 *   terminated status), so restartCount never drops back to 0 meanwhile.
 * - initContainerStatuses likewise for the regular init containers; a container not yet
 *   created waits with reason PodInitializing when the pod has init containers (else
 *   ContainerCreating); a failed init container that will be restarted shows its start
 *   failure (CrashLoopBackOff) with the failure as lastState.
 * - phase: Failed when an init container failed under `restartPolicy: Never`; Pending
 *   while an init container has not succeeded yet (or failed and will be restarted), or
 *   an app container has not started yet; Running while one runs (or,
 *   under Always/OnFailure, is to be restarted); Succeeded when all exited 0; Failed when
 *   all exited and one failed and none will be restarted.
 * - conditions, in upstream's order after those others own: PodReadyToStartContainers
 *   (True while the pod has a ready sandbox with its IP), Initialized (False, reason
 *   ContainersNotInitialized, `containers with incomplete status: [a b]`, until every init
 *   container exited 0 or an app container has run; PodCompleted once Succeeded), Ready and
 *   ContainersReady (False with PodCompleted once Succeeded, PodFailed once Failed, else
 *   ContainersNotReady naming the unready containers; Ready also waits for the pod's
 *   readinessGates: ReadinessGatesNotReady), each keeping its lastTransitionTime while its
 *   status stays, then PodScheduled (kept; True when missing). Conditions of other types
 *   (set by others) are kept, first.
 * - podIP(s) from the sandbox (kept once the sandbox is gone), hostIP(s) the node IP,
 *   startTime kept once set.
 * - podIsTerminal (the pod was deleted or finished and its containers were stopped:
 *   SyncTerminatingPod's generateAPIPodStatus(…, podIsTerminal) with the status manager's
 *   TerminatePod, Kubernetes ≥ 1.27): no start failure shows any more; an app container
 *   that has no terminated state is terminated with exit code 137, reason
 *   ContainerStatusUnknown (unless the pod never got past its init containers); the phase
 *   is Succeeded when every app container exited 0, else Failed — so a deleted pod a
 *   finalizer holds no longer stays Running.
 */
import { rfc3339 } from '../../../api/object.js';
import type { Condition, ContainerStatus, Pod, PodPhase, PodStatus } from '../../../api/types.js';
import { podSandboxChanged, shouldContainerBeRestarted } from './actions.js';
import {
  latestContainer,
  previousContainer,
  type ContainerRuntimeStatus,
  type PodRuntimeStatus,
} from './runtime-status.js';
import { regularInitContainers, type KubeletContainer, type KubeletPod } from './types.js';

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
  /** Every container of the pod was stopped for good (see the file comment). */
  podIsTerminal?: boolean;
}

/** The state of a container the kubelet could not find when the pod terminated (TerminatePod). */
const CONTAINER_STATUS_UNKNOWN = {
  exitCode: 137,
  reason: 'ContainerStatusUnknown',
  message: 'The container could not be located when the pod was terminated',
} as const;

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
  'initContainerStatuses',
] as const;

/** The condition types generateAPIPodStatus writes; others' conditions are kept as they are. */
export const KUBELET_CONDITION_TYPES: ReadonlySet<string> = new Set([
  'PodReadyToStartContainers',
  'PodScheduled',
  'Initialized',
  'ContainersReady',
  'Ready',
]);

/**
 * `mine` (a status the kubelet generated) with the conditions others own taken from `api`
 * (the pod's status in the API now): what the status manager writes back (mergePodStatus).
 */
export function withOthersConditions(api: PodStatus | undefined, mine: PodStatus): PodStatus {
  return {
    ...mine,
    conditions: [
      ...(api?.conditions ?? []).filter((c) => !KUBELET_CONDITION_TYPES.has(c.type)),
      ...(mine.conditions ?? []).filter((c) => KUBELET_CONDITION_TYPES.has(c.type)),
    ],
  };
}

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

/** The last termination of a container that was running and is gone from the runtime. */
const VANISHED_WHILE_RUNNING = {
  exitCode: 137,
  reason: 'ContainerStatusUnknown',
  message: 'The container could not be located when the pod was deleted.  The container used to be Running',
} as const;

/**
 * The status of a spec container the runtime has no container of (never created, or removed
 * behind the kubelet's back, or the runtime's state lost), from the status the kubelet
 * wrote before (`input.pod.status`), as convertToAPIContainerStatuses' oldStatuses: an old
 * terminated status is kept whole; otherwise the container waits (PodInitializing when the
 * pod has init containers, else ContainerCreating) with the old restartCount and lastState —
 * and when it was running, its last state is ContainerStatusUnknown (exit 137) and, unless
 * the pod is being deleted, the restart counts one more. So the count does not drop to 0
 * while the kubelet waits to start the container again.
 */
function statusWithoutContainer(
  container: KubeletContainer,
  input: StatusInput,
  init: boolean,
): ContainerStatus {
  const { pod } = input;
  const previous = init ? pod.status?.initContainerStatuses : pod.status?.containerStatuses;
  const old = (previous as ContainerStatus[] | undefined)?.find((s) => s.name === container.name);
  if (old?.state?.terminated) return { ...structuredClone(old), ready: false, started: false };
  const defaultReason = regularInitContainers(pod).length > 0 ? 'PodInitializing' : 'ContainerCreating';
  const status: ContainerStatus = {
    name: container.name,
    state: { waiting: { reason: defaultReason } },
    lastState: old?.lastState ? structuredClone(old.lastState) : {},
    ready: false,
    started: false,
    restartCount: old?.restartCount ?? 0,
    image: container.image ?? '',
    imageID: '',
  };
  if (old?.state?.running && !status.lastState?.terminated) {
    status.lastState = { terminated: { ...VANISHED_WHILE_RUNNING } };
    if (!pod.metadata.deletionTimestamp) status.restartCount += 1;
  }
  return status;
}

/**
 * The status of one spec container (convertToAPIContainerStatuses); `init` for an init
 * container (a failure shows only while it is to be restarted: non-zero exit, policy not Never).
 */
export function containerStatusOf(
  container: KubeletContainer,
  input: StatusInput,
  init = false,
): ContainerStatus {
  const { runtime, runtimeName, failures, pod } = input;
  const latest = latestContainer(runtime, container.name);
  const failure = failures.get(container.name);
  if (!latest) {
    const status = statusWithoutContainer(container, input, init);
    if (failure) {
      if (status.state?.terminated) status.lastState = status.state;
      status.state = { waiting: { reason: failure.reason, message: failure.message } };
    }
    return status;
  }
  const prev = previousContainer(runtime, container.name);
  const running = latest.state === 'CONTAINER_RUNNING';
  const status: ContainerStatus = {
    name: container.name,
    state: containerState(latest, runtimeName),
    lastState: prev && prev.state === 'CONTAINER_EXITED' ? terminatedState(prev, runtimeName) : {},
    // An init container is ready once it exited 0 (it has no probes).
    ready: init
      ? latest.state === 'CONTAINER_EXITED' && latest.exitCode === 0
      : running && input.ready(container, latest.id),
    started: init ? running : running && input.started(container, latest.id),
    restartCount: latest.restartCount,
    image: latest.image || container.image || '',
    imageID: latest.imageRef,
    containerID: `${runtimeName}://${latest.id}`,
  };
  const restart = init
    ? latest.state !== 'CONTAINER_EXITED' ||
      (latest.exitCode !== 0 && (pod.spec.restartPolicy ?? 'Always') !== 'Never')
    : shouldContainerBeRestarted(container, pod, runtime);
  if (failure && !running && restart && !input.podIsTerminal) {
    if (status.state?.terminated) status.lastState = status.state;
    status.state = { waiting: { reason: failure.reason, message: failure.message } };
  }
  return status;
}

/**
 * getPhase: the pod phase from its container statuses, its init container statuses and its
 * restart policy.
 */
export function podPhase(
  pod: KubeletPod,
  statuses: readonly ContainerStatus[],
  initStatuses: readonly ContainerStatus[] = [],
): PodPhase {
  let pendingInit = 0;
  let failedInit = 0;
  for (const s of initStatuses) {
    const t = s.state?.terminated as { exitCode?: number } | undefined;
    const last = s.lastState?.terminated as { exitCode?: number } | undefined;
    if (s.state?.running) pendingInit++;
    else if (t) {
      if (t.exitCode !== 0) failedInit++;
    } else if (s.state?.waiting && last) {
      if (last.exitCode !== 0) failedInit++;
    } else pendingInit++;
  }
  const initPolicy = pod.spec.restartPolicy ?? 'Always';
  if (failedInit > 0 && initPolicy === 'Never') return 'Failed';
  if (pendingInit > 0 || failedInit > 0) return 'Pending';
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

/**
 * GeneratePodInitializedCondition (pkg/kubelet/status/generate.go): True when every init
 * container exited 0 (reason PodCompleted once the pod succeeded) or an app container ran;
 * else False, ContainersNotInitialized, naming the incomplete ones.
 */
function initializedCondition(
  old: readonly Condition[] | undefined,
  initStatuses: readonly ContainerStatus[],
  appRan: boolean,
  completed: boolean,
  now: number,
): Condition {
  if (completed) return condition(old, 'Initialized', 'True', now, 'PodCompleted');
  const incomplete = initStatuses
    .filter((s) => (s.state?.terminated as { exitCode?: number } | undefined)?.exitCode !== 0)
    .map((s) => s.name);
  if (appRan || incomplete.length === 0) return condition(old, 'Initialized', 'True', now);
  return condition(
    old,
    'Initialized',
    'False',
    now,
    'ContainersNotInitialized',
    `containers with incomplete status: [${incomplete.join(' ')}]`,
  );
}

/**
 * GeneratePodReadyToStartContainersCondition (generate.go; the PodReadyToStartContainers
 * condition, beta and on by default in 1.32): True while the pod has a sandbox with
 * networking that need not be made again (podSandboxChanged), else False — before the first
 * sandbox, once it died, and once a finished pod's sandbox was stopped.
 */
export function readyToStartContainers(pod: KubeletPod, runtime: PodRuntimeStatus): Condition['status'] {
  return podSandboxChanged(pod, runtime).changed ? 'False' : 'True';
}

/** A condition's status, reason and message, before its times are set. */
export interface ConditionVerdict {
  status: Condition['status'];
  reason?: string;
  message?: string;
}

/**
 * GenerateContainersReadyCondition (pkg/kubelet/status/generate.go): False with reason
 * PodCompleted once the pod Succeeded, PodFailed once it Failed (no message: its containers
 * may still be terminating), else ContainersNotReady with `containers with unready status:
 * [a b]` naming the unready containers in spec order; True when every one is ready.
 */
export function containersReadyVerdict(
  statuses: readonly ContainerStatus[],
  phase: PodPhase,
): ConditionVerdict {
  if (phase === 'Succeeded') return { status: 'False', reason: 'PodCompleted' };
  if (phase === 'Failed') return { status: 'False', reason: 'PodFailed' };
  const unready = statuses.filter((s) => !s.ready).map((s) => s.name);
  if (unready.length > 0) {
    return {
      status: 'False',
      reason: 'ContainersNotReady',
      message: `containers with unready status: [${unready.join(' ')}]`,
    };
  }
  return { status: 'True' };
}

/**
 * GeneratePodReadyCondition (generate.go): ContainersReady's verdict while it is not True;
 * then every readiness gate's condition (among `conditions`, those others set) must be
 * True, else False with ReadinessGatesNotReady and, per gate, `corresponding condition of
 * pod readiness gate "T" does not exist.` or `the status of pod readiness gate "T" is not
 * "True", but False`, joined with ", ".
 */
export function podReadyVerdict(
  pod: KubeletPod,
  conditions: readonly Condition[],
  containersReady: ConditionVerdict,
): ConditionVerdict {
  if (containersReady.status !== 'True') return containersReady;
  const unready: string[] = [];
  for (const gate of readinessGates(pod)) {
    const c = conditions.find((x) => x.type === gate);
    if (!c)
      unready.push(`corresponding condition of pod readiness gate ${JSON.stringify(gate)} does not exist.`);
    else if (c.status !== 'True')
      unready.push(`the status of pod readiness gate ${JSON.stringify(gate)} is not "True", but ${c.status}`);
  }
  if (unready.length > 0)
    return { status: 'False', reason: 'ReadinessGatesNotReady', message: unready.join(', ') };
  return { status: 'True' };
}

/**
 * status.NeedToReconcilePodReadiness: the pod has readinessGates and the Ready condition its
 * status has (when it has one) differs in status or message from the one its conditions and
 * container statuses now give — a gate's condition was set by someone else — so the pod is
 * synced again to write Ready.
 */
export function needToReconcilePodReadiness(pod: KubeletPod): boolean {
  if (readinessGates(pod).length === 0) return false;
  const conditions = pod.status?.conditions ?? [];
  const current = conditions.find((c) => c.type === 'Ready');
  if (!current) return false;
  const phase = pod.status?.phase ?? 'Pending';
  const want = podReadyVerdict(
    pod,
    conditions,
    containersReadyVerdict(pod.status?.containerStatuses ?? [], phase),
  );
  return current.status !== want.status || (current.message ?? '') !== (want.message ?? '');
}

/** The condition types of the pod's spec.readinessGates, in order. */
export function readinessGates(pod: Pod): string[] {
  const gates = (pod.spec as { readinessGates?: { conditionType?: string }[] }).readinessGates ?? [];
  return gates.map((g) => g.conditionType ?? '');
}

/** See the file comment. `phaseOverride` forces a phase (the pod is known terminal). */
export function generateAPIPodStatus(input: StatusInput, phaseOverride?: PodPhase): PodStatus {
  const { pod, now } = input;
  const old = pod.status ?? {};
  const containerStatuses = pod.spec.containers.map((c) => containerStatusOf(c, input));
  const initContainerStatuses = regularInitContainers(pod).map((c) => containerStatusOf(c, input, true));
  // Initialized before (an app container ran): the init containers are no longer waited for.
  const appRan = containerStatuses.some(
    (s) => s.state?.running || s.state?.terminated || s.lastState?.terminated,
  );
  let phase = phaseOverride ?? podPhase(pod, containerStatuses, appRan ? [] : initContainerStatuses);
  if (input.podIsTerminal) {
    const initializing =
      !appRan &&
      initContainerStatuses.some(
        (s) => (s.state?.terminated as { exitCode?: number } | undefined)?.exitCode !== 0,
      );
    phase = terminalPhase(containerStatuses, phase, initializing);
  }
  // A pod in a terminal phase never leaves it (the kubelet's status manager refuses to).
  if (old.phase === 'Succeeded' || old.phase === 'Failed') phase = old.phase;

  const completed = phase === 'Succeeded';
  const mine = KUBELET_CONDITION_TYPES;
  const others = (old.conditions ?? []).filter((c) => !mine.has(c.type));
  const containersReady = containersReadyVerdict(containerStatuses, phase);
  const ready = podReadyVerdict(pod, others, containersReady);
  const scheduled = old.conditions?.find((c) => c.type === 'PodScheduled');
  const conditions: Condition[] = [
    ...others,
    condition(old.conditions, 'PodReadyToStartContainers', readyToStartContainers(pod, input.runtime), now),
    initializedCondition(old.conditions, initContainerStatuses, appRan, completed, now),
    condition(old.conditions, 'Ready', ready.status, now, ready.reason, ready.message),
    condition(
      old.conditions,
      'ContainersReady',
      containersReady.status,
      now,
      containersReady.reason,
      containersReady.message,
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
  if (initContainerStatuses.length > 0) status.initContainerStatuses = initContainerStatuses;
  if (podIP) {
    status.podIP = podIP;
    status.podIPs = [{ ip: podIP }];
  }
  return status;
}

/**
 * The phase of a pod whose containers were all stopped for good (getPhase with
 * podIsTerminal, then TerminatePod): app containers without a terminated state become
 * ContainerStatusUnknown (in place), unless the pod is still initializing (its init
 * containers' failure tells why it failed); Succeeded when every one exited 0, else Failed.
 */
function terminalPhase(statuses: ContainerStatus[], phase: PodPhase, initializing: boolean): PodPhase {
  if (phase === 'Succeeded' || phase === 'Failed') return phase;
  let succeeded = 0;
  for (const s of statuses) {
    const t = s.state?.terminated as { exitCode?: number } | undefined;
    if (t) {
      if (t.exitCode === 0) succeeded++;
      continue;
    }
    if (initializing) continue;
    s.state = { terminated: { ...CONTAINER_STATUS_UNKNOWN } };
    s.ready = false;
    s.started = false;
  }
  return statuses.length > 0 && succeeded === statuses.length ? 'Succeeded' : 'Failed';
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
