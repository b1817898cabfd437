/**
 * RBAC v1 (rbac.authorization.k8s.io): Role, ClusterRole, RoleBinding, ClusterRoleBinding —
 * Kubernetes' pkg/apis/rbac/validation (ValidateRole, ValidateClusterRole,
 * ValidateRoleBinding, ValidateClusterRoleBinding) and their strategies. The authorizer
 * that reads these objects is control/apiserver/auth/rbac.ts.
 * Escalation prevention (a Role or binding may grant only what its writer holds, as
 * Kubernetes' pkg/registry/rbac/<kind>/policybased storage) is these strategies'
 * checkEscalation, over the rule arithmetic of control/apiserver/auth/escalation.ts.
 */
import type { FieldError, NameValidator } from '../../../api/meta/validation.js';
import { childPath, indexPath, invalid, notSupported, required } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import {
  escalationMessage,
  FULL_AUTHORITY,
  onlyGCFieldsChanged,
  uncoveredRules,
} from '../auth/escalation.js';
import { rulesOf } from '../auth/rbac.js';
import { ApiError } from '../status.js';
import type { WriteAuthority, WriteCheck } from '../strategy.js';
import { asObj, defineStrategy, eachObj, immutable, list, str } from './meta.js';

/**
 * ValidatePathSegmentName, the rule of RBAC object names: anything but `.` and `..`,
 * without `/` or `%` (so `system:node` is a valid ClusterRole name).
 */
export const rbacName: NameValidator = (name, prefix) => {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  for (const bad of ['/', '%']) if (name.includes(bad)) return [`may not contain '${bad}'`];
  return [];
};

