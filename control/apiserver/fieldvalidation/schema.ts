/**
 * The schema field validation walks: the OpenAPI v2 definitions (the same catalogue as
 * `/openapi/v2`, ../openapi/) compiled once into two trees that are cheap to walk — which
 * fields a value has (for unknown and duplicate fields), and the Go type of every value
 * (for the type checks) — by client-node model name.
 */
import { GO_FIELD_TYPES, GO_NAMED_COLLECTIONS } from '../encoding/go-types.js';
import { buildOpenAPIV2, modelDefinitionNames } from '../openapi/index.js';
import type { SchemaObject } from '../openapi/index.js';

/** What a value is, as far as unknown fields go. `null`: a scalar or an opaque value. */
export type FieldNode = StructNode | MapNode | ListNode | null;

export interface StructNode {
  readonly kind: 'struct';
  /** By JSON name; a leaf field maps to null, so `get` → undefined means "not a field". */
  readonly fields: Map<string, FieldNode>;
}

export interface MapNode {
  readonly kind: 'map';
  readonly values: FieldNode;
}

export interface ListNode {
  readonly kind: 'list';
  readonly items: FieldNode;
}

/** Untyped JSON (a patch before it is applied): objects are maps, arrays lists, all the way down. */
export interface JsonNode {
  readonly kind: 'json';
}

export const UNTYPED_JSON: JsonNode = { kind: 'json' };

/** Compiles definitions on demand; struct nodes are registered before their fields, so cycles end. */
class SchemaCompiler {
  private readonly compiled = new Map<string, FieldNode>();

  constructor(private readonly definitions: Readonly<Record<string, SchemaObject>>) {}

  definition(name: string): FieldNode {
    const done = this.compiled.get(name);
    if (done !== undefined) return done;
    const schema = this.definitions[name];
    if (!schema) throw new Error(`fieldvalidation: the OpenAPI document has no definition ${name}`);
    if (schema.properties) {
      const node: StructNode = { kind: 'struct', fields: new Map() };
      this.compiled.set(name, node);
      for (const [field, s] of Object.entries(schema.properties)) node.fields.set(field, this.schema(s));
      return node;
    }
    const node = this.schema(schema);
    this.compiled.set(name, node);
    return node;
  }

  schema(s: SchemaObject): FieldNode {
    if (s.$ref !== undefined) return this.definition(s.$ref.slice(s.$ref.lastIndexOf('/') + 1));
    // OpenAPI v3 wraps a described reference in allOf.
    if (s.allOf && s.allOf.length > 0) return this.schema(s.allOf[0]!);
    if (s.properties) {
      const node: StructNode = { kind: 'struct', fields: new Map() };
      for (const [field, f] of Object.entries(s.properties)) node.fields.set(field, this.schema(f));
      return node;
    }
    if (s.additionalProperties) return { kind: 'map', values: this.schema(s.additionalProperties) };
    if (s.type === 'array' && s.items) return { kind: 'list', items: this.schema(s.items) };
    // Scalars, IntOrString and Quantity (oneOf), and free-form objects (FieldsV1,
    // RawExtension, `any`): Go decodes these with their own unmarshalers, which neither
    // drop nor report anything inside them.
    return null;
  }
}

let schemas: ReadonlyMap<string, StructNode> | undefined;
let types: ReadonlyMap<string, StructType> | undefined;
let loading: Promise<void> | undefined;

/**
 * Builds the schema of every model the OpenAPI documents describe (by client-node model
 * name, e.g. `V1Deployment`), from the same catalog as `/openapi/v2`. Idempotent: the
 * first call takes as long as the OpenAPI catalog (0.4–0.8 s if nothing has built it yet,
 * ~15 ms after warmOpenAPI()); later calls return at once. A failed load is retried by
 * the next call.
 */
