/**
 * The schema catalogue: one neutral description of every model reachable from the served
 * kinds (fields, their types, descriptions, required fields, patch strategies and the
 * GVKs a model is the schema of), built once from the client-node models (models.ts) and
 * patch-meta.ts, and rendered as Swagger 2.0 definitions or OpenAPI 3.0 component schemas.
 * Definition names follow Kubernetes' (`io.k8s.api.apps.v1.Deployment`), and the types the
 * generated models flatten (Time, Quantity, IntOrString, ...) are restored.
 */
import type { GroupVersionKind } from '../discovery.js';
import { patchMetaOf } from '../patch-meta.js';
import type { PatchMeta } from '../patch-meta.js';
import { RESOURCES, groupVersion } from '../resources.js';
import type { SchemaObject } from './documents.js';
import { loadAttributes, loadDocs } from './models.js';
import type { AttributeType } from './models.js';

// ---------------------------------------------------------------------------------------
// Definition names

const META_PACKAGE = 'io.k8s.apimachinery.pkg.apis.meta';

/** Models of k8s.io/apimachinery/pkg/apis/meta (everything else is k8s.io/api/<group>). */
const META_MODELS: ReadonlySet<string> = new Set([
  'V1APIGroup',
  'V1APIGroupList',
  'V1APIResource',
  'V1APIResourceList',
  'V1APIVersions',
  'V1Condition',
  'V1DeleteOptions',
  'V1GroupVersionForDiscovery',
  'V1LabelSelector',
  'V1LabelSelectorRequirement',
  'V1ListMeta',
  'V1ManagedFieldsEntry',
  'V1ObjectMeta',
  'V1OwnerReference',
  'V1Preconditions',
  'V1ServerAddressByClientCIDR',
  'V1Status',
  'V1StatusCause',
  'V1StatusDetails',
  'V1WatchEvent',
]);

/**
 * Models used across API packages, whose package cannot be inherited from the model that
 * refers to them (a Deployment's pod template is core/v1, an EndpointSlice's targetRef too).
 */
const MODEL_PACKAGES: Readonly<Record<string, string>> = {
  V1PodTemplateSpec: 'core',
  V1ObjectReference: 'core',
  V1EventSource: 'core',
  V1Binding: 'core',
  V1Scale: 'autoscaling',
  V1Eviction: 'policy',
  // A StorageClass's allowedTopologies are core/v1 types.
  V1TopologySelectorTerm: 'core',
  V1TopologySelectorLabelRequirement: 'core',
};

const MODEL_NAME = /^(?:([A-Z][a-z]+))?(V\d+(?:(?:alpha|beta)\d+)?)([A-Z][A-Za-z0-9]*)$/;

/** The Go package of an API group, as in `io.k8s.api.<package>.v1`: `apps`, `coordination`, `core`. */
export function groupPackage(group: string): string {
  return group === '' ? 'core' : group.split('.')[0]!;
}

/**
 * The Kubernetes definition name of a client-node model: `V1Deployment` in package `apps`
 * → `io.k8s.api.apps.v1.Deployment`; `V1ObjectMeta` → `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`;
 * a group prefix decides the package (`CoreV1Event` → `io.k8s.api.core.v1.Event`,
 * `DiscoveryV1EndpointPort` → `io.k8s.api.discovery.v1.EndpointPort`); otherwise
 * MODEL_PACKAGES, else `inheritedPackage` (the package of the model that refers to it).
 * Throws on a name that is not a versioned model name.
 */
export function definitionName(model: string, inheritedPackage: string): string {
  const m = MODEL_NAME.exec(model);
  if (!m) throw new Error(`openapi: ${model} is not a client-node model name`);
  const [, prefix, version, kind] = m;
  const v = version!.toLowerCase();
  if (META_MODELS.has(model)) return `${META_PACKAGE}.${v}.${kind}`;
  const pkg = prefix ? prefix.toLowerCase() : (MODEL_PACKAGES[model] ?? inheritedPackage);
  return `io.k8s.api.${pkg}.${v}.${kind}`;
}

// ---------------------------------------------------------------------------------------
// Types the generated models flatten, restored

export type SpecialName =
  'Time' | 'MicroTime' | 'IntOrString' | 'Quantity' | 'FieldsV1' | 'RawExtension' | 'Patch';

