/**
 * Deployment (apps/v1): Kubernetes' pkg/registry/apps/deployment/strategy.go,
 * SetDefaults_Deployment (pkg/apis/apps/v1/defaults.go) and ValidateDeployment /
 * ValidateDeploymentUpdate / ValidateDeploymentStatusUpdate (pkg/apis/apps/validation).
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from '../../../api/meta/validation.js';
import { forbidden, invalid, isValidPercent, notSupported, required } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import {
  asObj,
  child,
  clone,
  defaultPointer,
  defaultString,
  defineStrategy,
  nonNegative,
  num,
  problems,
  section,
} from './meta.js';
import { defaultPodTemplate } from './podspec/index.js';
import { validateSelectorUnchanged, validateWorkloadSpec, validateWorkloadStatus } from './workload.js';
import { generationChanged, podTemplateWarnings, workloadNameWarnings } from './podspec/warnings.js';

/** An IntOrString of a rolling update: a percentage (`25%`) or an integer >= 0. */
function intOrPercent(v: unknown, field: string): FieldError[] {
  if (typeof v === 'string') return problems(field, v, isValidPercent(v));
  if (typeof v === 'number') return nonNegative(v, field);
  return [invalid(field, v ?? null, "must be an integer or percentage (e.g '5%')")];
}

/** The number of an IntOrString: `25%` → 25, `3` → 3 (what the both-zero rule compares). */
function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  const m = /^([0-9]+)%$/.exec(typeof v === 'string' ? v : '');
  return m ? Number(m[1]) : 0;
}

/**
 * ValidateDeploymentStrategy: `type` Recreate (no rollingUpdate) or RollingUpdate;
 * maxUnavailable and maxSurge integers >= 0 or percentages, not both 0 (`may not be 0
 * when `maxSurge` is 0`, on maxUnavailable), maxUnavailable at most 100%.
 */
function validateStrategy(v: unknown): FieldError[] {
  const s = asObj(v) ?? {};
  const ru = asObj(s.rollingUpdate);
  switch (s.type) {
    case 'Recreate':
      return s.rollingUpdate === undefined || s.rollingUpdate === null
        ? []
        : [
            forbidden(
              'spec.strategy.rollingUpdate',
              "may not be specified when strategy `type` is 'Recreate'",
            ),
          ];
    case 'RollingUpdate': {
      if (!ru) return [required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil')];
      const p = 'spec.strategy.rollingUpdate';
      const errs = [
        ...intOrPercent(ru.maxUnavailable, `${p}.maxUnavailable`),
        ...intOrPercent(ru.maxSurge, `${p}.maxSurge`),
      ];
      if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
        errs.push(invalid(`${p}.maxUnavailable`, ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
      }
      if (typeof ru.maxUnavailable === 'string' && intOrPercentValue(ru.maxUnavailable) > 100) {
        errs.push(invalid(`${p}.maxUnavailable`, ru.maxUnavailable, 'must not be greater than 100%'));
      }
      return errs;
    }
    default:
      return [notSupported('spec.strategy.type', s.type ?? '', ['Recreate', 'RollingUpdate'])];
  }
}

/**
 * Whether two string maps (annotations) are equal as apiequality.Semantic compares Go
 * maps: none and an empty one are the same; an entry with an empty value is an entry.
 */
function sameStringMap(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  return isDeepStrictEqual(a ?? {}, b ?? {});
}

/**
 * The Deployment strategy. Defaults: replicas 1, strategy RollingUpdate with maxSurge and
 * maxUnavailable 25%, revisionHistoryLimit 10, progressDeadlineSeconds 600, and the pod
 * template's. Validation: the workload spec (selector, template, replicas), the rollout
 * strategy, revisionHistoryLimit >= 0, progressDeadlineSeconds > minReadySeconds; on
 * update, an immutable selector. Status starts `{}`; status writes keep spec and labels.
 * An update bumps the generation when the spec or the annotations changed, as upstream's
 * PrepareForUpdate (pkg/registry/apps/deployment/strategy.go): annotations are copied to
 * the Deployment's ReplicaSets.
 */
export const deploymentStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({}),
  generationFields: ['spec'],
  generationChanged: (obj, old) =>
    !isDeepStrictEqual(obj.spec, old.spec) ||
    !sameStringMap(obj.metadata?.annotations, old.metadata?.annotations),
  defaults(obj) {
    const spec = section(obj, 'spec');
    defaultPointer(spec, 'replicas', 1);
    const strategy = child(spec, 'strategy');
    defaultString(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = child(strategy, 'rollingUpdate');
      defaultPointer(ru, 'maxUnavailable', '25%');
      defaultPointer(ru, 'maxSurge', '25%');
    }
    defaultPointer(spec, 'revisionHistoryLimit', 10);
    defaultPointer(spec, 'progressDeadlineSeconds', 600);
    defaultPodTemplate(child(spec, 'template'));
  },
  validate(obj) {
    const spec = asObj(obj.spec) ?? {};
    const errs = [
      ...validateWorkloadSpec(spec),
      ...validateStrategy(spec.strategy),
      ...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'),
    ];
    const deadline = num(spec.progressDeadlineSeconds);
    if (deadline !== undefined) {
      errs.push(...nonNegative(deadline, 'spec.progressDeadlineSeconds'));
      if (deadline <= (num(spec.minReadySeconds) ?? 0)) {
        errs.push(invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
      }
    }
    return errs;
  },
  validateUpdate: validateSelectorUnchanged,
  warningsOnCreate: (obj) => [
    ...workloadNameWarnings(obj.metadata?.name),
    ...podTemplateWarnings('spec.template', asObj(obj.spec)?.template),
  ],
  warningsOnUpdate: (obj, old) =>
    generationChanged(obj, old) ? podTemplateWarnings('spec.template', asObj(obj.spec)?.template) : [],
  prepareForStatusUpdate(obj: KubeObject, old: KubeObject) {
    const meta = (obj.metadata ??= {});
    if (old.metadata?.labels) meta.labels = clone(old.metadata.labels);
    else delete meta.labels;
  },
  validateStatusUpdate: (obj, old) =>
    validateWorkloadStatus(
      obj,
      old,
      ['updatedReplicas', 'readyReplicas', 'availableReplicas'],
      ['unavailableReplicas'],
    ),
});
