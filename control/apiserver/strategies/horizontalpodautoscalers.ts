/**
 * HorizontalPodAutoscaler (autoscaling/v2): Kubernetes' pkg/registry/autoscaling/
 * horizontalpodautoscaler/strategy.go, SetDefaults_HorizontalPodAutoscaler and
 * GenerateHPAScaleUpRules / GenerateHPAScaleDownRules (pkg/apis/autoscaling/v2/defaults.go),
 * ValidateHorizontalPodAutoscaler and its update/status variants
 * (pkg/apis/autoscaling/validation/validation.go), with upstream's messages.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { forbidden, invalid, isDNS1123Label, notSupported, required } from '../../../api/meta/validation.js';
import {
  asObj,
  child,
  clone,
  defaultPointer,
  defineStrategy,
  eachObj,
  indexPath,
  isObj,
  list,
  nonNegative,
  num,
  problems,
  section,
  tryQuantity,
  type Obj,
} from './meta.js';

/** DefaultCPUUtilization: the metric of an HPA created without metrics (percent of request). */
export const DEFAULT_CPU_UTILIZATION = 80;

/** The scale-up rules an HPA without `behavior.scaleUp` follows (GenerateHPAScaleUpRules). */
export const DEFAULT_SCALE_UP = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
} as const;

/** The scale-down rules an HPA without `behavior.scaleDown` follows (GenerateHPAScaleDownRules). */
export const DEFAULT_SCALE_DOWN = {
  stabilizationWindowSeconds: 300,
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
} as const;

const METRIC_SOURCES = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  External: 'external',
  ContainerResource: 'containerResource',
} as const;

/** Fills the nil fields of one direction's rules from `defaults` (GenerateHPAScale{Up,Down}Rules). */
function defaultRules(rules: Obj, defaults: typeof DEFAULT_SCALE_UP | typeof DEFAULT_SCALE_DOWN): void {
  defaultPointer(rules, 'stabilizationWindowSeconds', defaults.stabilizationWindowSeconds);
  defaultPointer(rules, 'selectPolicy', defaults.selectPolicy);
  if (rules.policies === undefined || rules.policies === null) rules.policies = clone(defaults.policies);
}

/** ValidateCrossVersionObjectReference: kind and name required and valid path segments. */
function validateTargetRef(v: unknown): FieldError[] {
  const p = 'spec.scaleTargetRef';
  const ref = asObj(v) ?? {};
  const errs: FieldError[] = [];
  for (const field of ['kind', 'name'] as const) {
    const value = ref[field];
    if (typeof value !== 'string' || value === '') errs.push(required(`${p}.${field}`, ''));
    else if (value === '.' || value === '..' || /[/%]/.test(value))
      errs.push(invalid(`${p}.${field}`, value, `may not contain '/' or '%' and may not be '.' or '..'`));
  }
  return errs;
}

/** validateMetricTarget: a known type and positive values. */
function validateMetricTarget(t: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (t.type === undefined || t.type === '')
    errs.push(required(`${p}.type`, 'must specify a metric target type'));
  else if (!['Utilization', 'Value', 'AverageValue'].includes(t.type as string))
    errs.push(invalid(`${p}.type`, t.type, 'must be either Utilization, Value, or AverageValue'));
  for (const field of ['value', 'averageValue'] as const) {
    if (t[field] === undefined || t[field] === null) continue;
    const q = tryQuantity(t[field]);
    if (!q || q.isZero() || q.milliValue() < 0n)
      errs.push(invalid(`${p}.${field}`, t[field], 'must be positive'));
  }
  const u = num(t.averageUtilization);
  if (t.averageUtilization !== undefined && (u === undefined || u < 1))
    errs.push(invalid(`${p}.averageUtilization`, t.averageUtilization, 'must be greater than 0'));
  return errs;
}

/** validateResourceSource: a resource name and exactly one of averageUtilization / averageValue. */
function validateResourceSource(src: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof src.name !== 'string' || src.name === '')
    errs.push(required(`${p}.name`, 'must specify a resource name'));
  const target = asObj(src.target) ?? {};
  errs.push(...validateMetricTarget(target, `${p}.target`));
  const hasUtil = target.averageUtilization !== undefined && target.averageUtilization !== null;
  const hasValue = target.averageValue !== undefined && target.averageValue !== null;
  if (!hasUtil && !hasValue)
    errs.push(
      required(
        `${p}.target.averageUtilization`,
        'must set either a target raw value or a target utilization',
      ),
    );
  if (hasUtil && hasValue)
    errs.push(
      forbidden(`${p}.target.averageValue`, 'may not set both a target raw value and a target utilization'),
    );
  return errs;
}

