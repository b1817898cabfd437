/**
 * Job and CronJob (batch/v1): Kubernetes' pkg/registry/batch/job/strategy.go and
 * cronjob/strategy.go, SetDefaults_Job / SetDefaults_CronJob (pkg/apis/batch/v1/defaults.go)
 * and ValidateJob / ValidateJobUpdate / ValidateCronJobCreate / ValidateCronJobUpdate
 * (pkg/apis/batch/validation).
 */
import { parseSchedule, ScheduleError, timeZoneProblem } from '../../../api/cron.js';
import { labelSelectorFromObject, type LabelSelector } from '../../../api/meta/labels.js';
import type { FieldError } from '../../../api/meta/validation.js';
import {
  invalid,
  isDNS1123Label,
  notSupported,
  required,
  validateLabelSelector,
} from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import {
  asObj,
  child,
  defaultPointer,
  defineStrategy,
  immutable,
  isObj,
  list,
  nonNegative,
  num,
  section,
  semanticEqual,
  str,
  strMap,
} from './meta.js';
import { defaultPodTemplate, validatePodTemplate } from './podspec/index.js';
import { generationChanged, podTemplateWarnings, workloadNameWarnings } from './podspec/warnings.js';

/** The label of the generated selector (batch.kubernetes.io/controller-uid). */
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
/** The label naming the Job on its pods. */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
/** The labels of Kubernetes before 1.27, still written beside the new ones. */
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';

// The Indexed Job limits of pkg/apis/batch/validation (1.32): parallelism and failed
// indexes are capped; completions are not, but above completionsSoftLimit a Job with a
// backoffLimitPerIndex must cap its failed indexes and parallelism lower.
/** maxParallelismForIndexedJob. */
const MAX_PARALLELISM_INDEXED = 100_000;
/** maxFailedIndexesForIndexedJob. */
const MAX_FAILED_INDEXES = 100_000;
/** completionsSoftLimit, parallelismLimitForHighCompletions, maxFailedIndexesLimitForHighCompletions. */
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000;
const MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000;

/**
 * generateSelector: unless spec.manualSelector, the template gets the four job labels and
 * the selector becomes `{matchLabels: {batch.kubernetes.io/controller-uid: <uid>}}`.
 */
function generateSelector(job: KubeObject): void {
  const spec = section(job, 'spec');
  if (spec.manualSelector === true) return;
  const uid = job.metadata?.uid ?? '';
  const name = job.metadata?.name ?? '';
  const meta = child(child(spec, 'template'), 'metadata');
  meta.labels = {
    ...strMap(meta.labels),
    [CONTROLLER_UID_LABEL]: uid,
    [JOB_NAME_LABEL]: name,
    [LEGACY_CONTROLLER_UID_LABEL]: uid,
    [LEGACY_JOB_NAME_LABEL]: name,
  };
  if (spec.selector === undefined || spec.selector === null)
    spec.selector = { matchLabels: { [CONTROLLER_UID_LABEL]: uid } };
}

/**
 * SetDefaults_Job's spec part: completions and parallelism 1 when both unset, parallelism
 * 1, backoffLimit 6 (MaxInt32 with backoffLimitPerIndex), completionMode NonIndexed,
 * suspend false, manualSelector false, podReplacementPolicy Failed with a podFailurePolicy
 * else TerminatingOrFailed, onPodConditions' status True; the pod template's defaults.
 */
function defaultJobSpec(spec: Obj): void {
  if ((spec.completions === undefined || spec.completions === null) && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  defaultPointer(spec, 'parallelism', 1);
  defaultPointer(spec, 'backoffLimit', spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6);
  defaultPointer(spec, 'completionMode', 'NonIndexed');
  defaultPointer(spec, 'suspend', false);
  defaultPointer(spec, 'manualSelector', false);
  const pfp = asObj(spec.podFailurePolicy);
  for (const rule of list(pfp?.rules).filter(isObj))
    for (const c of list(rule.onPodConditions).filter(isObj)) defaultPointer(c, 'status', 'True');
  defaultPointer(spec, 'podReplacementPolicy', pfp ? 'Failed' : 'TerminatingOrFailed');
  defaultPodTemplate(child(spec, 'template'));
}

function parseSelector(v: unknown): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(v as never);
  } catch {
    return undefined;
  }
}

