/**
 * Pod (core/v1): Kubernetes' pkg/registry/core/pod/strategy.go, the Pod defaults of
 * pkg/apis/core/v1/defaults.go, ValidatePodCreate / ValidatePodUpdate /
 * ValidatePodStatusUpdate, and the defaults that Kubernetes' admission plugins add to
 * every new Pod (ServiceAccount, Priority, DefaultTolerationSeconds), since k8ts has no
 * separate admission chain for them.
 *
 * Pods have no `metadata.generation` here (Kubernetes 1.32 behaviour; generation tracking
 * of Pods arrived with PodObservedGenerationTracking in 1.33/1.34).
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  isDNS1123Subdomain,
  isQualifiedName,
  isIPv6String,
  isValidIP,
} from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { KindRules, KindStrategy, Obj } from './meta.js';
import {
  asObj,
  boolString,
  clone,
  defineStrategy,
  eachObj,
  isObj,
  list,
  num,
  problems,
  section,
  semanticEqual,
  str,
} from './meta.js';
import { podNameWarnings, podWarnings } from './podspec/warnings.js';
import { defaultPodSpec, podQOSClass, validatePodSpec } from './podspec/index.js';

/** The priorities of Kubernetes' built-in PriorityClasses (scheduling/v1). */
const SYSTEM_PRIORITIES: Readonly<Record<string, number>> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

/**
 * Settings of the admission defaults of new Pods, named as kube-apiserver's flags of the
 * DefaultTolerationSeconds plugin.
 */
export interface PodAdmissionConfig {
  /** --default-not-ready-toleration-seconds: tolerationSeconds of the added `node.kubernetes.io/not-ready` toleration; default 300. */
  defaultNotReadyTolerationSeconds?: number;
  /** --default-unreachable-toleration-seconds: tolerationSeconds of the added `node.kubernetes.io/unreachable` toleration; default 300. */
  defaultUnreachableTolerationSeconds?: number;
}

/** DefaultTolerationSeconds admission: 300 s for not-ready and unreachable nodes unless configured. */
const DEFAULT_TOLERATION_SECONDS = 300;
const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/**
 * What Kubernetes' admission plugins default on a new Pod:
 * - ServiceAccount: `serviceAccountName` (and the deprecated `serviceAccount`) `default`
 *   unless set (mirror pods excepted);
 * - Priority: `priority` 0 without a priorityClassName (no global default class exists
 *   in k8ts), the built-in system classes' values for theirs, and `preemptionPolicy`
 *   PreemptLowerPriority;
 * - DefaultTolerationSeconds: NoExecute tolerations of `node.kubernetes.io/not-ready`
 *   and `node.kubernetes.io/unreachable` for 300 s (or as `config` says), unless the pod
 *   already tolerates them.
 */
function admitPod(obj: KubeObject, config: PodAdmissionConfig): void {
  const spec = section(obj, 'spec');
  const mirror = obj.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined;
  if (!mirror && str(spec.serviceAccountName) === '' && str(spec.serviceAccount) === '') {
    spec.serviceAccountName = 'default';
    spec.serviceAccount = 'default';
  }
  if (spec.priority === undefined || spec.priority === null) {
    const cls = str(spec.priorityClassName);
    if (cls === '') spec.priority = 0;
    else if (Object.hasOwn(SYSTEM_PRIORITIES, cls)) spec.priority = SYSTEM_PRIORITIES[cls];
  }
  if (
    spec.priority !== undefined &&
    (spec.preemptionPolicy === undefined || spec.preemptionPolicy === null)
  ) {
    spec.preemptionPolicy = 'PreemptLowerPriority';
  }
  const tolerations = list(spec.tolerations).filter(isObj);
  const tolerates = (key: string): boolean =>
    tolerations.some(
      (t) =>
        (str(t.key) === key || str(t.key) === '') && (str(t.effect) === 'NoExecute' || str(t.effect) === ''),
    );
  const added: Obj[] = [];
  for (const [key, seconds] of [
    [NOT_READY, config.defaultNotReadyTolerationSeconds],
    [UNREACHABLE, config.defaultUnreachableTolerationSeconds],
  ] as const) {
    if (!tolerates(key)) {
      added.push({
        key,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: seconds ?? DEFAULT_TOLERATION_SECONDS,
      });
    }
  }
  if (added.length > 0) spec.tolerations = [...list(spec.tolerations), ...added];
}

/**
 * v1 conversion of IP pairs: `podIP`/`podIPs` (and `hostIP`/`hostIPs`) name the same
 * primary address. A singular value that disagrees with the list's first entry wins (for
 * old kubelets); a missing one is filled from the other.
 */