/** validateMetricSpec: a known type whose source (and only that source) is filled. */
function validateMetricSpec(m: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = m.type;
  if (type === undefined || type === '') {
    errs.push(required(`${p}.type`, 'must specify a metric source type'));
  } else if (!Object.hasOwn(METRIC_SOURCES, type as string)) {
    errs.push(notSupported(`${p}.type`, type, Object.keys(METRIC_SOURCES)));
  }
  const field = METRIC_SOURCES[type as keyof typeof METRIC_SOURCES] as string | undefined;
  for (const other of Object.values(METRIC_SOURCES)) {
    if (other !== field && m[other] !== undefined && m[other] !== null)
      errs.push(forbidden(`${p}.${other}`, 'must populate the given metric source only'));
  }
  if (field === undefined) return errs;
  if (!isObj(m[field])) {
    errs.push(required(`${p}.${field}`, 'must populate information for the given metric source'));
  } else if (field === 'resource' || field === 'containerResource') {
    const src = m[field] as Obj;
    errs.push(...validateResourceSource(src, `${p}.${field}`));
    if (field === 'containerResource') {
      const c = src.container;
      if (typeof c !== 'string' || c === '')
        errs.push(required(`${p}.${field}.container`, 'must populate container name'));
      else errs.push(...problems(`${p}.${field}.container`, c, isDNS1123Label(c)));
    }
  }
  return errs;
}

/** validateScalingRules: window 0..3600, a known selectPolicy, at least one valid policy. */
function validateScalingRules(v: unknown, p: string): FieldError[] {
  const rules = asObj(v);
  if (!rules) return [];
  const errs: FieldError[] = [];
  const window = num(rules.stabilizationWindowSeconds);
  if (window !== undefined && window < 0)
    errs.push(invalid(`${p}.stabilizationWindowSeconds`, window, 'must be greater than or equal to zero'));
  if (window !== undefined && window > 3600)
    errs.push(invalid(`${p}.stabilizationWindowSeconds`, window, 'must be less than or equal to 3600'));
  if (rules.selectPolicy !== undefined && !['Max', 'Min', 'Disabled'].includes(rules.selectPolicy as string))
    errs.push(notSupported(`${p}.selectPolicy`, rules.selectPolicy, ['Disabled', 'Max', 'Min']));
  const policies = list(rules.policies);
  if (policies.length === 0) errs.push(required(`${p}.policies`, 'must specify at least one Policy'));
  eachObj(rules.policies, (policy, i) => {
    const pp = indexPath(`${p}.policies`, i);
    if (policy.type !== 'Pods' && policy.type !== 'Percent')
      errs.push(notSupported(`${pp}.type`, policy.type ?? '', ['Percent', 'Pods']));
    const value = num(policy.value);
    if (value === undefined || value <= 0)
      errs.push(invalid(`${pp}.value`, policy.value ?? 0, 'must be greater than zero'));
    const period = num(policy.periodSeconds);
    if (period === undefined || period <= 0)
      errs.push(invalid(`${pp}.periodSeconds`, policy.periodSeconds ?? 0, 'must be greater than zero'));
    else if (period > 1800)
      errs.push(invalid(`${pp}.periodSeconds`, period, 'must be less than or equal to 1800'));
  });
  return errs;
}

/** ValidateHorizontalPodAutoscalerSpec. */
function validateSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const min = num(spec.minReplicas);
  const max = num(spec.maxReplicas) ?? 0;
  if (min !== undefined && min < 1)
    errs.push(invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) errs.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && min > max)
    errs.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateTargetRef(spec.scaleTargetRef));
  eachObj(spec.metrics, (m, i) => errs.push(...validateMetricSpec(m, indexPath('spec.metrics', i))));
  const behavior = asObj(spec.behavior);
  if (behavior) {
    errs.push(...validateScalingRules(behavior.scaleUp, 'spec.behavior.scaleUp'));
    errs.push(...validateScalingRules(behavior.scaleDown, 'spec.behavior.scaleDown'));
  }
  return errs;
}

/**
 * The HorizontalPodAutoscaler strategy. Defaults: minReplicas 1; without metrics, cpu
 * Utilization 80 %; a given `behavior` has its missing rules filled (scaleUp: window 0,
 * Max of Pods 4 / 15 s and Percent 100 / 15 s; scaleDown: window 300 s, Percent 100 /
 * 15 s) — an HPA without `behavior` keeps none, and the controller uses the same
 * defaults. Status starts `{desiredReplicas: 0}` and is written through `/status`.
 */
export const horizontalPodAutoscalerStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({ desiredReplicas: 0 }),
  generationFields: ['spec'],
  defaults(obj) {
    const spec = section(obj, 'spec');
    defaultPointer(spec, 'minReplicas', 1);
    if (list(spec.metrics).length === 0) {
      spec.metrics = [
        {
          type: 'Resource',
          resource: {
            name: 'cpu',
            target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION },
          },
        },
      ];
    }
    const behavior = asObj(spec.behavior);
    if (behavior) {
      defaultRules(child(behavior, 'scaleUp'), DEFAULT_SCALE_UP);
      defaultRules(child(behavior, 'scaleDown'), DEFAULT_SCALE_DOWN);
    }
  },
  validate: (obj) => validateSpec(asObj(obj.spec) ?? {}),
  validateStatusUpdate(obj) {
    const status = asObj(obj.status) ?? {};
    return [
      ...nonNegative(status.currentReplicas, 'status.currentReplicas'),
      ...nonNegative(status.desiredReplicas, 'status.desiredReplicas'),
    ];
  },
});
