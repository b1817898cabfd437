/**
 * The OpenAPI documents: `/openapi/v2` (Swagger 2.0, JSON or gnostic protobuf — see
 * openapi-v2-protobuf.ts), `/openapi/v3` (the index of
 * group-version documents) and `/openapi/v3/api/v1`, `/openapi/v3/apis/<g>/<v>` (OpenAPI
 * 3.0, JSON). Both versions come from ONE schema source: the @kubernetes/client-node model
 * classes (`getAttributeTypeMap()` for fields and types, the JSDoc of their `.d.ts` files
 * for descriptions and, through `?`, which fields are required), walked from the model of
 * every served kind, plus patch-meta.ts for the strategic-merge-patch extensions the
 * generated models do not carry.
 *
 * What clients read from them (kubectl v1.32, checked in its source):
 * - `kubectl explain` (v3): finds the GVK on the GET/POST/PUT/PATCH/DELETE operation of
 *   `<prefix>/<v>/[namespaces/{namespace}/]<resource>[/{name}]`
 *   (`x-kubernetes-group-version-kind`), then the schema in `components.schemas` whose
 *   `x-kubernetes-group-version-kind` list contains that GVK, and follows `$ref`, `allOf`,
 *   `items` and `additionalProperties` down the field path.
 * - `kubectl apply/create/replace --validate=strict` (v3): finds the first PATCH operation
 *   of the GVK in its group-version document; if its parameters include the query
 *   parameter `fieldValidation`, kubectl sends `fieldValidation=Strict` and leaves
 *   validation to the server. If that PATCH lacks it, kubectl validates on the client
 *   against the definitions of /openapi/v2. If v3 has no document or PATCH for the GVK (an
 *   unknown kind), kubectl asks /openapi/v2's paths the same question, validating only kinds
 *   it defines. client-go requests /openapi/v2 only as protobuf; without that form both
 *   cases fail ("failed to download openapi"), the unknown kind before kubectl gets to its
 *   own "no matches for kind".
 * - `kubectl apply` (client-side) (v3): the first PATCH operation of the GVK must list
 *   `application/strategic-merge-patch+json` in its requestBody; the patch is then computed
 *   from `x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy` on the properties.
 *   So every PATCH operation of a kind (the object and its status) carries both.
 *
 * Paths describe exactly what the API server routes: per resource the collection
 * (list/watch via `?watch=true`, create, deletecollection), the object (get, replace,
 * patch, delete), the all-namespaces list, and each subresource; no deprecated `/watch/`
 * paths and no protobuf media types in `produces`/`consumes`.
 *
 * Cost: the schema catalog is built once, lazily, on first use (dynamic imports of the
 * ~220 reachable model modules and their `.d.ts`, not the whole client-node package,
 * whose import alone takes over a second); each document is serialized once and cached
 * with its SHA-512 ETag (the protobuf form of v2 likewise, with the ETag of its bytes).
 */
import { PATCH_CONTENT_TYPES } from './media-types.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CONTENT_TYPE_JSON,
  GIT_VERSION,
  SUBRESOURCE_SHAPES,
  documentResponse,
  parseAccept,
  serialize,
  statusResponse,
} from './discovery.js';
import type { DocumentRequest, DocumentResponse, GroupVersionKind, SerializedDocument } from './discovery.js';
import { CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE, encodeOpenAPIV2Protobuf } from './openapi-v2-protobuf.js';
import { patchMetaOf } from './patch-meta.js';
import type { PatchMeta } from './patch-meta.js';
import { RESOURCES, groupVersion } from './resources.js';
import type { ResourceInfo, Subresource } from './resources.js';
import { ApiError } from './status.js';

// ---------------------------------------------------------------------------------------
// Public document shapes

/** A JSON schema as Kubernetes publishes it (the subset these documents use). */
export interface SchemaObject {
  description?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  $ref?: string;
  allOf?: SchemaObject[];
  oneOf?: SchemaObject[];
  properties?: Record<string, SchemaObject>;
  required?: string[];
  items?: SchemaObject;
  additionalProperties?: SchemaObject;
  'x-kubernetes-group-version-kind'?: GroupVersionKind[];
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-int-or-string'?: true;
}

/** The `x-kubernetes-action` of an operation, as the apiserver names them. */
export type OperationAction =
  'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection' | 'connect';

/** A Swagger 2.0 parameter. */
export interface ParameterV2 {
  name: string;
  in: 'path' | 'query' | 'body';
  description?: string;
  required?: boolean;
  type?: ParamType;
  uniqueItems?: boolean;
  schema?: SchemaObject;
}

/** A Swagger 2.0 operation. */
export interface OperationV2 {
  description: string;
  operationId: string;
  tags: string[];
  consumes?: string[];
  produces: string[];
  schemes: string[];
  parameters: ParameterV2[];
  responses: Record<string, { description: string; schema?: SchemaObject }>;
  'x-kubernetes-action': OperationAction;
  'x-kubernetes-group-version-kind': GroupVersionKind;
}

type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type PathItemV2 = { parameters?: ParameterV2[] } & Partial<Record<HttpMethod, OperationV2>>;

