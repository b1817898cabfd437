/**
 * StatefulSet (apps/v1): Kubernetes' pkg/registry/apps/statefulset/strategy.go,
 * SetDefaults_StatefulSet (pkg/apis/apps/v1/defaults.go) and ValidateStatefulSet /
 * ValidateStatefulSetUpdate / ValidateStatefulSetStatus (pkg/apis/apps/validation).
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  forbidden,
  indexPath,
  invalid,
  isValidPercent,
  notSupported,
  required,
  validateLabelSelector,
} from '../../../api/meta/validation.js';
import { labelSelectorFromObject, type LabelSelector } from '../../../api/meta/labels.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import {
  asObj,
  child,
  clone,
  defaultPointer,
  defaultString,
  defineStrategy,
  eachObj,
  isObj,
  list,
  nonNegative,
  num,
  problems,
  section,
  semanticEqual,
  str,
  strMap,
} from './meta.js';
import { defaultPodTemplate, validatePodTemplate } from './podspec/index.js';
import { defaultClaimSpec, validateClaimSpec } from './persistentvolumeclaims.js';
import { validateSelectorUnchanged } from './workload.js';
import { claimSpecWarnings, generationChanged, podTemplateWarnings } from './podspec/warnings.js';

/** The spec fields an update may change (ValidateStatefulSetUpdate); any other change is forbidden. */
export const STATEFULSET_MUTABLE_FIELDS = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
] as const;

const SPEC_UPDATE_FORBIDDEN =
  "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

const RETENTION_POLICIES = ['Retain', 'Delete'] as const;

/** An IntOrString `maxUnavailable`: a positive integer or a percentage in (0%, 100%]. */
function validateMaxUnavailable(v: unknown, field: string): FieldError[] {
  if (typeof v === 'string') {
    const errs = problems(field, v, isValidPercent(v));
    if (errs.length > 0) return errs;
    const pct = Number(v.slice(0, -1));
    if (pct === 0) return [invalid(field, v, 'cannot be 0')];
    if (pct > 100) return [invalid(field, v, 'must not be greater than 100%')];
    return [];
  }
  if (typeof v === 'number') {
    const errs = nonNegative(v, field);
    if (errs.length > 0) return errs;
    return v === 0 ? [invalid(field, v, 'cannot be 0')] : [];
  }
  return [invalid(field, v ?? null, "must be an integer or percentage (e.g '5%')")];
}