const POD_FAILURE_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];

/** validatePodFailurePolicy: the rules' actions, and exactly one of onExitCodes / onPodConditions each. */
function validatePodFailurePolicy(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  list(asObj(spec.podFailurePolicy)?.rules).forEach((r, i) => {
    const rule = asObj(r) ?? {};
    const rp = `${path}.rules[${i}]`;
    if (!POD_FAILURE_ACTIONS.includes(String(rule.action)))
      errs.push(notSupported(`${rp}.action`, rule.action ?? '', POD_FAILURE_ACTIONS));
    const codes = asObj(rule.onExitCodes);
    const conds = list(rule.onPodConditions);
    if (codes && conds.length > 0)
      errs.push(invalid(rp, '', 'specifying both OnExitCodes and OnPodConditions is not supported'));
    else if (!codes && conds.length === 0)
      errs.push(invalid(rp, '', 'specifying one of OnExitCodes and OnPodConditions is required'));
    if (codes) {
      if (codes.operator !== 'In' && codes.operator !== 'NotIn')
        errs.push(notSupported(`${rp}.onExitCodes.operator`, codes.operator ?? '', ['In', 'NotIn']));
      const values = list(codes.values);
      if (values.length === 0)
        errs.push(required(`${rp}.onExitCodes.values`, 'at least one value is required'));
      values.forEach((v, j) => {
        if (codes.operator === 'In' && v === 0)
          errs.push(invalid(`${rp}.onExitCodes.values[${j}]`, v, 'must not be 0 for the In operator'));
        if (j > 0 && (num(values[j - 1]) ?? 0) >= (num(v) ?? 0))
          errs.push(invalid(`${rp}.onExitCodes.values[${j}]`, v, 'must be ordered'));
      });
    }
  });
  return errs;
}

/**
 * validateJobSpec's completion-mode rules: completionMode NonIndexed or Indexed; an
 * Indexed Job needs completions, has at most 10^5 parallelism and failed indexes (no more
 * than its completions), and above 10^5 completions with a backoffLimitPerIndex needs
 * maxFailedIndexes, and both it and parallelism at most 10^4; backoffLimitPerIndex and
 * maxFailedIndexes need Indexed mode.
 */
function validateCompletionMode(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const mode = spec.completionMode;
  const has = (k: string) => spec[k] !== undefined && spec[k] !== null;
  const completions = num(spec.completions);
  const parallelism = num(spec.parallelism);
  const maxFailed = num(spec.maxFailedIndexes);
  if (mode !== undefined && mode !== null && mode !== 'NonIndexed' && mode !== 'Indexed')
    errs.push(notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed') {
    if (!has('completions')) errs.push(required(`${path}.completions`, 'when completion mode is Indexed'));
    if (parallelism !== undefined && parallelism > MAX_PARALLELISM_INDEXED)
      errs.push(
        invalid(
          `${path}.parallelism`,
          parallelism,
          `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`,
        ),
      );
    if (completions !== undefined && maxFailed !== undefined && maxFailed > completions)
      errs.push(invalid(`${path}.maxFailedIndexes`, maxFailed, 'must be less than or equal to completions'));
    if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES)
      errs.push(
        invalid(`${path}.maxFailedIndexes`, maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES}`),
      );
    if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && has('backoffLimitPerIndex')) {
      const high = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`;
      if (maxFailed === undefined)
        errs.push(
          required(
            `${path}.maxFailedIndexes`,
            `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`,
          ),
        );
      if (parallelism !== undefined && parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS)
        errs.push(
          invalid(
            `${path}.parallelism`,
            parallelism,
            `must be less than or equal to ${PARALLELISM_LIMIT_HIGH_COMPLETIONS} ${high}`,
          ),
        );
      if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS)
        errs.push(
          invalid(
            `${path}.maxFailedIndexes`,
            maxFailed,
            `must be less than or equal to ${MAX_FAILED_INDEXES_HIGH_COMPLETIONS} ${high}`,
          ),
        );
    }
  }
  if (mode === undefined || mode === null || mode === 'NonIndexed') {
    for (const k of ['backoffLimitPerIndex', 'maxFailedIndexes'])
      if (has(k)) errs.push(invalid(`${path}.${k}`, spec[k], 'requires indexed completion mode'));
  }
  return errs;
}