/** The `/openapi/v2` document. */
export interface OpenAPIV2Document {
  swagger: '2.0';
  info: { title: string; version: string };
  paths: Record<string, PathItemV2>;
  definitions: Record<string, SchemaObject>;
  securityDefinitions: Record<string, { type: 'apiKey'; name: string; in: 'header'; description: string }>;
  security: Record<string, string[]>[];
}

/** An OpenAPI 3.0 parameter. */
export interface ParameterV3 {
  name: string;
  in: 'path' | 'query';
  description?: string;
  required?: boolean;
  schema: { type: ParamType; uniqueItems: true };
}

/** An OpenAPI 3.0 operation. */
export interface OperationV3 {
  description: string;
  operationId: string;
  tags: string[];
  parameters: ParameterV3[];
  requestBody?: { content: Record<string, { schema: SchemaObject }>; required: true };
  responses: Record<string, { description: string; content?: Record<string, { schema: SchemaObject }> }>;
  'x-kubernetes-action': OperationAction;
  'x-kubernetes-group-version-kind': GroupVersionKind;
}

export type PathItemV3 = { parameters?: ParameterV3[] } & Partial<Record<HttpMethod, OperationV3>>;

/** One group-version document, `/openapi/v3/api/v1` or `/openapi/v3/apis/<g>/<v>`. */
export interface OpenAPIV3Document {
  openapi: '3.0.0';
  info: { title: string; version: string };
  paths: Record<string, PathItemV3>;
  components: {
    schemas: Record<string, SchemaObject>;
    securitySchemes: Record<string, { type: 'apiKey'; name: string; in: 'header'; description: string }>;
  };
  security: Record<string, string[]>[];
}

/** The `/openapi/v3` index: `api/v1`, `apis/apps/v1`, ... → the document URL with its hash. */
export interface OpenAPIV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

// ---------------------------------------------------------------------------------------
// Content types

/**
 * Swagger 2.0 protobuf (gnostic), all that client-go's OpenAPISchema() asks for. kube-openapi
 * accepts this spelling (deprecated) and CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE, and
 * answers both with the latter.
 */
export const CONTENT_TYPE_OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export { CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE } from './openapi-v2-protobuf.js';
/** OpenAPI v3 protobuf; not served (406). kubectl asks for application/json. */
export const CONTENT_TYPE_OPENAPI_V3_PROTOBUF = 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf';

export { PATCH_CONTENT_TYPES } from './media-types.js';

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

type SpecialName = 'Time' | 'MicroTime' | 'IntOrString' | 'Quantity' | 'FieldsV1' | 'RawExtension' | 'Patch';

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

/** `<model>.<json field>` typed `any` by the models, with the type Kubernetes names. */
const OPAQUE_FIELDS: Readonly<Record<string, SpecialName>> = {
  'V1ManagedFieldsEntry.fieldsV1': 'FieldsV1',
  'V1WatchEvent.object': 'RawExtension',
};

// ---------------------------------------------------------------------------------------
// Reading the client-node models

export interface AttributeType {
  name: string;
  baseName: string;
  type: string;
  format: string;
}

interface FieldDoc {
  description?: string;
  required: boolean;
}

interface ModelDocs {
  description?: string;
  /** By TypeScript property name (`name` of the attribute map). */
  fields: Map<string, FieldDoc>;
}

let modelsDirectory: string | undefined;

function modelsDir(): string {
  modelsDirectory ??= join(
    dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
    'dist',
    'gen',
    'models',
  );
  return modelsDirectory;
}

function isAttributeTypeMap(v: unknown): v is AttributeType[] {
  return (
    Array.isArray(v) && v.every((a) => typeof a === 'object' && a !== null && 'baseName' in a && 'type' in a)
  );
}

/** Attribute type maps loaded so far, by model name (see modelAttributeTypeMap). */
const loadedAttributes = new Map<string, AttributeType[]>();

/**
 * The `getAttributeTypeMap()` of a client-node model, if the catalog has loaded it (every
 * model reachable from a served kind is, once `loadModels()` or `warmOpenAPI()` resolved).
 * Synchronous, for code on the request path (patches, field validation) that must not
 * import the whole client-node package (1.4 s and about 40 MB).
 */
export function modelAttributeTypeMap(model: string): readonly AttributeType[] | undefined {
  return loadedAttributes.get(model);
}

/** Loads every model reachable from the served kinds (idempotent). */
export async function loadModels(): Promise<void> {
  await catalog();
}

/** The attribute type map of a model, imported from its own module (undefined: no such model). */
async function loadAttributes(model: string): Promise<AttributeType[] | undefined> {
  if (!/^[A-Za-z0-9]+$/.test(model)) return undefined;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(join(modelsDir(), `${model}.js`)).href)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const cls = mod[model] as { getAttributeTypeMap?: () => unknown } | undefined;
  const map = typeof cls?.getAttributeTypeMap === 'function' ? cls.getAttributeTypeMap() : undefined;
  if (!isAttributeTypeMap(map)) return undefined;
  loadedAttributes.set(model, map);
  return map;
}

