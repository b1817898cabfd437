/**
 * RBAC v1 (rbac.authorization.k8s.io): Role, ClusterRole, RoleBinding, ClusterRoleBinding —
 * Kubernetes' pkg/apis/rbac/validation (ValidateRole, ValidateClusterRole,
 * ValidateRoleBinding, ValidateClusterRoleBinding) and their strategies. The authorizer
 * that reads these objects is control/apiserver/auth/rbac.ts.
 * Escalation prevention (a Role or binding may grant only what its writer holds) is
 * checked by the API server on writes: control/apiserver/auth/escalation.ts.
 */
import type { FieldError, NameValidator } from '../../../api/meta/validation.js';
import { childPath, indexPath, invalid, notSupported, required } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
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

export const roleStrategy = defineStrategy({
  namespaced: true,
  nameFn: rbacName,
  kubeFinalizers: false,
  validate: (obj) => validateRules(obj, false),
});

export const clusterRoleStrategy = defineStrategy({
  namespaced: false,
  nameFn: rbacName,
  kubeFinalizers: false,
  validate: (obj) => validateRules(obj, true),
});

export const roleBindingStrategy = defineStrategy({
  namespaced: true,
  nameFn: rbacName,
  kubeFinalizers: false,
  validate: (obj) => validateBinding(obj, true),
  validateUpdate: roleRefImmutable,
});

export const clusterRoleBindingStrategy = defineStrategy({
  namespaced: false,
  nameFn: rbacName,
  kubeFinalizers: false,
  validate: (obj) => validateBinding(obj, false),
  validateUpdate: roleRefImmutable,
});

/**
 * The reviews (SelfSubjectAccessReview, SubjectAccessReview, SelfSubjectReview) are never
 * stored; their strategy exists so every served resource has one (discovery, OpenAPI).
 */
export const reviewStrategy = defineStrategy({ namespaced: false, kubeFinalizers: false });
