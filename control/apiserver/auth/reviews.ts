/**
 * The review resources, answered from the request and never stored:
 * - authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl auth can-i`): may I …?
 * - authorization.k8s.io/v1 SubjectAccessReview: may this user (spec.user, spec.groups) …?
 * - authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`): who am I?
 * Each answers 201 with the request's object plus `status`.
 */
import type { KubeObject } from '../../../api/object.js';
import { badRequest } from '../status.js';
import type { Attributes, Authorizer } from './authz.js';
import type { PolicyRule } from './rbac.js';
import { nodeNameOf, SYSTEM_AUTHENTICATED, SYSTEM_MASTERS, type UserInfo } from '../../../api/auth/user.js';

type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const s = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The attributes a review's spec asks about, for `user`. @throws ApiError 400 without exactly one of resourceAttributes / nonResourceAttributes. */
export function reviewAttributes(spec: Obj, user: UserInfo): Attributes {
  const ra = spec.resourceAttributes;
  const na = spec.nonResourceAttributes;
  if ((ra === undefined) === (na === undefined))
    throw badRequest(
      'spec: Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  if (ra !== undefined) {
    const r = o(ra);
    const a: Attributes = {
      user,
      verb: s(r.verb),
      resourceRequest: true,
      group: s(r.group),
      resource: s(r.resource),
    };
    if (s(r.version)) a.version = s(r.version);
    if (s(r.subresource)) a.subresource = s(r.subresource);
    if (s(r.namespace)) a.namespace = s(r.namespace);
    if (s(r.name)) a.name = s(r.name);
    return a;
  }
  const n = o(na);
  return { user, verb: s(n.verb), resourceRequest: false, path: s(n.path) };
}

async function decide(authorizer: Authorizer, a: Attributes): Promise<Obj> {
  const d = await authorizer.authorize(a);
  const status: Obj = { allowed: d.decision === 'allow' };
  if (d.decision === 'deny') status.denied = true;
  if (d.reason) status.reason = d.reason;
  return status;
}

/** Answers a SelfSubjectAccessReview for the requesting user. */
export async function selfSubjectAccessReview(
  body: KubeObject,
  user: UserInfo,
  authorizer: Authorizer,
): Promise<KubeObject> {
  const spec = o(body.spec);
  return { ...body, status: await decide(authorizer, reviewAttributes(spec, user)) };
}

/** Answers a SubjectAccessReview for `spec.user` / `spec.groups`. @throws ApiError 400 without user or groups. */
export async function subjectAccessReview(body: KubeObject, authorizer: Authorizer): Promise<KubeObject> {
  const spec = o(body.spec);
  const groups = Array.isArray(spec.groups)
    ? spec.groups.filter((g): g is string => typeof g === 'string')
    : [];
  if (s(spec.user) === '' && groups.length === 0)
    throw badRequest('spec.user: Invalid value: "": at least one of user or group must be specified');
  const user: UserInfo = { name: s(spec.user), groups, ...(s(spec.uid) ? { uid: s(spec.uid) } : {}) };
  return { ...body, status: await decide(authorizer, reviewAttributes(spec, user)) };
}

/**
 * Answers a SelfSubjectRulesReview (`kubectl auth can-i --list`): the RBAC rules that
 * apply to the requesting user in `spec.namespace` (cluster-wide bindings included), as
 * RBAC's RulesFor. `system:masters` gets the `*` rules its privilege amounts to. The Node
 * authorizer's grants are not rules, so for a node identity the answer says `incomplete`.
 * @throws ApiError 400 without spec.namespace (Kubernetes requires it).
 */
export async function selfSubjectRulesReview(
  body: KubeObject,
  user: UserInfo,
  rulesFor: (user: UserInfo, namespace: string) => Promise<PolicyRule[]>,
): Promise<KubeObject> {
  const namespace = s(o(body.spec).namespace);
  if (namespace === '') throw badRequest('spec.namespace: Required value: no namespace on request');
  const privileged = user.groups.includes(SYSTEM_MASTERS);
  const rules: PolicyRule[] = privileged
    ? [
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['*'], nonResourceURLs: ['*'] },
      ]
    : await rulesFor(user, namespace);
  const resourceRules = rules
    .filter((r) => (r.resources ?? []).length > 0)
    .map((r) => ({
      verbs: r.verbs ?? [],
      ...(r.apiGroups ? { apiGroups: r.apiGroups } : {}),
      resources: r.resources ?? [],
      ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
    }));
  const nonResourceRules = rules
    .filter((r) => (r.nonResourceURLs ?? []).length > 0)
    .map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs ?? [] }));
  return {
    ...body,
    status: { resourceRules, nonResourceRules, incomplete: nodeNameOf(user) !== undefined },
  };
}

/** Answers a SelfSubjectReview: the requesting user's name, uid, groups and extra. */
export function selfSubjectReview(body: KubeObject, user: UserInfo): KubeObject {
  const groups = user.groups.includes(SYSTEM_AUTHENTICATED)
    ? user.groups
    : [...user.groups, SYSTEM_AUTHENTICATED];
  return {
    ...body,
    status: {
      userInfo: {
        username: user.name,
        ...(user.uid ? { uid: user.uid } : {}),
        groups,
        ...(user.extra ? { extra: user.extra } : {}),
      },
    },
  };
}
