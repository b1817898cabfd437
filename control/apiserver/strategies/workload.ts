/**
 * What Deployments and ReplicaSets share (Kubernetes' pkg/apis/apps/validation):
 * replicas and minReadySeconds, the required non-empty selector, the template whose labels
 * the selector must match, restartPolicy Always, no activeDeadlineSeconds, the immutable
 * selector of apps/v1, and the status counters.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  forbidden,
  invalid,
  notSupported,
  required,
  validateLabelSelector,
} from '../../../api/meta/validation.js';
import {
  labelSelectorFromObject,
  type LabelSelector,
  type LabelSelectorObject,
} from '../../../api/meta/labels.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import { asObj, immutable, isObj, list, nonNegative, num, strMap } from './meta.js';
import { validatePodTemplate } from './podspec/index.js';

function parseSelector(sel: LabelSelectorObject): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(sel);
  } catch {
    return undefined;
  }
}

/** A selector as api/meta can read it (wrong JSON types dropped: they are decode errors in Kubernetes). */
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

/**
 * ValidateReplicaSetSpec / ValidateDeploymentSpec's shared part: `spec.replicas` and
 * `spec.minReadySeconds` >= 0; `spec.selector` required, valid and not empty (`empty
 * selector is invalid for deployment`, the message of both kinds); when it parses, the
 * template (ValidatePodTemplateSpecForReplicaSet): labels matched by the selector
 * (`` `selector` does not match template `labels` ``), the pod template itself,
 * `restartPolicy` Always only, no `activeDeadlineSeconds`.
 */
export function validateWorkloadSpec(spec: Obj): FieldError[] {
  const errs = [
    ...nonNegative(spec.replicas, 'spec.replicas'),
    ...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'),
  ];
  const rawSelector = spec.selector;
  // A missing selector selects nothing (LabelSelectorAsSelector(nil)), so the template
  // check below fails too, as in Kubernetes.
  let selector: LabelSelector | undefined = labelSelectorFromObject(null);
  if (rawSelector === undefined || rawSelector === null) {
    errs.push(required('spec.selector'));
  } else {
    const sel = saneSelector(asObj(rawSelector) ?? {});
    errs.push(...validateLabelSelector(sel, 'spec.selector'));
    if (Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0) {
      errs.push(invalid('spec.selector', rawSelector, 'empty selector is invalid for deployment'));
    }
    selector = parseSelector(sel);
    if (!selector) return [...errs, invalid('spec.selector', rawSelector, 'invalid label selector')];
  }
  const template = asObj(spec.template) ?? {};
  const labels = strMap(asObj(template.metadata)?.labels);
  if (!selector.empty && !selector.matches(labels)) {
    errs.push(
      invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  }
  errs.push(...validatePodTemplate(template, 'spec.template'));
  const podSpec = asObj(template.spec) ?? {};
  if (podSpec.restartPolicy !== 'Always') {
    errs.push(notSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy ?? '', ['Always']));
  }
  if (podSpec.activeDeadlineSeconds !== undefined && podSpec.activeDeadlineSeconds !== null) {
    errs.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        'activeDeadlineSeconds in ReplicaSet is not Supported',
      ),
    );
  }
  return errs;
}

/** apps/v1 forbids changing `spec.selector` (`field is immutable`). */
export function validateSelectorUnchanged(obj: KubeObject, old: KubeObject): FieldError[] {
  return immutable(asObj(obj.spec)?.selector, asObj(old.spec)?.selector, 'spec.selector');
}

/**
 * Status counters: `counters` and `others` >= 0, `counters` not above `status.replicas` (`cannot be
 * greater than status.replicas`), availableReplicas not above readyReplicas, and
 * collisionCount never decremented (Deployments).
 */
export function validateWorkloadStatus(
  obj: KubeObject,
  old: KubeObject,
  counters: readonly string[],
  others: readonly string[],
): FieldError[] {
  const status = asObj(obj.status) ?? {};
  const errs: FieldError[] = [];
  for (const k of [
    'replicas',
    'observedGeneration',
    'collisionCount',
    'terminatingReplicas',
    ...counters,
    ...others,
  ]) {
    errs.push(...nonNegative(status[k], `status.${k}`));
  }
  const replicas = num(status.replicas) ?? 0;
  for (const k of counters) {
    const v = num(status[k]) ?? 0;
    if (v > replicas) errs.push(invalid(`status.${k}`, v, 'cannot be greater than status.replicas'));
  }
  const available = num(status.availableReplicas) ?? 0;
  if (available > (num(status.readyReplicas) ?? 0)) {
    errs.push(invalid('status.availableReplicas', available, 'cannot be greater than readyReplicas'));
  }
  const before = num(asObj(old.status)?.collisionCount);
  const now = num(status.collisionCount);
  if (before !== undefined && (now === undefined || now < before)) {
    errs.push(invalid('status.collisionCount', now ?? 0, 'cannot be decremented'));
  }
  return errs;
}
