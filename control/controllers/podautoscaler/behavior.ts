/**
 * What turns a metric's recommendation into the replica count an HPA sets (Kubernetes'
 * pkg/controller/podautoscaler/horizontal.go: normalizeDesiredReplicas,
 * normalizeDesiredReplicasWithBehaviors and their helpers). One `Recommender` per
 * controller keeps, per HPA key, the timestamped recommendations (stabilization) and the
 * scale events (rate policies), as upstream's maps; time comes from the caller.
 *
 * Without `spec.behavior` (the v1 way): the highest recommendation of the downscale
 * stabilization window (300 s, --horizontal-pod-autoscaler-downscale-stabilization), then
 * min/max and a scale-up of at most max(2 × current, 4).
 * With `spec.behavior` (missing rules filled with upstream's defaults):
 *  - stabilization: the recommendation is brought between the lowest recommendation of
 *    the scale-up window and the highest of the scale-down window (both including the new
 *    one), starting from the current count;
 *  - rate: each policy proposes a limit from the count at the start of its period (the
 *    current count minus what was added plus what was removed within periodSeconds):
 *    Pods adds/removes `value`, Percent multiplies by (1 ± value/100) (rounded up on
 *    scale-up, down on scale-down); selectPolicy Max takes the largest change, Min the
 *    smallest, Disabled none; then min/max.
 * Condition reasons and messages are upstream's (AbleToScale: ScaleUpStabilized,
 * ScaleDownStabilized, ReadyForNewScale; ScalingLimited: ScaleUpLimit, ScaleDownLimit,
 * TooManyReplicas, TooFewReplicas, DesiredWithinRange).
 */
import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerScalingRules } from '../../../api/types.js';
import { DEFAULT_SCALE_DOWN, DEFAULT_SCALE_UP } from '../../apiserver/strategies/horizontalpodautoscalers.js';

/** Rules with every field set. */
export interface ScalingRules {
  stabilizationWindowSeconds: number;
  selectPolicy: 'Max' | 'Min' | 'Disabled';
  policies: readonly { type: 'Pods' | 'Percent'; value: number; periodSeconds: number }[];
}

/** A condition the normalization sets: its type, status, reason and message. */
export interface NormalizationCondition {
  type: 'AbleToScale' | 'ScalingLimited';
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** The normalized count and the two conditions it sets. */
export interface Normalized {
  replicas: number;
  conditions: [NormalizationCondition, NormalizationCondition];
}

interface Recommendation {
  replicas: number;
  at: number;
}

interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

/** The default downscale stabilization window (--horizontal-pod-autoscaler-downscale-stabilization), ms. */
export const DEFAULT_DOWNSCALE_STABILIZATION_MS = 300_000;

/** One direction's rules with upstream's defaults filled in (GenerateHPAScale{Up,Down}Rules). */
export function filledRules(
  rules: HorizontalPodAutoscalerScalingRules | undefined,
  direction: 'up' | 'down',
  downscaleStabilizationSeconds: number = DEFAULT_SCALE_DOWN.stabilizationWindowSeconds,
): ScalingRules {
  const d = direction === 'up' ? DEFAULT_SCALE_UP : DEFAULT_SCALE_DOWN;
  return {
    stabilizationWindowSeconds:
      rules?.stabilizationWindowSeconds ??
      (direction === 'down' ? downscaleStabilizationSeconds : d.stabilizationWindowSeconds),
    selectPolicy: rules?.selectPolicy ?? d.selectPolicy,
    policies: rules?.policies ?? d.policies,
  };
}

function changeInPeriod(periodSeconds: number, events: readonly ScaleEvent[], now: number): number {
  const cutoff = now - periodSeconds * 1000;
  let sum = 0;
  for (const e of events) if (e.at > cutoff) sum += e.change;
  return sum;
}

/** calculateScaleUpLimitWithScalingRules. */
export function scaleUpLimit(
  current: number,
  up: readonly ScaleEvent[],
  down: readonly ScaleEvent[],
  rules: ScalingRules,
  now: number,
): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
  let result = rules.selectPolicy === 'Min' ? Infinity : -Infinity;
  for (const p of rules.policies) {
    const start =
      current - changeInPeriod(p.periodSeconds, up, now) + changeInPeriod(p.periodSeconds, down, now);
    const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

/** calculateScaleDownLimitWithBehaviors. */
export function scaleDownLimit(
  current: number,
  up: readonly ScaleEvent[],
  down: readonly ScaleEvent[],
  rules: ScalingRules,
  now: number,
): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
  let result = rules.selectPolicy === 'Min' ? -Infinity : Infinity;
  for (const p of rules.policies) {
    const start =
      current - changeInPeriod(p.periodSeconds, up, now) + changeInPeriod(p.periodSeconds, down, now);
    const proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

const WITHIN_RANGE = {
  reason: 'DesiredWithinRange',
  message: 'the desired count is within the acceptable range',
};
const READY = { reason: 'ReadyForNewScale', message: 'recommended size matches current size' };

function limited(
  stabilized: number,
  desired: number,
  r: { reason: string; message: string },
): NormalizationCondition {
  return { type: 'ScalingLimited', status: desired === stabilized ? 'False' : 'True', ...r };
}

/** The per-HPA memory of recommendations and scale events; see the file comment. */
export class Recommender {
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly upEvents = new Map<string, ScaleEvent[]>();
  private readonly downEvents = new Map<string, ScaleEvent[]>();

  /** @param downscaleStabilizationMs the window of HPAs without behavior (and of a scaleDown without a window). */
  constructor(private readonly downscaleStabilizationMs = DEFAULT_DOWNSCALE_STABILIZATION_MS) {}

  /** Forgets an HPA (deleted). */
  forget(key: string): void {
    this.recommendations.delete(key);
    this.upEvents.delete(key);
    this.downEvents.delete(key);
  }

  /** recordInitialRecommendation: the current count is the first recommendation. */
  recordInitial(key: string, current: number, now: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ replicas: current, at: now }]);
  }