interface SpecialDefinition {
  name: string;
  v2: SchemaObject;
  v3: SchemaObject;
}

function special(
  name: string,
  description: string,
  v2: SchemaObject,
  v3: SchemaObject = v2,
): SpecialDefinition {
  return { name, v2: { description, ...v2 }, v3: { description, ...v3 } };
}

/**
 * Kubernetes' named scalar and opaque types. IntOrString and Quantity are one-of in v3
 * (as kube-openapi publishes them) and strings with a format in v2.
 */
const SPECIALS: Readonly<Record<SpecialName, SpecialDefinition>> = {
  Time: special(
    `${META_PACKAGE}.v1.Time`,
    'A point in time, serialized as an RFC 3339 timestamp with seconds precision (2006-01-02T15:04:05Z).',
    { type: 'string', format: 'date-time' },
  ),
  MicroTime: special(
    `${META_PACKAGE}.v1.MicroTime`,
    'A point in time with microsecond precision, serialized as RFC 3339 (2006-01-02T15:04:05.000000Z).',
    { type: 'string', format: 'date-time' },
  ),
  IntOrString: special(
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
    'A value that is either an integer or a string (for example a port number or a port name, or a count or a percentage).',
    { type: 'string', format: 'int-or-string' },
    {
      format: 'int-or-string',
      oneOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
    },
  ),
  Quantity: special(
    'io.k8s.apimachinery.pkg.api.resource.Quantity',
    "A fixed-point number with an optional suffix: binary SI (Ki, Mi, Gi, Ti, Pi, Ei), decimal SI (m, '', k, M, G, T, P, E) or a decimal exponent (e3), e.g. 100m, 1.5Gi, 128974848.",
    { type: 'string' },
    { oneOf: [{ type: 'string' }, { type: 'number' }] },
  ),
  FieldsV1: special(
    `${META_PACKAGE}.v1.FieldsV1`,
    'The set of fields a manager owns, as a trie of field paths (server-side apply, fieldsType FieldsV1).',
    { type: 'object' },
  ),
  RawExtension: special(
    'io.k8s.apimachinery.pkg.runtime.RawExtension',
    'An embedded object of any kind, with its own apiVersion and kind.',
    { type: 'object' },
  ),
  Patch: special(
    `${META_PACKAGE}.v1.Patch`,
    'The body of a PATCH request: a JSON patch, merge patch, strategic merge patch or apply configuration, as its Content-Type says.',
    { type: 'object' },
  ),
};

/** `<model>.<json field>` holding resource.Quantity values (the models type them as strings). */
const QUANTITY_FIELDS: ReadonlySet<string> = new Set([
  'V1ContainerStatus.allocatedResources',
  'V1EmptyDirVolumeSource.sizeLimit',
  'V1LimitRangeItem.default',
  'V1LimitRangeItem.defaultRequest',
  'V1LimitRangeItem.max',
  'V1LimitRangeItem.maxLimitRequestRatio',
  'V1LimitRangeItem.min',
  'V1NodeStatus.allocatable',
  'V1NodeStatus.capacity',
  'V1Overhead.podFixed',
  'V1PersistentVolumeClaimStatus.allocatedResources',
  'V1PersistentVolumeClaimStatus.capacity',
  'V1PersistentVolumeSpec.capacity',
  'V1PodSpec.overhead',
  'V1ResourceFieldSelector.divisor',
  'V1ResourceQuotaSpec.hard',
  'V1ResourceQuotaStatus.hard',
  'V1ResourceQuotaStatus.used',
  'V1ResourceRequirements.limits',
  'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits',
  'V1VolumeResourceRequirements.requests',
]);

/**
 * Whether field `field` (JSON name) of client-node model `model` holds resource.Quantity
 * values, which the models type as strings (`V1ResourceRequirements`, `limits`).
 */
export function isQuantityField(model: string, field: string): boolean {
  return QUANTITY_FIELDS.has(`${model}.${field}`);
}

/** `<model>.<json field>` typed `any` by the models, with the type Kubernetes names. */
const OPAQUE_FIELDS: Readonly<Record<string, SpecialName>> = {
  'V1ManagedFieldsEntry.fieldsV1': 'FieldsV1',
  'V1WatchEvent.object': 'RawExtension',
  'V1ControllerRevision.data': 'RawExtension',
};
/** Loads every model reachable from the served kinds (idempotent). */
export async function loadModels(): Promise<void> {
  await catalog();
}

