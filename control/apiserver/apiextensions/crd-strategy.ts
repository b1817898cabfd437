/**
 * CustomResourceDefinition (apiextensions.k8s.io/v1): upstream's defaults
 * (apis/apiextensions/v1/defaults.go), validation (apis/apiextensions/validation) and
 * registry strategy (registry/customresourcedefinition/strategy.go), as far as k8ts serves
 * CRDs: names, scope, versions with exactly one storage version, conversion `None`,
 * subresources, printer columns, selectable fields (selectable-fields.ts), and each
 * version's schema through the structural-schema module (./schema validateStructuralSchema:
 * non-structural schemas, bad defaults and x-kubernetes-validations refused with upstream's
 * messages). A CRD whose group is one the API server serves itself is refused (422), so a
 * custom resource can never shadow a built-in kind.
 *
 * Status: on create the status is reset and `storedVersions` starts with the storage
 * version; the main resource never changes status; a status write changes only status
 * (and metadata, through which the finalizer controller drops its finalizer). A DELETE
 * adds the `customresourcecleanup.apiextensions.k8s.io` finalizer and the Terminating
 * condition (upstream's CRD REST Delete), so the CRD stays until its objects are gone.
 */
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
  type FieldError,
} from '../../../api/meta/field-errors.js';
import { isDNS1035Label } from '../../../api/meta/validation.js';
import { rfc3339, type KubeObject } from '../../../api/object.js';
import { RESOURCES } from '../resources.js';
import { defineStrategy, semanticEqual, type KindStrategy } from '../strategies/meta.js';
import { validateStructuralSchema } from './schema/index.js';
import { validateSelectableFields } from './selectable-fields.js';
import {
  CUSTOM_RESOURCE_CLEANUP_FINALIZER,
  type CustomResourceDefinition,
  type CustomResourceDefinitionCondition,
  type CustomResourceDefinitionVersion,
} from './types.js';

/** The groups the API server serves itself (`apps`, `rbac.authorization.k8s.io`, ...), and ours. */
export const BUILT_IN_GROUPS: ReadonlySet<string> = new Set([
  ...RESOURCES.map((r) => r.group),
  'metrics.k8s.io',
  'apiextensions.k8s.io',
  'meta.k8s.io',
  'apidiscovery.k8s.io',
]);

/** The column types a printer column may have (OpenAPI types). */
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];

/**
 * `obj` as a CRD whose spec, names, versions and their parts have the JSON types the
 * strategy reads (a value of another type is dropped: decoding into the Go type refuses it
 * before the strategy, so here it only must not throw).
 */
function crdOf(obj: KubeObject): CustomResourceDefinition {
  const crd = obj as CustomResourceDefinition;
  const isObj = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(crd.spec)) crd.spec = {};
  const spec = crd.spec as Record<string, unknown>;
  if (spec.names !== undefined && !isObj(spec.names)) delete spec.names;
  for (const k of ['group', 'scope'] as const)
    if (spec[k] !== undefined && typeof spec[k] !== 'string') delete spec[k];
  const names = spec.names as Record<string, unknown> | undefined;
  for (const k of ['plural', 'singular', 'kind', 'listKind'])
    if (names && names[k] !== undefined && typeof names[k] !== 'string') delete names[k];
  for (const k of ['shortNames', 'categories'])
    if (names && names[k] !== undefined)
      names[k] = Array.isArray(names[k]) ? (names[k] as unknown[]).filter((x) => typeof x === 'string') : [];
  if (spec.conversion !== undefined && !isObj(spec.conversion)) delete spec.conversion;
  if (spec.versions !== undefined) {
    spec.versions = Array.isArray(spec.versions) ? spec.versions.filter(isObj) : undefined;
    if (spec.versions === undefined) delete spec.versions;
  }
  for (const v of (spec.versions ?? []) as Record<string, unknown>[]) {
    if (typeof v.name !== 'string') v.name = '';
    if (v.additionalPrinterColumns !== undefined && !Array.isArray(v.additionalPrinterColumns))
      delete v.additionalPrinterColumns;
    else if (Array.isArray(v.additionalPrinterColumns))
      v.additionalPrinterColumns = v.additionalPrinterColumns.filter(isObj);
    if (v.subresources !== undefined && !isObj(v.subresources)) delete v.subresources;
    if (v.schema !== undefined && !isObj(v.schema)) delete v.schema;
    if (v.selectableFields !== undefined)
      v.selectableFields = Array.isArray(v.selectableFields) ? v.selectableFields.filter(isObj) : [];
  }
  if (crd.status !== undefined && !isObj(crd.status)) delete crd.status;
  return crd;
}

