/**
 * PodSecurity admission (k8s.io/pod-security-admission/admission, as kube-apiserver runs
 * it built in since 1.25): the Pod Security Standards a namespace's labels choose
 * (policy.ts), checked by the evaluator (evaluator.ts, baseline.ts, restricted.ts) with
 * the server's defaults and exemptions (config.ts). In the validate phase:
 *
 *   Pod CREATE, and UPDATE that changes an image or adds a container
 *       enforce: 403 `pods "x" is forbidden: violates PodSecurity "restricted:latest":
 *                host namespaces (hostNetwork=true), ...`
 *       audit:   annotation pod-security.kubernetes.io/audit-violations
 *       warn:    `Warning: would violate PodSecurity "baseline:latest": ...` (not on a
 *                request that enforce refuses)
 *   pod templates (Deployment, ReplicaSet, ...; not their subresources): audit and warn
 *       only, so that a controller's pods, not the controller, are refused
 *   Namespace CREATE/UPDATE: invalid labels are 422 (an update only when it changes
 *       them); tightening the enforce level warns about the namespace's existing pods
 *       that would violate it (at most 3 000 pods looked at)
 *
 * Exempt usernames, namespaces and runtimeClasses are not evaluated (annotation
 * pod-security.kubernetes.io/exempt: user | namespace | runtimeClass); every evaluated
 * pod request is annotated with its enforce-policy. Pod subresources (status, binding,
 * eviction, ...) are never evaluated.
 */
import type { FieldError } from '../../../../api/meta/validation.js';
import { toStatusCauses } from '../../../../api/meta/validation.js';
import type { KubeObject, OwnerReference } from '../../../../api/object.js';
import { KUBERNETES_RELEASE } from '../../discovery.js';
import { internalError, invalid, newForbidden } from '../../status.js';
import type { AdmissionAttributes, AdmissionPlugin, AdmissionRecorder } from '../interfaces.js';
import { obj, str, type Obj, type PodParts } from './checks.js';
import { DEFAULT_POD_SECURITY, type PodSecuritySettings } from './config.js';
import { Evaluator, type AggregateResult } from './evaluator.js';
import {
  AUDIT_ANNOTATION_PREFIX,
  compareLevels,
  equivalent,
  fullyPrivileged,
  levelLabel,
  levelVersionString,
  MODES,
  policyToEvaluate,
  sameVersion,
  versionLabel,
  type LevelVersion,
  type Policy,
} from './policy.js';

/** What the plugin reads, and its settings. */
export interface PodSecurityConfig {
  /** The namespace `name`, or undefined when it does not exist. */
  getNamespace(name: string): Promise<KubeObject | undefined>;
  /** The pods of `namespace`. */
  listPods(namespace: string): Promise<KubeObject[]>;
  /** Defaults and exemptions; default: everything privileged, nothing exempt. */
  settings?: PodSecuritySettings;
  /** The newest policy version known; default the Kubernetes minor this server serves. */
  maxMinor?: number;
}

/** The resources whose objects carry a pod template (DefaultPodSpecExtractor), `group/resource`. */
const POD_TEMPLATE_RESOURCES = new Set([
  '/replicationcontrollers',
  '/podtemplates',
  'apps/replicasets',
  'apps/deployments',
  'apps/statefulsets',
  'apps/daemonsets',
  'batch/jobs',
  'batch/cronjobs',
]);

/** At most this many of a namespace's pods are checked when its enforce level tightens. */
const NAMESPACE_MAX_PODS_TO_CHECK = 3000;