/**
 * Parses a model's `.d.ts`: the JSDoc before `export declare class` is the type's
 * description, the JSDoc before `'field'?: T` the field's; a field without `?` is
 * required (the generator marks exactly the fields of the upstream `required` list).
 * The generator escapes quotes and backslashes (`\'`, `\"`, `\\`); they are unescaped.
 */
export function parseModelDocs(dts: string): ModelDocs {
  const docs: ModelDocs = { fields: new Map() };
  let pending: string[] | undefined;
  let collecting: string[] | undefined;
  for (const line of dts.split('\n')) {
    const trimmed = line.trim();
    if (collecting) {
      if (trimmed.startsWith('*/')) {
        pending = collecting;
        collecting = undefined;
      } else {
        collecting.push(trimmed.replace(/^\* ?/, ''));
      }
      continue;
    }
    if (trimmed === '/**') {
      collecting = [];
      continue;
    }
    const field = /^'([^']+)'(\?)?:/.exec(trimmed);
    const text = pending?.join(' ').replace(/\\(.)/g, '$1').trim();
    if (field) {
      docs.fields.set(field[1]!, { description: text || undefined, required: field[2] === undefined });
    } else if (trimmed.startsWith('export declare class')) {
      docs.description = text || undefined;
    }
    // A comment documents only the declaration right after it.
    pending = undefined;
  }
  return docs;
}

/** Reads synchronously: ~200 small files read faster in a row than through the thread pool. */
function loadDocs(model: string): ModelDocs {
  try {
    return parseModelDocs(readFileSync(join(modelsDir(), `${model}.d.ts`), 'utf8'));
  } catch {
    return { fields: new Map() };
  }
}

// ---------------------------------------------------------------------------------------
// The schema catalog (one neutral form, rendered as v2 or v3)

type FieldType =
  | { t: 'primitive'; type: 'string' | 'integer' | 'number' | 'boolean'; format?: string }
  | { t: 'model'; model: string }
  | { t: 'special'; name: SpecialName }
  | { t: 'array'; items: FieldType }
  | { t: 'map'; values: FieldType }
  | { t: 'any' };

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

