/**
 * The Eviction API (POST pods/NAME/eviction with a policy/v1 Eviction): a pod delete that
 * PodDisruptionBudgets may refuse, as Kubernetes' pkg/registry/core/pod/storage/eviction.go.
 *
 *   1. the body names the URL's pod (400 otherwise); dryRun is the request's or the
 *      Eviction's deleteOptions'.
 *   2. a pod that is Pending, Succeeded, Failed or already terminating is deleted at once
 *      (canIgnorePDB): it is not serving, so evicting it disrupts nothing.
 *   3. otherwise the PDBs of its namespace whose selector (non-empty, valid) matches it:
 *      none → delete; more than one → 500 (`This pod has more than one
 *      PodDisruptionBudget, which the eviction subresource does not support.`); one:
 *      - an unready pod under AlwaysAllow, or under IfHealthyBudget (the default) while
 *        currentHealthy >= desiredHealthy > 0, is deleted without touching the budget,
 *        guarded by its resourceVersion (it must not have become ready meanwhile: a
 *        conflict answers 429);
 *      - else checkAndDecrement: a budget not yet observed by the disruption controller
 *        (status.observedGeneration < metadata.generation) or with disruptionsAllowed 0
 *        answers 429 TooManyRequests `Cannot evict pod as it would violate the pod's
 *        disruption budget.` with a DisruptionBudget cause, and nothing is written;
 *        otherwise the PDB's status is written with disruptionsAllowed - 1 and the pod in
 *        status.disruptedPods (now), guarded by the PDB's resourceVersion (a conflict reads
 *        the PDB again and decides again, at most EVICTION_RETRIES times).
 *   4. the delete: the pod's DisruptionTarget condition (EvictionByEvictionAPI) is set
 *      through its status, then it is deleted with the Eviction's deleteOptions
 *      (gracePeriodSeconds, preconditions, propagationPolicy).
 */
import { labelSelectorFromObject } from '../../api/meta/labels.js';
import type { KubeObject } from '../../api/object.js';
import { rfc3339 } from '../../api/object.js';
import {
  DISRUPTION_BUDGET_CAUSE,
  updateDisruptionAllowedCondition,
  type PodDisruptionBudget,
} from '../../api/policy.js';
import type { Pod } from '../../api/types.js';
import type { DeleteOptions, Registry } from './registry.js';
import { ApiError, badRequest, conflict, internalError, newForbidden, StatusReason } from './status.js';

/** Attempts of a conflicting read-decide-write (eviction.go's EvictionsRetry: 20 steps). */
export const EVICTION_RETRIES = 20;

/** Most pods a PDB's status.disruptedPods may list before evictions are refused (MaxDisruptedPodSize). */
export const MAX_DISRUPTED_POD_SIZE = 2000;

/** The message of a refused eviction (createTooManyRequestsError / checkAndDecrement). */
export const EVICTION_REFUSED_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

/** What evictPod reads and writes. */
export interface EvictionDeps {
  /** The pods registry. */
  readonly pods: Registry;
  /** The policy/v1 poddisruptionbudgets registry. */
  readonly podDisruptionBudgets: Registry;
  /** The server's clock (the time recorded in status.disruptedPods). */
  readonly now: () => Date;
}

/** 429 TooManyRequests with a DisruptionBudget cause (errors.NewTooManyRequests, retryAfterSeconds 0). */
function tooManyRequests(causeMessage: string): ApiError {
  return new ApiError(429, StatusReason.TooManyRequests, EVICTION_REFUSED_MESSAGE, {
    causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: causeMessage }],
  });
}

const stillProcessing = (pdb: string): ApiError =>
  tooManyRequests(`The disruption budget ${pdb} is still being processed by the server.`);

function isReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** canIgnorePDB: Pending, Succeeded, Failed or terminating pods are not guarded. */
function canIgnorePDB(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return (
    phase === 'Succeeded' ||
    phase === 'Failed' ||
    phase === 'Pending' ||
    phase === undefined ||
    Boolean(pod.metadata.deletionTimestamp)
  );
}

/** shouldEnforceResourceVersion: not for terminal or terminating pods. */
function shouldEnforceResourceVersion(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
}

