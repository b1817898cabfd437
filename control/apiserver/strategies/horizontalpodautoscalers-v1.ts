/**
 * autoscaling/v1 HorizontalPodAutoscalers, served over the stored autoscaling/v2 objects
 * (Kubernetes stores HPAs in one version and converts; pkg/apis/autoscaling/v1/
 * conversion.go). What v1 cannot say travels in annotations, as upstream:
 *
 *   spec.targetCPUUtilizationPercentage  ↔ the Resource cpu metric with a Utilization target
 *   autoscaling.alpha.kubernetes.io/metrics          the other metric specs (v1 MetricSpec JSON)
 *   autoscaling.alpha.kubernetes.io/behavior         spec.behavior
 *   status.currentCPUUtilizationPercentage ← the cpu Resource current metric
 *   autoscaling.alpha.kubernetes.io/current-metrics  all current metrics (v1 MetricStatus JSON)
 *   autoscaling.alpha.kubernetes.io/conditions       status.conditions
 *
 * A v1 HPA without a CPU target gets the v1 implicit default, cpu Utilization 80 %. The
 * v1 strategy validates the converted object with the v2 rules (upstream validates the
 * internal type, so a v1 error names the internal field, e.g.
 * `spec.metrics[0].resource.target.averageUtilization`).
 */
import type { KubeObject } from '../../../api/object.js';
import type { StorageCodec } from '../registry.js';
import { DEFAULT_CPU_UTILIZATION, horizontalPodAutoscalerStrategy } from './horizontalpodautoscalers.js';
import { asObj, clone, defaultPointer, defineStrategy, list, section, type Obj } from './meta.js';

export const METRIC_SPECS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const METRIC_STATUSES_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';

const STATUS_ANNOTATIONS = [METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION];

function isCpuUtilization(m: Obj): boolean {
  const r = asObj(m.resource);
  const t = asObj(r?.target);
  return (
    m.type === 'Resource' &&
    r?.name === 'cpu' &&
    t?.averageUtilization !== undefined &&
    t?.averageUtilization !== null
  );
}

/** A v2 MetricSpec as a v1 (v2beta1-shaped) one, for the metrics annotation; non-resource sources are kept as they are. */
function metricSpecToV1(m: Obj): Obj {
  for (const field of ['resource', 'containerResource'] as const) {
    const src = asObj(m[field]);
    if (!src) continue;
    const t = asObj(src.target) ?? {};
    const out: Obj = { name: src.name };
    if (src.container !== undefined) out.container = src.container;
    if (t.averageUtilization !== undefined) out.targetAverageUtilization = t.averageUtilization;
    if (t.averageValue !== undefined) out.targetAverageValue = t.averageValue;
    return { type: m.type, [field]: out };
  }
  return clone(m);
}

function metricSpecFromV1(m: Obj): Obj {
  for (const field of ['resource', 'containerResource'] as const) {
    const src = asObj(m[field]);
    if (!src || src.target !== undefined) continue;
    const target: Obj =
      src.targetAverageUtilization !== undefined
        ? { type: 'Utilization', averageUtilization: src.targetAverageUtilization }
        : { type: 'AverageValue', averageValue: src.targetAverageValue };
    const out: Obj = { name: src.name, target };
    if (src.container !== undefined) out.container = src.container;
    return { type: m.type, [field]: out };
  }
  return clone(m);
}

function metricStatusToV1(m: Obj): Obj {
  for (const field of ['resource', 'containerResource'] as const) {
    const src = asObj(m[field]);
    if (!src) continue;
    const c = asObj(src.current) ?? {};
    const out: Obj = { name: src.name };
    if (src.container !== undefined) out.container = src.container;
    if (c.averageUtilization !== undefined) out.currentAverageUtilization = c.averageUtilization;
    out.currentAverageValue = c.averageValue ?? '0';
    return { type: m.type, [field]: out };
  }
  return clone(m);
}

