/**
 * The RBAC authorizer (plugin/pkg/auth/authorizer/rbac): a request is allowed when a
 * ClusterRoleBinding, or a RoleBinding in the request's namespace, binds the user (by
 * name, or one of its groups; ServiceAccount subjects by their user name
 * `system:serviceaccount:<ns>:<name>`) to a Role or ClusterRole with a rule that covers
 * it. RBAC only allows: no rule denies.
 *
 * Rule matching (rbac/v1 helpers: VerbMatches, APIGroupMatches, ResourceMatches,
 * ResourceNameMatches, NonResourceURLMatches): `*` matches any verb, group or resource;
 * a resource `pods/status` names a subresource and `*` + `/scale` any resource's scale
 * (a `pods/` + `*` is a literal that matches nothing, as in Kubernetes); `resourceNames`
 * restrict to those names (never
 * matching a request without a name, such as list or create); non-resource URLs match
 * exactly or by a trailing `*` prefix.
 */
import type { KubeObject } from '../../../api/object.js';
import { ALLOW, NO_OPINION, type Attributes, type Authorizer } from './authz.js';
import type { UserInfo } from '../../../api/auth/user.js';

/** An rbac/v1 PolicyRule. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** An rbac/v1 Subject. */
export interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
  apiGroup?: string;
}

/** Where the authorizer reads RBAC objects from (the API server's registries). */
export interface RbacSource {
  clusterRoleBindings(): Promise<KubeObject[]>;
  roleBindings(namespace: string): Promise<KubeObject[]>;
  clusterRole(name: string): Promise<KubeObject | undefined>;
  role(namespace: string, name: string): Promise<KubeObject | undefined>;
}

const has = (list: readonly string[] | undefined, v: string) =>
  !!list && (list.includes('*') || list.includes(v));

/**
 * Whether one rule allows the request. (The escalation check reuses it: a rule covers a
 * broken-down rule exactly when it allows the request that rule describes.)
 */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.resourceRequest) {
    const path = a.path ?? '';
    return (rule.nonResourceURLs ?? []).some(
      (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
    );
  }
  if (!has(rule.apiGroups, a.group ?? '')) return false;
  const resources = rule.resources ?? [];
  const resource = a.resource ?? '';
  const combined = a.subresource ? `${resource}/${a.subresource}` : resource;
  const resourceOK = resources.some(
    (r) => r === '*' || r === combined || (!!a.subresource && r === `*/${a.subresource}`),
  );
  if (!resourceOK) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (a.name !== undefined && a.name !== '' && names.includes(a.name));
}

/** Whether a binding subject is this user (User/Group by name, ServiceAccount by its user name). */
export function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string | undefined): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.name;
    case 'Group':
      return s.name !== undefined && user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return user.name === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

/** The `rules` of a Role or ClusterRole (none when absent or malformed). */
export function rulesOf(role: KubeObject | undefined): PolicyRule[] {
  return Array.isArray(role?.rules) ? (role.rules as PolicyRule[]) : [];
}

function bindsUser(binding: KubeObject, user: UserInfo): boolean {
  const subjects = Array.isArray(binding.subjects) ? (binding.subjects as Subject[]) : [];
  return subjects.some((s) => subjectMatches(s, user, binding.metadata?.namespace));
}

/**
 * The rules that apply to `user` in `namespace` (cluster-wide ones only when undefined),
 * as RBAC's RulesFor: what SelfSubjectRulesReview and the authorizer both read.
 */
export async function rulesFor(
  src: RbacSource,
  user: UserInfo,
  namespace: string | undefined,
): Promise<PolicyRule[]> {
  const rules: PolicyRule[] = [];
  for (const b of await src.clusterRoleBindings()) {
    if (!bindsUser(b, user)) continue;
    const ref = (b.roleRef ?? {}) as { kind?: string; name?: string };
    if (ref.kind === 'ClusterRole' && ref.name) rules.push(...rulesOf(await src.clusterRole(ref.name)));
  }
  if (namespace) {
    for (const b of await src.roleBindings(namespace)) {
      if (!bindsUser(b, user)) continue;
      const ref = (b.roleRef ?? {}) as { kind?: string; name?: string };
      if (!ref.name) continue;
      if (ref.kind === 'ClusterRole') rules.push(...rulesOf(await src.clusterRole(ref.name)));
      else if (ref.kind === 'Role') rules.push(...rulesOf(await src.role(namespace, ref.name)));
    }
  }
  return rules;
}

/**
 * The RBAC authorizer over `src`: allow when a bound rule covers the request, else no opinion.
 * With `confirm`, a request that `src` does not allow is decided again over `confirm`: `src`
 * is then the watch caches (upstream's authorizer reads informers) and `confirm` the store,
 * so a binding made a moment ago, not yet in a cache, still counts (read after write) while
 * the requests that are allowed, nearly all, read nothing from the store.
 */
export function rbacAuthorizer(src: RbacSource, confirm?: RbacSource): Authorizer {
  const allows = async (from: RbacSource, a: Attributes) =>
    (await rulesFor(from, a.user, a.resourceRequest ? a.namespace : undefined)).some((r) => ruleAllows(a, r));
  return {
    async authorize(a) {
      if (await allows(src, a)) return ALLOW;
      return confirm && (await allows(confirm, a)) ? ALLOW : NO_OPINION;
    },
  };
}