/**
 * validateJobSpec: counters >= 0 (and maxFailedIndexes only with backoffLimitPerIndex),
 * the completion mode's rules, podFailurePolicy, the pod template with restartPolicy
 * OnFailure or Never (Never only with a podFailurePolicy). `withSelector`: the Job's own
 * rules (selector required and matching the template labels); a CronJob's jobTemplate
 * has none.
 */
function validateJobSpec(spec: Obj, path: string, withSelector: boolean): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
  ])
    errs.push(...nonNegative(spec[k], `${path}.${k}`));
  if (
    spec.maxFailedIndexes !== undefined &&
    spec.maxFailedIndexes !== null &&
    (spec.backoffLimitPerIndex === undefined || spec.backoffLimitPerIndex === null)
  )
    errs.push(required(`${path}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  errs.push(...validateCompletionMode(spec, path));
  errs.push(...validatePodFailurePolicy(spec, `${path}.podFailurePolicy`));
  const template = asObj(spec.template) ?? {};
  if (withSelector) {
    if (spec.selector === undefined || spec.selector === null) errs.push(required(`${path}.selector`));
    else {
      errs.push(...validateLabelSelector(spec.selector as never, `${path}.selector`));
      const sel = parseSelector(spec.selector);
      const labels = strMap(asObj(template.metadata)?.labels);
      if (sel && !sel.matches(labels))
        errs.push(
          invalid(`${path}.template.metadata.labels`, labels, '`selector` does not match template `labels`'),
        );
    }
  }
  errs.push(...validatePodTemplate(template, `${path}.template`));
  const restartPolicy = asObj(template.spec)?.restartPolicy;
  if (spec.podFailurePolicy && restartPolicy === 'OnFailure')
    errs.push(
      invalid(
        `${path}.template.spec.restartPolicy`,
        restartPolicy,
        'only "Never" is supported when podFailurePolicy is specified',
      ),
    );
  if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never')
    errs.push(
      notSupported(`${path}.template.spec.restartPolicy`, restartPolicy ?? '', ['OnFailure', 'Never']),
    );
  return errs;
}

/**
 * ValidateJobSpecUpdate: selector, completionMode, podFailurePolicy and the template
 * immutable (the template's scheduling directives may change while a never-started Job
 * is suspended); completions immutable except for an Indexed Job scaled with
 * parallelism equal to completions (elastic Indexed Jobs).
 */
function validateJobUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  const errs = [
    ...immutable(spec.selector, oldSpec.selector, 'spec.selector'),
    ...immutable(spec.completionMode, oldSpec.completionMode, 'spec.completionMode'),
    ...immutable(spec.podFailurePolicy, oldSpec.podFailurePolicy, 'spec.podFailurePolicy'),
  ];
  const elastic =
    spec.completionMode === 'Indexed' &&
    spec.completions === spec.parallelism &&
    oldSpec.completions === oldSpec.parallelism;
  if (!elastic) errs.push(...immutable(spec.completions, oldSpec.completions, 'spec.completions'));
  const neverStarted = oldSpec.suspend === true && asObj(old.status)?.startTime === undefined;
  if (!semanticEqual(spec.template, oldSpec.template)) {
    const a = structuredClone(asObj(spec.template) ?? {});
    const b = structuredClone(asObj(oldSpec.template) ?? {});
    if (neverStarted) {
      for (const t of [a, b]) {
        const s = child(t, 'spec');
        for (const k of ['nodeSelector', 'tolerations', 'affinity', 'schedulingGates']) delete s[k];
        const m = child(t, 'metadata');
        delete m.labels;
        delete m.annotations;
      }
    }
    if (!semanticEqual(a, b)) errs.push(invalid('spec.template', spec.template, 'field is immutable'));
  }
  return errs;
}

/** ValidateJobStatusUpdate's counters: all >= 0. */
function validateJobStatus(obj: KubeObject): FieldError[] {
  const status = asObj(obj.status) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['active', 'succeeded', 'failed', 'ready', 'terminating'])
    errs.push(...nonNegative(status[k], `status.${k}`));
  return errs;
}

/**
 * The Job strategy: defaults as above (and metadata.labels from the template's when
 * empty), the generated selector on create, status subresource (`{}` on create),
 * validation and update rules as upstream. Field selector: `status.successful`.
 */
export const jobStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({}),
  generationFields: ['spec'],
  prepareForCreate: generateSelector,
  defaults(obj) {
    const spec = section(obj, 'spec');
    defaultJobSpec(spec);
    const meta = obj.metadata ?? (obj.metadata = {});
    const templateLabels = strMap(asObj(asObj(spec.template)?.metadata)?.labels);
    if (Object.keys(meta.labels ?? {}).length === 0 && Object.keys(templateLabels).length > 0)
      meta.labels = { ...templateLabels };
  },
  validate(obj, creating) {
    const errs = validateJobSpec(asObj(obj.spec) ?? {}, 'spec', true);
    if (creating) errs.push(...validateIndexedHostnames(obj));
    return errs;
  },
  validateUpdate: validateJobUpdate,
  warningsOnCreate: (obj) => [
    ...workloadNameWarnings(obj.metadata?.name),
    ...jobSpecWarnings('spec', obj.spec),
  ],
  warningsOnUpdate: (obj, old) => (generationChanged(obj, old) ? jobSpecWarnings('spec', obj.spec) : []),
  validateStatusUpdate: validateJobStatus,
  fields: (obj) => ({ 'status.successful': String(num(asObj(obj.status)?.succeeded) ?? 0) }),
});

/**
 * ValidateJob's last rule (on create): an Indexed Job's pods are named and hostnamed
 * `<job>-<index>`, so `<name>-<completions - 1>` must be a DNS label, else
 * `metadata.name: Invalid value: "<name>": will not able to create pod with invalid DNS
 * label: <name>-<n>` (upstream's words).
 */
function validateIndexedHostnames(job: KubeObject): FieldError[] {
  const spec = asObj(job.spec) ?? {};
  const completions = num(spec.completions);
  if (spec.completionMode !== 'Indexed' || completions === undefined || completions <= 0) return [];
  const name = job.metadata?.name ?? '';
  const hostname = `${name}-${completions - 1}`;
  if (isDNS1123Label(hostname).length === 0) return [];
  return [invalid('metadata.name', name, `will not able to create pod with invalid DNS label: ${hostname}`)];
}

/** The most characters of a CronJob's name (its Jobs' names add 11). */
const CRONJOB_NAME_MAX = 52;
const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace'];
const TZ_CHARS = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** validateScheduleFormat and validateTimeZone. `allowTZ`: the old object already had TZ= in its schedule. */
function validateSchedule(spec: Obj, allowTZ: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = spec.schedule;
  const tz = spec.timeZone;
  if (typeof schedule !== 'string' || schedule === '') errs.push(required('spec.schedule'));
  else {
    try {
      // Kubernetes parses with TZ= still in; robfig accepts a leading TZ=/CRON_TZ= prefix.
      parseSchedule(schedule.replace(/^(CRON_)?TZ=\S+\s+/, ''));
    } catch (err) {
      errs.push(invalid('spec.schedule', schedule, err instanceof ScheduleError ? err.message : String(err)));
    }
    if (schedule.includes('TZ')) {
      if (!allowTZ)
        errs.push(
          invalid(
            'spec.schedule',
            schedule,
            'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
          ),
        );
      else if (tz !== undefined && tz !== null)
        errs.push(
          invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'),
        );
    }
  }
  if (tz !== undefined && tz !== null) {
    const zone = String(tz);
    if (zone === '') errs.push(invalid('spec.timeZone', zone, 'timeZone must be nil or non-empty string'));
    else if (zone.split('/').some((p) => p === '.' || p === '..' || p.startsWith('-') || !TZ_CHARS.test(p)))
      errs.push(
        invalid(
          'spec.timeZone',
          zone,
          'must be a valid IANA time zone name, containing only letters, digits, "/", ".", "-", "_" and "+"',
        ),
      );
    else if (zone.toLowerCase() === 'local')
      errs.push(
        invalid(
          'spec.timeZone',
          zone,
          'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
        ),
      );
    else {
      const problem = timeZoneProblem(zone);
      if (problem) errs.push(invalid('spec.timeZone', zone, problem));
    }
  }
  return errs;
}

function validateCronJobSpec(obj: KubeObject, allowTZ: boolean): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const errs = validateSchedule(spec, allowTZ);
  errs.push(...nonNegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  if (!CONCURRENCY_POLICIES.includes(String(spec.concurrencyPolicy)))
    errs.push(notSupported('spec.concurrencyPolicy', spec.concurrencyPolicy ?? '', CONCURRENCY_POLICIES));
  errs.push(...nonNegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  errs.push(...nonNegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  const jobSpec = asObj(asObj(spec.jobTemplate)?.spec) ?? {};
  if (jobSpec.selector !== undefined && jobSpec.selector !== null)
    errs.push(
      invalid('spec.jobTemplate.spec.selector', jobSpec.selector, '`selector` will be auto-generated'),
    );
  if (jobSpec.manualSelector === true)
    errs.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  errs.push(...validateJobSpec(jobSpec, 'spec.jobTemplate.spec', false));
  return errs;
}

/**
 * The CronJob strategy: concurrencyPolicy Allow, suspend false, successfulJobsHistoryLimit
 * 3, failedJobsHistoryLimit 1 and the pod template's defaults; names at most 52
 * characters; the schedule (422 on spec.schedule with the parser's words), the time zone,
 * the job template. Status subresource (`{}` on create).
 */
export const cronJobStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({}),
  generationFields: ['spec'],
  defaults(obj) {
    const spec = section(obj, 'spec');
    defaultPointer(spec, 'concurrencyPolicy', 'Allow');
    defaultPointer(spec, 'suspend', false);
    defaultPointer(spec, 'successfulJobsHistoryLimit', 3);
    defaultPointer(spec, 'failedJobsHistoryLimit', 1);
    defaultPodTemplate(child(child(child(spec, 'jobTemplate'), 'spec'), 'template'));
  },
  validate(obj, create) {
    const errs: FieldError[] = [];
    const name = obj.metadata?.name ?? '';
    if (create && name.length > CRONJOB_NAME_MAX)
      errs.push(invalid('metadata.name', name, `must be no more than ${CRONJOB_NAME_MAX} characters`));
    // Updates re-validate with allowTZ decided in validateUpdate's context; a create never allows TZ=.
    if (create) errs.push(...validateCronJobSpec(obj, false));
    return errs;
  },
  validateUpdate(obj, old) {
    const oldSchedule = asObj(old.spec)?.schedule;
    return validateCronJobSpec(obj, typeof oldSchedule === 'string' && oldSchedule.includes('TZ'));
  },
  warningsOnCreate: (obj) => [
    ...workloadNameWarnings(obj.metadata?.name),
    ...jobSpecWarnings('spec.jobTemplate.spec', asObj(asObj(obj.spec)?.jobTemplate)?.spec),
  ],
  warningsOnUpdate(obj, old) {
    const spec = asObj(obj.spec) ?? {};
    const out = generationChanged(obj, old)
      ? jobSpecWarnings('spec.jobTemplate.spec', asObj(spec.jobTemplate)?.spec)
      : [];
    // A create with TZ= is refused (validateSchedule); an update that keeps one is warned, with
    // upstream's path as it writes it.
    if (str(spec.schedule).includes('TZ'))
      out.push(
        'cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details',
      );
    return out;
  },
});

/** Upstream's soft limit of Indexed Jobs' parallelism (pkg/api/job/warnings.go; completions: COMPLETIONS_SOFT_LIMIT). */
const PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS = 10_000;

/**
 * pkg/api/job WarningsForJobSpec: an Indexed Job whose completions pass 10^5 and parallelism
 * 10^4 (completedIndexes may not be tracked), then its pod template's warnings (at
 * `<path>.template`). `path` is the job spec's (`spec`, `spec.jobTemplate.spec`).
 */
export function jobSpecWarnings(path: string, specValue: unknown): string[] {
  const spec = asObj(specValue) ?? {};
  const out: string[] = [];
  if (
    spec.completionMode === 'Indexed' &&
    (num(spec.completions) ?? 0) > COMPLETIONS_SOFT_LIMIT &&
    (num(spec.parallelism) ?? 0) > PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS
  )
    out.push(
      `${path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail`,
    );
  out.push(...podTemplateWarnings(`${path}.template`, spec.template));
  return out;
}
