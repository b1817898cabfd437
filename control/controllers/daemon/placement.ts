/**
 * Which nodes a DaemonSet's pod belongs on, and what its pods look like (Kubernetes'
 * pkg/controller/daemon NodeShouldRunDaemonPod and predicates, daemon/util
 * CreatePodTemplate, AddOrUpdateDaemonPodTolerations, ReplaceDaemonSetPodNodeNameNodeAffinity
 * and GetTargetNodeName). Pure functions.
 *
 * A node should run the daemon pod when the template's nodeName (if any) is the node, the
 * nodeSelector and required node affinity match it, and every NoSchedule/NoExecute taint is
 * tolerated by the template's tolerations plus the DaemonSet defaults. A pod already there
 * may keep running when only NoSchedule taints are untolerated.
 */
import type { Node, NodeAffinity, Pod, PodSpec, PodTemplateSpec, Toleration } from '../../../api/types.js';
import {
  TAINT_NODE_DISK_PRESSURE,
  TAINT_NODE_MEMORY_PRESSURE,
  TAINT_NODE_NETWORK_UNAVAILABLE,
  TAINT_NODE_NOT_READY,
  TAINT_NODE_PID_PRESSURE,
  TAINT_NODE_UNREACHABLE,
  TAINT_NODE_UNSCHEDULABLE,
  findMatchingUntoleratedTaint,
} from '../../../api/taints.js';
import { fits } from '../../scheduler/plugins/nodeaffinity/node-selector.js';

/** The label of the ControllerRevision hash on pods and revisions (apps.DefaultDaemonSetUniqueLabelKey). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
/** The label of the template generation a pod was made from (extensions.DaemonSetTemplateGenerationKey). */
export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/**
 * The tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations): not-ready and
 * unreachable NoExecute without tolerationSeconds (it stays through node failures),
 * disk-, memory- and pid-pressure and unschedulable NoSchedule, and network-unavailable
 * NoSchedule for hostNetwork pods.
 */
export function daemonPodTolerations(hostNetwork: boolean): Toleration[] {
  const t = (key: string, effect: 'NoSchedule' | 'NoExecute'): Toleration => ({
    key,
    operator: 'Exists',
    effect,
  });
  return [
    t(TAINT_NODE_NOT_READY, 'NoExecute'),
    t(TAINT_NODE_UNREACHABLE, 'NoExecute'),
    t(TAINT_NODE_DISK_PRESSURE, 'NoSchedule'),
    t(TAINT_NODE_MEMORY_PRESSURE, 'NoSchedule'),
    t(TAINT_NODE_PID_PRESSURE, 'NoSchedule'),
    t(TAINT_NODE_UNSCHEDULABLE, 'NoSchedule'),
    ...(hostNetwork ? [t(TAINT_NODE_NETWORK_UNAVAILABLE, 'NoSchedule')] : []),
  ];
}

/** Toleration.MatchToleration: same key, operator, value and effect. */
function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '')
  );
}

/**
 * `spec` with the DaemonSet default tolerations added (AddOrUpdateTolerationInPodSpec: a
 * toleration matching one already there replaces it; the others are appended). Mutates and
 * returns `spec`.
 */
export function addDaemonPodTolerations(spec: PodSpec): PodSpec {
  const tolerations = [...(spec.tolerations ?? [])];
  for (const t of daemonPodTolerations(spec.hostNetwork === true)) {
    const i = tolerations.findIndex((x) => sameToleration(x, t));
    if (i >= 0) tolerations[i] = t;
    else tolerations.push(t);
  }
  spec.tolerations = tolerations;
  return spec;
}

/** What NodeShouldRunDaemonPod answers. */
export interface NodePlacement {
  /** A daemon pod should be created on the node. */
  shouldRun: boolean;
  /** A daemon pod already on the node may stay (only NoSchedule taints are untolerated). */
  shouldContinueRunning: boolean;
}

/**
 * NodeShouldRunDaemonPod: see the file comment. `tolerations` are the template's with the
 * defaults added (daemonTolerations() of the DaemonSet, computed once per sync).
 */
export function nodeShouldRunDaemonPod(
  node: Node,
  template: PodTemplateSpec,
  tolerations: readonly Toleration[],
): NodePlacement {
  const name = node.metadata.name ?? '';
  const wanted = template.spec.nodeName;
  if (wanted && wanted !== name) return { shouldRun: false, shouldContinueRunning: false };
  const probe = { metadata: template.metadata ?? {}, spec: template.spec } as Pod;
  if (!fits(probe, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints = node.spec?.taints;
  const untolerated = findMatchingUntoleratedTaint(
    taints,
    tolerations,
    (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute',
  );
  if (!untolerated) return { shouldRun: true, shouldContinueRunning: true };
  const noExecute = findMatchingUntoleratedTaint(taints, tolerations, (t) => t.effect === 'NoExecute');
  return { shouldRun: false, shouldContinueRunning: noExecute === undefined };
}

/** The template's tolerations plus the DaemonSet defaults (what its pods will carry). */
export function daemonTolerations(template: PodTemplateSpec): Toleration[] {
  return addDaemonPodTolerations({ ...template.spec, tolerations: [...(template.spec.tolerations ?? [])] })
    .tolerations!;
}

/**
 * The template the daemon pods are made from (CreatePodTemplate): a copy with the
 * `pod-template-generation` label (when `generation` is known), the
 * `controller-revision-hash` label (when `hash` is not empty) and the default tolerations.
 */
export function createPodTemplate(
  template: PodTemplateSpec,
  generation: number | undefined,
  hash: string,
): PodTemplateSpec {
  const copy = structuredClone(template);
  const labels = { ...copy.metadata?.labels };
  if (generation !== undefined) labels[POD_TEMPLATE_GENERATION_LABEL] = String(generation);
  if (hash !== '') labels[CONTROLLER_REVISION_HASH_LABEL] = hash;
  copy.metadata = { ...copy.metadata, labels };
  addDaemonPodTolerations(copy.spec);
  return copy;
}

/**
 * `affinity` with its required node affinity replaced by the one term
 * `matchFields: metadata.name In [nodeName]` (ReplaceDaemonSetPodNodeNameNodeAffinity):
 * the default scheduler then binds the pod to that node. Preferred terms and pod
 * (anti-)affinity are kept. Does not mutate `affinity`.
 */
export function replaceNodeNameAffinity(
  affinity: PodSpec['affinity'],
  nodeName: string,
): NonNullable<PodSpec['affinity']> {
  const required = {
    nodeSelectorTerms: [
      { matchFields: [{ key: 'metadata.name', operator: 'In' as const, values: [nodeName] }] },
    ],
  };
  const nodeAffinity: NodeAffinity = {
    ...affinity?.nodeAffinity,
    requiredDuringSchedulingIgnoredDuringExecution: required,
  };
  return { ...affinity, nodeAffinity };
}

/**
 * The node a daemon pod is for (GetTargetNodeName): spec.nodeName once bound, else the one
 * value of its `metadata.name In [...]` matchFields term; undefined when it has neither.
 */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  const terms =
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const f of term.matchFields ?? []) {
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
    }
  }
  return undefined;
}

/**
 * An IntOrString against `total` (intstr.GetScaledValueFromIntOrPercent, rounding up):
 * `'25%'` of 10 → 3, `2` → 2; anything else → 0.
 */
export function scaledValue(v: number | string | undefined, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^([0-9]+)%$/.exec(v ?? '');
  return m ? Math.ceil((Number(m[1]) * total) / 100) : 0;
}