// ---------------------------------------------------------------------------------------
// The schema catalog (one neutral form, rendered as v2 or v3)

export type FieldType =
  | { t: 'primitive'; type: 'string' | 'integer' | 'number' | 'boolean'; format?: string }
  | { t: 'model'; model: string }
  | { t: 'special'; name: SpecialName }
  | { t: 'array'; items: FieldType }
  | { t: 'map'; values: FieldType }
  | { t: 'any' }
  /** A definition outside the catalog, by its full name (a custom resource's, apiextensions/openapi.ts). */
  | { t: 'named'; name: string };

interface FieldDef {
  /** JSON name. */
  name: string;
  type: FieldType;
  description?: string;
  patch?: PatchMeta;
}

interface ModelDefinition {
  model: string;
  name: string;
  description?: string;
  fields: FieldDef[];
  required: string[];
  gvks: GroupVersionKind[];
}

export interface Catalog {
  /** By client-node model name. */
  models: Map<string, ModelDefinition>;
}

function parseFieldType(type: string, format: string): FieldType {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) return { t: 'array', items: parseFieldType(array[1]!, format) };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return { t: 'map', values: parseFieldType(map[1]!, format) };
  switch (type) {
    case 'string':
      return format === 'byte'
        ? { t: 'primitive', type: 'string', format }
        : { t: 'primitive', type: 'string' };
    case 'boolean':
      return { t: 'primitive', type: 'boolean' };
    case 'number':
      if (format === 'int32' || format === 'int64') return { t: 'primitive', type: 'integer', format };
      return format ? { t: 'primitive', type: 'number', format } : { t: 'primitive', type: 'number' };
    case 'Date':
      return { t: 'special', name: 'Time' };
    case 'V1MicroTime':
      return { t: 'special', name: 'MicroTime' };
    case 'IntOrString':
      return { t: 'special', name: 'IntOrString' };
    case 'any':
      return { t: 'any' };
    default:
      if (!MODEL_NAME.test(type)) throw new Error(`openapi: unknown client-node attribute type ${type}`);
      return { t: 'model', model: type };
  }
}

/** Replaces the innermost string of `t` by Quantity (`string` → Quantity, map of string → map of Quantity). */
function asQuantity(t: FieldType): FieldType {
  if (t.t === 'array') return { t: 'array', items: asQuantity(t.items) };
  if (t.t === 'map') return { t: 'map', values: asQuantity(t.values) };
  return { t: 'special', name: 'Quantity' };
}

function fieldType(model: string, a: AttributeType): FieldType {
  const key = `${model}.${a.baseName}`;
  const opaque = OPAQUE_FIELDS[key];
  if (opaque) return { t: 'special', name: opaque };
  const t = parseFieldType(a.type, a.format);
  return QUANTITY_FIELDS.has(key) ? asQuantity(t) : t;
}

function modelsIn(t: FieldType): string[] {
  if (t.t === 'model') return [t.model];
  if (t.t === 'array') return modelsIn(t.items);
  if (t.t === 'map') return modelsIn(t.values);
  return [];
}

interface Root {
  model: string;
  pkg: string;
  gvks: GroupVersionKind[];
}

export function gvk(group: string, version: string, kind: string): GroupVersionKind {
  return { group, kind, version };
}

/** Every group-version whose operations take DeleteOptions (each served one, plus the Eviction's). */
function deleteOptionsGVKs(): GroupVersionKind[] {
  const gvs = new Map<string, GroupVersionKind>();
  for (const r of RESOURCES) gvs.set(groupVersion(r), gvk(r.group, r.version, 'DeleteOptions'));
  gvs.set('policy/v1', gvk('policy', 'v1', 'DeleteOptions'));
  return [...gvs.values()];
}

