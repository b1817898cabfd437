/**
 * The rolling-update arithmetic: how many pods above `replicas` a rollout may create
 * (maxSurge) and how many below it may be unavailable (maxUnavailable), from the
 * Deployment's IntOrString fields (Kubernetes' deploymentutil.ResolveFenceposts, MaxSurge,
 * MaxUnavailable and intstr.GetScaledValueFromIntOrPercent).
 */
import type { Deployment } from '../../../api/types.js';

/** An IntOrString of a rolling update: an integer or a percentage string (`"25%"`). */
export type IntOrPercent = number | string;

/** The default of both fields, filled by the API server (SetDefaults_Deployment). */
export const DEFAULT_MAX_SURGE: IntOrPercent = '25%';
export const DEFAULT_MAX_UNAVAILABLE: IntOrPercent = '25%';

/**
 * The absolute value of `v` for `total` replicas: an integer as is; a percentage `p%` as
 * p·total/100 rounded up (`roundUp`) or down (intstr.GetScaledValueFromIntOrPercent):
 * `("25%", 5, true)` → 2, `("25%", 5, false)` → 1.
 * @throws Error for a string that is not an integer percentage (`"5"`, `"2.5%"`).
 */
export function scaledValueFromIntOrPercent(v: IntOrPercent, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const m = /^(-?[0-9]+)%$/.exec(v);
  if (!m)
    throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(v)}: not a percentage`);
  const scaled = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/**
 * `[maxSurge, maxUnavailable]` in pods for `desired` replicas: surge rounded up,
 * unavailable rounded down; when both come out 0 (e.g. `maxUnavailable: 25%` of 3),
 * maxUnavailable becomes 1 so that the rollout can move at all
 * (deploymentutil.ResolveFenceposts). Absent values count as 0, as in Kubernetes (the API
 * server defaults both to 25%).
 * @throws Error for a malformed percentage.
 */
export function resolveFenceposts(
  maxSurge: IntOrPercent | undefined,
  maxUnavailable: IntOrPercent | undefined,
  desired: number,
): [surge: number, unavailable: number] {
  const surge = scaledValueFromIntOrPercent(maxSurge ?? 0, desired, true);
  let unavailable = scaledValueFromIntOrPercent(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return [surge, unavailable];
}

/** True when the Deployment's strategy is RollingUpdate (the default when `type` is absent). */
export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** spec.replicas, defaulting to 1 as the API server does. */
export function desiredReplicas(d: Deployment): number {
  return d.spec.replicas ?? 1;
}

function fenceposts(d: Deployment): [number, number] {
  const ru = d.spec.strategy?.rollingUpdate;
  return resolveFenceposts(
    ru?.maxSurge ?? DEFAULT_MAX_SURGE,
    ru?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE,
    desiredReplicas(d),
  );
}

/** Pods a rolling update may run above spec.replicas; 0 for Recreate (deploymentutil.MaxSurge). */
export function maxSurge(d: Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  return fenceposts(d)[0];
}

/**
 * Pods a rolling update may have unavailable below spec.replicas, at most spec.replicas;
 * 0 for Recreate or 0 replicas (deploymentutil.MaxUnavailable).
 */
export function maxUnavailable(d: Deployment): number {
  const replicas = desiredReplicas(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  return Math.min(fenceposts(d)[1], replicas);
}
