/**
 * Namespace (core/v1): Kubernetes' pkg/registry/core/namespace/strategy.go,
 * SetDefaults_Namespace / SetDefaults_NamespaceStatus and ValidateNamespace /
 * ValidateNamespaceStatusUpdate.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { invalid, nameIsDNSLabel } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import { ApiError } from '../status.js';
import type { RelatedWrites } from '../strategy.js';
import {
  asObj,
  clone,
  defineStrategy,
  list,
  qualifiedName,
  kubeFinalizerName,
  section,
  str,
} from './meta.js';

/** The label every Namespace carries with its own name (Kubernetes 1.21+). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * The Namespace strategy. On create, status is `{phase: Active}` and `spec.finalizers`
 * gains `kubernetes` (the namespace controller removes it when it has emptied the
 * namespace); on update, spec.finalizers and status are kept (they change only through
 * `namespaces/NAME/finalize` and `/status`). Defaults label the namespace with
 * `kubernetes.io/metadata.name: <name>`. Names are DNS-1123 labels. Field selector:
 * `status.phase` (cluster-scoped: no metadata.namespace).
 *
 * Deletion (Kubernetes' namespace REST Delete and finalize store): `spec.finalizers`
 * hold a deleted namespace like metadata finalizers, so a DELETE sets deletionTimestamp
 * and `status.phase: Terminating`; `PUT namespaces/NAME/finalize` changes only
 * spec.finalizers, and the namespace is removed once neither spec.finalizers nor
 * metadata.finalizers has anything left.
 *
 * After a create: the namespace's `default` ServiceAccount.
 */
/**
 * A new Namespace's `default` ServiceAccount (what Kubernetes' serviceaccount controller
 * ensures in every namespace; until k8ts runs that controller, the create does it). One
 * that already exists is left alone.
 */
async function createDefaultServiceAccount(ns: KubeObject, related: RelatedWrites): Promise<void> {
  try {
    await related.create('', 'v1', 'serviceaccounts', ns.metadata!.name!, { metadata: { name: 'default' } });
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 409)) throw err;
  }
}

export const namespaceStrategy = defineStrategy({
  namespaced: false,
  // Its storage.go sets ReturnDeletedObject: a DELETE answers with the object.
  returnDeletedObject: true,
  nameFn: nameIsDNSLabel,
  initialStatus: () => ({ phase: 'Active' }),
  prepareForCreate(obj) {
    const spec = section(obj, 'spec');
    const finalizers = list(spec.finalizers);
    if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
  },
  prepareForUpdate(obj, old) {
    const oldFinalizers = asObj(old.spec)?.finalizers;
    const spec = section(obj, 'spec');
    if (oldFinalizers === undefined) delete spec.finalizers;
    else spec.finalizers = clone(oldFinalizers);
  },
  defaults(obj) {
    const name = obj.metadata?.name;
    if (name) obj.metadata!.labels = { ...(obj.metadata!.labels ?? {}), [NAMESPACE_NAME_LABEL]: name };
    const status = asObj(obj.status);
    if (status && str(status.phase) === '') status.phase = 'Active';
  },
  validate(obj) {
    const errs: FieldError[] = [];
    for (const f of list(asObj(obj.spec)?.finalizers)) {
      errs.push(...qualifiedName(str(f), 'spec.finalizers'), ...kubeFinalizerName(str(f), 'spec.finalizers'));
    }
    return errs;
  },
  validateStatusUpdate(obj: KubeObject) {
    const phase = asObj(obj.status)?.phase ?? '';
    if (!obj.metadata?.deletionTimestamp) {
      return phase === 'Active'
        ? []
        : [invalid('status.phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")];
    }
    return phase === 'Terminating'
      ? []
      : [invalid('status.phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
  },
  fields: (obj) => ({ 'status.phase': str(asObj(obj.status)?.phase) }),
  specFinalizers: (obj) =>
    list(asObj(obj.spec)?.finalizers).filter((f): f is string => typeof f === 'string'),
  afterCreate: createDefaultServiceAccount,
  prepareForDelete(obj) {
    section(obj, 'status').phase = 'Terminating';
  },
  prepareForFinalizeUpdate(obj, old) {
    const finalizers = asObj(obj.spec)?.finalizers;
    for (const k of Object.keys(obj)) if (k !== 'apiVersion' && k !== 'kind') delete obj[k];
    for (const [k, v] of Object.entries(old)) if (k !== 'apiVersion' && k !== 'kind') obj[k] = clone(v);
    const spec = section(obj, 'spec');
    if (finalizers === undefined) delete spec.finalizers;
    else spec.finalizers = clone(finalizers);
  },
  validateFinalizeUpdate(obj) {
    const errs: FieldError[] = [];
    for (const f of list(asObj(obj.spec)?.finalizers)) {
      errs.push(...qualifiedName(str(f), 'spec.finalizers'), ...kubeFinalizerName(str(f), 'spec.finalizers'));
    }
    return errs;
  },
});