function normalizeStatusIPs(status: Obj): void {
  for (const [one, many] of [
    ['podIP', 'podIPs'],
    ['hostIP', 'hostIPs'],
  ] as const) {
    const single = str(status[one]);
    const ips = list(status[many]).filter(isObj);
    if (single !== '' && (ips.length === 0 || str(ips[0]!.ip) !== single)) status[many] = [{ ip: single }];
    else if (single === '' && ips.length > 0 && str(ips[0]!.ip) !== '') status[one] = str(ips[0]!.ip);
  }
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,' +
  '`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),' +
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** validateOnlyAddedTolerations: every old toleration is still there (tolerationSeconds may change). */
function onlyAddedTolerations(now: unknown, before: unknown): FieldError[] {
  const current = list(now).filter(isObj);
  for (const old of list(before).filter(isObj)) {
    const kept = current.some((t) => semanticEqual({ ...old, tolerationSeconds: t.tolerationSeconds }, t));
    if (!kept)
      return [
        forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'),
      ];
  }
  return [];
}

/**
 * ValidatePodUpdate's spec rules: containers may not be added or removed; only images,
 * activeDeadlineSeconds (set, or lowered; never removed), tolerations (additions, and
 * tolerationSeconds), terminationGracePeriodSeconds (negative → 1) and schedulingGates
 * (removals) may change; anything else is `spec: Forbidden: pod updates may not change
 * fields other than ...`. `spec.nodeName` may also go from unset to set (k8ts bound pods
 * through this path before its binding went below the strategy, as Kubernetes' does).
 */
function validatePodUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  for (const key of ['containers', 'initContainers']) {
    if (list(spec[key]).length !== list(oldSpec[key]).length) {
      return [forbidden(`spec.${key}`, 'pod updates may not add or remove containers')];
    }
  }
  const errs: FieldError[] = [];
  const deadline = num(spec.activeDeadlineSeconds);
  const oldDeadline = num(oldSpec.activeDeadlineSeconds);
  if (deadline !== undefined) {
    if (deadline < 0 || deadline > 2147483647) {
      return [invalid('spec.activeDeadlineSeconds', deadline, 'must be between 0 and 2147483647, inclusive')];
    }
    if (oldDeadline !== undefined && oldDeadline < deadline) {
      return [
        invalid('spec.activeDeadlineSeconds', deadline, 'must be less than or equal to previous value'),
      ];
    }
  } else if (oldDeadline !== undefined) {
    errs.push(
      invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'),
    );
  }
  errs.push(...onlyAddedTolerations(spec.tolerations, oldSpec.tolerations));

  // Copy the mutable fields from the old spec; what still differs was not allowed to change.
  const munged = clone(spec);
  for (const key of ['containers', 'initContainers']) {
    const before = list(oldSpec[key]);
    list(munged[key]).forEach((c, i) => {
      const oc = before[i];
      if (isObj(c) && isObj(oc)) c.image = oc.image;
    });
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.tolerations = oldSpec.tolerations;
  const grace = num(spec.terminationGracePeriodSeconds);
  const oldGrace = num(oldSpec.terminationGracePeriodSeconds);
  if (oldGrace !== undefined && oldGrace < 0 && grace === 1) munged.terminationGracePeriodSeconds = oldGrace;
  const gates = list(spec.schedulingGates);
  if (gates.every((g) => list(oldSpec.schedulingGates).some((o) => semanticEqual(o, g)))) {
    munged.schedulingGates = oldSpec.schedulingGates;
  }
  if (str(oldSpec.nodeName) === '') munged.nodeName = oldSpec.nodeName;
  if (!semanticEqual(munged, oldSpec)) {
    const changed = Object.keys({ ...munged, ...oldSpec }).filter(
      (k) => !semanticEqual(munged[k], oldSpec[k]),
    );
    errs.push(
      forbidden('spec', `${POD_UPDATE_FORBIDDEN}\n  changed: ${changed.map((k) => `spec.${k}`).join(', ')}`),
    );
  }
  return errs;
}

const TERMINATED_FOR_GOOD = new Set(['Never']);

/**
 * ValidatePodStatusUpdate: `spec.nodeName` unchanged (`status.nodeName: Forbidden: may not
 * be changed directly`), nominatedNodeName a DNS subdomain, custom condition types
 * qualified names, pod and host IPs valid (one per family, no duplicates), and containers
 * of a `restartPolicy: Never` pod never leave the terminated state.
 */
function validatePodStatus(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const status = asObj(obj.status) ?? {};
  const oldStatus = asObj(old.status) ?? {};
  if (str(asObj(obj.spec)?.nodeName) !== str(asObj(old.spec)?.nodeName)) {
    errs.push(forbidden('status.nodeName', 'may not be changed directly'));
  }
  const nominated = str(status.nominatedNodeName);
  if (nominated !== '' && nominated !== str(oldStatus.nominatedNodeName)) {
    errs.push(...problems('status.nominatedNodeName', nominated, isDNS1123Subdomain(nominated)));
  }
  eachObj(status.conditions, (c, i) => {
    const type = str(c.type);
    if (['PodScheduled', 'Ready', 'Initialized'].includes(type)) return;
    errs.push(...problems(childPath(indexPath('status.conditions', i), 'type'), type, isQualifiedName(type)));
  });
  for (const key of ['podIPs', 'hostIPs']) {
    const path = `status.${key}`;
    const ips = list(status[key])
      .filter(isObj)
      .map((x) => str(x.ip));
    ips.forEach((ip, i) => errs.push(...isValidIP(indexPath(path, i), ip)));
    if (ips.length > 1) {
      const v6 = ips.filter(isIPv6String).length;
      if (ips.length > 2 || v6 !== 1) {
        errs.push(invalid(path, status[key], 'may specify no more than one IP for each IP family'));
      }
      ips.forEach((ip, i) => {
        if (ips.indexOf(ip) !== i) errs.push(duplicate(indexPath(path, i), { ip }));
      });
    }
  }
  const restartPolicy = str(asObj(old.spec)?.restartPolicy);
  for (const key of ['containerStatuses', 'initContainerStatuses']) {
    const before = new Map(
      list(oldStatus[key])
        .filter(isObj)
        .map((c) => [str(c.name), c] as const),
    );
    eachObj(status[key], (c, i) => {
      const prev = before.get(str(c.name));
      const wasTerminated = isObj(asObj(prev?.state)?.terminated);
      const exitCode = num(asObj(asObj(prev?.state)?.terminated)?.exitCode) ?? 0;
      const final =
        TERMINATED_FOR_GOOD.has(restartPolicy) || (restartPolicy === 'OnFailure' && exitCode === 0);
      if (key === 'containerStatuses' && wasTerminated && final && !isObj(asObj(c.state)?.terminated)) {
        errs.push(
          forbidden(
            childPath(indexPath(`status.${key}`, i), 'state'),
            'may not be transitioned to non-terminated state',
          ),
        );
      }
    });
  }
  return errs;
}

/**
 * The Pod strategy: status starts as `{phase: Pending, qosClass}` (plus the
 * SchedulingGated condition when schedulingGates are set), is kept on updates and is
 * the only thing a status write changes (besides metadata; ownerReferences stay, and an
 * empty qosClass is backfilled). Field selectors: spec.nodeName, spec.restartPolicy,
 * spec.schedulerName, spec.serviceAccountName, spec.hostNetwork, status.phase,
 * status.podIP (the first of podIPs), status.nominatedNodeName. `prepareForCreate` is
 * added by podStrategyWith (it depends on the admission settings).
 */
const POD_RULES: Omit<KindRules, 'prepareForCreate'> = {
  namespaced: true,
  // Its storage.go sets ReturnDeletedObject: a DELETE answers with the object.
  returnDeletedObject: true,
  initialStatus(obj) {
    const spec = asObj(obj.spec) ?? {};
    const status: Obj = { phase: 'Pending', qosClass: podQOSClass(spec) };
    if (list(spec.schedulingGates).length > 0) {
      status.conditions = [
        {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime: null,
          reason: 'SchedulingGated',
          message: 'Scheduling is blocked due to non-empty scheduling gates',
        },
      ];
    }
    return status;
  },
  prepareForStatusUpdate(obj, old) {
    const meta = (obj.metadata ??= {});
    if (old.metadata?.ownerReferences) meta.ownerReferences = clone(old.metadata.ownerReferences);
    else delete meta.ownerReferences;
    const status = isObj(obj.status) ? obj.status : (obj.status = {});
    if (str(status.qosClass) === '') {
      const qos = asObj(old.status)?.qosClass;
      if (qos !== undefined) status.qosClass = qos;
    }
    normalizeStatusIPs(status);
  },
  defaults(obj) {
    defaultPodSpec(section(obj, 'spec'), true);
    if (isObj(obj.status)) normalizeStatusIPs(obj.status);
  },
  validate(obj, create) {
    return validatePodSpec(asObj(obj.spec) ?? {}, 'spec', { create });
  },
  validateUpdate: validatePodUpdate,
  validateStatusUpdate: validatePodStatus,
  // As upstream's podStrategy: warnings on create only (none on update, "since humans don't
  // typically interact directly with pods").
  warningsOnCreate: (obj) => [...podNameWarnings(obj.metadata?.name), ...podWarnings(obj)],
  fields(obj) {
    const spec = asObj(obj.spec) ?? {};
    const status = asObj(obj.status) ?? {};
    const podIPs = list(status.podIPs).filter(isObj);
    return {
      'spec.nodeName': str(spec.nodeName),
      'spec.restartPolicy': str(spec.restartPolicy),
      'spec.schedulerName': str(spec.schedulerName),
      'spec.serviceAccountName': str(spec.serviceAccountName),
      'spec.hostNetwork': boolString(spec.hostNetwork),
      'status.phase': str(status.phase),
      'status.podIP': podIPs.length > 0 ? str(podIPs[0]!.ip) : str(status.podIP),
      'status.nominatedNodeName': str(status.nominatedNodeName),
    };
  },
};

/**
 * The Pod strategy with `admission` as the settings of the defaults admitPod adds to new
 * Pods (DefaultTolerationSeconds); `{}` gives kube-apiserver's defaults.
 */
export function podStrategyWith(admission: PodAdmissionConfig = {}): KindStrategy {
  return defineStrategy({ ...POD_RULES, prepareForCreate: (obj) => admitPod(obj, admission) });
}

/** The Pod strategy with kube-apiserver's default admission settings. */
export const podStrategy: KindStrategy = podStrategyWith();