/** `spec.updateStrategy`: OnDelete (no rollingUpdate) or RollingUpdate (partition >= 0, maxUnavailable). */
function validateUpdateStrategy(v: unknown): FieldError[] {
  const s = asObj(v) ?? {};
  const p = 'spec.updateStrategy';
  switch (s.type) {
    case undefined:
    case null:
    case '':
      return [required(p)];
    case 'OnDelete':
      return s.rollingUpdate === undefined || s.rollingUpdate === null
        ? []
        : [invalid(`${p}.rollingUpdate`, s.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'")];
    case 'RollingUpdate': {
      const ru = asObj(s.rollingUpdate);
      if (!ru) return [];
      const errs = nonNegative(ru.partition, `${p}.rollingUpdate.partition`);
      if (ru.maxUnavailable !== undefined && ru.maxUnavailable !== null)
        errs.push(...validateMaxUnavailable(ru.maxUnavailable, `${p}.rollingUpdate.maxUnavailable`));
      return errs;
    }
    default:
      return [invalid(p, s, "must be 'RollingUpdate' or 'OnDelete'")];
  }
}

function validateRetentionPolicy(v: unknown): FieldError[] {
  const policy = asObj(v);
  if (!policy) return [];
  const errs: FieldError[] = [];
  for (const k of ['whenDeleted', 'whenScaled']) {
    const value = str(policy[k]);
    if (!(RETENTION_POLICIES as readonly string[]).includes(value)) {
      errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${k}`, value, RETENTION_POLICIES));
    }
  }
  return errs;
}

/**
 * The pod template as the set's pods get it: Kubernetes validates only the template's
 * labels and annotations here (its pod spec mounts volumes the claim templates supply),
 * k8ts validates the pod spec too, with a `persistentVolumeClaim` volume per claim template
 * not already named, so that a template whose pods would be refused is refused now.
 */
function templateWithClaimVolumes(template: Obj, claims: readonly Obj[]): Obj {
  const t = clone(template);
  const spec = child(t, 'spec');
  const volumes = list(spec.volumes).slice();
  const names = new Set(volumes.filter(isObj).map((v) => str(v.name)));
  for (const c of claims) {
    const name = str(asObj(c.metadata)?.name);
    if (name !== '' && !names.has(name)) volumes.push({ name, persistentVolumeClaim: { claimName: name } });
  }
  if (volumes.length > 0) spec.volumes = volumes;
  return t;
}

/** ValidateStatefulSetSpec. */
function validateSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  switch (spec.podManagementPolicy) {
    case undefined:
    case null:
    case '':
      errs.push(required('spec.podManagementPolicy'));
      break;
    case 'OrderedReady':
    case 'Parallel':
      break;
    default:
      errs.push(
        invalid('spec.podManagementPolicy', spec.podManagementPolicy, "must be 'OrderedReady' or 'Parallel'"),
      );
  }
  errs.push(...validateUpdateStrategy(spec.updateStrategy));
  errs.push(...validateRetentionPolicy(spec.persistentVolumeClaimRetentionPolicy));
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'));
  const ordinals = asObj(spec.ordinals);
  if (ordinals) errs.push(...nonNegative(ordinals.start, 'spec.ordinals.start'));
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));

  let selector: LabelSelector | undefined;
  const raw = spec.selector;
  if (raw === undefined || raw === null) {
    errs.push(required('spec.selector'));
  } else {
    const sel = asObj(raw) ?? {};
    const matchLabels = strMap(sel.matchLabels);
    const matchExpressions = list(sel.matchExpressions)
      .filter(isObj)
      .map((e) => ({
        key: str(e.key),
        operator: str(e.operator),
        values: list(e.values).filter((x): x is string => typeof x === 'string'),
      }));
    errs.push(...validateLabelSelector({ matchLabels, matchExpressions }, 'spec.selector'));
    if (Object.keys(matchLabels).length + matchExpressions.length === 0) {
      errs.push(invalid('spec.selector', raw, 'empty selector is invalid for statefulset'));
    }
    try {
      selector = labelSelectorFromObject({ matchLabels, matchExpressions });
    } catch {
      errs.push(invalid('spec.selector', raw, ''));
    }
  }
  const template = asObj(spec.template) ?? {};
  const labels = strMap(asObj(template.metadata)?.labels);
  if (selector && !selector.empty && !selector.matches(labels)) {
    errs.push(
      invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  }
  const claims: Obj[] = [];
  eachObj(spec.volumeClaimTemplates, (c, i) => {
    claims.push(c);
    const p = `spec.volumeClaimTemplates[${i}]`;
    if (str(asObj(c.metadata)?.name) === '')
      errs.push(required(`${p}.metadata.name`, 'name or generateName is required'));
    errs.push(...validateClaimSpec(asObj(c.spec) ?? {}, `${p}.spec`));
  });
  errs.push(...validatePodTemplate(templateWithClaimVolumes(template, claims), 'spec.template'));
  const podSpec = asObj(template.spec) ?? {};
  if (podSpec.restartPolicy !== 'Always') {
    errs.push(notSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy ?? '', ['Always']));
  }
  if (podSpec.activeDeadlineSeconds !== undefined && podSpec.activeDeadlineSeconds !== null) {
    errs.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        'activeDeadlineSeconds in StatefulSet is not Supported',
      ),
    );
  }
  return errs;
}

/** ValidateStatefulSetUpdate: only STATEFULSET_MUTABLE_FIELDS of the spec may change; the selector never. */
function validateUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = clone(asObj(obj.spec) ?? {});
  const before = asObj(old.spec) ?? {};
  for (const k of STATEFULSET_MUTABLE_FIELDS) {
    if (before[k] === undefined) delete spec[k];
    else spec[k] = before[k];
  }
  if (!semanticEqual(spec, before)) return [forbidden('spec', SPEC_UPDATE_FORBIDDEN)];
  return validateSelectorUnchanged(obj, old);
}

/** ValidateStatefulSetStatus: counters >= 0 and not above `status.replicas`; available not above ready. */
function validateStatus(obj: KubeObject, old: KubeObject): FieldError[] {
  const status = asObj(obj.status) ?? {};
  const errs: FieldError[] = [];
  const counters = ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas'];
  for (const k of ['replicas', ...counters, 'observedGeneration', 'collisionCount']) {
    errs.push(...nonNegative(status[k], `status.${k}`));
  }
  const replicas = num(status.replicas) ?? 0;
  for (const k of counters) {
    const v = num(status[k]) ?? 0;
    if (v > replicas) errs.push(invalid(`status.${k}`, v, 'cannot be greater than status.replicas'));
  }
  const available = num(status.availableReplicas) ?? 0;
  if (available > (num(status.readyReplicas) ?? 0)) {
    errs.push(invalid('status.availableReplicas', available, 'cannot be greater than status.readyReplicas'));
  }
  const before = num(asObj(old.status)?.collisionCount);
  const now = num(status.collisionCount);
  if (before !== undefined && (now === undefined || now < before)) {
    errs.push(invalid('status.collisionCount', now ?? 0, 'cannot be decremented'));
  }
  return errs;
}

/**
 * The StatefulSet strategy. Defaults (SetDefaults_StatefulSet): podManagementPolicy
 * OrderedReady, updateStrategy RollingUpdate with partition 0, persistentVolumeClaimRetentionPolicy
 * Retain/Retain, replicas 1, revisionHistoryLimit 10, the pod template's and each claim
 * template's (volumeMode Filesystem, status phase Pending). Validation: see validateSpec;
 * on update only replicas, ordinals, template, updateStrategy, the retention policy and
 * minReadySeconds may change (`spec: Forbidden: updates to statefulset spec for fields other
 * than ...`). Status starts `{replicas: 0, availableReplicas: 0}` (StatefulSetStatus's
 * non-omitempty fields); status writes keep spec and labels. generation follows `spec`.
 */
export const statefulSetStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({ replicas: 0, availableReplicas: 0 }),
  generationFields: ['spec'],
  defaults(obj) {
    const spec = section(obj, 'spec');
    defaultString(spec, 'podManagementPolicy', 'OrderedReady');
    const strategy = child(spec, 'updateStrategy');
    if (strategy.type === undefined || strategy.type === '') {
      strategy.type = 'RollingUpdate';
      if (strategy.rollingUpdate === undefined || strategy.rollingUpdate === null)
        strategy.rollingUpdate = {};
    }
    if (strategy.type === 'RollingUpdate' && isObj(strategy.rollingUpdate)) {
      defaultPointer(strategy.rollingUpdate, 'partition', 0);
    }
    const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
    defaultString(retention, 'whenDeleted', 'Retain');
    defaultString(retention, 'whenScaled', 'Retain');
    defaultPointer(spec, 'replicas', 1);
    defaultPointer(spec, 'revisionHistoryLimit', 10);
    defaultPodTemplate(child(spec, 'template'));
    eachObj(spec.volumeClaimTemplates, (c) => {
      defaultClaimSpec(child(c, 'spec'));
      defaultString(child(c, 'status'), 'phase', 'Pending');
    });
  },
  validate: (obj) => validateSpec(asObj(obj.spec) ?? {}),
  validateUpdate,
  warningsOnCreate(obj) {
    const spec = asObj(obj.spec) ?? {};
    return [
      ...podTemplateWarnings('spec.template', spec.template),
      ...list(spec.volumeClaimTemplates).flatMap((c, i) =>
        claimSpecWarnings(indexPath('spec.volumeClaimTemplates', i), asObj(c)?.spec),
      ),
    ];
  },
  warningsOnUpdate(obj, old) {
    const spec = asObj(obj.spec) ?? {};
    return [
      ...(generationChanged(obj, old) ? podTemplateWarnings('spec.template', spec.template) : []),
      // Upstream's update path names the claim spec `Spec` (its create path names none).
      ...list(spec.volumeClaimTemplates).flatMap((c, i) =>
        claimSpecWarnings(`${indexPath('spec.volumeClaimTemplates', i)}.Spec`, asObj(c)?.spec),
      ),
    ];
  },
  prepareForStatusUpdate(obj: KubeObject, old: KubeObject) {
    const meta = (obj.metadata ??= {});
    if (old.metadata?.labels) meta.labels = clone(old.metadata.labels);
    else delete meta.labels;
  },
  validateStatusUpdate: validateStatus,
});
