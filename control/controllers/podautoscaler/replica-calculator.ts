/**
 * The replica calculator of the HorizontalPodAutoscaler (Kubernetes' pkg/controller/
 * podautoscaler/replica_calculator.go, GetResourceReplicas and GetRawResourceReplicas):
 * pure functions from the target's pods, their metrics and a target to a replica count.
 *
 * The rulebook, for resource metrics (values in milli-units: millicores, milli-bytes):
 *  1. Pods are grouped (groupPods): deleted or Failed pods are ignored; Pending pods are
 *     unready; pods without a metric are missing; for `cpu` only, a pod is unready when it
 *     has no Ready condition or start time, or — within cpuInitializationPeriod (5 min) of
 *     its start — when it is not Ready or its sample does not cover one full window since
 *     its last readiness change, or — later — when it is not Ready and never was Ready
 *     within delayOfInitialReadinessStatus (30 s) of its start. The rest are ready.
 *  2. The metrics of ignored and unready pods are dropped; none left: an error.
 *  3. usageRatio = (utilization: sum(usage)*100/sum(requests) as an integer percent) /
 *     target, or (average value: mean usage / target). Without unready or missing pods:
 *     within tolerance (|1 - ratio| <= 0.1) keep the current count, else
 *     ceil(ratio * readyPods).
 *  4. Otherwise fill in the pods left out pessimistically: on a scale-down a missing pod
 *     counts as using 100 % of its request (max(100, target) % for targets above 100; the
 *     target itself for average values), on a scale-up a missing pod uses 0; on a scale-up,
 *     unready pods use 0. Recompute; within tolerance, or a reversed direction: keep the
 *     current count; else ceil(newRatio * podsCounted), unless that reverses the direction.
 */
import type { Pod } from '../../../api/types.js';

/** The tolerance of a usage ratio around 1.0 within which nothing scales (--horizontal-pod-autoscaler-tolerance). */
export const DEFAULT_TOLERANCE = 0.1;
/** --horizontal-pod-autoscaler-cpu-initialization-period, in milliseconds (5 min). */
export const DEFAULT_CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
/** --horizontal-pod-autoscaler-initial-readiness-delay, in milliseconds (30 s). */
export const DEFAULT_INITIAL_READINESS_DELAY_MS = 30_000;

/** One pod's metric sample: `value` in milli-units, `timestamp` and `windowMs` as the metrics API reports them. */
export interface PodMetric {
  value: number;
  /** Epoch milliseconds the sample was taken at. */
  timestamp: number;
  /** The span the sample covers, in milliseconds. */
  windowMs: number;
}

/** Pod name → its sample (PodMetricsInfo). */
export type PodMetricsInfo = Map<string, PodMetric>;

/** The calculator's settings (kube-controller-manager's HPA flags). */
export interface ReplicaCalculatorConfig {
  tolerance: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
  /** Epoch milliseconds now (the controller's clock). */
  now: number;
}

/** What the calculator answers, or an Error explaining why it could not. */
export interface ResourceReplicas {
  replicas: number;
  /** Integer percent of request (utilization targets only). */
  utilization?: number;
  /** Mean usage per counted pod, milli-units. */
  rawUsage: number;
  /** Epoch milliseconds of the oldest sample used. */
  timestamp: number;
}

function parseTime(ts: string | undefined | null): number | undefined {
  if (!ts) return undefined;
  const t = Date.parse(ts);
  return Number.isNaN(t) ? undefined : t;
}

interface Grouped {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

/** groupPods: see the file comment, rule 1. */
export function groupPods(
  pods: readonly Pod[],
  metrics: PodMetricsInfo,
  resource: string,
  cfg: Pick<ReplicaCalculatorConfig, 'cpuInitializationPeriodMs' | 'initialReadinessDelayMs' | 'now'>,
): Grouped {
  const g: Grouped = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata.name ?? '';
    const phase = pod.status?.phase;
    if (pod.metadata.deletionTimestamp || phase === 'Failed') {
      g.ignored.add(name);
      continue;
    }
    if (phase === 'Pending') {
      g.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      g.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
      const start = parseTime(pod.status?.startTime);
      let unready: boolean;
      if (!ready || start === undefined) {
        unready = true;
      } else {
        const transition = parseTime(ready.lastTransitionTime) ?? 0;
        if (start + cfg.cpuInitializationPeriodMs > cfg.now) {
          unready = ready.status === 'False' || metric.timestamp < transition + metric.windowMs;
        } else {
          unready = ready.status === 'False' && start + cfg.initialReadinessDelayMs > transition;
        }
      }
      if (unready) {
        g.unready.add(name);
        continue;
      }
    }
    g.readyPodCount++;
  }
  return g;
}

/**
 * calculatePodRequests: each pod's summed container request of `resource` (only
 * `container`'s, when given: a ContainerResource metric), milli-units.
 * @throws Error `missing request for <resource> in container <c> of Pod <p>` (upstream's words).
 */