function metricStatusFromV1(m: Obj): Obj {
  for (const field of ['resource', 'containerResource'] as const) {
    const src = asObj(m[field]);
    if (!src || src.current !== undefined) continue;
    const current: Obj = {};
    if (src.currentAverageUtilization !== undefined)
      current.averageUtilization = src.currentAverageUtilization;
    if (src.currentAverageValue !== undefined) current.averageValue = src.currentAverageValue;
    const out: Obj = { name: src.name, current };
    if (src.container !== undefined) out.container = src.container;
    return { type: m.type, [field]: out };
  }
  return clone(m);
}

function parseJson(v: unknown): unknown {
  if (typeof v !== 'string') return undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** An autoscaling/v2 HPA as autoscaling/v1 (Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler). */
export function hpaToV1(v2: KubeObject): KubeObject {
  const spec = asObj(v2.spec) ?? {};
  const status = asObj(v2.status);
  const metrics = list(spec.metrics).map((m) => asObj(m) ?? {});
  const annotations: Record<string, string> = { ...(v2.metadata?.annotations ?? {}) };
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => !isCpuUtilization(m));
  if (others.length > 0) annotations[METRIC_SPECS_ANNOTATION] = JSON.stringify(others.map(metricSpecToV1));
  if (spec.behavior !== undefined && spec.behavior !== null)
    annotations[BEHAVIOR_ANNOTATION] = JSON.stringify(spec.behavior);
  const v1Spec: Obj = { scaleTargetRef: clone(spec.scaleTargetRef) };
  if (spec.minReplicas !== undefined) v1Spec.minReplicas = spec.minReplicas;
  v1Spec.maxReplicas = spec.maxReplicas;
  if (cpu) v1Spec.targetCPUUtilizationPercentage = asObj(asObj(cpu.resource)?.target)?.averageUtilization;

  const out: KubeObject = { ...clone(v2), apiVersion: 'autoscaling/v1', spec: v1Spec };
  if (status) {
    const current = list(status.currentMetrics).map((m) => asObj(m) ?? {});
    const conditions = list(status.conditions);
    if (current.length > 0)
      annotations[METRIC_STATUSES_ANNOTATION] = JSON.stringify(current.map(metricStatusToV1));
    if (conditions.length > 0) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conditions);
    const v1Status: Obj = {};
    if (status.observedGeneration !== undefined) v1Status.observedGeneration = status.observedGeneration;
    if (status.lastScaleTime !== undefined) v1Status.lastScaleTime = status.lastScaleTime;
    v1Status.currentReplicas = status.currentReplicas ?? 0;
    v1Status.desiredReplicas = status.desiredReplicas ?? 0;
    const cpuNow = current.find((m) => m.type === 'Resource' && asObj(m.resource)?.name === 'cpu');
    const util = asObj(asObj(cpuNow?.resource)?.current)?.averageUtilization;
    if (util !== undefined) v1Status.currentCPUUtilizationPercentage = util;
    out.status = v1Status;
  }
  out.metadata = { ...clone(v2.metadata ?? {}) };
  if (Object.keys(annotations).length > 0) out.metadata.annotations = annotations;
  else delete out.metadata.annotations;
  return out;
}

