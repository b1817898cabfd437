/**
 * Matching nodes against a pod's `nodeSelector` and node affinity terms
 * (k8s.io/component-helpers/scheduling/corev1/nodeaffinity): the pure part of the
 * NodeAffinity plugin.
 *
 * - `nodeSelector`: every key=value must be a label of the node.
 * - required terms (`requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`): the
 *   terms are ORed; inside a term, every matchExpression (on labels) and every matchField
 *   (only `metadata.name`) must hold. A term with neither matches nothing.
 * - operators: In, NotIn (an absent label satisfies NotIn), Exists, DoesNotExist, and Gt/Lt
 *   comparing the label and the single value as integers.
 */
import { requirementMatches } from '../../../../api/meta/labels.js';
import type { LabelRequirement, SelectionOperator } from '../../../../api/meta/labels.js';
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from '../../../../api/types.js';

const operators: Readonly<Record<NodeSelectorRequirement['operator'], SelectionOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
  Gt: 'gt',
  Lt: 'lt',
};

function requirementHolds(
  r: NodeSelectorRequirement,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const operator = operators[r.operator];
  if (!operator) return false;
  const req: LabelRequirement = { key: r.key, operator, values: r.values ?? [] };
  return requirementMatches(req, labels);
}

/** Whether one NodeSelectorTerm holds for `node`. */
export function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels;
  for (const e of exprs) if (!requirementHolds(e, labels)) return false;
  for (const f of fields) {
    // metadata.name is the only field Kubernetes supports here; anything else matches nothing.
    if (f.key !== 'metadata.name' || (f.operator !== 'In' && f.operator !== 'NotIn')) return false;
    if (!requirementHolds(f, { 'metadata.name': node.metadata.name ?? '' })) return false;
  }
  return true;
}

/** Whether `pod`'s nodeSelector and required node affinity both accept `node` (GetRequiredNodeAffinity(pod).Match). */
export function fits(pod: Pod, node: Node): boolean {
  const selector = pod.spec.nodeSelector;
  if (selector) {
    const labels = node.metadata.labels ?? {};
    for (const key in selector) if (labels[key] !== selector[key]) return false;
  }
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required) return (required.nodeSelectorTerms ?? []).some((t) => termMatches(t, node));
  return true;
}

/** The sum of the weights of `pod`'s preferred node affinity terms that `node` matches. */
export function preferredScore(pod: Pod, node: Node): number {
  let sum = 0;
  for (const p of pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
    if (p.weight !== 0 && termMatches(p.preference, node)) sum += p.weight;
  }
  return sum;
}