/** The PDBs of the pod's namespace whose selector matches it (getPodDisruptionBudgets). */
async function podDisruptionBudgets(deps: EvictionDeps, pod: Pod): Promise<PodDisruptionBudget[]> {
  const list = await deps.podDisruptionBudgets.list(pod.metadata.namespace, {});
  return (list.items as PodDisruptionBudget[]).filter((pdb) => {
    try {
      const selector = labelSelectorFromObject(pdb.spec?.selector ?? null);
      // A nil or empty selector matches nothing here, not everything.
      return !selector.empty && selector.matches(pod.metadata.labels ?? {});
    } catch {
      return false; // an invalid selector matches no pod
    }
  });
}

/**
 * Evicts pod `namespace`/`name` as described in the file comment.
 * @param eviction the decoded request body (policy/v1 Eviction).
 * @param dryRun the request's `dryRun=All`.
 * @returns the metav1.Status Kubernetes answers with (201 Success).
 * @throws ApiError 400 (wrong kind, another pod's name, mismatched dryRun), 404 (no pod),
 *   409 (a precondition failed), 429 TooManyRequests (the budget refuses), 403 (a budget
 *   with negative disruptionsAllowed or too many disrupted pods), 500 (several budgets),
 *   504 (conflicts on the PDB did not end).
 */
export async function evictPod(
  deps: EvictionDeps,
  namespace: string,
  name: string,
  eviction: KubeObject,
  dryRun: boolean,
): Promise<KubeObject> {
  if (eviction.kind !== undefined && eviction.kind !== 'Eviction')
    throw badRequest(`expected an Eviction, got ${String(eviction.kind)}`);
  // As Kubernetes' eviction REST: the body names the pod it evicts; it must be the URL's.
  const bodyName = eviction.metadata?.name;
  if (bodyName !== undefined && bodyName !== '' && bodyName !== name)
    throw badRequest(`name in URL does not match name in Eviction object`);
  const opts = (eviction.deleteOptions ?? {}) as DeleteOptions & { dryRun?: string[] };
  const bodyDryRun = Array.isArray(opts.dryRun) && opts.dryRun.length > 0;
  if (bodyDryRun && dryRun && !opts.dryRun!.includes('All'))
    throw internalError(`dryRun in createOptions and deleteOptions do not match`);
  const isDryRun = dryRun || (bodyDryRun && opts.dryRun!.includes('All'));
  const del: DeleteOptions = {};
  if (typeof opts.gracePeriodSeconds === 'number') del.gracePeriodSeconds = opts.gracePeriodSeconds;
  if (opts.preconditions) del.preconditions = { ...opts.preconditions };
  if (opts.propagationPolicy) del.propagationPolicy = opts.propagationPolicy;
  if (isDryRun) del.dryRun = true;
  const rvUnset = !del.preconditions?.resourceVersion;
  const success: KubeObject = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    code: 201,
  };

  // 2. Pods whose budget does not matter; a conflict (the pod changed under the
  // resourceVersion guard) reads it again, unless the client gave its own resourceVersion.
  let pod: Pod;
  for (let attempt = 1; ; attempt++) {
    pod = (await deps.pods.get(namespace, name)) as Pod;
    if (!canIgnorePDB(pod)) break;
    const options =
      shouldEnforceResourceVersion(pod) && rvUnset
        ? { ...del, preconditions: { ...del.preconditions, resourceVersion: pod.metadata.resourceVersion! } }
        : del;
    try {
      await addConditionAndDeletePod(deps, namespace, name, options);
      return success;
    } catch (err) {
      if (rvUnset && attempt < EVICTION_RETRIES && err instanceof ApiError && err.code === 409) continue;
      throw err;
    }
  }

  // 3. The budget.
  const pdbs = await podDisruptionBudgets(deps, pod);
  if (pdbs.length > 1)
    throw new ApiError(
      500,
      StatusReason.Unknown,
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  let guardPod = false;
  let pdbName = '';
  if (pdbs.length === 1) {
    let pdb = pdbs[0]!;
    pdbName = pdb.metadata.name!;
    const status = pdb.status;
    if (
      !isReady(pod) &&
      (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' ||
        (status !== undefined && status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0))
    ) {
      // The unready pod does not count towards currentHealthy; deleting it disrupts nothing.
      guardPod = true;
    } else {
      for (let attempt = 1; ; attempt++) {
        try {
          await checkAndDecrement(deps, pod, pdb, isDryRun);
          break;
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 409)) throw err;
          if (attempt >= EVICTION_RETRIES)
            throw new ApiError(
              504,
              StatusReason.Timeout,
              `couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`,
              { retryAfterSeconds: 10 },
            );
          pdb = (await deps.podDisruptionBudgets.get(namespace, pdbName)) as PodDisruptionBudget;
        }
      }
    }
  }

  // 4. The delete.
  const options = guardPod
    ? { ...del, preconditions: { ...del.preconditions, resourceVersion: pod.metadata.resourceVersion! } }
    : del;
  try {
    await addConditionAndDeletePod(deps, namespace, name, options);
  } catch (err) {
    // The unready pod may have become ready: let the client try again.
    if (guardPod && rvUnset && err instanceof ApiError && err.code === 409) throw stillProcessing(pdbName);
    throw err;
  }
  return success;
}

