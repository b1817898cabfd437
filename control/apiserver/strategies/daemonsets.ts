/**
 * DaemonSet (apps/v1): Kubernetes' pkg/registry/apps/daemonset/strategy.go,
 * SetDefaults_DaemonSet (pkg/apis/apps/v1/defaults.go) and ValidateDaemonSet /
 * ValidateDaemonSetUpdate / ValidateDaemonSetStatusUpdate (pkg/apis/apps/validation).
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { invalid, isValidPercent, notSupported, required } from '../../../api/meta/validation.js';
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
  semanticEqual,
} from './meta.js';
import { defaultPodTemplate } from './podspec/index.js';
import { validateSelectorUnchanged, validateWorkloadSpec } from './workload.js';
import { podTemplateWarnings } from './podspec/warnings.js';

/**
 * The annotation apps/v1 carries the internal `spec.templateGeneration` in (bumped on every
 * template change; the controller labels pods `pod-template-generation` with it).
 */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** An IntOrString of a rolling update: a percentage or an integer >= 0 (ValidatePositiveIntOrPercent). */
function intOrPercent(v: unknown, field: string): FieldError[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return problems(field, v, isValidPercent(v));
  if (typeof v === 'number') return nonNegative(v, field);
  return [invalid(field, v, "must be an integer or percentage (e.g '5%')")];
}

function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  const m = /^([0-9]+)%$/.exec(typeof v === 'string' ? v : '');
  return m ? Number(m[1]) : 0;
}

/**
 * ValidateDaemonSetUpdateStrategy: `type` OnDelete or RollingUpdate; RollingUpdate needs
 * `rollingUpdate` whose maxUnavailable and maxSurge are integers >= 0 or percentages up to
 * 100%, exactly one of them non-zero.
 */
function validateUpdateStrategy(v: unknown): FieldError[] {
  const s = asObj(v) ?? {};
  const p = 'spec.updateStrategy';
  if (s.type === 'OnDelete') return [];
  if (s.type !== 'RollingUpdate')
    return [notSupported(`${p}.type`, s.type ?? '', ['OnDelete', 'RollingUpdate'])];
  const ru = asObj(s.rollingUpdate);
  if (!ru) return [required(`${p}.rollingUpdate`)];
  const q = `${p}.rollingUpdate`;
  const errs = [
    ...intOrPercent(ru.maxUnavailable, `${q}.maxUnavailable`),
    ...intOrPercent(ru.maxSurge, `${q}.maxSurge`),
  ];
  for (const k of ['maxUnavailable', 'maxSurge']) {
    if (typeof ru[k] === 'string' && intOrPercentValue(ru[k]) > 100)
      errs.push(invalid(`${q}.${k}`, ru[k], 'must not be greater than 100%'));
  }
  const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
  const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
  if (hasUnavailable && hasSurge)
    errs.push(invalid(`${q}.maxSurge`, ru.maxSurge, 'may not be set when maxUnavailable is non-zero'));
  if (!hasUnavailable && !hasSurge)
    errs.push(required(`${q}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  return errs;
}

/**
 * ValidateDaemonSetSpec: the workload rules shared with ReplicaSets (selector required, not
 * empty, matching the template labels; the pod template; restartPolicy Always) in
 * DaemonSet's words, minReadySeconds, revisionHistoryLimit >= 0 and the update strategy.
 */
function validateDaemonSetSpec(spec: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = validateWorkloadSpec({ ...spec, replicas: undefined }).map((e) => {
    if (e.message === 'empty selector is invalid for deployment')
      return { ...e, message: 'empty selector is invalid for daemonset' };
    if (e.field === 'spec.template.spec.activeDeadlineSeconds')
      return invalid(
        e.field,
        asObj(asObj(spec.template)?.spec)?.activeDeadlineSeconds,
        'activeDeadlineSeconds must be nil for daemonset',
      );
    return e;
  });
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  errs.push(...validateUpdateStrategy(spec.updateStrategy));
  return errs;
}

function templateGeneration(obj: KubeObject): number {
  const v = Number(obj.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isInteger(v) && v > 0 ? v : 0;
}

function setTemplateGeneration(obj: KubeObject, gen: number): void {
  const meta = (obj.metadata ??= {});
  meta.annotations = { ...meta.annotations, [TEMPLATE_GENERATION_ANNOTATION]: String(gen) };
}

/**
 * The DaemonSet strategy. Defaults: updateStrategy RollingUpdate with maxUnavailable 1 and
 * maxSurge 0, revisionHistoryLimit 10, the pod template's. On create the template
 * generation is 1; an update that changes the template raises it by one (PrepareForUpdate).
 * Validation: see validateDaemonSetSpec; on update an immutable selector. Status starts
 * with its four non-omitempty counters at 0; status writes keep spec and labels.
 */
export const daemonSetStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    desiredNumberScheduled: 0,
    numberReady: 0,
  }),
  generationFields: ['spec'],
  prepareForCreate(obj) {
    setTemplateGeneration(obj, 1);
  },
  prepareForUpdate(obj, old) {
    const gen = templateGeneration(old) || 1;
    const cur = clone(asObj(asObj(obj.spec)?.template) ?? {});
    defaultPodTemplate(cur);
    const changed = !semanticEqual(cur, asObj(asObj(old.spec)?.template) ?? {});
    setTemplateGeneration(obj, changed ? gen + 1 : gen);
  },
  defaults(obj) {
    const spec = section(obj, 'spec');
    const strategy = child(spec, 'updateStrategy');
    defaultString(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = child(strategy, 'rollingUpdate');
      defaultPointer(ru, 'maxUnavailable', 1);
      defaultPointer(ru, 'maxSurge', 0);
    }
    defaultPointer(spec, 'revisionHistoryLimit', 10);
    defaultPodTemplate(child(spec, 'template'));
  },
  validate: (obj) => validateDaemonSetSpec(asObj(obj.spec) ?? {}),
  validateUpdate: validateSelectorUnchanged,
  warningsOnCreate: (obj) => podTemplateWarnings('spec.template', asObj(obj.spec)?.template),
  // Upstream: only when the template generation moved (the template changed).
  warningsOnUpdate: (obj, old) =>
    templateGeneration(obj) !== templateGeneration(old)
      ? podTemplateWarnings('spec.template', asObj(obj.spec)?.template)
      : [],
  prepareForStatusUpdate(obj: KubeObject, old: KubeObject) {
    const meta = (obj.metadata ??= {});
    if (old.metadata?.labels) meta.labels = clone(old.metadata.labels);
    else delete meta.labels;
  },
  validateStatusUpdate(obj, old) {
    const status = asObj(obj.status) ?? {};
    const errs: FieldError[] = [];
    for (const k of [
      'currentNumberScheduled',
      'numberMisscheduled',
      'desiredNumberScheduled',
      'numberReady',
      'observedGeneration',
      'updatedNumberScheduled',
      'numberAvailable',
      'numberUnavailable',
      'collisionCount',
    ])
      errs.push(...nonNegative(status[k], `status.${k}`));
    const before = num(asObj(old.status)?.collisionCount);
    const now = num(status.collisionCount);
    if (before !== undefined && (now === undefined || now < before))
      errs.push(invalid('status.collisionCount', now ?? 0, 'cannot be decremented'));
    return errs;
  },
});
