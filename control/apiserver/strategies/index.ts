/**
 * The registry of resource strategies: exactly one place lists every served kind's
 * Strategy (one file per kind in this folder; shared pieces in meta.ts, podspec/ and
 * workload.ts). Each strategy replicates Kubernetes' defaults (pkg/apis/<group>/v1/
 * defaults.go), validation (pkg/apis/<group>/validation) and registry strategy
 * (pkg/registry/<group>/<kind>/strategy.go) for its kind.
 *
 *     const strategy = strategyFor(findResource('apps', 'v1', 'deployments')!);
 *     strategy.prepareForCreate(obj); strategy.defaults(obj); const errs = strategy.validate(obj);
 */
import type { NameValidator } from '../../../api/meta/validation.js';
import { customResourceDefinitionStrategy } from '../apiextensions/crd-strategy.js';
import { customResourceStrategy } from '../apiextensions/cr-strategy.js';
import type { ResourceInfo } from '../resources.js';
import { groupVersion } from '../resources.js';
import type { Strategy } from '../strategy.js';
import { configMapStrategy } from './configmaps.js';
import { controllerRevisionStrategy } from './controllerrevisions.js';
import { daemonSetStrategy } from './daemonsets.js';
import { deploymentStrategy } from './deployments.js';
import { endpointsStrategy } from './endpoints.js';
import { endpointSliceStrategy } from './endpointslices.js';
import { coreEventStrategy, eventsEventStrategy } from './events.js';
import { horizontalPodAutoscalerStrategy } from './horizontalpodautoscalers.js';
import { horizontalPodAutoscalerV1Strategy } from './horizontalpodautoscalers-v1.js';
import { cronJobStrategy, jobStrategy } from './jobs.js';
import { leaseStrategy } from './leases.js';
import type { KindStrategy } from './meta.js';
import { namespaceStrategy } from './namespaces.js';
import { nodeStrategy } from './nodes.js';
import type { PodAdmissionConfig } from './pods.js';
import { persistentVolumeClaimStrategy } from './persistentvolumeclaims.js';
import { persistentVolumeStrategy } from './persistentvolumes.js';
import { podStrategy, podStrategyWith } from './pods.js';
import { podDisruptionBudgetStrategy } from './poddisruptionbudgets.js';
import {
  clusterRoleBindingStrategy,
  clusterRoleStrategy,
  reviewStrategy,
  roleBindingStrategy,
  roleStrategy,
} from './rbac.js';
import { replicaSetStrategy } from './replicasets.js';
import { secretStrategy } from './secrets.js';
import { serviceAccountStrategy } from './serviceaccounts.js';
import { serviceStrategy } from './services.js';
import { statefulSetStrategy } from './statefulsets.js';
import { storageClassStrategy } from './storageclasses.js';

/** Strategies by `<group/version>/<resource>` (core group: `v1/<resource>`). */
const STRATEGIES: Readonly<Record<string, KindStrategy>> = {
  'v1/pods': podStrategy,
  'v1/persistentvolumeclaims': persistentVolumeClaimStrategy,
  'v1/persistentvolumes': persistentVolumeStrategy,
  'apps/v1/statefulsets': statefulSetStrategy,
  'v1/services': serviceStrategy,
  'v1/namespaces': namespaceStrategy,
  'v1/nodes': nodeStrategy,
  'v1/configmaps': configMapStrategy,
  'v1/secrets': secretStrategy,
  'v1/endpoints': endpointsStrategy,
  'v1/events': coreEventStrategy,
  'v1/serviceaccounts': serviceAccountStrategy,
  'apps/v1/deployments': deploymentStrategy,
  'apps/v1/replicasets': replicaSetStrategy,
  'batch/v1/jobs': jobStrategy,
  'batch/v1/cronjobs': cronJobStrategy,
  'apps/v1/controllerrevisions': controllerRevisionStrategy,
  'apps/v1/daemonsets': daemonSetStrategy,
  'autoscaling/v2/horizontalpodautoscalers': horizontalPodAutoscalerStrategy,
  'autoscaling/v1/horizontalpodautoscalers': horizontalPodAutoscalerV1Strategy,
  'coordination.k8s.io/v1/leases': leaseStrategy,
  'discovery.k8s.io/v1/endpointslices': endpointSliceStrategy,
  'events.k8s.io/v1/events': eventsEventStrategy,
  'rbac.authorization.k8s.io/v1/roles': roleStrategy,
  'rbac.authorization.k8s.io/v1/clusterroles': clusterRoleStrategy,
  'rbac.authorization.k8s.io/v1/rolebindings': roleBindingStrategy,
  'rbac.authorization.k8s.io/v1/clusterrolebindings': clusterRoleBindingStrategy,
  'policy/v1/poddisruptionbudgets': podDisruptionBudgetStrategy,
  'storage.k8s.io/v1/storageclasses': storageClassStrategy,
  'authorization.k8s.io/v1/selfsubjectaccessreviews': reviewStrategy,
  'authorization.k8s.io/v1/subjectaccessreviews': reviewStrategy,
  'authorization.k8s.io/v1/selfsubjectrulesreviews': reviewStrategy,
  'authentication.k8s.io/v1/selfsubjectreviews': reviewStrategy,
  'authentication.k8s.io/v1/tokenreviews': reviewStrategy,
  'apiextensions.k8s.io/v1/customresourcedefinitions': customResourceDefinitionStrategy,
};

function lookup(resource: Pick<ResourceInfo, 'group' | 'version' | 'resource' | 'custom'>): KindStrategy {
  // A custom resource's strategy is built from its CRD (apiextensions/cr-strategy.ts).
  if (resource.custom) return customResourceStrategy(resource as ResourceInfo);
  const key = `${groupVersion(resource)}/${resource.resource}`;
  const strategy = STRATEGIES[key];
  if (!strategy) throw new Error(`no strategy for resource ${key}`);
  return strategy;
}

/**
 * Settings of the strategies that kube-apiserver takes from flags: today the
 * DefaultTolerationSeconds admission of Pods (`--default-not-ready-toleration-seconds`,
 * `--default-unreachable-toleration-seconds`, 300 s each by default).
 */
export type StrategyOptions = PodAdmissionConfig;

/**
 * The strategy of a served resource (resources.ts `RESOURCES`), configured by `options`
 * where a strategy has settings (Pods' admission defaults).
 * @throws Error for a resource without one (a programming error: every served resource has one).
 */
export function strategyFor(resource: ResourceInfo, options?: StrategyOptions): Strategy {
  const strategy = lookup(resource);
  if (strategy === podStrategy && options) return podStrategyWith(options);
  return strategy;
}

/**
 * The rule for a resource's `metadata.name` (Kubernetes' per-kind ValidateNameFunc), for
 * the registry's `validateName`: DNS-1035 labels for Services, DNS-1123 labels for
 * Namespaces, DNS-1123 subdomains for every other kind served here.
 * @throws Error for a resource without a strategy.
 */
export function nameValidatorFor(resource: ResourceInfo): NameValidator {
  return lookup(resource).nameFn;
}