/**
 * checkAndDecrement: refuses (429/403) or writes the PDB's status with one disruption
 * fewer and the pod in disruptedPods, guarded by the PDB's resourceVersion (409 on a race).
 * A dry run decides without writing.
 */
async function checkAndDecrement(
  deps: EvictionDeps,
  pod: Pod,
  pdb: PodDisruptionBudget,
  dryRun: boolean,
): Promise<void> {
  const name = pdb.metadata.name!;
  const status = pdb.status ?? {
    disruptionsAllowed: 0,
    currentHealthy: 0,
    desiredHealthy: 0,
    expectedPods: 0,
  };
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw stillProcessing(name);
  const ref = { group: 'policy', resource: 'poddisruptionbudget', name };
  if (status.disruptionsAllowed < 0) throw newForbidden(ref, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE)
    throw newForbidden(ref, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  if (status.disruptionsAllowed === 0)
    throw tooManyRequests(
      `The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
    );
  if (dryRun) return;
  const now = rfc3339(deps.now());
  const next = structuredClone(pdb);
  const nextStatus = (next.status = structuredClone(status));
  nextStatus.disruptionsAllowed--;
  if (nextStatus.disruptionsAllowed === 0) updateDisruptionAllowedCondition(nextStatus, now);
  // Tells the disruption controller the pod is about to go, so that it does not count it
  // as healthy meanwhile (it forgets the entry after DELETION_TIMEOUT if the pod stays).
  nextStatus.disruptedPods = { ...(nextStatus.disruptedPods ?? {}), [pod.metadata.name!]: now };
  await deps.podDisruptionBudgets.update(pdb.metadata.namespace, name, next, { subresource: 'status' });
}

/**
 * addConditionAndDeletePod: unless a dry run, sets the pod's DisruptionTarget condition
 * (True, EvictionByEvictionAPI, `Eviction API: evicting`) through its status, checking the
 * delete's preconditions against the pod it changes (and moving a resourceVersion
 * precondition to the revision it wrote), then deletes the pod with `opts`.
 */
async function addConditionAndDeletePod(
  deps: EvictionDeps,
  namespace: string,
  name: string,
  opts: DeleteOptions,
): Promise<void> {
  let options = opts;
  if (!opts.dryRun) {
    const ref = { group: '', resource: 'pods', name };
    const updated = await deps.pods.guaranteedUpdate(
      namespace,
      name,
      (cur) => {
        const p = opts.preconditions;
        if (p?.uid && p.uid !== cur.metadata!.uid)
          throw conflict(
            ref,
            `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${cur.metadata!.uid}`,
          );
        if (p?.resourceVersion && p.resourceVersion !== cur.metadata!.resourceVersion)
          throw conflict(
            ref,
            `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${cur.metadata!.resourceVersion}`,
          );
        setDisruptionTarget(cur as Pod, rfc3339(deps.now()));
        return cur;
      },
      { subresource: 'status' },
    );
    if (opts.preconditions?.resourceVersion)
      options = {
        ...opts,
        preconditions: { ...opts.preconditions, resourceVersion: updated.metadata!.resourceVersion! },
      };
  }
  await deps.pods.delete(namespace, name, options);
}

/** podutil.UpdatePodCondition with the eviction's DisruptionTarget condition. */
function setDisruptionTarget(pod: Pod, now: string): void {
  const status = (pod.status ??= {});
  const conditions = (status.conditions ??= []);
  const cond = {
    type: 'DisruptionTarget',
    status: 'True' as const,
    reason: 'EvictionByEvictionAPI',
    message: 'Eviction API: evicting',
  };
  const i = conditions.findIndex((c) => c.type === cond.type);
  const old = i >= 0 ? conditions[i] : undefined;
  const next = {
    ...cond,
    lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : now,
  };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}
