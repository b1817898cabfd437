/**
 * The OpenAPI definitions of custom resources, from each served version's
 * openAPIV3Schema (upstream's apiextensions-apiserver controller/openapi/builder): the kind
 * `<reversed group>.<version>.<Kind>` (`com.example.stable.v1.CronTab`) with apiVersion,
 * kind and a metadata that refers to ObjectMeta, tagged with its
 * `x-kubernetes-group-version-kind`, and its list. What `kubectl explain` reads (v3), and
 * what v2 carries reduced to Swagger 2.0 (no oneOf/anyOf/not, no boolean
 * additionalProperties, no nullable).
 */
import type { ResourceInfo } from '../resources.js';
import type { SchemaObject } from '../openapi/documents.js';
import type { JSONSchemaProps } from './types.js';

type Flavor = 'v2' | 'v3';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** The definition name of `kind` of custom resource `r`: the group reversed, the version, the kind. */
export function customDefinitionName(r: Pick<ResourceInfo, 'group' | 'version'>, kind: string): string {
  return `${r.group.split('.').reverse().join('.')}.${r.version}.${kind}`;
}

function refPrefix(flavor: Flavor): string {
  return flavor === 'v2' ? '#/definitions/' : '#/components/schemas/';
}

const DROPPED_V2 = new Set(['oneOf', 'anyOf', 'not', 'nullable', 'x-kubernetes-validations']);

/** A copy of `s` in the flavor's dialect (v2 without what Swagger 2.0 has not). */
function convert(s: JSONSchemaProps, flavor: Flavor): SchemaObject {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined) continue;
    if (flavor === 'v2' && DROPPED_V2.has(k)) continue;
    if (k === 'properties' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(
        Object.entries(v as Record<string, JSONSchemaProps>).map(([n, p]) => [n, convert(p, flavor)]),
      );
    } else if (k === 'items' && v && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = convert(v as JSONSchemaProps, flavor);
    } else if (k === 'additionalProperties') {
      if (typeof v === 'object' && v !== null) out[k] = convert(v as JSONSchemaProps, flavor);
      else if (flavor === 'v3') out[k] = v;
    } else if ((k === 'allOf' || k === 'oneOf' || k === 'anyOf') && Array.isArray(v)) {
      out[k] = (v as JSONSchemaProps[]).map((x) => convert(x, flavor));
    } else {
      out[k] = v;
    }
  }
  return out as SchemaObject;
}

/** The kind's and the list's definitions of custom resource `r` (a ResourceInfo with `custom`). */
export function customResourceSchemas(r: ResourceInfo, flavor: Flavor): Record<string, SchemaObject> {
  const schema = r.custom?.version.schema?.openAPIV3Schema ?? {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  };
  const kindName = customDefinitionName(r, r.kind);
  const listName = customDefinitionName(r, r.listKind);
  const apiVersion: SchemaObject = {
    type: 'string',
    description:
      'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
  };
  const kind: SchemaObject = {
    type: 'string',
    description:
      'Kind is a string value representing the REST resource this object represents. In CamelCase.',
  };
  const objectMeta = `${refPrefix(flavor)}${META}.ObjectMeta`;
  const metaDescription =
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
  const metadata: SchemaObject =
    flavor === 'v3'
      ? { description: metaDescription, allOf: [{ $ref: objectMeta }] }
      : { $ref: objectMeta, description: metaDescription };
  const converted = convert(schema, flavor);
  const kindSchema: SchemaObject = {
    ...converted,
    type: 'object',
    properties: { ...(converted.properties ?? {}), apiVersion, kind, metadata },
    'x-kubernetes-group-version-kind': [{ group: r.group, kind: r.kind, version: r.version }],
  };
  const listSchema: SchemaObject = {
    description: `${r.listKind} is a list of ${r.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion,
      items: {
        description: `List of ${r.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        type: 'array',
        items: { $ref: `${refPrefix(flavor)}${kindName}` },
      },
      kind,
      metadata: { $ref: `${refPrefix(flavor)}${META}.ListMeta`, description: 'Standard list metadata.' },
    },
    'x-kubernetes-group-version-kind': [{ group: r.group, kind: r.listKind, version: r.version }],
  };
  return { [kindName]: kindSchema, [listName]: listSchema };
}