  /**
   * The count to set for `desired` (the metrics' recommendation), and the AbleToScale and
   * ScalingLimited conditions; records the recommendation.
   */
  normalize(
    hpa: HorizontalPodAutoscaler,
    key: string,
    current: number,
    desired: number,
    minReplicas: number,
    now: number,
  ): Normalized {
    return hpa.spec.behavior
      ? this.withBehaviors(hpa, key, current, desired, minReplicas, now)
      : this.withoutBehaviors(hpa, key, current, desired, minReplicas, now);
  }

  /** storeScaleEvent: remembers a rescale for the rate policies (HPAs with behavior only). */
  storeScaleEvent(hpa: HorizontalPodAutoscaler, key: string, prev: number, next: number, now: number): void {
    const behavior = hpa.spec.behavior;
    if (!behavior) return;
    const up = next > prev;
    const rules = filledRules(up ? behavior.scaleUp : behavior.scaleDown, up ? 'up' : 'down');
    const longest = Math.max(0, ...rules.policies.map((p) => p.periodSeconds)) * 1000;
    const map = up ? this.upEvents : this.downEvents;
    const events = map.get(key) ?? [];
    for (const e of events) if (e.at + longest < now) e.outdated = true;
    const event = { change: Math.abs(next - prev), at: now, outdated: false };
    const old = events.findIndex((e) => e.outdated);
    if (old >= 0) events[old] = event;
    else events.push(event);
    map.set(key, events);
  }

  private withoutBehaviors(
    hpa: HorizontalPodAutoscaler,
    key: string,
    current: number,
    desired: number,
    minReplicas: number,
    now: number,
  ): Normalized {
    // stabilizeRecommendation: the highest recommendation within the window.
    const cutoff = now - this.downscaleStabilizationMs;
    const recs = this.recommendations.get(key) ?? [];
    let stabilized = desired;
    let oldIndex = -1;
    recs.forEach((r, i) => {
      if (r.at > cutoff) stabilized = Math.max(stabilized, r.replicas);
      else oldIndex = i;
    });
    if (oldIndex >= 0) recs[oldIndex] = { replicas: desired, at: now };
    else recs.push({ replicas: desired, at: now });
    this.recommendations.set(key, recs);
    const able: NormalizationCondition =
      stabilized !== desired
        ? {
            type: 'AbleToScale',
            status: 'True',
            reason: 'ScaleDownStabilized',
            message:
              'recent recommendations were higher than current one, applying the highest recent recommendation',
          }
        : { type: 'AbleToScale', status: 'True', ...READY };
    // convertDesiredReplicasWithRules: scaleUpLimitFactor 2, scaleUpLimitMinimum 4.
    const upLimit = Math.max(2 * current, 4);
    const max = hpa.spec.maxReplicas;
    let limit =
      max > upLimit
        ? {
            n: upLimit,
            reason: 'ScaleUpLimit',
            message: 'the desired replica count is increasing faster than the maximum scale rate',
          }
        : {
            n: max,
            reason: 'TooManyReplicas',
            message: 'the desired replica count is more than the maximum replica count',
          };
    let out = stabilized;
    let why = WITHIN_RANGE;
    if (stabilized < minReplicas) {
      limit = {
        n: minReplicas,
        reason: 'TooFewReplicas',
        message: 'the desired replica count is less than the minimum replica count',
      };
      out = minReplicas;
      why = limit;
    } else if (stabilized > limit.n) {
      out = limit.n;
      why = limit;
    }
    return { replicas: out, conditions: [able, limited(stabilized, out, why)] };
  }

