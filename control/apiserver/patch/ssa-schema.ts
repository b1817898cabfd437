/**
 * How server-side apply (sigs.k8s.io/structured-merge-diff) sees each field: which lists
 * are associative (items identified by key fields, `k:{...}` in FieldsV1), which are sets
 * of scalars (`v:...`), which are atomic (owned and replaced whole), and which structs
 * and maps are atomic. Kubernetes publishes this as `x-kubernetes-list-type`,
 * `x-kubernetes-list-map-keys`, `x-kubernetes-map-type` in its OpenAPI, generated from
 * the Go types' `+listType`/`+listMapKey`/`+structType`/`+mapType` tags, falling back to
 * the strategic-merge metadata (`patchStrategy: merge` with a merge key → associative
 * list keyed by it, without a key → set) where a list has no list type of its own.
 *
 * This file holds only what differs from that fallback for the kinds k8ts serves;
 * everything else comes from patch-meta.ts.
 */
import { patchMetaOf } from '../patch-meta.js';
import type { SchemaType } from './schema.js';

/** How a list is merged and owned by server-side apply. */
export type ListSemantics =
  | { readonly type: 'atomic' }
  | { readonly type: 'set' }
  | {
      readonly type: 'map';
      /** Key fields, in the order of the Go tags. */
      readonly keys: readonly string[];
      /** Values of key fields an item may omit (the OpenAPI `default` of that field). */
      readonly defaults: Readonly<Record<string, unknown>>;
    };

const ATOMIC: ListSemantics = { type: 'atomic' };
const SET: ListSemantics = { type: 'set' };

/** Associative lists whose keys are not just the strategic-merge key (`+listMapKey` tags). */
const LIST_MAP_KEYS: Readonly<Record<string, ListSemantics>> = {
  'V1Container.ports': { type: 'map', keys: ['containerPort', 'protocol'], defaults: { protocol: 'TCP' } },
  'V1EphemeralContainer.ports': {
    type: 'map',
    keys: ['containerPort', 'protocol'],
    defaults: { protocol: 'TCP' },
  },
  'V1ServiceSpec.ports': { type: 'map', keys: ['port', 'protocol'], defaults: { protocol: 'TCP' } },
  'V1PodSpec.topologySpreadConstraints': {
    type: 'map',
    keys: ['topologyKey', 'whenUnsatisfiable'],
    defaults: {},
  },
  // listType=map without a strategic-merge strategy.
  'V1ResourceRequirements.claims': { type: 'map', keys: ['name'], defaults: {} },
};

/** Structs tagged `+structType=atomic`: owned and replaced as a whole. */
const ATOMIC_STRUCTS = new Set([
  'V1LabelSelector',
  'V1OwnerReference',
  'V1ObjectReference',
  'V1LocalObjectReference',
  'V1TypedLocalObjectReference',
  'V1SecretReference',
  'V1ConfigMapKeySelector',
  'V1SecretKeySelector',
  'V1FileKeySelector',
  'V1ObjectFieldSelector',
  'V1ResourceFieldSelector',
  'V1NodeSelector',
  'V1NodeSelectorTerm',
  'V1TopologySelectorTerm',
  'V1ScopeSelector',
  'V1EndpointAddress',
  'CoreV1EndpointPort',
  'DiscoveryV1EndpointPort',
]);

/** Map fields tagged `+mapType=atomic`. */
const ATOMIC_MAP_FIELDS = new Set([
  'V1PodSpec.nodeSelector',
  'V1ServiceSpec.selector',
  'V1ReplicationControllerSpec.selector',
]);

/** The list semantics of field `field` of struct model `model` (a list field). */
export function listSemantics(model: string, field: string, elem: SchemaType): ListSemantics {
  const special = LIST_MAP_KEYS[`${model}.${field}`];
  if (special) return special;
  const meta = patchMetaOf(model, field);
  if (!meta || !meta.strategy.split(',').includes('merge')) return ATOMIC;
  if (meta.mergeKey) return { type: 'map', keys: [meta.mergeKey], defaults: {} };
  return elem.kind === 'scalar' ? SET : ATOMIC;
}

/** Whether values of this struct model are atomic. */
export function isAtomicStruct(model: string): boolean {
  return ATOMIC_STRUCTS.has(model);
}

/** Whether map field `field` of struct model `model` is atomic. */
export function isAtomicMapField(model: string, field: string): boolean {
  return ATOMIC_MAP_FIELDS.has(`${model}.${field}`);
}