/** SetDefaults_CustomResourceDefinition(Spec): singular, listKind, conversion strategy. */
export function defaultCRD(obj: KubeObject): void {
  const spec = crdOf(obj).spec;
  const names = (spec.names ??= {});
  if (!names.singular && names.kind) names.singular = names.kind.toLowerCase();
  if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  spec.conversion ??= {};
  spec.conversion.strategy ??= 'None';
  for (const v of spec.versions ?? []) {
    for (const c of v.additionalPrinterColumns ?? []) c.priority ??= 0;
  }
}

function dns1035(field: string, value: string | undefined, errs: FieldError[]): void {
  if (!value) return;
  const msgs = isDNS1035Label(value);
  if (msgs.length > 0) errs.push(invalid(field, value, msgs.join(',')));
}

function validateNames(crd: CustomResourceDefinition, errs: FieldError[]): void {
  const path = 'spec.names';
  const n = crd.spec.names ?? {};
  if (!n.plural) errs.push(required(childPath(path, 'plural'), ''));
  dns1035(childPath(path, 'plural'), n.plural, errs);
  if (!n.singular) errs.push(required(childPath(path, 'singular'), ''));
  dns1035(childPath(path, 'singular'), n.singular, errs);
  if (!n.kind) errs.push(required(childPath(path, 'kind'), ''));
  dns1035(childPath(path, 'kind'), n.kind?.toLowerCase(), errs);
  if (!n.listKind) errs.push(required(childPath(path, 'listKind'), ''));
  dns1035(childPath(path, 'listKind'), n.listKind?.toLowerCase(), errs);
  if (n.kind && n.listKind && n.kind === n.listKind)
    errs.push(invalid(childPath(path, 'listKind'), n.listKind, 'kind and listKind may not be the same'));
  (n.shortNames ?? []).forEach((s, i) => dns1035(indexPath(childPath(path, 'shortNames'), i), s, errs));
  (n.categories ?? []).forEach((s, i) => dns1035(indexPath(childPath(path, 'categories'), i), s, errs));
}

function validateVersion(v: CustomResourceDefinitionVersion, path: string, errs: FieldError[]): void {
  if (!v.name) errs.push(required(childPath(path, 'name'), ''));
  dns1035(childPath(path, 'name'), v.name, errs);
  const schema = v.schema?.openAPIV3Schema;
  if (!schema) errs.push(required(childPath(path, 'schema', 'openAPIV3Schema'), 'schemas are required'));
  else {
    const schemaErrs = validateStructuralSchema(schema, childPath(path, 'schema', 'openAPIV3Schema'));
    errs.push(...schemaErrs);
    // Paths are walked through the schema only once it is structural, as upstream.
    if (schemaErrs.length === 0 && v.selectableFields)
      errs.push(...validateSelectableFields(v.selectableFields, schema, childPath(path, 'selectableFields')));
  }
  const scale = v.subresources?.scale;
  if (scale) {
    const sp = childPath(path, 'subresources', 'scale');
    if (!scale.specReplicasPath?.startsWith('.spec.'))
      errs.push(
        invalid(
          childPath(sp, 'specReplicasPath'),
          scale.specReplicasPath ?? '',
          'should be a json path under .spec',
        ),
      );
    if (!scale.statusReplicasPath?.startsWith('.status.'))
      errs.push(
        invalid(
          childPath(sp, 'statusReplicasPath'),
          scale.statusReplicasPath ?? '',
          'should be a json path under .status',
        ),
      );
    if (scale.labelSelectorPath && !/^\.(spec|status)\./.test(scale.labelSelectorPath))
      errs.push(
        invalid(
          childPath(sp, 'labelSelectorPath'),
          scale.labelSelectorPath,
          'should be a json path under either .spec or .status',
        ),
      );
  }
  (v.additionalPrinterColumns ?? []).forEach((c, i) => {
    const cp = indexPath(childPath(path, 'additionalPrinterColumns'), i);
    if (!c.name) errs.push(required(childPath(cp, 'name'), ''));
    if (!c.type) errs.push(required(childPath(cp, 'type'), ''));
    else if (!COLUMN_TYPES.includes(c.type))
      errs.push(notSupported(childPath(cp, 'type'), c.type, COLUMN_TYPES));
    if (!c.jsonPath) errs.push(required(childPath(cp, 'JSONPath'), ''));
    else if (!c.jsonPath.startsWith('.') && !c.jsonPath.startsWith('{'))
      errs.push(invalid(childPath(cp, 'JSONPath'), c.jsonPath, 'must be a simple json path starting with .'));
  });
}

