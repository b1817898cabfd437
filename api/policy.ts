/**
 * policy/v1 PodDisruptionBudget: its type and the budget arithmetic shared by the eviction
 * REST (control/apiserver/eviction.ts) and the disruption controller
 * (control/controllers/disruption), as Kubernetes' pkg/apis/policy and
 * pkg/api/v1/pod (the DisruptionAllowed condition helper, pdbhelper).
 */
import type { LabelSelectorObject } from './meta/labels.js';
import type { KubeObject, ObjectMeta } from './object.js';

/** An int or a percentage string (`"50%"`), as intstr.IntOrString. */
export type IntOrPercent = number | string;

/** spec.unhealthyPodEvictionPolicy values (policy/v1). Unset behaves as IfHealthyBudget. */
export type UnhealthyPodEvictionPolicy = 'IfHealthyBudget' | 'AlwaysAllow';

/** A metav1.Condition (type, status, reason, message, lastTransitionTime, observedGeneration). */
export interface MetaCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** policy/v1 PodDisruptionBudget. */
export interface PodDisruptionBudget extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    minAvailable?: IntOrPercent;
    maxUnavailable?: IntOrPercent;
    selector?: LabelSelectorObject | null;
    unhealthyPodEvictionPolicy?: UnhealthyPodEvictionPolicy;
  };
  status?: {
    observedGeneration?: number;
    /** Pod name → RFC 3339 time the eviction REST recorded it as being disrupted. */
    disruptedPods?: Record<string, string>;
    disruptionsAllowed: number;
    currentHealthy: number;
    desiredHealthy: number;
    expectedPods: number;
    conditions?: MetaCondition[];
  };
}

/** The condition type and its reasons (policy/v1 constants). */
export const DISRUPTION_ALLOWED_CONDITION = 'DisruptionAllowed';
export const SUFFICIENT_PODS_REASON = 'SufficientPods';
export const INSUFFICIENT_PODS_REASON = 'InsufficientPods';
export const SYNC_FAILED_REASON = 'SyncFailed';

/** StatusCause type of a refused eviction (policyv1.DisruptionBudgetCause). */
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

/**
 * Sets `cond` in `conditions` as apimeta.SetStatusCondition: an existing condition of the
 * type keeps its lastTransitionTime unless its status changes; reason, message and
 * observedGeneration are replaced. `now` is an RFC 3339 time.
 */
export function setStatusCondition(
  conditions: MetaCondition[],
  cond: Omit<MetaCondition, 'lastTransitionTime'>,
  now: string,
): void {
  const i = conditions.findIndex((c) => c.type === cond.type);
  const old = i >= 0 ? conditions[i] : undefined;
  const next: MetaCondition = {
    ...cond,
    lastTransitionTime: old && old.status === cond.status ? old.lastTransitionTime : now,
  };
  if (cond.observedGeneration === undefined) delete next.observedGeneration;
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

/**
 * pdbhelper.UpdateDisruptionAllowedCondition: DisruptionAllowed True/SufficientPods when
 * `status.disruptionsAllowed` > 0, else False/InsufficientPods (empty message). Mutates
 * `status`; `now` is an RFC 3339 time.
 */
export function updateDisruptionAllowedCondition(
  status: NonNullable<PodDisruptionBudget['status']>,
  now: string,
): void {
  const conditions = (status.conditions ??= []);
  const allowed = status.disruptionsAllowed > 0;
  setStatusCondition(
    conditions,
    {
      type: DISRUPTION_ALLOWED_CONDITION,
      status: allowed ? 'True' : 'False',
      reason: allowed ? SUFFICIENT_PODS_REASON : INSUFFICIENT_PODS_REASON,
      message: '',
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    },
    now,
  );
}

/**
 * intstr.GetScaledValueFromIntOrPercent: an integer as is; `p%` as p·total/100 rounded up
 * (`roundUp`) or down. `("50%", 3, true)` → 2.
 * @throws Error for a string that is not an integer percentage (`"5"`, `"2.5%"`), with
 *   intstr's words.
 */
export function scaledValueFromIntOrPercent(v: IntOrPercent, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  if (!v.endsWith('%'))
    throw new Error('invalid value for IntOrString: invalid type: string is not a percentage');
  const digits = v.slice(0, -1);
  if (!/^[+-]?[0-9]+$/.test(digits))
    throw new Error(
      `invalid value for IntOrString: invalid value "${v}": strconv.Atoi: parsing "${digits}": invalid syntax`,
    );
  const scaled = (Number(digits) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}