export function loadFieldSchemas(): Promise<void> {
  loading ??= (async () => {
    const [names, doc] = await Promise.all([modelDefinitionNames(), buildOpenAPIV2()]);
    const compiler = new SchemaCompiler(doc.definitions);
    const typeCompiler = new TypeCompiler(doc.definitions, new Map([...names].map(([m, d]) => [d, m])));
    const byModel = new Map<string, StructNode>();
    const typesByModel = new Map<string, StructType>();
    for (const [model, name] of names) {
      const node = compiler.definition(name);
      if (node?.kind === 'struct') byModel.set(model, node);
      const type = typeCompiler.definition(name);
      if (type.t === 'struct') typesByModel.set(model, type);
    }
    schemas = byModel;
    types = typesByModel;
  })().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

export function rootOf(model: string): StructNode {
  if (!schemas) throw new Error('fieldvalidation: await loadFieldSchemas() before validating fields');
  const root = schemas.get(model);
  if (!root) throw new Error(`fieldvalidation: no schema for model ${model}`);
  return root;
}

/** A value's type as Go's decoder sees it. `go`: the Go type as reflect prints it, for errors. */
export type TypeNode = StructType | MapType | ListType | LeafType;

export interface StructType {
  readonly t: 'struct';
  readonly go: string;
  /** The Go struct's name (`DeploymentSpec`), as errors name the struct of a field. */
  readonly name: string;
  readonly fields: Map<string, TypeNode>;
}

export interface MapType {
  readonly t: 'map';
  readonly go: string;
  readonly values: TypeNode;
}

export interface ListType {
  readonly t: 'list';
  readonly go: string;
  readonly items: TypeNode;
}

/**
 * Scalars; `bytes` is a []byte (a base64 string); `free` takes any JSON (FieldsV1,
 * RawExtension); the rest have their own UnmarshalJSON in Go.
 */
export interface LeafType {
  readonly t:
    | 'string'
    | 'bool'
    | 'int32'
    | 'int64'
    | 'float64'
    | 'bytes'
    | 'intOrString'
    | 'quantity'
    | 'time'
    | 'microTime'
    | 'free';
  readonly go: string;
}

/** Definitions with a Go unmarshaler of their own, by OpenAPI definition name. */
const SPECIAL_TYPES: Readonly<Record<string, LeafType>> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { t: 'time', go: 'v1.Time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { t: 'microTime', go: 'v1.MicroTime' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { t: 'intOrString', go: 'intstr.IntOrString' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { t: 'quantity', go: 'resource.Quantity' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': { t: 'free', go: 'v1.FieldsV1' },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { t: 'free', go: 'runtime.RawExtension' },
};

/** The element type of a Go list or map type (`[]v1.IPFamily` → `v1.IPFamily`). */
function elementGoType(go: string): string {
  const named = GO_NAMED_COLLECTIONS[go];
  if (named !== undefined) return elementGoType(named);
  if (go.startsWith('[]')) return go.slice(2);
  if (go.startsWith('map[')) return go.slice(go.indexOf(']') + 1);
  throw new Error(`fieldvalidation: ${go} is not a Go list or map type`);
}

/** `node` with the Go type `go` (a named type), its elements retyped to match. */
function withGoType(node: TypeNode, go: string): TypeNode {
  switch (node.t) {
    case 'struct':
      throw new Error(`fieldvalidation: cannot give struct ${node.go} the Go type ${go}`);
    case 'list':
      return { t: 'list', go, items: withGoType(node.items, elementGoType(go)) };
    case 'map':
      return { t: 'map', go, values: withGoType(node.values, elementGoType(go)) };
    default:
      return node.go === go ? node : { t: node.t, go };
  }
}

/** Compiles definitions into TypeNodes; struct nodes are registered before their fields, so cycles end. */
class TypeCompiler {
  private readonly compiled = new Map<string, TypeNode>();

  constructor(
    private readonly definitions: Readonly<Record<string, SchemaObject>>,
    /** Client-node model by definition name, for GO_FIELD_TYPES. */
    private readonly modelOf: ReadonlyMap<string, string>,
  ) {}

  definition(name: string): TypeNode {
    const done = this.compiled.get(name) ?? SPECIAL_TYPES[name];
    if (done !== undefined) return done;
    const schema = this.definitions[name];
    if (!schema) throw new Error(`fieldvalidation: the OpenAPI document has no definition ${name}`);
    if (schema.properties) {
      const parts = name.split('.');
      const kind = parts[parts.length - 1]!;
      const node: StructType = {
        t: 'struct',
        go: `${parts[parts.length - 2]}.${kind}`,
        name: kind,
        fields: new Map(),
      };
      this.compiled.set(name, node);
      const model = this.modelOf.get(name);
      for (const [field, s] of Object.entries(schema.properties)) {
        const go = model === undefined ? undefined : GO_FIELD_TYPES[`${model}.${field}`];
        const type = this.schema(s);
        node.fields.set(field, go === undefined ? type : withGoType(type, go));
      }
      return node;
    }
    const node = this.schema(schema);
    this.compiled.set(name, node);
    return node;
  }

  schema(s: SchemaObject): TypeNode {
    if (s.$ref !== undefined) return this.definition(s.$ref.slice(s.$ref.lastIndexOf('/') + 1));
    if (s.allOf && s.allOf.length > 0) return this.schema(s.allOf[0]!);
    if (s.properties) {
      const node: StructType = { t: 'struct', go: 'struct', name: '', fields: new Map() };
      for (const [field, f] of Object.entries(s.properties)) node.fields.set(field, this.schema(f));
      return node;
    }
    if (s.additionalProperties) {
      const values = this.schema(s.additionalProperties);
      return { t: 'map', go: `map[string]${values.go}`, values };
    }
    if (s.type === 'array' && s.items) {
      const items = this.schema(s.items);
      return { t: 'list', go: `[]${items.go}`, items };
    }
    switch (s.type) {
      case 'string':
        return s.format === 'byte' ? { t: 'bytes', go: '[]uint8' } : { t: 'string', go: 'string' };
      case 'boolean':
        return { t: 'bool', go: 'bool' };
      case 'integer':
        return s.format === 'int32' ? { t: 'int32', go: 'int32' } : { t: 'int64', go: 'int64' };
      case 'number':
        return { t: 'float64', go: 'float64' };
      default:
        // A schemaless object (`any` in the models): Go takes any JSON there.
        return { t: 'free', go: 'interface {}' };
    }
  }
}

export function typeRootOf(model: string): StructType {
  if (!types) throw new Error('fieldvalidation: await loadFieldSchemas() before checking field types');
  const root = types.get(model);
  if (!root) throw new Error(`fieldvalidation: no schema for model ${model}`);
  return root;
}