export function podRequests(
  pods: readonly Pod[],
  resource: string,
  parseMilli: (q: string) => number,
  container?: string,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    for (const c of pod.spec?.containers ?? []) {
      if (container !== undefined && c.name !== container) continue;
      const q = (c.resources?.requests as Record<string, string> | undefined)?.[resource];
      if (q === undefined) {
        throw new Error(
          `missing request for ${resource} in container ${c.name} of Pod ${pod.metadata.name ?? ''}`,
        );
      }
      sum += parseMilli(String(q));
    }
    out.set(pod.metadata.name ?? '', sum);
  }
  return out;
}

/** GetResourceUtilizationRatio: ratio, integer percent, mean usage; throws without matching requests. */
function utilizationRatio(
  metrics: PodMetricsInfo,
  requests: Map<string, number>,
  target: number,
): { ratio: number; utilization: number; raw: number } {
  let used = 0;
  let requested = 0;
  let n = 0;
  for (const [name, m] of metrics) {
    const r = requests.get(name);
    if (r === undefined) continue;
    used += m.value;
    requested += r;
    n++;
  }
  if (requested === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((used * 100) / requested);
  return { ratio: utilization / target, utilization, raw: Math.trunc(used / n) };
}

/** GetMetricUsageRatio: mean usage / target. */
function usageRatio(metrics: PodMetricsInfo, target: number): { ratio: number; raw: number } {
  let used = 0;
  for (const m of metrics.values()) used += m.value;
  const raw = Math.trunc(used / metrics.size);
  return { ratio: raw / target, raw };
}

function oldest(metrics: PodMetricsInfo): number {
  let t = Infinity;
  for (const m of metrics.values()) t = Math.min(t, m.timestamp);
  return Number.isFinite(t) ? t : 0;
}

/** The resource target: `utilization` (percent of request) or `averageValue` (milli-units per pod). */
export type ResourceTarget = { utilization: number } | { averageValue: number };

/**
 * The desired replica count of a Resource metric (GetResourceReplicas for a Utilization
 * target, GetRawResourceReplicas for an AverageValue one); see the file comment.
 * `metrics` is not modified. `parseMilli` reads a request quantity in milli-units;
 * `container` limits the requests to one container's (a ContainerResource metric).
 * @throws Error with upstream's message when no pods are selected, none has a usable
 *   metric, a request is missing, or no metric matches a pod.
 */
export function resourceReplicas(
  currentReplicas: number,
  target: ResourceTarget,
  resource: string,
  pods: readonly Pod[],
  sampled: PodMetricsInfo,
  cfg: ReplicaCalculatorConfig,
  parseMilli: (q: string) => number,
  container?: string,
): ResourceReplicas {
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const metrics: PodMetricsInfo = new Map(sampled);
  const g = groupPods(pods, metrics, resource, cfg);
  for (const name of [...g.ignored, ...g.unready]) metrics.delete(name);
  if (metrics.size === 0)
    throw new Error('did not receive metrics for targeted pods (pods might be unready)');
  const timestamp = oldest(metrics);
  const isUtil = 'utilization' in target;
  const requests = isUtil ? podRequests(pods, resource, parseMilli, container) : new Map<string, number>();
  const ratioOf = (m: PodMetricsInfo): { ratio: number; utilization?: number; raw: number } =>
    isUtil ? utilizationRatio(m, requests, target.utilization) : usageRatio(m, target.averageValue);

  const first = ratioOf(metrics);
  const base = {
    rawUsage: first.raw,
    timestamp,
    ...(first.utilization !== undefined ? { utilization: first.utilization } : {}),
  };
  const keep = { ...base, replicas: currentReplicas };
  const ratio = first.ratio;
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1.0;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1.0 - ratio) <= cfg.tolerance) return keep;
    return { ...base, replicas: Math.ceil(ratio * g.readyPodCount) };
  }
  const at = (value: number): PodMetric => ({ value, timestamp: 0, windowMs: 0 });
  if (g.missing.size > 0) {
    for (const name of g.missing) {
      if (ratio < 1.0) {
        // A scale-down treats a missing pod as using all its request (or the target).
        const fallback = isUtil
          ? ((requests.get(name) ?? 0) * Math.max(100, target.utilization)) / 100
          : target.averageValue;
        metrics.set(name, at(isUtil ? Math.trunc(fallback) : fallback));
      } else if (ratio > 1.0 || !isUtil) {
        metrics.set(name, at(0));
      }
    }
  }
  if (scaleUpWithUnready) for (const name of g.unready) metrics.set(name, at(0));
  const newRatio = ratioOf(metrics).ratio;
  if (
    Math.abs(1.0 - newRatio) <= cfg.tolerance ||
    (ratio < 1.0 && newRatio > 1.0) ||
    (ratio > 1.0 && newRatio < 1.0)
  )
    return keep;
  const replicas = Math.ceil(newRatio * metrics.size);
  if ((newRatio < 1.0 && replicas > currentReplicas) || (newRatio > 1.0 && replicas < currentReplicas))
    return keep;
  return { ...base, replicas };
}
