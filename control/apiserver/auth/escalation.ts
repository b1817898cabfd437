/**
 * RBAC escalation prevention (pkg/registry/rbac: the policy-based Role and binding
 * storage, and validation's ConfirmNoEscalation / Covers): a user may write a Role or
 * ClusterRole only with rules they hold themselves, and bind a role only when they hold
 * all of its rules — unless they may `escalate` roles (for role writes) or `bind` that
 * role (for binding writes), or are in `system:masters`. A ClusterRole with an
 * `aggregationRule` (it could gather anything) needs `*` on everything.
 *
 * "Hold" is literal, as in Kubernetes: each requested rule is broken down into single
 * (group, resource, verb, resourceName) or (URL, verb) rules, and each of those must be
 * covered by one rule the user has. A rule covers a broken-down rule exactly when the
 * authorizer's ruleAllows() would allow the request that rule describes — a requested
 * `*` is then covered only by a held `*`, `* /status` covers every status, a rule without
 * resourceNames covers any names, one with resourceNames only a request among them.
 */
import type { KubeObject } from '../../../api/object.js';
import type { Attributes } from './authz.js';
import { ruleAllows, type PolicyRule } from './rbac.js';
import type { UserInfo } from '../../../api/auth/user.js';

/** `rule` as single-verb, single-resource (or single-URL), single-name rules (BreakdownRule). */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        for (const name of names)
          out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

const NOBODY: UserInfo = { name: '', groups: [] };

/** The request a broken-down rule describes (`pods/log` → resource pods, subresource log). */
function requestOf(sub: PolicyRule): Attributes {
  const verb = sub.verbs![0]!;
  if (sub.nonResourceURLs)
    return { user: NOBODY, verb, resourceRequest: false, path: sub.nonResourceURLs[0]! };
  const combined = sub.resources![0]!;
  const slash = combined.indexOf('/');
  return {
    user: NOBODY,
    verb,
    resourceRequest: true,
    group: sub.apiGroups![0]!,
    resource: slash < 0 ? combined : combined.slice(0, slash),
    ...(slash < 0 ? {} : { subresource: combined.slice(slash + 1) }),
    ...(sub.resourceNames ? { name: sub.resourceNames[0]! } : {}),
  };
}

/**
 * The parts of `requested` that no rule of `owned` covers (Covers' uncovered rules),
 * broken down; empty when `owned` holds everything requested.
 */
export function uncoveredRules(owned: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  return requested.flatMap(breakdownRule).filter((sub) => {
    const request = requestOf(sub);
    return !owned.some((o) => ruleAllows(request, o));
  });
}

/** The rules that amount to everything: what an aggregationRule needs (fullAuthority). */
export const FULL_AUTHORITY: readonly PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/**
 * Broken-down rules merged per (group, resource, name), their verbs in order
 * (CompactRules); rules over URLs stay as they are.
 */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, PolicyRule>();
  const others: PolicyRule[] = [];
  for (const r of rules) {
    if (r.nonResourceURLs?.length || r.apiGroups?.length !== 1 || r.resources?.length !== 1) {
      others.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0], r.resourceNames ?? []]);
    const into = merged.get(key);
    if (into) into.verbs = [...(into.verbs ?? []), ...(r.verbs ?? [])];
    else merged.set(key, { ...r, verbs: [...(r.verbs ?? [])] });
  }
  return [...others, ...merged.values()];
}

/**
 * A rule as Kubernetes prints it in escalation errors (CompactString):
 * `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`.
 */
export function formatRule(rule: PolicyRule): string {
  const list = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${list(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${list(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${list(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${list(rule.resourceNames)}`);
  if (rule.verbs?.length) parts.push(`Verbs:${list(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/**
 * Why granting `uncovered` is refused, as ConfirmNoEscalation words it (the text after
 * `<resource> "<name>" is forbidden: `): the rules compacted, one per line, sorted.
 */
export function escalationMessage(user: UserInfo, uncovered: readonly PolicyRule[]): string {
  const groups = user.groups.map((g) => JSON.stringify(g)).join(' ');
  const lines = [...new Set(compactRules(uncovered).map(formatRule))].sort();
  return `user ${JSON.stringify(user.name)} (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
}

/**
 * Whether a write only changes what the garbage collector changes (ownerReferences and
 * finalizers; IsOnlyMutatingGCFields): such writes are not checked for escalation, so the
 * GC and finalizer owners can always clear them.
 */
export function onlyGCFieldsChanged(obj: KubeObject, old: KubeObject): boolean {
  const normalized = (o: KubeObject) => {
    const {
      ownerReferences: _o,
      finalizers: _f,
      resourceVersion: _r,
      managedFields: _m,
      ...meta
    } = o.metadata ?? {};
    return JSON.stringify({ ...o, metadata: meta }, (_, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
          )
        : v,
    );
  };
  return normalized(obj) === normalized(old);
}
