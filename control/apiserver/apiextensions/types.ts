/**
 * The apiextensions.k8s.io/v1 types this folder reads and writes: CustomResourceDefinition
 * and the parts of its spec and status that serving, validation and the CRD controllers
 * use (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go). Field names are
 * the wire names; everything a client may leave out is optional.
 */
import type { KubeObject } from '../../../api/object.js';

/** The group and the one version of CustomResourceDefinitions served here. */
export const APIEXTENSIONS_GROUP = 'apiextensions.k8s.io';
export const CRD_API_VERSION = 'apiextensions.k8s.io/v1';

/**
 * The finalizer a CRD's DELETE adds, kept until its custom resources are gone (the
 * finalizer controller removes it once every object of the CRD is deleted).
 */
export const CUSTOM_RESOURCE_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** An OpenAPI v3 schema as a CRD carries it (JSONSchemaProps; the structural-schema module's type). */
import type { JSONSchemaProps } from './schema/types.js';
export type { JSONSchemaProps };

export interface CustomResourceDefinitionNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  kind?: string;
  listKind?: string;
  categories?: string[];
}

export interface CustomResourceColumnDefinition {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
}

export interface CustomResourceSubresourceScale {
  specReplicasPath?: string;
  statusReplicasPath?: string;
  labelSelectorPath?: string;
}

export interface CustomResourceSubresources {
  status?: Record<string, never> | object;
  scale?: CustomResourceSubresourceScale;
}

export interface SelectableField {
  jsonPath?: string;
}

export interface CustomResourceDefinitionVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: SelectableField[];
}

export interface CustomResourceDefinitionSpec {
  group?: string;
  names?: CustomResourceDefinitionNames;
  scope?: string;
  versions?: CustomResourceDefinitionVersion[];
  conversion?: { strategy?: string; webhook?: unknown };
  preserveUnknownFields?: boolean;
}

/** A CRD condition: NamesAccepted, Established, Terminating (apiextensions' CustomResourceDefinitionCondition). */
export interface CustomResourceDefinitionCondition {
  type: 'NamesAccepted' | 'Established' | 'Terminating' | string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CustomResourceDefinitionStatus {
  conditions?: CustomResourceDefinitionCondition[];
  acceptedNames?: CustomResourceDefinitionNames;
  storedVersions?: string[];
}

export interface CustomResourceDefinition extends KubeObject {
  spec: CustomResourceDefinitionSpec;
  status?: CustomResourceDefinitionStatus;
}

/** The condition of `type`, if the CRD has one. */
export function crdCondition(
  crd: Pick<CustomResourceDefinition, 'status'>,
  type: string,
): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

/** Whether the CRD's condition `type` is True (apiextensionshelpers.IsCRDConditionTrue). */
export function isCRDConditionTrue(crd: Pick<CustomResourceDefinition, 'status'>, type: string): boolean {
  return crdCondition(crd, type)?.status === 'True';
}

/** The version marked `storage: true`; undefined when there is none (an invalid CRD). */
export function storageVersionOf(crd: Pick<CustomResourceDefinition, 'spec'>): string | undefined {
  return crd.spec.versions?.find((v) => v.storage === true)?.name;
}
