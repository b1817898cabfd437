/**
 * ReplicaSet (apps/v1): Kubernetes' pkg/registry/apps/replicaset/strategy.go,
 * SetDefaults_ReplicaSet and ValidateReplicaSet / ValidateReplicaSetUpdate /
 * ValidateReplicaSetStatusUpdate.
 */
import { asObj, child, defaultPointer, defineStrategy, num, section } from './meta.js';
import { defaultPodTemplate } from './podspec/index.js';
import { validateSelectorUnchanged, validateWorkloadSpec, validateWorkloadStatus } from './workload.js';
import { generationChanged, podTemplateWarnings, workloadNameWarnings } from './podspec/warnings.js';

/**
 * The ReplicaSet strategy: replicas default 1 plus the pod template's defaults; the
 * workload spec rules; an immutable selector on update. Status starts `{replicas: 0}`
 * (a non-omitempty field of ReplicaSetStatus). Field selector: `status.replicas`.
 */
export const replicaSetStrategy = defineStrategy({
  namespaced: true,
  initialStatus: () => ({ replicas: 0 }),
  generationFields: ['spec'],
  defaults(obj) {
    const spec = section(obj, 'spec');
    defaultPointer(spec, 'replicas', 1);
    defaultPodTemplate(child(spec, 'template'));
  },
  validate: (obj) => validateWorkloadSpec(asObj(obj.spec) ?? {}),
  validateUpdate: validateSelectorUnchanged,
  warningsOnCreate: (obj) => [
    ...workloadNameWarnings(obj.metadata?.name),
    ...podTemplateWarnings('spec.template', asObj(obj.spec)?.template),
  ],
  warningsOnUpdate: (obj, old) =>
    generationChanged(obj, old) ? podTemplateWarnings('spec.template', asObj(obj.spec)?.template) : [],
  validateStatusUpdate: (obj, old) =>
    validateWorkloadStatus(obj, old, ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'], []),
  fields: (obj) => ({ 'status.replicas': String(num(asObj(obj.status)?.replicas) ?? 0) }),
});