/** The models the documents start from: served kinds and their lists, then subresource kinds and meta types. */
function catalogRoots(): Root[] {
  const roots: Root[] = [];
  for (const r of RESOURCES) {
    const pkg = groupPackage(r.group);
    roots.push({ model: r.model, pkg, gvks: [gvk(r.group, r.version, r.kind)] });
    // Create-only kinds (the access reviews) have no list type.
    if (r.verbs.includes('list'))
      roots.push({ model: `${r.model}List`, pkg, gvks: [gvk(r.group, r.version, r.listKind)] });
  }
  roots.push({ model: 'V1Scale', pkg: 'autoscaling', gvks: [gvk('autoscaling', 'v1', 'Scale')] });
  roots.push({ model: 'V1Eviction', pkg: 'policy', gvks: [gvk('policy', 'v1', 'Eviction')] });
  roots.push({ model: 'V1Binding', pkg: 'core', gvks: [gvk('', 'v1', 'Binding')] });
  roots.push({
    model: 'AuthenticationV1TokenRequest',
    pkg: 'authentication',
    gvks: [gvk('authentication.k8s.io', 'v1', 'TokenRequest')],
  });
  roots.push({ model: 'V1Status', pkg: 'meta', gvks: [gvk('', 'v1', 'Status')] });
  roots.push({ model: 'V1DeleteOptions', pkg: 'meta', gvks: deleteOptionsGVKs() });
  return roots;
}

/**
 * Walks the models breadth-first from the roots, importing each wave in parallel. A
 * model's package is fixed when it is first reached (roots first, in RESOURCES order, so
 * core types reached from core kinds are core), which keeps names deterministic.
 */
async function buildCatalog(): Promise<Catalog> {
  const roots = catalogRoots();
  const packages = new Map<string, string>();
  const gvksOf = new Map<string, GroupVersionKind[]>();
  let wave: string[] = [];
  const reach = (model: string, pkg: string): void => {
    if (packages.has(model)) return;
    packages.set(model, pkg);
    wave.push(model);
  };
  for (const root of roots) {
    reach(root.model, root.pkg);
    gvksOf.set(root.model, root.gvks);
  }

  const models = new Map<string, ModelDefinition>();
  const byName = new Map<string, string>();
  while (wave.length > 0) {
    const current = wave;
    wave = [];
    const loaded = await Promise.all(
      current.map(async (m) => [m, await loadAttributes(m), await loadDocs(m)] as const),
    );
    for (const [model, attributes, docs] of loaded) {
      if (!attributes) throw new Error(`openapi: @kubernetes/client-node has no model ${model}`);
      const name = definitionName(model, packages.get(model)!);
      const clash = byName.get(name);
      if (clash) throw new Error(`openapi: models ${clash} and ${model} both map to ${name}`);
      byName.set(name, model);
      const pkg = META_MODELS.has(model) ? 'meta' : name.split('.')[3]!;
      const fields: FieldDef[] = [];
      const required: string[] = [];
      for (const a of attributes) {
        const type = fieldType(model, a);
        const doc = docs.fields.get(a.name);
        const f: FieldDef = { name: a.baseName, type };
        // IntOrString fields carry the IntOrString type's description, not their own.
        const own = type.t === 'special' && type.name === 'IntOrString' ? undefined : doc?.description;
        if (own) f.description = own;
        const patch = patchMetaOf(model, a.baseName);
        if (patch) f.patch = patch;
        fields.push(f);
        if (doc?.required) required.push(a.baseName);
        for (const child of modelsIn(type)) reach(child, pkg);
      }
      const def: ModelDefinition = { model, name, fields, required, gvks: gvksOf.get(model) ?? [] };
      if (docs.description) def.description = docs.description;
      models.set(model, def);
    }
  }
  return { models };
}

let catalogPromise: Promise<Catalog> | undefined;

export function catalog(): Promise<Catalog> {
  catalogPromise ??= buildCatalog().catch((err: unknown) => {
    catalogPromise = undefined; // let a later request try again
    throw err;
  });
  return catalogPromise;
}

/**
 * The definition name of every model the documents describe, by client-node model name
 * (`V1Deployment` → `io.k8s.api.apps.v1.Deployment`): for code that wants the schema of a
 * kind, and for tests.
 */
export async function modelDefinitionNames(): Promise<ReadonlyMap<string, string>> {
  const c = await catalog();
  return new Map([...c.models].map(([m, def]) => [m, def.name]));
}
// ---------------------------------------------------------------------------------------
// Rendering schemas

export type Flavor = 'v2' | 'v3';

