/**
 * PodDisruptionBudget (policy/v1): Kubernetes' pkg/registry/policy/poddisruptionbudget/
 * strategy.go and pkg/apis/policy/validation (ValidatePodDisruptionBudget,
 * ValidatePodDisruptionBudgetSpec, ValidatePodDisruptionBudgetStatusUpdate). No defaults
 * in policy/v1: an unset unhealthyPodEvictionPolicy behaves as IfHealthyBudget.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  invalid,
  isValidPercent,
  notSupported,
  validateLabelSelector,
} from '../../../api/meta/validation.js';
import type { LabelSelectorObject } from '../../../api/meta/labels.js';
import { asObj, defineStrategy, isObj, list, nonNegative, problems, strMap, type Obj } from './meta.js';

/** The policies ValidatePodDisruptionBudgetSpec accepts, sorted as its NotSupported message lists them. */
const UNHEALTHY_POD_EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

/**
 * appsvalidation.ValidatePositiveIntOrPercent and IsNotMoreThan100Percent: a percentage
 * (`50%`, at most `100%`) or an integer >= 0.
 */
function positiveIntOrPercent(v: unknown, field: string): FieldError[] {
  if (typeof v === 'string') {
    const errs = problems(field, v, isValidPercent(v));
    const m = /^([0-9]+)%$/.exec(v);
    if (m && Number(m[1]) > 100) errs.push(invalid(field, v, 'must not be greater than 100%'));
    return errs;
  }
  if (typeof v === 'number' && Number.isInteger(v)) return nonNegative(v, field);
  return [invalid(field, v ?? null, "must be an integer or percentage (e.g '5%')")];
}

/** A selector as api/meta can read it (wrong JSON types dropped: decode errors in Kubernetes). */
function saneSelector(v: Obj): LabelSelectorObject {
  return {
    matchLabels: strMap(v.matchLabels),
    matchExpressions: list(v.matchExpressions)
      .filter(isObj)
      .map((e) => ({
        key: typeof e.key === 'string' ? e.key : '',
        operator: typeof e.operator === 'string' ? e.operator : '',
        values: list(e.values).filter((x): x is string => typeof x === 'string'),
      })),
  };
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * ValidatePodDisruptionBudgetSpec: minAvailable and maxUnavailable not both set (`spec:
 * Invalid value: ...: minAvailable and maxUnavailable cannot be both set`), each an int
 * >= 0 or a percentage <= 100%, a valid selector (a missing one is allowed and selects
 * nothing), a supported unhealthyPodEvictionPolicy.
 */
export function validatePodDisruptionBudgetSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (present(spec.minAvailable) && present(spec.maxUnavailable))
    errs.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  if (present(spec.minAvailable)) errs.push(...positiveIntOrPercent(spec.minAvailable, 'spec.minAvailable'));
  if (present(spec.maxUnavailable))
    errs.push(...positiveIntOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'));
  const sel = asObj(spec.selector);
  if (sel) errs.push(...validateLabelSelector(saneSelector(sel), 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (present(policy) && !UNHEALTHY_POD_EVICTION_POLICIES.includes(policy as string))
    errs.push(notSupported('spec.unhealthyPodEvictionPolicy', policy, UNHEALTHY_POD_EVICTION_POLICIES));
  return errs;
}

/**
 * The PodDisruptionBudget strategy: the spec rules above on create and update (the spec
 * is mutable in policy/v1); status starts with its four non-omitempty counters at 0 and
 * is written through the status subresource, whose counters must be >= 0.
 */
export const podDisruptionBudgetStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }),
  generationFields: ['spec'],
  validate: (obj) => validatePodDisruptionBudgetSpec(asObj(obj.spec) ?? {}),
  validateStatusUpdate: (obj) => {
    const status = asObj(obj.status) ?? {};
    return ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'].flatMap((k) =>
      nonNegative(status[k], `status.${k}`),
    );
  },
});