/** ValidateCustomResourceDefinition, as far as k8ts serves CRDs. */
export function validateCRD(obj: KubeObject): FieldError[] {
  const crd = crdOf(obj);
  const spec = crd.spec;
  const errs: FieldError[] = [];
  const group = spec.group ?? '';
  const plural = spec.names?.plural ?? '';
  if (crd.metadata?.name !== `${plural}.${group}`)
    errs.push(invalid('metadata.name', crd.metadata?.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  if (!group) errs.push(required('spec.group', ''));
  else if (!group.includes('.'))
    errs.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  else if (BUILT_IN_GROUPS.has(group))
    errs.push(
      invalid(
        'spec.group',
        group,
        'is a group the API server serves itself; a custom resource may not use it',
      ),
    );
  if (!spec.scope) errs.push(required('spec.scope', ''));
  else if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errs.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  validateNames(crd, errs);
  const versions = spec.versions ?? [];
  if (versions.length === 0)
    errs.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const vp = indexPath('spec.versions', i);
    if (seen.has(v.name)) errs.push(duplicate(childPath(vp, 'name'), v.name));
    seen.add(v.name);
    validateVersion(v, vp, errs);
  });
  const storage = versions.filter((v) => v.storage === true).length;
  if (versions.length > 0 && storage !== 1)
    errs.push(
      invalid(
        'spec.versions',
        versions.map((v) => v.name),
        'must have exactly one version marked as storage version',
      ),
    );
  const strategy = spec.conversion?.strategy;
  if (strategy === 'Webhook')
    errs.push(
      invalid(
        'spec.conversion.strategy',
        strategy,
        'conversion webhooks are not supported by k8ts; use None',
      ),
    );
  else if (strategy !== undefined && strategy !== 'None')
    errs.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  if (spec.preserveUnknownFields === true)
    errs.push(
      invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'),
    );
  return errs;
}

/** The annotation a CRD in a protected community group must carry (KEP-1111). */
export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';
const APPROVAL_SEE = 'see https://github.com/kubernetes/enhancements/pull/1111';

type ApprovalState = 'missing' | 'invalid' | 'bypassed' | 'approved';

/** apihelpers.GetAPIApprovalState: what the annotation says, with the reason upstream gives. */
function approvalState(obj: KubeObject): { state: ApprovalState; reason: string } {
  const value = obj.metadata?.annotations?.[API_APPROVED_ANNOTATION] ?? '';
  const q = JSON.stringify(API_APPROVED_ANNOTATION);
  if (value === '')
    return {
      state: 'missing',
      reason: `protected groups must have approval annotation ${q}, ${APPROVAL_SEE}`,
    };
  if (value.startsWith('unapproved'))
    return { state: 'bypassed', reason: `not approved: ${JSON.stringify(value)}` };
  let scheme = '';
  try {
    scheme = new URL(value).protocol;
  } catch {
    scheme = '';
  }
  if (scheme === '')
    return {
      state: 'invalid',
      reason: `protected groups must have approval annotation ${q} with either a URL or a reason starting with "unapproved", ${APPROVAL_SEE}`,
    };
  return { state: 'approved', reason: `approved in ${value}` };
}

/**
 * validateAPIApproval (apiextensions validation.go): a CRD in `k8s.io`, `kubernetes.io` or a
 * subdomain of either needs the api-approved.kubernetes.io annotation, a URL or a reason
 * starting with "unapproved". On update an unchanged approval state is never an error, so
 * a CRD stored before the rule keeps working.
 */
export function validateAPIApproval(obj: KubeObject, old?: KubeObject): FieldError[] {
  const group = crdOf(obj).spec.group ?? '';
  const protectedGroup =
    group === 'k8s.io' ||
    group.endsWith('.k8s.io') ||
    group === 'kubernetes.io' ||
    group.endsWith('.kubernetes.io');
  if (!protectedGroup) return [];
  const next = approvalState(obj);
  if (old && approvalState(old).state === next.state) return [];
  const path = keyPath('metadata.annotations', API_APPROVED_ANNOTATION);
  if (next.state === 'missing') return [required(path, next.reason)];
  if (next.state === 'invalid')
    return [invalid(path, obj.metadata?.annotations?.[API_APPROVED_ANNOTATION] ?? '', next.reason)];
  return [];
}

