/**
 * RBAC escalation prevention (pkg/registry/rbac: the policy-based Role and binding
 * storage, and validation's ConfirmNoEscalation / Covers): a user may write a Role or
 * ClusterRole only with rules they hold themselves, and bind a role only when they hold
 * all of its rules — unless they may `escalate` roles (for role writes) or `bind` that
 * role (for binding writes), or are in `system:masters`.
 *
 * "Hold" is literal, as in Kubernetes: each requested rule is broken down into single
 * (group, resource, verb, resourceName) or (URL, verb) rules, and each of those must be
 * covered by one rule the user has: `*` covers anything in its list, `pods/*` and
 * `* /status` cover subresources, a rule without resourceNames covers every name, and a
 * rule with resourceNames covers only a requested rule with names among them.
 */
import type { PolicyRule } from './rbac.js';
import type { UserInfo } from './user.js';

const has = (list: readonly string[] | undefined, v: string) => !!list && list.includes(v);
const hasAll = (list: readonly string[] | undefined, want: readonly string[] | undefined) =>
  (want ?? []).every((v) => has(list, v));

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

/** Whether `owned` (a user's resources) covers the one resource `wanted` (`pods`, `pods/log`). */
function resourceCovers(owned: readonly string[], wanted: string): boolean {
  if (owned.includes('*') || owned.includes(wanted)) return true;
  const slash = wanted.indexOf('/');
  if (slash < 0) return false;
  return owned.includes(`*${wanted.slice(slash)}`) || owned.includes(`${wanted.slice(0, slash)}/*`);
}

/** Whether `owned` (a user's non-resource URLs) covers the URL `wanted`. */
function urlCovers(owned: readonly string[], wanted: string): boolean {
  return owned.some(
    (u) => u === '*' || u === wanted || (u.endsWith('*') && wanted.startsWith(u.slice(0, -1))),
  );
}

/** Whether one of the user's rules covers a broken-down rule (ruleCovers). */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = (sub.resources ?? []).every((r) => resourceCovers(owner.resources ?? [], r));
  const urls = (sub.nonResourceURLs ?? []).every((u) => urlCovers(owner.nonResourceURLs ?? [], u));
  const ownerNames = owner.resourceNames ?? [];
  const names =
    (sub.resourceNames ?? []).length === 0
      ? ownerNames.length === 0
      : ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames);
  return verbs && groups && resources && urls && names;
}

/**
 * The parts of `requested` that no rule of `owned` covers (Covers' uncovered rules),
 * broken down; empty when `owned` holds everything requested.
 */
export function uncoveredRules(owned: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  return requested.flatMap(breakdownRule).filter((sub) => !owned.some((o) => ruleCovers(o, sub)));
}

/** A rule as Kubernetes prints it in escalation errors: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function formatRule(rule: PolicyRule): string {
  const list = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${list(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${list(rule.resources)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${list(rule.resourceNames)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${list(rule.nonResourceURLs)}`);
  parts.push(`Verbs:${list(rule.verbs ?? [])}`);
  return `{${parts.join(', ')}}`;
}

/**
 * Why granting `uncovered` is refused, as ConfirmNoEscalation words it (the text after
 * `<resource> "<name>" is forbidden: `).
 */
export function escalationMessage(user: UserInfo, uncovered: readonly PolicyRule[]): string {
  const groups = user.groups.map((g) => JSON.stringify(g)).join(' ');
  return `user ${JSON.stringify(user.name)} (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${uncovered.map(formatRule).join('\n')}`;
}
