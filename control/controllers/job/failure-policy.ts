/**
 * The Job's podFailurePolicy (Kubernetes' pkg/controller/job/pod_failure_policy.go): the
 * first rule matching a failed pod decides what its failure means. A rule matches on
 * container exit codes (`In` / `NotIn` a list; exit code 0 never matches) or on pod
 * conditions (type and status).
 */
import type { JobSpec, PodFailurePolicyRule } from '../../../api/batch.js';
import type { Pod } from '../../../api/types.js';

/** What a matched rule makes of a failed pod. */
export interface FailurePolicyMatch {
  action: PodFailurePolicyRule['action'];
  /** For FailJob: the Failed condition's message, in upstream's words. */
  message: string;
}

interface TerminatedState {
  name?: string;
  state?: { terminated?: { exitCode?: number } };
}

function matchExitCodes(pod: Pod, rule: PodFailurePolicyRule): string | undefined {
  const req = rule.onExitCodes;
  if (!req) return undefined;
  const statuses = [
    ...((pod.status?.initContainerStatuses as TerminatedState[] | undefined) ?? []),
    ...((pod.status?.containerStatuses as TerminatedState[] | undefined) ?? []),
  ];
  for (const cs of statuses) {
    if (req.containerName && cs.name !== req.containerName) continue;
    const code = cs.state?.terminated?.exitCode;
    if (code === undefined || code === 0) continue;
    const inList = req.values.includes(code);
    if (req.operator === 'In' ? inList : !inList) {
      return `Container ${cs.name ?? ''} for pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''} failed with exit code ${code}`;
    }
  }
  return undefined;
}

function matchConditions(pod: Pod, rule: PodFailurePolicyRule): string | undefined {
  for (const want of rule.onPodConditions ?? []) {
    const c = (pod.status?.conditions ?? []).find((x) => x.type === want.type);
    if (c && c.status === (want.status ?? 'True'))
      return `Pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''} has condition ${want.type}`;
  }
  return undefined;
}

/**
 * The first rule of `spec.podFailurePolicy` matching the failed `pod` (matchPodFailurePolicy),
 * with a message such as `Container main for pod default/x-abc failed with exit code 42
 * matching FailJob rule at index 1`; undefined when there is no policy or no rule matches
 * (the failure then counts against backoffLimit).
 */
export function matchPodFailurePolicy(spec: JobSpec, pod: Pod): FailurePolicyMatch | undefined {
  const rules = spec.podFailurePolicy?.rules ?? [];
  for (const [i, rule] of rules.entries()) {
    const why = matchExitCodes(pod, rule) ?? matchConditions(pod, rule);
    if (why !== undefined)
      return { action: rule.action, message: `${why} matching ${rule.action} rule at index ${i}` };
  }
  return undefined;
}