function refPrefix(flavor: Flavor): string {
  return flavor === 'v2' ? '#/definitions/' : '#/components/schemas/';
}

function defNameOf(c: Catalog, t: FieldType & { t: 'model' | 'special' }): string {
  if (t.t === 'special') return SPECIALS[t.name].name;
  const def = c.models.get(t.model);
  if (!def) throw new Error(`openapi: model ${t.model} is not in the catalog`);
  return def.name;
}

export function renderType(c: Catalog, t: FieldType, flavor: Flavor): SchemaObject {
  switch (t.t) {
    case 'primitive':
      return t.format ? { type: t.type, format: t.format } : { type: t.type };
    case 'model':
    case 'special':
      return { $ref: refPrefix(flavor) + defNameOf(c, t) };
    case 'array':
      return { type: 'array', items: renderType(c, t.items, flavor) };
    case 'map':
      return { type: 'object', additionalProperties: renderType(c, t.values, flavor) };
    case 'any':
      return { type: 'object' };
    case 'named':
      return { $ref: refPrefix(flavor) + t.name };
  }
}

function renderField(c: Catalog, f: FieldDef, flavor: Flavor): SchemaObject {
  const rendered = renderType(c, f.type, flavor);
  let s: SchemaObject;
  if (rendered.$ref && f.description !== undefined) {
    // A described reference: v2 puts the description beside $ref (as Kubernetes does);
    // v3 wraps the reference in allOf (as Kubernetes 1.32 does), so that kubectl explain
    // shows both the field's and the type's description.
    s =
      flavor === 'v2'
        ? { $ref: rendered.$ref, description: f.description }
        : { description: f.description, allOf: [rendered] };
  } else if (rendered.$ref) {
    // The generated models drop the description of fields that refer to another model;
    // the referred type's description is the next best thing. Beside $ref (not in allOf),
    // so that kubectl explain prints it once.
    const borrowed = typeDescription(c, f.type);
    s = borrowed !== undefined ? { description: borrowed, $ref: rendered.$ref } : rendered;
  } else {
    s = f.description !== undefined ? { description: f.description, ...rendered } : rendered;
  }
  if (f.patch?.mergeKey) s['x-kubernetes-patch-merge-key'] = f.patch.mergeKey;
  if (f.patch) s['x-kubernetes-patch-strategy'] = f.patch.strategy;
  return s;
}

function typeDescription(c: Catalog, t: FieldType): string | undefined {
  if (t.t === 'special') return SPECIALS[t.name].v3.description;
  if (t.t === 'model') return c.models.get(t.model)?.description;
  return undefined;
}

function renderModel(c: Catalog, def: ModelDefinition, flavor: Flavor): SchemaObject {
  const s: SchemaObject = {};
  if (def.description !== undefined) s.description = def.description;
  s.type = 'object';
  s.properties = Object.fromEntries(def.fields.map((f) => [f.name, renderField(c, f, flavor)]));
  if (def.required.length > 0) s.required = [...def.required];
  if (def.gvks.length > 0) s['x-kubernetes-group-version-kind'] = def.gvks.map((g) => ({ ...g }));
  return s;
}

/** The definitions named in `roots` and everything they reference, rendered; sorted by name. */
export function renderDefinitions(
  c: Catalog,
  roots: Iterable<FieldType & { t: 'model' | 'special' | 'named' }>,
  flavor: Flavor,
) {
  const out = new Map<string, SchemaObject>();
  const visit = (t: FieldType): void => {
    if (t.t === 'array') return visit(t.items);
    if (t.t === 'map') return visit(t.values);
    if (t.t === 'special') {
      const s = SPECIALS[t.name];
      if (!out.has(s.name)) out.set(s.name, { ...s[flavor] });
      return;
    }
    if (t.t !== 'model') return;
    const def = c.models.get(t.model);
    if (!def) throw new Error(`openapi: model ${t.model} is not in the catalog`);
    if (out.has(def.name)) return;
    out.set(def.name, renderModel(c, def, flavor));
    for (const f of def.fields) visit(f.type);
  };
  for (const r of roots) visit(r);
  return Object.fromEntries([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A field type that names a definition: a model or a restored special type. */
export type Ref = FieldType & { t: 'model' | 'special' | 'named' };
