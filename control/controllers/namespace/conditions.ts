/**
 * The conditions a terminating Namespace carries while the namespace controller empties
 * it (Kubernetes' pkg/controller/namespace/deletion/status_condition_utils.go): always all
 * five, `False` when fine, `True` with a reason and message when something is wrong or
 * left. `kubectl describe ns` shows them.
 */
import type { Condition } from '../../../api/types.js';

/** Condition types, in the order Kubernetes writes them. */
export const NAMESPACE_CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

export type NamespaceConditionType = (typeof NAMESPACE_CONDITION_TYPES)[number];

/** The `False` (all is well) form of each condition: reason and message, as Kubernetes words them. */
const OK: Record<NamespaceConditionType, { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: {
    reason: 'ResourcesDiscovered',
    message: 'All resources successfully discovered',
  },
  NamespaceDeletionGroupVersionParsingFailure: {
    reason: 'ParsedGroupVersions',
    message: 'All legacy kube types successfully parsed',
  },
  NamespaceDeletionContentFailure: {
    reason: 'ContentDeleted',
    message: 'All content successfully deleted, may be waiting on finalization',
  },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: {
    reason: 'ContentHasNoFinalizers',
    message: 'All content-preserving finalizers finished',
  },
};

/** What one deletion pass found wrong: per condition type, a `True` condition's reason and message. */
export type NamespaceProblems = Partial<Record<NamespaceConditionType, { reason: string; message: string }>>;

/**
 * The conditions after a pass: every type present, `True` for the problems, `False`
 * otherwise. `lastTransitionTime` is kept from `current` while the status stays the same
 * (and set to `now`, an RFC 3339 string, when it changes).
 */
export function namespaceConditions(
  current: readonly Condition[] | undefined,
  problems: NamespaceProblems,
  now: string,
): Condition[] {
  return NAMESPACE_CONDITION_TYPES.map((type) => {
    const problem = problems[type];
    const status = problem ? 'True' : 'False';
    const { reason, message } = problem ?? OK[type];
    const prev = current?.find((c) => c.type === type);
    const lastTransitionTime =
      prev && prev.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
    return { type, status, lastTransitionTime, reason, message };
  });
}

/** True when two condition lists say the same (ignoring transition times). */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[]): boolean {
  if (!a || a.length !== b.length) return false;
  return b.every((c, i) => {
    const o = a[i]!;
    return o.type === c.type && o.status === c.status && o.reason === c.reason && o.message === c.message;
  });
}
