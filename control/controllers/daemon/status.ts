/**
 * A DaemonSet's status from its pods and the nodes (Kubernetes' pkg/controller/daemon
 * updateDaemonSetStatus and storeDaemonSetStatus).
 */
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import { metaNamespaceKey } from '../../../api/client/store.js';
import { isPodAvailable, isPodReady, isPodTerminal } from '../../../api/podutil.js';
import type { DaemonSet } from '../../../api/types.js';
import type { RateLimitingQueue } from '../../../api/workqueue/rateLimited.js';
import type { SyncState } from './controller.js';
import { byCreation, isPodUpdated } from './controller.js';

export type DaemonSetStatus = NonNullable<DaemonSet['status']>;

/** GET-and-retry attempts after a failed status write (StatusUpdateRetries). */
export const STATUS_UPDATE_RETRIES = 1;

/**
 * The counters (updateDaemonSetStatus): per node that should run the pod, desired +1; with
 * a pod, current +1, and by its oldest pod ready, available (minReadySeconds at s.nowMs) and
 * updated; a node that should not run it but has a pod: misscheduled +1. Terminal pods
 * being deleted are not counted. unavailable = desired − available.
 */
export function calculateStatus(s: SyncState): DaemonSetStatus {
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let updated = 0;
  let available = 0;
  const minReady = s.ds.spec.minReadySeconds ?? 0;
  for (const node of s.nodes) {
    const pods = (s.nodeToDaemonPods.get(node.metadata.name ?? '') ?? []).filter(
      (p) => !(isPodTerminal(p) && p.metadata.deletionTimestamp),
    );
    const scheduled = pods.length > 0;
    if (!s.placement(node).shouldRun) {
      if (scheduled) misscheduled++;
      continue;
    }
    desired++;
    if (!scheduled) continue;
    current++;
    const pod = [...pods].sort(byCreation)[0]!;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReady, s.nowMs)) available++;
    }
    if (isPodUpdated(pod, s.hash, s.generation)) updated++;
  }
  return {
    ...s.ds.status,
    desiredNumberScheduled: desired,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: desired - available,
  };
}

const COUNTERS = [
  'desiredNumberScheduled',
  'currentNumberScheduled',
  'numberMisscheduled',
  'numberReady',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
] as const;

const OMITEMPTY_COUNTERS = ['updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'] as const;

/**
 * storeDaemonSetStatus: writes the status of calculateStatus (and, with
 * `updateObservedGen`, observedGeneration = the generation acted on) through the status
 * subresource unless nothing changes; a failed write is retried once on a fresh read.
 * With minReadySeconds and ready pods not yet available, enqueues the DaemonSet again after
 * minReadySeconds.
 * @throws the API error of the last write or of the GET between attempts.
 */
export async function updateDaemonSetStatus(
  client: RestClient,
  s: SyncState,
  updateObservedGen: boolean,
  queue: RateLimitingQueue<string>,
): Promise<void> {
  const ds = s.ds;
  const status = calculateStatus(s);
  const generation = ds.metadata.generation ?? 0;
  const cur = ds.status;
  const same =
    cur !== undefined &&
    COUNTERS.every((k) => (cur[k] ?? 0) === (status[k] ?? 0)) &&
    (cur.observedGeneration ?? 0) >= generation;
  if (!same) {
    const next: DaemonSetStatus = { ...status };
    // updatedNumberScheduled, numberAvailable and numberUnavailable are omitempty in
    // Kubernetes' DaemonSetStatus (the other four counters are always there): a zero is left out.
    for (const k of OMITEMPTY_COUNTERS) if (next[k] === 0) delete next[k];
    if (updateObservedGen) next.observedGeneration = generation;
    let obj = ds;
    for (let attempt = 0; ; attempt++) {
      try {
        await client.updateStatus<DaemonSet>(resources.daemonsets, {
          ...obj,
          status: {
            ...next,
            ...(obj.status?.collisionCount !== undefined
              ? { collisionCount: obj.status.collisionCount }
              : {}),
          },
        });
        break;
      } catch (err) {
        if (attempt >= STATUS_UPDATE_RETRIES) throw err;
        obj = await client.get<DaemonSet>(resources.daemonsets, ds.metadata.namespace, ds.metadata.name!);
      }
    }
  }
  const minReady = ds.spec.minReadySeconds ?? 0;
  if (minReady > 0 && status.numberReady !== status.numberAvailable)
    queue.addAfter(metaNamespaceKey(ds), minReady * 1000);
}
