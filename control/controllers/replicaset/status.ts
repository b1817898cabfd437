/**
 * A ReplicaSet's status from its pods, and writing it (Kubernetes' replicaset
 * calculateStatus and updateReplicaSetStatus, replica_set_utils.go).
 */
import { isDeepStrictEqual } from 'node:util';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import { rfc3339 } from '../../../api/object.js';
import { getCondition, isPodAvailable, isPodReady } from '../../../api/podutil.js';
import type { Condition, Pod, ReplicaSet } from '../../../api/types.js';

/** The condition type set while creating or deleting pods fails (apps.ReplicaSetReplicaFailure). */
export const REPLICA_FAILURE = 'ReplicaFailure';

/** GET-and-retry attempts after a failed status write (statusUpdateRetries). */
export const STATUS_UPDATE_RETRIES = 1;

export type ReplicaSetStatus = NonNullable<ReplicaSet['status']>;

/**
 * The status `rs` should have given its claimed active pods (calculateStatus):
 * - `replicas`: the pods; `fullyLabeledReplicas`: those carrying every label of the pod
 *   template; `readyReplicas`: those Ready; `availableReplicas`: those Ready for at least
 *   `spec.minReadySeconds` at `nowMs` (ms since the epoch);
 * - `ReplicaFailure` (status True, reason `FailedCreate` when there were too few pods,
 *   `FailedDelete` when too many, message the error) is added when `manageReplicasErr` is
 *   set and the condition is absent, and removed when the sync succeeded. An existing one
 *   is kept as is, so its lastTransitionTime tells when failures began.
 * `observedGeneration` is left as it was (updateReplicaSetStatus sets it).
 */
export function calculateStatus(
  rs: ReplicaSet,
  filteredPods: readonly Pod[],
  manageReplicasErr: unknown,
  nowMs: number,
): ReplicaSetStatus {
  const templateLabels = Object.entries(rs.spec.template.metadata?.labels ?? {});
  const minReadySeconds = rs.spec.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of filteredPods) {
    const labels = pod.metadata.labels ?? {};
    if (templateLabels.every(([k, v]) => labels[k] === v)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReadySeconds, nowMs)) available++;
    }
  }
  const old = rs.status ?? { replicas: 0 };
  let conditions = old.conditions ?? [];
  const failure = getCondition(conditions, REPLICA_FAILURE);
  if (manageReplicasErr !== undefined && !failure) {
    const diff = filteredPods.length - (rs.spec.replicas ?? 1);
    const cond: Condition = {
      type: REPLICA_FAILURE,
      status: 'True',
      reason: diff < 0 ? 'FailedCreate' : diff > 0 ? 'FailedDelete' : '',
      message: manageReplicasErr instanceof Error ? manageReplicasErr.message : String(manageReplicasErr),
      lastTransitionTime: rfc3339(new Date(nowMs)),
    };
    conditions = [...conditions, cond];
  } else if (manageReplicasErr === undefined && failure) {
    conditions = conditions.filter((c) => c.type !== REPLICA_FAILURE);
  }
  const status: ReplicaSetStatus = {
    ...old,
    replicas: filteredPods.length,
    fullyLabeledReplicas: fullyLabeled,
    readyReplicas: ready,
    availableReplicas: available,
  };
  if (conditions.length > 0) status.conditions = conditions;
  else delete status.conditions;
  return status;
}

/** True when writing `status` to `rs` would change nothing, observedGeneration included. */
export function statusUpToDate(rs: ReplicaSet, status: ReplicaSetStatus): boolean {
  const cur = rs.status ?? { replicas: 0 };
  return (
    cur.replicas === status.replicas &&
    (cur.fullyLabeledReplicas ?? 0) === (status.fullyLabeledReplicas ?? 0) &&
    (cur.readyReplicas ?? 0) === (status.readyReplicas ?? 0) &&
    (cur.availableReplicas ?? 0) === (status.availableReplicas ?? 0) &&
    (rs.metadata.generation ?? 0) === (cur.observedGeneration ?? 0) &&
    isDeepStrictEqual(cur.conditions ?? [], status.conditions ?? [])
  );
}

/**
 * Writes `status` through the status subresource with `observedGeneration` set to the
 * generation of `rs` (the one acted on), unless nothing would change
 * (updateReplicaSetStatus). A failed write is retried once on a freshly read ReplicaSet.
 * Resolves with the ReplicaSet as stored (or `rs` when nothing was written).
 * @throws the API error of the last write, or of the GET between attempts.
 */
export async function updateReplicaSetStatus(
  client: RestClient,
  rs: ReplicaSet,
  status: ReplicaSetStatus,
): Promise<ReplicaSet> {
  if (statusUpToDate(rs, status)) return rs;
  // The generation we acted on, not a newer one a retry might read.
  const newStatus: ReplicaSetStatus = { ...status, observedGeneration: rs.metadata.generation ?? 0 };
  let cur = rs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await client.updateStatus<ReplicaSet>(resources.replicasets, { ...cur, status: newStatus });
    } catch (err) {
      if (attempt >= STATUS_UPDATE_RETRIES) throw err;
      cur = await client.get<ReplicaSet>(resources.replicasets, rs.metadata.namespace, rs.metadata.name!);
    }
  }
}