  private withBehaviors(
    hpa: HorizontalPodAutoscaler,
    key: string,
    current: number,
    desired: number,
    minReplicas: number,
    now: number,
  ): Normalized {
    const behavior = hpa.spec.behavior ?? {};
    const upRules = filledRules(behavior.scaleUp, 'up');
    const downRules = filledRules(behavior.scaleDown, 'down', this.downscaleStabilizationMs / 1000);
    // stabilizeRecommendationWithBehaviors.
    const upCutoff = now - upRules.stabilizationWindowSeconds * 1000;
    const downCutoff = now - downRules.stabilizationWindowSeconds * 1000;
    let upRec = desired;
    let downRec = desired;
    let oldIndex = -1;
    const recs = this.recommendations.get(key) ?? [];
    recs.forEach((r, i) => {
      if (r.at > upCutoff) upRec = Math.min(upRec, r.replicas);
      if (r.at > downCutoff) downRec = Math.max(downRec, r.replicas);
      if (r.at < upCutoff && r.at < downCutoff) oldIndex = i;
    });
    let stabilized = current;
    if (stabilized < upRec) stabilized = upRec;
    if (stabilized > downRec) stabilized = downRec;
    if (oldIndex >= 0) recs[oldIndex] = { replicas: desired, at: now };
    else recs.push({ replicas: desired, at: now });
    this.recommendations.set(key, recs);
    const able: NormalizationCondition =
      stabilized !== desired
        ? desired >= current
          ? {
              type: 'AbleToScale',
              status: 'True',
              reason: 'ScaleUpStabilized',
              message:
                'recent recommendations were lower than current one, applying the lowest recent recommendation',
            }
          : {
              type: 'AbleToScale',
              status: 'True',
              reason: 'ScaleDownStabilized',
              message:
                'recent recommendations were higher than current one, applying the highest recent recommendation',
            }
        : { type: 'AbleToScale', status: 'True', ...READY };

    // convertDesiredReplicasWithBehaviorRate.
    const up = this.upEvents.get(key) ?? [];
    const down = this.downEvents.get(key) ?? [];
    const max = hpa.spec.maxReplicas;
    let out = stabilized;
    let why = WITHIN_RANGE;
    if (stabilized > current) {
      const limit = Math.max(scaleUpLimit(current, up, down, upRules, now), current);
      const r =
        max > limit
          ? {
              n: limit,
              reason: 'ScaleUpLimit',
              message: 'the desired replica count is increasing faster than the maximum scale rate',
            }
          : {
              n: max,
              reason: 'TooManyReplicas',
              message: 'the desired replica count is more than the maximum replica count',
            };
      if (stabilized > r.n) {
        out = r.n;
        why = r;
      }
    } else if (stabilized < current) {
      const limit = Math.min(scaleDownLimit(current, up, down, downRules, now), current);
      const r =
        minReplicas < limit
          ? {
              n: limit,
              reason: 'ScaleDownLimit',
              message: 'the desired replica count is decreasing faster than the maximum scale rate',
            }
          : {
              n: minReplicas,
              reason: 'TooFewReplicas',
              message: 'the desired replica count is less than the minimum replica count',
            };
      if (stabilized < r.n) {
        out = r.n;
        why = r;
      }
    }
    return { replicas: out, conditions: [able, limited(stabilized, out, why)] };
  }
}