interface Catalog {
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

function gvk(group: string, version: string, kind: string): GroupVersionKind {
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

function catalog(): Promise<Catalog> {
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

type Flavor = 'v2' | 'v3';

function refPrefix(flavor: Flavor): string {
  return flavor === 'v2' ? '#/definitions/' : '#/components/schemas/';
}

function defNameOf(c: Catalog, t: FieldType & { t: 'model' | 'special' }): string {
  if (t.t === 'special') return SPECIALS[t.name].name;
  const def = c.models.get(t.model);
  if (!def) throw new Error(`openapi: model ${t.model} is not in the catalog`);
  return def.name;
}

function renderType(c: Catalog, t: FieldType, flavor: Flavor): SchemaObject {
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
function renderDefinitions(
  c: Catalog,
  roots: Iterable<FieldType & { t: 'model' | 'special' }>,
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

// ---------------------------------------------------------------------------------------
// Operations (one neutral form, rendered as v2 or v3)

export type ParamType = 'string' | 'integer' | 'boolean';

interface ParamSpec {
  name: string;
  in: 'path' | 'query';
  type: ParamType;
  description: string;
  required?: boolean;
}

type Ref = FieldType & { t: 'model' | 'special' };

interface ResponseSpec {
  code: '200' | '201' | '202';
  /** The body schema; 'text': a plain string (logs, connect). */
  body: Ref | 'text';
}

interface OperationSpec {
  method: HttpMethod;
  operationId: string;
  description: string;
  action: OperationAction;
  gvk: GroupVersionKind;
  params: ParamSpec[];
  /** 'object': the kind's schema as JSON/YAML; 'patch': any of PATCH_CONTENT_TYPES. */
  body?: { schema: Ref; as: 'object' | 'patch' };
  responses: ResponseSpec[];
  produces: readonly string[];
}

interface PathSpec {
  path: string;
  params: ParamSpec[];
  ops: OperationSpec[];
}

function query(name: string, type: ParamType, description: string): ParamSpec {
  return { name, in: 'query', type, description };
}

const P = {
  name: { name: 'name', in: 'path', type: 'string', required: true, description: 'Name of the object.' },
  namespace: {
    name: 'namespace',
    in: 'path',
    type: 'string',
    required: true,
    description: 'Namespace of the objects.',
  },
  pretty: query('pretty', 'string', "If 'true', the output is indented."),
  allowWatchBookmarks: query(
    'allowWatchBookmarks',
    'boolean',
    'Ask for BOOKMARK events on a watch; the server may send them at any time, or not at all.',
  ),
  continue: query('continue', 'string', 'The continue token of the previous page of a paginated list.'),
  fieldSelector: query(
    'fieldSelector',
    'string',
    'Only objects whose fields match this selector. Default: all.',
  ),
  labelSelector: query(
    'labelSelector',
    'string',
    'Only objects whose labels match this selector. Default: all.',
  ),
  limit: query('limit', 'integer', 'The most objects to return; metadata.continue then names the next page.'),
  resourceVersion: query(
    'resourceVersion',
    'string',
    'The resourceVersion to read at (list, get) or to watch from (watch).',
  ),
  resourceVersionMatch: query(
    'resourceVersionMatch',
    'string',
    'How resourceVersion is applied to a list: Exact or NotOlderThan.',
  ),
  sendInitialEvents: query(
    'sendInitialEvents',
    'boolean',
    'With watch=true: start with synthetic ADDED events for the current objects, then a bookmark.',
  ),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'Ends the list or watch call after this many seconds.'),
  watch: query('watch', 'boolean', 'Stream ADDED, MODIFIED and DELETED events instead of returning a list.'),
  dryRun: query('dryRun', 'string', "'All': validate and process the request but persist nothing."),
  fieldManager: query('fieldManager', 'string', 'The name of the actor making the change (managedFields).'),
  fieldValidation: query(
    'fieldValidation',
    'string',
    'What to do with unknown or duplicate fields in the body: Ignore (drop them), Warn (drop them and ' +
      'answer with a warning header per field) or Strict (fail the request with BadRequest).',
  ),
  force: query('force', 'boolean', 'Apply requests only: take over fields owned by other managers.'),
  gracePeriodSeconds: query(
    'gracePeriodSeconds',
    'integer',
    'Seconds before the object is deleted; 0: at once.',
  ),
  orphanDependents: query('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  propagationPolicy: query(
    'propagationPolicy',
    'string',
    'What happens to dependents: Orphan, Background (deleted by the garbage collector) or Foreground.',
  ),
} as const satisfies Record<string, ParamSpec>;

const LIST_PARAMS: ParamSpec[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS: ParamSpec[] = [P.dryRun, P.fieldManager, P.fieldValidation];
const DELETE_PARAMS: ParamSpec[] = [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy];

const SUBRESOURCE_PARAMS: Readonly<Partial<Record<Subresource, ParamSpec[]>>> = {
  log: [
    query(
      'container',
      'string',
      'The container to read the log of; may be omitted when the pod has one container.',
    ),
    query('follow', 'boolean', 'Stream the log as it is written.'),
    query('insecureSkipTLSVerifyBackend', 'boolean', 'Do not verify the serving certificate of the kubelet.'),
    query('limitBytes', 'integer', 'The most bytes of log to return.'),
    query('previous', 'boolean', 'The log of the previous, terminated, instance of the container.'),
    query('sinceSeconds', 'integer', 'Only lines written in the last this many seconds.'),
    query('tailLines', 'integer', 'Only this many lines from the end of the log.'),
    query('timestamps', 'boolean', 'Start every line with its RFC 3339 timestamp.'),
  ],
  exec: [
    query('command', 'string', 'The command to run, one parameter per argument.'),
    query('container', 'string', 'The container to run it in.'),
    query('stderr', 'boolean', 'Return the standard error stream.'),
    query('stdin', 'boolean', 'Send a standard input stream.'),
    query('stdout', 'boolean', 'Return the standard output stream.'),
    query('tty', 'boolean', 'Allocate a terminal.'),
  ],
  attach: [
    query('container', 'string', 'The container to attach to.'),
    query('stderr', 'boolean', 'Return the standard error stream.'),
    query('stdin', 'boolean', 'Send a standard input stream.'),
    query('stdout', 'boolean', 'Return the standard output stream.'),
    query('tty', 'boolean', 'Allocate a terminal.'),
  ],
  portforward: [query('ports', 'integer', 'The pod ports to forward.')],
};

const JSON_ONLY = [CONTENT_TYPE_JSON] as const;
const LIST_PRODUCES = [CONTENT_TYPE_JSON, 'application/json;stream=watch'] as const;

function pascal(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** `CoreV1`, `AppsV1`, `CoordinationV1`: the group-version part of operation ids. */
function gvIdent(r: ResourceInfo): string {
  return pascal(groupPackage(r.group)) + pascal(r.version);
}

/** `core_v1`, `apps_v1`, `coordination_v1`: the tag of a group-version's operations. */
function gvTag(r: ResourceInfo): string {
  return `${groupPackage(r.group)}_${r.version}`;
}

function model(name: string): Ref {
  return { t: 'model', model: name };
}

const STATUS_REF = model('V1Status');
const DELETE_OPTIONS_REF = model('V1DeleteOptions');
const PATCH_REF: Ref = { t: 'special', name: 'Patch' };

/** The kind a subresource's operations are described with: its own model, or the parent's. */
function subresourceModel(r: ResourceInfo, sub: Subresource): { ref: Ref; gvk: GroupVersionKind } {
  const kind = SUBRESOURCE_SHAPES[sub].kind;
  if (!kind) return { ref: model(r.model), gvk: gvk(r.group, r.version, r.kind) };
  const known: Readonly<Record<string, string>> = {
    Scale: 'V1Scale',
    Binding: 'V1Binding',
    Eviction: 'V1Eviction',
  };
  const group = kind.group || r.group;
  const version = kind.version || r.version;
  return { ref: model(known[kind.kind] ?? r.model), gvk: gvk(group, version, kind.kind) };
}

/** Every path and operation the API server serves for one resource. */
function resourcePaths(r: ResourceInfo): PathSpec[] {
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const scope = r.namespaced ? 'Namespaced' : '';
  const collection = r.namespaced ? `${base}/namespaces/{namespace}/${r.resource}` : `${base}/${r.resource}`;
  const scopeParams: ParamSpec[] = r.namespaced ? [P.namespace] : [];
  const id = gvIdent(r);
  const kindGvk = gvk(r.group, r.version, r.kind);
  const kindRef = model(r.model);
  const listRef = model(`${r.model}List`);
  const can = (v: string): boolean => (r.verbs as readonly string[]).includes(v);
  const op = (
    o: Omit<OperationSpec, 'gvk' | 'produces'> & Partial<Pick<OperationSpec, 'gvk' | 'produces'>>,
  ) => ({
    gvk: kindGvk,
    produces: JSON_ONLY,
    ...o,
  });

  const paths: PathSpec[] = [];
  const collectionOps: OperationSpec[] = [];
  if (can('list')) {
    collectionOps.push(
      op({
        method: 'get',
        operationId: `list${id}${scope}${r.kind}`,
        description: `list or watch objects of kind ${r.kind}`,
        action: 'list',
        params: LIST_PARAMS,
        responses: [{ code: '200', body: listRef }],
        produces: LIST_PRODUCES,
      }),
    );
  }
  if (can('create')) {
    collectionOps.push(
      op({
        method: 'post',
        operationId: `create${id}${scope}${r.kind}`,
        description: `create ${article(r.kind)} ${r.kind}`,
        action: 'post',
        params: WRITE_PARAMS,
        body: { schema: kindRef, as: 'object' },
        responses: [
          { code: '200', body: kindRef },
          { code: '201', body: kindRef },
          { code: '202', body: kindRef },
        ],
      }),
    );
  }
  if (can('deletecollection')) {
    collectionOps.push(
      op({
        method: 'delete',
        operationId: `delete${id}Collection${scope}${r.kind}`,
        description: `delete collection of ${r.kind}`,
        action: 'deletecollection',
        params: [
          ...DELETE_PARAMS,
          ...LIST_PARAMS.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks'),
        ],
        body: { schema: DELETE_OPTIONS_REF, as: 'object' },
        responses: [{ code: '200', body: STATUS_REF }],
      }),
    );
  }
  if (collectionOps.length > 0)
    paths.push({ path: collection, params: [...scopeParams, P.pretty], ops: collectionOps });

  if (r.namespaced && can('list')) {
    paths.push({
      path: `${base}/${r.resource}`,
      params: [P.pretty],
      ops: [
        op({
          method: 'get',
          operationId: `list${id}${r.kind}ForAllNamespaces`,
          description: `list or watch objects of kind ${r.kind} in all namespaces`,
          action: 'list',
          params: LIST_PARAMS,
          responses: [{ code: '200', body: listRef }],
          produces: LIST_PRODUCES,
        }),
      ],
    });
  }

  const item = `${collection}/{name}`;
  const itemParams = [P.name, ...scopeParams, P.pretty];
  const itemOps: OperationSpec[] = [];
  if (can('get')) {
    itemOps.push(
      op({
        method: 'get',
        operationId: `read${id}${scope}${r.kind}`,
        description: `read the specified ${r.kind}`,
        action: 'get',
        params: [],
        responses: [{ code: '200', body: kindRef }],
      }),
    );
  }
  if (can('update'))
    itemOps.push(op(replaceOp(`replace${id}${scope}${r.kind}`, `replace the specified ${r.kind}`, kindRef)));
  if (can('patch'))
    itemOps.push(
      op(patchOp(`patch${id}${scope}${r.kind}`, `partially update the specified ${r.kind}`, kindRef)),
    );
  if (can('delete')) {
    itemOps.push(
      op({
        method: 'delete',
        operationId: `delete${id}${scope}${r.kind}`,
        description: `delete ${article(r.kind)} ${r.kind}`,
        action: 'delete',
        params: DELETE_PARAMS,
        body: { schema: DELETE_OPTIONS_REF, as: 'object' },
        responses: [
          { code: '200', body: STATUS_REF },
          { code: '202', body: STATUS_REF },
        ],
      }),
    );
  }
  if (itemOps.length > 0) paths.push({ path: item, params: itemParams, ops: itemOps });

  for (const sub of r.subresources) {
    const { ref, gvk: subGvk } = subresourceModel(r, sub);
    const subId = `${scope}${r.kind}${pascal(sub)}`;
    const ops: OperationSpec[] = [];
    const subOp = (o: Omit<OperationSpec, 'gvk' | 'produces'> & Partial<Pick<OperationSpec, 'produces'>>) =>
      op({ ...o, gvk: subGvk });
    switch (sub) {
      case 'status':
      case 'scale':
        ops.push(
          subOp({
            method: 'get',
            operationId: `read${id}${subId}`,
            description: `read ${sub} of the specified ${r.kind}`,
            action: 'get',
            params: [],
            responses: [{ code: '200', body: ref }],
          }),
          subOp(replaceOp(`replace${id}${subId}`, `replace ${sub} of the specified ${r.kind}`, ref)),
          subOp(patchOp(`patch${id}${subId}`, `partially update ${sub} of the specified ${r.kind}`, ref)),
        );
        break;
      case 'binding':
      case 'eviction':
        ops.push(
          subOp({
            method: 'post',
            operationId: `create${id}${subId}`,
            description: `create ${sub} of ${article(r.kind)} ${r.kind}`,
            action: 'post',
            params: WRITE_PARAMS,
            body: { schema: ref, as: 'object' },
            responses: [
              { code: '200', body: ref },
              { code: '201', body: ref },
              { code: '202', body: ref },
            ],
          }),
        );
        break;
      case 'finalize':
        ops.push(
          subOp(replaceOp(`replace${id}${subId}`, `replace finalize of the specified ${r.kind}`, ref)),
        );
        break;
      case 'log':
        ops.push(
          subOp({
            method: 'get',
            operationId: `read${id}${subId}`,
            description: `read log of the specified ${r.kind}`,
            action: 'get',
            params: SUBRESOURCE_PARAMS.log ?? [],
            responses: [{ code: '200', body: 'text' }],
            produces: ['text/plain'],
          }),
        );
        break;
      case 'exec':
      case 'attach':
      case 'portforward':
        for (const method of ['get', 'post'] as const) {
          ops.push(
            subOp({
              method,
              operationId: `connect${id}${pascal(method)}${subId}`,
              description: `connect ${method.toUpperCase()} requests to ${sub} of ${r.kind}`,
              action: 'connect',
              params: SUBRESOURCE_PARAMS[sub] ?? [],
              responses: [{ code: '200', body: 'text' }],
              produces: ['*/*'],
            }),
          );
        }
        break;
    }
    const subParams =
      sub === 'status' || sub === 'scale' || sub === 'log' ? itemParams : [P.name, ...scopeParams];
    paths.push({ path: `${item}/${sub}`, params: subParams, ops });
  }
  return paths;
}

function replaceOp(
  operationId: string,
  description: string,
  ref: Ref,
): Omit<OperationSpec, 'gvk' | 'produces'> {
  return {
    method: 'put',
    operationId,
    description,
    action: 'put',
    params: WRITE_PARAMS,
    body: { schema: ref, as: 'object' },
    responses: [
      { code: '200', body: ref },
      { code: '201', body: ref },
    ],
  };
}

function patchOp(
  operationId: string,
  description: string,
  ref: Ref,
): Omit<OperationSpec, 'gvk' | 'produces'> {
  return {
    method: 'patch',
    operationId,
    description,
    action: 'patch',
    params: [...WRITE_PARAMS, P.force],
    body: { schema: PATCH_REF, as: 'patch' },
    responses: [
      { code: '200', body: ref },
      { code: '201', body: ref },
    ],
  };
}

function article(kind: string): string {
  return /^[AEIOU]/.test(kind) ? 'an' : 'a';
}

const RESPONSE_TEXT: Readonly<Record<ResponseSpec['code'], string>> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
};

function renderParamV2(p: ParamSpec): ParameterV2 {
  const out: ParameterV2 = {
    name: p.name,
    in: p.in,
    type: p.type,
    uniqueItems: true,
    description: p.description,
  };
  if (p.required) out.required = true;
  return out;
}

function renderParamV3(p: ParamSpec): ParameterV3 {
  const out: ParameterV3 = {
    name: p.name,
    in: p.in,
    description: p.description,
    schema: { type: p.type, uniqueItems: true },
  };
  if (p.required) out.required = true;
  return out;
}

function renderOperationV2(c: Catalog, r: ResourceInfo, o: OperationSpec): OperationV2 {
  const parameters = o.params.map(renderParamV2);
  if (o.body) {
    parameters.unshift({
      name: 'body',
      in: 'body',
      required: true,
      schema: renderType(c, o.body.schema, 'v2'),
    });
  }
  const out: OperationV2 = {
    description: o.description,
    operationId: o.operationId,
    tags: [gvTag(r)],
    produces: [...o.produces],
    schemes: ['https'],
    parameters,
    responses: Object.fromEntries(
      o.responses.map((res) => [
        res.code,
        {
          description: RESPONSE_TEXT[res.code],
          schema: res.body === 'text' ? { type: 'string' } : renderType(c, res.body, 'v2'),
        },
      ]),
    ),
    'x-kubernetes-action': o.action,
    'x-kubernetes-group-version-kind': { ...o.gvk },
  };
  if (o.body) out.consumes = o.body.as === 'patch' ? [...PATCH_CONTENT_TYPES] : ['*/*'];
  return out;
}

function renderOperationV3(c: Catalog, r: ResourceInfo, o: OperationSpec): OperationV3 {
  const out: OperationV3 = {
    description: o.description,
    operationId: o.operationId,
    tags: [gvTag(r)],
    parameters: o.params.map(renderParamV3),
    responses: Object.fromEntries(
      o.responses.map((res) => {
        const schema: SchemaObject = res.body === 'text' ? { type: 'string' } : renderType(c, res.body, 'v3');
        return [
          res.code,
          {
            description: RESPONSE_TEXT[res.code],
            content: Object.fromEntries(o.produces.map((m) => [m, { schema }])),
          },
        ];
      }),
    ),
    'x-kubernetes-action': o.action,
    'x-kubernetes-group-version-kind': { ...o.gvk },
  };
  if (o.body) {
    const schema = renderType(c, o.body.schema, 'v3');
    const types = o.body.as === 'patch' ? PATCH_CONTENT_TYPES : ['*/*'];
    out.requestBody = { content: Object.fromEntries(types.map((m) => [m, { schema }])), required: true };
  }
  return out;
}

/** The schemas an operation names directly. */
function operationRefs(o: OperationSpec): Ref[] {
  const refs: Ref[] = [];
  if (o.body) refs.push(o.body.schema);
  for (const res of o.responses) if (res.body !== 'text') refs.push(res.body);
  return refs;
}

const SECURITY = {
  schemes: {
    BearerToken: {
      type: 'apiKey' as const,
      name: 'authorization',
      in: 'header' as const,
      description: 'Bearer token authentication: "Authorization: Bearer <token>".',
    },
  },
  requirement: [{ BearerToken: [] as string[] }],
};

const INFO = { title: 'Kubernetes', version: GIT_VERSION };

/** Builds the Swagger 2.0 document of every served resource (not cached; see openAPIV2()). */
export async function buildOpenAPIV2(): Promise<OpenAPIV2Document> {
  const c = await catalog();
  const paths: Record<string, PathItemV2> = {};
  const roots: Ref[] = [];
  for (const r of RESOURCES) {
    for (const p of resourcePaths(r)) {
      const item: PathItemV2 = {};
      for (const o of p.ops) {
        item[o.method] = renderOperationV2(c, r, o);
        roots.push(...operationRefs(o));
      }
      item.parameters = p.params.map(renderParamV2);
      paths[p.path] = item;
    }
  }
  roots.push(...[...c.models.keys()].map(model));
  return {
    swagger: '2.0',
    info: { ...INFO },
    paths,
    definitions: renderDefinitions(c, roots, 'v2'),
    securityDefinitions: SECURITY.schemes,
    security: SECURITY.requirement,
  };
}

/** `api/v1`, `apis/apps/v1`, ...: the keys of the /openapi/v3 index, one per served group-version. */
export function openAPIV3Paths(): string[] {
  const keys = RESOURCES.map((r) => (r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`));
  return [...new Set(keys)];
}

/**
 * Builds one group-version document (`api/v1`, `apis/apps/v1`); undefined when not served.
 * Its schemas are the kinds its operations name and everything they reference.
 */
export async function buildOpenAPIV3(gvPath: string): Promise<OpenAPIV3Document | undefined> {
  const served = RESOURCES.filter(
    (r) => (r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`) === gvPath,
  );
  if (served.length === 0) return undefined;
  const c = await catalog();
  const paths: Record<string, PathItemV3> = {};
  const roots: Ref[] = [];
  for (const r of served) {
    for (const p of resourcePaths(r)) {
      const item: PathItemV3 = {};
      for (const o of p.ops) {
        item[o.method] = renderOperationV3(c, r, o);
        roots.push(...operationRefs(o));
      }
      item.parameters = p.params.map(renderParamV3);
      paths[p.path] = item;
    }
  }
  return {
    openapi: '3.0.0',
    info: { ...INFO },
    paths,
    components: { schemas: renderDefinitions(c, roots, 'v3'), securitySchemes: SECURITY.schemes },
    security: SECURITY.requirement,
  };
}

// ---------------------------------------------------------------------------------------
// Serialized, cached documents

let v2Promise: Promise<SerializedDocument> | undefined;
let v2ProtobufPromise: Promise<{ body: Buffer; etag: string }> | undefined;
let v3Promise: Promise<{ docs: Map<string, SerializedDocument>; index: SerializedDocument }> | undefined;

function retryable<T>(p: Promise<T>, reset: () => void): Promise<T> {
  return p.catch((err: unknown) => {
    reset();
    throw err;
  });
}

/** `/openapi/v2` serialized once, with its ETag. */
export function openAPIV2(): Promise<SerializedDocument> {
  v2Promise ??= retryable(buildOpenAPIV2().then(serialize), () => (v2Promise = undefined));
  return v2Promise;
}

/**
 * `/openapi/v2` as gnostic protobuf, encoded once from the JSON form (as kube-openapi's
 * ToProtoBinary does), with its own ETag (uppercase hex SHA-512 of the bytes). kube-openapi
 * tags both forms with the JSON's hash; here the same URL's two representations (Vary:
 * Accept) do not share a strong entity tag, so a cache cannot answer one with the other.
 */
export function openAPIV2Protobuf(): Promise<{ body: Buffer; etag: string }> {
  v2ProtobufPromise ??= retryable(
    openAPIV2().then((json) => {
      const body = encodeOpenAPIV2Protobuf(JSON.parse(json.body) as OpenAPIV2Document);
      return { body, etag: createHash('sha512').update(body).digest('hex').toUpperCase() };
    }),
    () => (v2ProtobufPromise = undefined),
  );
  return v2ProtobufPromise;
}

function openAPIV3All(): Promise<{ docs: Map<string, SerializedDocument>; index: SerializedDocument }> {
  v3Promise ??= retryable(
    (async () => {
      const docs = new Map<string, SerializedDocument>();
      const index: OpenAPIV3Index = { paths: {} };
      for (const key of openAPIV3Paths()) {
        const doc = serialize(await buildOpenAPIV3(key));
        docs.set(key, doc);
        index.paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.etag}` };
      }
      return { docs, index: serialize(index) };
    })(),
    () => (v3Promise = undefined),
  );
  return v3Promise;
}

/** The `/openapi/v3` index, serialized once (building it serializes every group-version document, for their hashes). */
export async function openAPIV3Index(): Promise<SerializedDocument> {
  return (await openAPIV3All()).index;
}

/** One group-version document (`api/v1`, `apis/apps/v1`) serialized once; undefined when not served. */
export async function openAPIV3(gvPath: string): Promise<SerializedDocument | undefined> {
  return (await openAPIV3All()).docs.get(gvPath);
}

/** Builds and caches the JSON documents now (e.g. at server start, so the first kubectl does not wait). */
export async function warmOpenAPI(): Promise<void> {
  // Not the protobuf form of v2 (about 0.5 s more): kubectl asks for it only when v3 has
  // no document for a manifest's group-version; it is built on that first request.
  await Promise.all([openAPIV2(), openAPIV3All()]);
}

/** Whether `accept` admits JSON (no header, `application/json`, `application/*`, `*\/*`). */
function acceptsJSON(accept: string | undefined): boolean {
  return parseAccept(accept).some(
    (m) => (m.type === 'application' || m.type === '*') && (m.subtype === 'json' || m.subtype === '*'),
  );
}

const V2_SUBTYPES = {
  json: 'json',
  protobuf: CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE.slice('application/'.length),
  protobufDeprecated: CONTENT_TYPE_OPENAPI_V2_PROTOBUF.slice('application/'.length),
} as const;

/**
 * The form of `/openapi/v2` to serve, as kube-openapi's handler picks it: the first Accept
 * range (by q, then order) that matches JSON, the protobuf type or its deprecated `@v1.0`
 * spelling, wildcards matching JSON first; undefined when none does (406).
 */
function negotiateV2(accept: string | undefined): 'json' | 'protobuf' | undefined {
  for (const m of parseAccept(accept)) {
    if (m.type !== 'application' && m.type !== '*') continue;
    if (m.subtype === '*' || m.subtype === V2_SUBTYPES.json) return 'json';
    if (m.subtype === V2_SUBTYPES.protobuf || m.subtype === V2_SUBTYPES.protobufDeprecated) return 'protobuf';
  }
  return undefined;
}

function notAcceptable(types: readonly string[] = [CONTENT_TYPE_JSON]): DocumentResponse {
  return statusResponse(
    new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${types.join(', ')}`),
  );
}

/**
 * Answers a GET of `/openapi/v2`, `/openapi/v3` or `/openapi/v3/<api/v1|apis/<g>/<v>>`;
 * undefined for any other path. `/openapi/v2` is JSON or, for the Accept client-go sends,
 * gnostic protobuf (CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE); the v3 documents are JSON
 * only, and a request accepting none of a document's forms gets 406 (NotAcceptable).
 * Group-version documents honour `?hash=` as kube-openapi does: the current hash →
 * `Cache-Control: public, immutable`; a stale one → 301 to the current URL. ETag and
 * `If-None-Match` (304) on all of them.
 */
export async function openAPIResponse(
  req: DocumentRequest,
): Promise<DocumentResponse<string | Buffer> | undefined> {
  const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
  if (path === '/openapi/v2') {
    switch (negotiateV2(req.accept)) {
      case 'json':
        return documentResponse(await openAPIV2(), CONTENT_TYPE_JSON, req.ifNoneMatch);
      case 'protobuf':
        return documentResponse(
          await openAPIV2Protobuf(),
          CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE,
          req.ifNoneMatch,
        );
      default:
        return notAcceptable([CONTENT_TYPE_JSON, CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE]);
    }
  }
  if (path === '/openapi/v3') {
    return documentResponse(await openAPIV3Index(), CONTENT_TYPE_JSON, req.ifNoneMatch);
  }
  if (!path.startsWith('/openapi/v3/')) return undefined;
  const key = path.slice('/openapi/v3/'.length);
  const doc = await openAPIV3(key);
  if (!doc) {
    return statusResponse(
      new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`),
    );
  }
  if (!acceptsJSON(req.accept)) return notAcceptable();
  const params =
    typeof req.query === 'string' || req.query === undefined
      ? new URLSearchParams(req.query ?? '')
      : req.query;
  const hash = params.get('hash');
  if (hash !== null && hash !== '') {
    if (hash !== doc.etag) {
      return {
        status: 301,
        headers: { Location: `/openapi/v3/${key}?hash=${doc.etag}`, Vary: 'Accept' },
        body: '',
      };
    }
    return documentResponse(doc, CONTENT_TYPE_JSON, req.ifNoneMatch, {
      'Cache-Control': 'public, immutable',
      Expires: new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString(),
    });
  }
  return documentResponse(doc, CONTENT_TYPE_JSON, req.ifNoneMatch);
}