/** A PolicyRule: verbs required; resource rules need apiGroups and resources; URL rules only in ClusterRoles. */
function validateRule(rule: unknown, path: string, clusterScoped: boolean): FieldError[] {
  const r = asObj(rule) ?? {};
  const errs: FieldError[] = [];
  if (list(r.verbs).length === 0)
    errs.push(required(childPath(path, 'verbs'), 'verbs must contain at least one value'));
  const urls = list(r.nonResourceURLs);
  if (urls.length > 0) {
    if (!clusterScoped)
      errs.push(
        invalid(
          childPath(path, 'nonResourceURLs'),
          urls,
          'namespaced rules cannot apply to non-resource URLs',
        ),
      );
    if (list(r.apiGroups).length > 0 || list(r.resources).length > 0)
      errs.push(
        invalid(
          childPath(path, 'nonResourceURLs'),
          urls,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    return errs;
  }
  if (list(r.apiGroups).length === 0)
    errs.push(required(childPath(path, 'apiGroups'), 'resource rules must supply at least one api group'));
  if (list(r.resources).length === 0)
    errs.push(required(childPath(path, 'resources'), 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(obj: KubeObject, clusterScoped: boolean): FieldError[] {
  const errs: FieldError[] = [];
  list(obj.rules).forEach((rule, i) =>
    errs.push(...validateRule(rule, indexPath('rules', i), clusterScoped)),
  );
  return errs;
}

const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'];

/** A binding: roleRef names a Role (RoleBindings only) or ClusterRole; subjects have a known kind and a name. */
function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = asObj(obj.roleRef) ?? {};
  if (str(ref.apiGroup) !== 'rbac.authorization.k8s.io')
    errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', ['rbac.authorization.k8s.io']));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(str(ref.kind))) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (str(ref.name) === '') errs.push(required('roleRef.name'));
  eachObj(obj.subjects, (s, i) => {
    const path = indexPath('subjects', i);
    if (!SUBJECT_KINDS.includes(str(s.kind)))
      errs.push(notSupported(childPath(path, 'kind'), s.kind ?? '', SUBJECT_KINDS));
    if (str(s.name) === '') errs.push(required(childPath(path, 'name')));
    if (str(s.kind) === 'ServiceAccount' && !namespaced && str(s.namespace) === '')
      errs.push(required(childPath(path, 'namespace')));
  });
  return errs;
}

/** The roleRef of a binding cannot change (`cannot change roleRef`). */
function roleRefImmutable(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = immutable(obj.roleRef, old.roleRef, 'roleRef');
  return errs.length > 0 ? [invalid('roleRef', obj.roleRef, 'cannot change roleRef')] : [];
}

/** 403 Forbidden for a write of `obj` that would grant more than its writer holds. */
function refused(a: WriteAuthority, obj: KubeObject, why: string): ApiError {
  const name = obj.metadata?.name ?? a.name ?? '';
  return new ApiError(403, 'Forbidden', `${a.resource}.${a.group} "${name}" is forbidden: ${why}`, {
    name,
    group: a.group,
    kind: a.resource,
  });
}

/**
 * A Role's or ClusterRole's escalation check (ConfirmNoEscalation): nothing to check when
 * the writer may `escalate` it; otherwise every rule written must be covered by the
 * writer's own rules, and an aggregationRule needs `*` on everything. A change of
 * ownerReferences and finalizers only is not checked.
 */
async function roleEscalationCheck(a: WriteAuthority): Promise<WriteCheck | undefined> {
  if (await a.may('escalate', a.resource, a.name ?? '')) return undefined;
  const owned = await a.rules();
  return (obj, old) => {
    if (old && onlyGCFieldsChanged(obj, old)) return;
    const uncovered = uncoveredRules(owned, rulesOf(obj));
    if (uncovered.length > 0) throw refused(a, obj, escalationMessage(a.user, uncovered));
    // An aggregationRule can gather any rules: it needs * on everything.
    if (obj.aggregationRule !== undefined && uncoveredRules(owned, FULL_AUTHORITY).length > 0)
      throw refused(a, obj, 'must have cluster-admin privileges to use the aggregationRule');
  };
}

/**
 * A RoleBinding's or ClusterRoleBinding's escalation check (BindingAuthorized, then
 * ConfirmNoEscalation of the bound role): nothing to check when the writer may `bind` the
 * role of `source`'s roleRef or holds all of its rules.
 * @throws ApiError 404 when the role does not exist, as Kubernetes' rule resolver.
 */
async function bindingEscalationCheck(
  a: WriteAuthority,
  source: KubeObject | undefined,
): Promise<WriteCheck | undefined> {
  const ref = (source?.roleRef ?? {}) as { kind?: string; name?: string };
  // A binding without a usable roleRef is refused by validation.
  if (!ref.name || (ref.kind !== 'Role' && ref.kind !== 'ClusterRole')) return undefined;
  const refResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
  if (await a.may('bind', refResource, ref.name)) return undefined;
  const role = await a.role(ref.kind, ref.name);
  if (!role)
    throw new ApiError(404, 'NotFound', `${refResource}.${a.group} "${ref.name}" not found`, {
      name: ref.name,
      group: a.group,
      kind: refResource,
    });
  const uncovered = uncoveredRules(await a.rules(), rulesOf(role));
  if (uncovered.length === 0) return undefined;
  return (obj, old) => {
    if (old && onlyGCFieldsChanged(obj, old)) return;
    throw refused(a, obj, escalationMessage(a.user, uncovered));
  };
}

export const roleStrategy = defineStrategy({
  namespaced: true,
  nameFn: rbacName,
  allowCreateOnUpdate: true,
  kubeFinalizers: false,
  validate: (obj) => validateRules(obj, false),
  checkEscalation: roleEscalationCheck,
});

export const clusterRoleStrategy = defineStrategy({
  namespaced: false,
  nameFn: rbacName,
  allowCreateOnUpdate: true,
  kubeFinalizers: false,
  validate: (obj) => validateRules(obj, true),
  checkEscalation: roleEscalationCheck,
});

export const roleBindingStrategy = defineStrategy({
  namespaced: true,
  nameFn: rbacName,
  allowCreateOnUpdate: true,
  kubeFinalizers: false,
  validate: (obj) => validateBinding(obj, true),
  validateUpdate: roleRefImmutable,
  checkEscalation: bindingEscalationCheck,
});

export const clusterRoleBindingStrategy = defineStrategy({
  namespaced: false,
  nameFn: rbacName,
  allowCreateOnUpdate: true,
  kubeFinalizers: false,
  validate: (obj) => validateBinding(obj, false),
  validateUpdate: roleRefImmutable,
  checkEscalation: bindingEscalationCheck,
});

/**
 * The reviews (SelfSubjectAccessReview, SubjectAccessReview, SelfSubjectReview) are never
 * stored; their strategy exists so every served resource has one (discovery, OpenAPI).
 */
export const reviewStrategy = defineStrategy({ namespaced: false, kubeFinalizers: false });
