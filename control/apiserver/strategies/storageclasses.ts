/**
 * StorageClass (storage.k8s.io/v1, cluster-scoped): Kubernetes' SetDefaults_StorageClass
 * (pkg/apis/storage/v1/defaults.go), ValidateStorageClass / ValidateStorageClassUpdate
 * (pkg/apis/storage/validation) and pkg/registry/storage/storageclass/strategy.go.
 *
 * - Defaults: reclaimPolicy Delete, volumeBindingMode Immediate.
 * - Validation: a provisioner (required; a qualified name once lower-cased), at most 512
 *   parameters of 256 KiB in all with no empty key, reclaimPolicy Delete or Retain,
 *   volumeBindingMode Immediate or WaitForFirstConsumer, allowedTopologies (label keys,
 *   values required and unique, no key twice in a term, no term twice).
 * - Update: provisioner, parameters and reclaimPolicy are immutable (`updates to
 *   provisioner are forbidden.`, ...), volumeBindingMode too (`field is immutable`).
 *   allowVolumeExpansion, mountOptions, labels and annotations (the default-class one) may
 *   change.
 * A StorageClass has no spec and no status: its fields are top-level.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  isQualifiedName,
  notSupported,
  required,
  tooLong,
} from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import {
  asObj,
  defaultPointer,
  defineStrategy,
  eachObj,
  immutable,
  list,
  problems,
  semanticEqual,
  str,
} from './meta.js';

/** The annotation that makes a class the default one (IsDefaultStorageClassAnnotation). */
export const IS_DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
/** Its beta form, still honoured (BetaIsDefaultStorageClassAnnotation). */
export const BETA_IS_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';

/** IsDefaultAnnotation: either annotation is exactly `true`. */
export function isDefaultClass(obj: KubeObject): boolean {
  const a = obj.metadata?.annotations ?? {};
  return a[IS_DEFAULT_CLASS_ANNOTATION] === 'true' || a[BETA_IS_DEFAULT_CLASS_ANNOTATION] === 'true';
}

const RECLAIM_POLICIES = ['Delete', 'Retain'] as const;
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'] as const;
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_BYTES = 256 * 1024;

/** validateProvisioner: required; IsQualifiedName of its lower-case form. */
function provisioner(v: unknown): FieldError[] {
  const p = str(v);
  if (p === '') return [required('provisioner')];
  return problems('provisioner', p, isQualifiedName(p.toLowerCase()));
}

/** validateParameters: at most 512, keys not empty, keys and values at most 256 KiB together. */
function parameters(v: unknown): FieldError[] {
  const params = asObj(v) ?? {};
  const entries = Object.entries(params);
  if (entries.length > MAX_PARAMETERS) return [tooLong('parameters', MAX_PARAMETERS)];
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, value] of entries) {
    if (k === '') errs.push(invalid('parameters', k, 'field can not be empty.'));
    size += Buffer.byteLength(k) + Buffer.byteLength(str(value));
  }
  if (size > MAX_PARAMETERS_BYTES) errs.push(tooLong('parameters', MAX_PARAMETERS_BYTES));
  return errs;
}

/** validateAllowedTopologies with ValidateTopologySelectorTerm (see the file comment). */
function allowedTopologies(v: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const seen: Record<string, string[]>[] = [];
  list(v).forEach((t, i) => {
    const termPath = indexPath('allowedTopologies', i);
    const exprPath = childPath(termPath, 'matchLabelExpressions');
    const exprs: Record<string, string[]> = {};
    eachObj(asObj(t)?.matchLabelExpressions, (req, j) => {
      const p = indexPath(exprPath, j);
      const values = list(req.values).map(str);
      if (values.length === 0) errs.push(required(childPath(p, 'values')));
      const valueSet = new Set<string>();
      values.forEach((value, k) => {
        if (valueSet.has(value)) errs.push(duplicate(indexPath(childPath(p, 'values'), k), value));
        valueSet.add(value);
      });
      const key = str(req.key);
      errs.push(...problems(childPath(p, 'key'), key, isQualifiedName(key)));
      if (Object.hasOwn(exprs, key)) errs.push(duplicate(childPath(p, 'key'), key));
      exprs[key] = [...valueSet].sort();
    });
    // Upstream compares each term with the ones before it and with as many empty terms
    // (its slice starts with len(topologies) nil maps), so an empty term is a duplicate too.
    if (Object.keys(exprs).length === 0 || seen.some((s) => semanticEqual(s, exprs)))
      errs.push(duplicate(exprPath, ''));
    seen.push(exprs);
  });
  return errs;
}

/** The StorageClass strategy (see the file comment). */
export const storageClassStrategy = defineStrategy({
  namespaced: false,
  // Its storage.go sets ReturnDeletedObject: a DELETE answers with the object.
  returnDeletedObject: true,
  generationFields: [],
  defaults(obj) {
    const o = obj as Record<string, unknown>;
    defaultPointer(o, 'reclaimPolicy', 'Delete');
    defaultPointer(o, 'volumeBindingMode', 'Immediate');
  },
  validate(obj) {
    const o = obj as Record<string, unknown>;
    const errs = [...provisioner(o.provisioner), ...parameters(o.parameters)];
    const policy = str(o.reclaimPolicy);
    if (policy !== '' && !(RECLAIM_POLICIES as readonly string[]).includes(policy))
      errs.push(notSupported('reclaimPolicy', policy, RECLAIM_POLICIES));
    const mode = o.volumeBindingMode;
    if (mode === undefined || mode === null) errs.push(required('volumeBindingMode'));
    else if (!(BINDING_MODES as readonly unknown[]).includes(mode))
      errs.push(notSupported('volumeBindingMode', mode, BINDING_MODES));
    errs.push(...allowedTopologies(o.allowedTopologies));
    return errs;
  },
  validateUpdate(obj, old) {
    const o = obj as Record<string, unknown>;
    const before = old as Record<string, unknown>;
    const errs: FieldError[] = [];
    if (!semanticEqual(o.parameters, before.parameters))
      errs.push(forbidden('parameters', 'updates to parameters are forbidden.'));
    if (str(o.provisioner) !== str(before.provisioner))
      errs.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
    if (str(o.reclaimPolicy) !== str(before.reclaimPolicy))
      errs.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
    errs.push(...immutable(o.volumeBindingMode, before.volumeBindingMode, 'volumeBindingMode'));
    return errs;
  },
});