/** The PodSecurity plugin over `cfg` (see the file comment). */
export function podSecurity(cfg: PodSecurityConfig): AdmissionPlugin {
  const settings = cfg.settings ?? DEFAULT_POD_SECURITY;
  const evaluator = new Evaluator(cfg.maxMinor ?? Number(KUBERNETES_RELEASE.minor));
  const exempt = settings.exemptions;
  const annotate = (out: AdmissionRecorder, key: string, value: string) =>
    out.annotate(`${AUDIT_ANNOTATION_PREFIX}${key}`, value);

  /** EvaluatePod: enforce (when `enforce`), audit and warn for one pod or template. */
  const evaluatePod = (
    policy: Policy,
    errors: FieldError[],
    pod: PodParts,
    a: AdmissionAttributes,
    out: AdmissionRecorder,
    enforce: boolean,
  ): void => {
    const runtimeClass = str(pod.spec.runtimeClassName);
    if (runtimeClass !== '' && exempt.runtimeClasses.includes(runtimeClass)) {
      annotate(out, 'exempt', 'runtimeClass');
      return;
    }
    if (errors.length > 0) annotate(out, 'error', `Failed to parse policy: ${aggregateErrors(errors)}`);
    const results: { lv: LevelVersion; result: AggregateResult }[] = [];
    const evaluate = (lv: LevelVersion): AggregateResult => {
      const cached = results.find((r) => r.lv.level === lv.level && sameVersion(r.lv.version, lv.version));
      if (cached) return cached.result;
      const result = evaluator.check(lv, pod);
      results.push({ lv, result });
      return result;
    };
    let refusal: string | undefined;
    if (enforce) {
      annotate(out, 'enforce-policy', levelVersionString(policy.enforce));
      const result = evaluate(policy.enforce);
      if (!result.allowed)
        refusal = `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${result.detail}`;
    }
    const audit = evaluate(policy.audit);
    if (!audit.allowed)
      annotate(
        out,
        'audit-violations',
        `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${audit.detail}`,
      );
    if (refusal !== undefined)
      throw newForbidden({ group: a.resource.group, resource: a.resource.resource, name: a.name }, refusal);
    const warn = evaluate(policy.warn);
    if (!warn.allowed)
      out.warn(
        `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${warn.detail}`,
      );
  };

  /** The policy of the namespace the write is in. */
  const namespacePolicy = async (namespace: string) => {
    const ns = await cfg.getNamespace(namespace);
    if (!ns) throw internalError(`failed to lookup namespace "${namespace}"`);
    return policyToEvaluate(ns.metadata?.labels, settings.defaults);
  };

  /**
   * The namespace's policy for a write of a pod or template, or undefined when none applies:
   * a subresource, or an exempt namespace or user (then annotated so).
   */
  const policyFor = async (a: AdmissionAttributes, out: AdmissionRecorder) => {
    if (a.subresource !== undefined) return undefined;
    const namespace = a.namespace ?? '';
    const exemption = exempt.namespaces.includes(namespace)
      ? 'namespace'
      : exempt.usernames.includes(a.user.name)
        ? 'user'
        : undefined;
    if (exemption) {
      annotate(out, 'exempt', exemption);
      return undefined;
    }
    return namespacePolicy(namespace);
  };

  const validatePod = async (a: AdmissionAttributes, out: AdmissionRecorder): Promise<void> => {
    const evaluated = await policyFor(a, out);
    if (!evaluated) return;
    const { policy, errors } = evaluated;
    if (errors.length === 0 && fullyPrivileged(policy))
      return annotate(out, 'enforce-policy', levelVersionString({ level: 'privileged', version: 'latest' }));
    if (a.operation === 'UPDATE' && !isSignificantPodUpdate(a.object, a.oldObject!)) return;
    evaluatePod(policy, errors, partsOf(a.object), a, out, true);
  };

  const validatePodTemplate = async (a: AdmissionAttributes, out: AdmissionRecorder): Promise<void> => {
    const evaluated = await policyFor(a, out);
    if (!evaluated) return;
    const { policy, errors } = evaluated;
    if (errors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged')
      return;
    const template = podTemplateOf(a.resource, a.object);
    if (!template) return;
    evaluatePod(policy, errors, template, a, out, false);
  };

  const validateNamespace = async (a: AdmissionAttributes, out: AdmissionRecorder): Promise<void> => {
    if (a.subresource !== undefined) return;
    const labels = a.object.metadata?.labels;
    const { policy, errors } = policyToEvaluate(labels, settings.defaults);
    const refuse = () =>
      invalid('Namespace', { group: '', resource: 'namespaces', name: a.name }, toStatusCauses(errors));
    const exemptWarning = () => {
      const w = exemptNamespaceWarning(a.name, policy, labels ?? {}, settings.defaults);
      if (w) out.warn(w);
    };
    if (a.operation === 'CREATE') {
      if (errors.length > 0) throw refuse();
      if (exempt.namespaces.includes(a.name)) exemptWarning();
      return;
    }
    const old = policyToEvaluate(a.oldObject!.metadata?.labels, settings.defaults);
    if (
      errors.length > 0 &&
      (old.errors.length === 0 || aggregateErrors(errors) !== aggregateErrors(old.errors))
    )
      throw refuse();
    // Nothing to check when enforce is unchanged, privileged, or relaxed at the same version.
    const [next, prev] = [policy.enforce, old.policy.enforce];
    if (next.level === prev.level && sameVersion(next.version, prev.version)) return;
    if (next.level === 'privileged') return;
    if (sameVersion(next.version, prev.version) && compareLevels(next.level, prev.level) < 1) return;
    if (exempt.namespaces.includes(a.name)) return exemptWarning();
    for (const w of evaluatePodsInNamespace(a.name, next, await cfg.listPods(a.name))) out.warn(w);
  };

  /** EvaluatePodsInNamespace: warnings about existing pods that violate `enforce`. */
  const evaluatePodsInNamespace = (
    namespace: string,
    enforce: LevelVersion,
    pods: KubeObject[],
  ): string[] => {
    const prioritized = prioritizePods(
      pods.filter((p) => !exempt.runtimeClasses.includes(runtimeClassOf(p))),
    );
    const checked = prioritized.slice(0, NAMESPACE_MAX_PODS_TO_CHECK);
    const byWarning = new Map<string, { podName: string; count: number }>();
    for (const pod of checked) {
      const r = evaluator.check(enforce, partsOf(pod));
      if (r.allowed) continue;
      const name = pod.metadata?.name ?? '';
      const seen = byWarning.get(r.reason);
      if (!seen) byWarning.set(r.reason, { podName: name, count: 1 });
      else {
        seen.count++;
        if (name < seen.podName) seen.podName = name;
      }
    }
    const warnings: string[] = [];
    if (checked.length < prioritized.length)
      warnings.push(
        `new PodSecurity enforce level only checked against the first ${checked.length} of ${prioritized.length} existing pods`,
      );
    if (byWarning.size > 0)
      warnings.push(
        `existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`,
      );
    const podWarnings = [...byWarning].map(([warning, { podName, count }]) =>
      count === 1
        ? `${podName}: ${warning}`
        : count === 2
          ? `${podName} (and 1 other pod): ${warning}`
          : `${podName} (and ${count - 1} other pods): ${warning}`,
    );
    return [...warnings, ...podWarnings.sort()];
  };

  return {
    name: 'PodSecurity',
    async validate(a: AdmissionAttributes, out: AdmissionRecorder): Promise<void> {
      const r = `${a.resource.group}/${a.resource.resource}`;
      if (r === '/namespaces') return validateNamespace(a, out);
      if (r === '/pods') return validatePod(a, out);
      if (POD_TEMPLATE_RESOURCES.has(r)) return validatePodTemplate(a, out);
    },
  };
}

/** A pod's parts to evaluate. */
function partsOf(pod: KubeObject): PodParts {
  return { metadata: obj(pod.metadata) ?? {}, spec: obj(pod.spec) ?? {} };
}

/** The pod template of a pod controller (a CronJob's is in its jobTemplate), or undefined. */
function podTemplateOf(r: { resource: string }, o: KubeObject): PodParts | undefined {
  const spec = obj(o.spec);
  const template =
    r.resource === 'podtemplates'
      ? obj((o as Obj).template)
      : r.resource === 'cronjobs'
        ? obj(obj(obj(spec?.jobTemplate)?.spec)?.template)
        : obj(spec?.template);
  return template ? { metadata: obj(template.metadata) ?? {}, spec: obj(template.spec) ?? {} } : undefined;
}

function runtimeClassOf(pod: KubeObject): string {
  return str(obj(pod.spec)?.runtimeClassName);
}

/**
 * isSignificantPodUpdate: an update is evaluated only when it adds or removes a container
 * or init container, changes an image, or adds or changes an ephemeral container's image
 * (the only pod fields that may change, as of Kubernetes 1.21, that a check looks at).
 */
function isSignificantPodUpdate(pod: KubeObject, old: KubeObject): boolean {
  const spec = obj(pod.spec) ?? {};
  const oldSpec = obj(old.spec) ?? {};
  const items = (s: Obj, key: string) =>
    (Array.isArray(s[key]) ? (s[key] as unknown[]) : []).map((c) => obj(c) ?? {});
  for (const key of ['containers', 'initContainers']) {
    const now = items(spec, key);
    const before = items(oldSpec, key);
    if (now.length !== before.length) return true;
    if (now.some((c, i) => str(c.image) !== str(before[i]!.image))) return true;
  }
  const before = items(oldSpec, 'ephemeralContainers');
  return items(spec, 'ephemeralContainers').some((c) => {
    const prev = before.find((o) => str(o.name) === str(c.name));
    return !prev || str(prev.image) !== str(c.image);
  });
}

/** prioritizePods: one pod of each controller first, then the rest, so a namespace of large ReplicaSets shows each. */
function prioritizePods(pods: KubeObject[]): KubeObject[] {
  const first: KubeObject[] = [];
  const duplicates: KubeObject[] = [];
  const seen = new Set<string>();
  for (const pod of pods) {
    const controller = (pod.metadata?.ownerReferences ?? []).find(
      (o: OwnerReference) => o.controller === true,
    );
    if (!controller) first.push(pod);
    else if (seen.has(controller.uid)) duplicates.push(pod);
    else {
      seen.add(controller.uid);
      first.push(pod);
    }
  }
  return [...first, ...duplicates];
}

/**
 * exemptNamespaceWarning: for an exempt namespace labelled with a policy that is neither
 * fully privileged nor the default, `namespace "x" is exempt from Pod Security, and the
 * policy (enforce=restricted:latest) will be ignored`; '' otherwise.
 */
function exemptNamespaceWarning(
  namespace: string,
  policy: Policy,
  labels: Readonly<Record<string, string>>,
  defaults: Policy,
): string {
  if (fullyPrivileged(policy) || MODES.every((m) => equivalent(policy[m], defaults[m]))) return '';
  const parts = MODES.filter(
    (m) =>
      policy[m].level !== 'privileged' &&
      (Object.hasOwn(labels, levelLabel(m)) || Object.hasOwn(labels, versionLabel(m))),
  ).map((m) => `${m}=${levelVersionString(policy[m])}`);
  return `namespace ${JSON.stringify(namespace)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`;
}

/** field.ErrorList.ToAggregate().Error(): one error, or `[a, b]`. */
function aggregateErrors(errors: FieldError[]): string {
  const texts = toStatusCauses(errors).map((c) => `${c.field}: ${c.message}`);
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
}