/** ValidateCustomResourceDefinitionUpdate: the group, scope and plural name stay (the CRD's name fixes them). */
export function validateCRDUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const a = crdOf(obj).spec;
  const b = crdOf(old).spec;
  if (a.group !== b.group) errs.push(invalid('spec.group', a.group, 'field is immutable'));
  if (a.scope !== b.scope) errs.push(invalid('spec.scope', a.scope, 'field is immutable'));
  return errs;
}

/**
 * ValidateCustomResourceDefinitionStoredVersions: some version is stored, the storage
 * version is one of them, and every stored version is still in spec.versions (objects may
 * be stored in it), each error at the stored version's index.
 */
export function validateStoredVersions(obj: KubeObject): FieldError[] {
  const crd = crdOf(obj);
  const path = 'status.storedVersions';
  const stored = Array.isArray(crd.status?.storedVersions) ? crd.status.storedVersions : [];
  if (stored.length === 0) return [invalid(path, stored, 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const versions = crd.spec.versions ?? [];
  for (const v of versions)
    if (v.storage === true && !stored.includes(v.name))
      errs.push(invalid(path, v.name, `must have the storage version ${v.name}`));
  const names = new Set(versions.map((v) => v.name));
  stored.forEach((s, i) => {
    if (!names.has(s)) errs.push(invalid(indexPath(path, i), s, 'must appear in spec.versions'));
  });
  return errs;
}

/**
 * Sets (or replaces) condition `c` on the CRD, keeping lastTransitionTime when the status
 * does not change (apiextensionshelpers.SetCRDCondition).
 */
export function setCRDCondition(
  crd: CustomResourceDefinition,
  c: CustomResourceDefinitionCondition,
  now: Date,
): void {
  const status = (crd.status ??= {});
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? conditions[i] : undefined;
  const next = {
    ...c,
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : rfc3339(now),
  };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

/** The CRD strategy (cluster-scoped, status subresource, generation on spec, the cleanup finalizer on delete). */
export const customResourceDefinitionStrategy: KindStrategy = {
  ...defineStrategy({
    namespaced: false,
    // apiextensions validates ObjectMeta with apimachinery's rules only: its own finalizer,
    // customresourcecleanup.apiextensions.k8s.io, has no '/' and is not one of core's.
    kubeFinalizers: false,
    generationFields: ['spec'],
    initialStatus: (obj) => {
      const storage = crdOf(obj).spec.versions?.find((v) => v.storage === true)?.name;
      return { storedVersions: storage ? [storage] : [] };
    },
    prepareForUpdate(obj, old) {
      // A new storage version joins storedVersions (the CRD strategy's PrepareForUpdate).
      const storage = crdOf(obj).spec.versions?.find((v) => v.storage === true)?.name;
      const status = crdOf(obj).status;
      if (storage && status) {
        const stored = (status.storedVersions ??= []);
        if (!stored.includes(storage)) stored.push(storage);
      }
      void old;
    },
    defaults: defaultCRD,
    validate: (obj, creating) => [
      ...validateCRD(obj),
      ...validateStoredVersions(obj),
      ...(creating ? validateAPIApproval(obj) : []),
    ],
    validateUpdate: (obj, old) => [...validateCRDUpdate(obj, old), ...validateAPIApproval(obj, old)],
    validateStatusUpdate(obj, old) {
      const errs: FieldError[] = [];
      if (!semanticEqual((obj as CustomResourceDefinition).spec, (old as CustomResourceDefinition).spec))
        errs.push(forbidden('spec', 'may not change in a status update'));
      errs.push(...validateStoredVersions(obj));
      return errs;
    },
    prepareForDelete(obj) {
      setCRDCondition(
        obj as CustomResourceDefinition,
        {
          type: 'Terminating',
          status: 'True',
          reason: 'InstanceDeletionPending',
          message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
        },
        new Date(),
      );
    },
  }),
  // The finalizer a CRD's DELETE adds, as upstream's CRD REST Delete.
  deleteFinalizers: () => [CUSTOM_RESOURCE_CLEANUP_FINALIZER],
};
