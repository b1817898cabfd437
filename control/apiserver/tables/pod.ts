/**
 * Pods: NAME READY STATUS RESTARTS AGE, wide IP NODE NOMINATED NODE READINESS GATES.
 *
 * STATUS is not a field of the pod: it is Kubernetes' summary (printPod, v1.32) of the
 * phase, the init containers, the containers and the deletion state, in this order:
 *  1. `status.reason` if set, else `status.phase`; `SchedulingGated` while the
 *     PodScheduled condition says so.
 *  2. Init containers in order: one that failed reads `Init:<reason>` (or
 *     `Init:Signal:N` / `Init:ExitCode:N`), one waiting with a reason `Init:<reason>`,
 *     one not yet done `Init:<i>/<n>`. Successful ones and started sidecars (init
 *     containers with restartPolicy Always) are skipped.
 *  3. Once initialized, the containers from last to first: a waiting reason
 *     (`CrashLoopBackOff`, `ImagePullBackOff`, `ContainerCreating`, ...) or a
 *     terminated reason (`Completed`, `Error`, `OOMKilled`, or `Signal:N` / `ExitCode:N`)
 *     overrides; the first container in the list therefore wins. `Completed` while some
 *     container still runs reads `Running` (or `NotReady` without the Ready condition).
 *  4. Being deleted: `Unknown` if the node was lost (reason `NodeLost`), else
 *     `Terminating` — unless the phase is already Succeeded or Failed (since v1.31).
 *
 * RESTARTS sums restartCount (of the containers, plus sidecars; of the init containers
 * while still initializing) and adds `(<age> ago)` of the latest
 * lastState.terminated.finishedAt, as Kubernetes since v1.22.
 */
import type { KubeObject } from '../../../api/object.js';
import { since, parseTime, humanDuration } from './format.js';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  column,
  nameOf,
  type PrintedRow,
  type TablePrinter,
  type TableRowCondition,
} from './printer.js';

interface ContainerState {
  waiting?: { reason?: string } | null;
  running?: { startedAt?: string } | null;
  terminated?: { reason?: string; exitCode?: number; signal?: number; finishedAt?: string } | null;
}

interface ContainerStatusWire {
  name?: string;
  ready?: boolean;
  started?: boolean;
  restartCount?: number;
  state?: ContainerState | null;
  lastState?: ContainerState | null;
}

interface PodWire extends KubeObject {
  spec?: {
    nodeName?: string;
    containers?: { name?: string }[];
    initContainers?: { name?: string; restartPolicy?: string }[];
    readinessGates?: { conditionType: string }[];
  };
  status?: {
    phase?: string;
    reason?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    nominatedNodeName?: string;
    conditions?: { type: string; status: string; reason?: string }[];
    initContainerStatuses?: ContainerStatusWire[];
    containerStatuses?: ContainerStatusWire[];
  };
}

/** The pod reason the node lifecycle controller sets when it evicts pods from an unreachable node. */
const NODE_LOST_REASON = 'NodeLost';

const SUCCEEDED: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const FAILED: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
];

function conditionIsTrue(pod: PodWire, type: string): boolean {
  // Only the first condition of a type counts, as Kubernetes' lookup does.
  const c = pod.status?.conditions?.find((x) => x.type === type);
  return c?.status === 'True';
}

/** The finishedAt of the previous run of a container, in ms, or 0. */
function lastTermination(cs: ContainerStatusWire): number {
  return parseTime(cs.lastState?.terminated?.finishedAt) ?? 0;
}

function terminatedReason(t: NonNullable<ContainerState['terminated']>, prefix: string): string {
  if (t.reason) return prefix + t.reason;
  return t.signal ? `${prefix}Signal:${t.signal}` : `${prefix}ExitCode:${t.exitCode ?? 0}`;
}

function printPod(obj: KubeObject, now: Date): PrintedRow {
  const pod = obj as PodWire;
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  const initSpecs = spec.initContainers ?? [];
  const isSidecar = (name: string | undefined): boolean =>
    initSpecs.some((c) => c.name === name && c.restartPolicy === 'Always');

  let reason = status.reason || status.phase || '';
  if (status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) {
    reason = 'SchedulingGated';
  }

  const total = (spec.containers ?? []).length + initSpecs.filter((c) => c.restartPolicy === 'Always').length;
  let ready = 0;
  let restarts = 0;
  let lastRestart = 0;
  let sidecarRestarts = 0;
  let lastSidecarRestart = 0;

  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    const count = cs.restartCount ?? 0;
    restarts += count;
    lastRestart = Math.max(lastRestart, lastTermination(cs));
    const sidecar = isSidecar(cs.name);
    if (sidecar) {
      sidecarRestarts += count;
      lastSidecarRestart = Math.max(lastSidecarRestart, lastTermination(cs));
    }
    const terminated = cs.state?.terminated;
    const waiting = cs.state?.waiting;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (sidecar && cs.started) {
      if (cs.ready) ready++;
      continue;
    }
    if (terminated) {
      reason = terminatedReason(terminated, 'Init:');
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionIsTrue(pod, 'Initialized')) {
    // Once initialized, init container restarts no longer count, except the sidecars'.
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      restarts += cs.restartCount ?? 0;
      lastRestart = Math.max(lastRestart, lastTermination(cs));
      const waiting = cs.state?.waiting;
      const terminated = cs.state?.terminated;
      if (waiting?.reason) {
        reason = waiting.reason;
      } else if (terminated) {
        reason = terminatedReason(terminated, '');
      } else if (cs.ready && cs.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = conditionIsTrue(pod, 'Ready') ? 'Running' : 'NotReady';
    }
  }

  if (pod.metadata?.deletionTimestamp) {
    if (status.reason === NODE_LOST_REASON) reason = 'Unknown';
    else if (status.phase !== 'Succeeded' && status.phase !== 'Failed') reason = 'Terminating';
  }

  const restartsCell =
    restarts !== 0 && lastRestart !== 0
      ? `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)`
      : String(restarts);

  // The v1 API mirrors podIP into podIPs[0]; fall back for objects written with podIP only.
  const podIP = status.podIPs?.[0]?.ip || status.podIP || '<none>';
  const gates = spec.readinessGates ?? [];
  const readinessGates =
    gates.length === 0
      ? '<none>'
      : `${gates.filter((g) => conditionIsTrue(pod, g.conditionType)).length}/${gates.length}`;

  const row: PrintedRow = {
    cells: [
      nameOf(pod),
      `${ready}/${total}`,
      reason,
      restartsCell,
      since(pod.metadata?.creationTimestamp, now),
      podIP,
      spec.nodeName || '<none>',
      status.nominatedNodeName || '<none>',
      readinessGates,
    ],
  };
  if (status.phase === 'Succeeded') row.conditions = SUCCEEDED;
  else if (status.phase === 'Failed') row.conditions = FAILED;
  return row;
}

export const podPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'Ready containers out of all containers of the pod.'),
    column('Status', 'string', "A summary of the pod's phase and of its containers' states."),
    column('Restarts', 'string', 'Container restarts, and how long ago the latest one was.'),
    AGE_COLUMN,
    column('IP', 'string', "The pod's IP address.", { priority: 1 }),
    column('Node', 'string', 'The node the pod is bound to.', { priority: 1 }),
    column('Nominated Node', 'string', 'The node the scheduler nominated for the pod after preemption.', {
      priority: 1,
    }),
    column('Readiness Gates', 'string', 'Readiness gates whose condition is True, out of all.', {
      priority: 1,
    }),
  ],
  row: printPod,
};