/** An autoscaling/v1 HPA as autoscaling/v2 (Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler). */
export function hpaFromV1(v1: KubeObject): KubeObject {
  const spec = asObj(v1.spec) ?? {};
  const status = asObj(v1.status);
  const annotations: Record<string, string> = { ...(v1.metadata?.annotations ?? {}) };
  let metrics: Obj[] = [];
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics = [
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage },
        },
      },
    ];
  }
  const others = parseJson(annotations[METRIC_SPECS_ANNOTATION]);
  if (Array.isArray(others)) {
    metrics = [...others.map((m) => metricSpecFromV1(asObj(m) ?? {})), ...metrics];
    delete annotations[METRIC_SPECS_ANNOTATION];
  }
  if (metrics.length === 0) {
    // autoscaling/v1's implicit default, made explicit as upstream does on conversion.
    metrics = [
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION },
        },
      },
    ];
  }
  const v2Spec: Obj = { scaleTargetRef: clone(spec.scaleTargetRef) };
  if (spec.minReplicas !== undefined) v2Spec.minReplicas = spec.minReplicas;
  v2Spec.maxReplicas = spec.maxReplicas;
  v2Spec.metrics = metrics;
  if (BEHAVIOR_ANNOTATION in annotations) {
    const behavior = asObj(parseJson(annotations[BEHAVIOR_ANNOTATION]));
    if (behavior && Object.keys(behavior).length > 0) v2Spec.behavior = behavior;
    delete annotations[BEHAVIOR_ANNOTATION];
  }
  const out: KubeObject = { ...clone(v1), apiVersion: 'autoscaling/v2', spec: v2Spec };
  if (status) {
    const v2Status: Obj = {};
    if (status.observedGeneration !== undefined) v2Status.observedGeneration = status.observedGeneration;
    if (status.lastScaleTime !== undefined) v2Status.lastScaleTime = status.lastScaleTime;
    if (status.currentReplicas !== undefined) v2Status.currentReplicas = status.currentReplicas;
    v2Status.desiredReplicas = status.desiredReplicas ?? 0;
    const current = parseJson(annotations[METRIC_STATUSES_ANNOTATION]);
    if (Array.isArray(current)) {
      v2Status.currentMetrics = current.map((m) => metricStatusFromV1(asObj(m) ?? {}));
    } else if (typeof status.currentCPUUtilizationPercentage === 'number') {
      v2Status.currentMetrics = [
        {
          type: 'Resource',
          resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } },
        },
      ];
    }
    const conditions = parseJson(annotations[CONDITIONS_ANNOTATION]);
    if (Array.isArray(conditions)) v2Status.conditions = conditions;
    out.status = v2Status;
  }
  delete annotations[METRIC_STATUSES_ANNOTATION];
  delete annotations[CONDITIONS_ANNOTATION];
  out.metadata = { ...clone(v1.metadata ?? {}) };
  if (Object.keys(annotations).length > 0) out.metadata.annotations = annotations;
  else delete out.metadata.annotations;
  return out;
}

/** The codec of autoscaling/v1 HPAs: stored as autoscaling/v2. */
export const horizontalPodAutoscalerV1Codec: StorageCodec = { toStorage: hpaFromV1, fromStorage: hpaToV1 };

function keepStatusAnnotations(obj: KubeObject, old: KubeObject): void {
  const meta = (obj.metadata ??= {});
  const annotations: Record<string, string> = { ...(meta.annotations ?? {}) };
  for (const a of STATUS_ANNOTATIONS) {
    const v = old.metadata?.annotations?.[a];
    if (v === undefined) delete annotations[a];
    else annotations[a] = v;
  }
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  else delete meta.annotations;
}

/**
 * The autoscaling/v1 strategy: minReplicas defaults to 1; validation is the v2 strategy's
 * on the converted object; status starts `{currentReplicas: 0, desiredReplicas: 0}` and
 * the status annotations (current metrics, conditions) are kept on spec updates as the
 * stored status is.
 */
export const horizontalPodAutoscalerV1Strategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({ currentReplicas: 0, desiredReplicas: 0 }),
  generationFields: ['spec'],
  storageCodec: horizontalPodAutoscalerV1Codec,
  prepareForCreate(obj) {
    const meta = (obj.metadata ??= {});
    if (meta.annotations) {
      for (const a of STATUS_ANNOTATIONS) delete meta.annotations[a];
      if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
    }
  },
  prepareForUpdate: keepStatusAnnotations,
  defaults(obj) {
    defaultPointer(section(obj, 'spec'), 'minReplicas', 1);
  },
  validate: (obj) => {
    const v2 = hpaFromV1(obj);
    horizontalPodAutoscalerStrategy.defaults(v2);
    // Metadata was checked by the v2 strategy's validate too; drop its duplicates.
    return horizontalPodAutoscalerStrategy.validate(v2).filter((e) => !e.field.startsWith('metadata'));
  },
});
