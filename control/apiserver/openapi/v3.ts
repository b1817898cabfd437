/**
 * `/openapi/v3`: one OpenAPI 3.0 document per served group-version (`api/v1`,
 * `apis/apps/v1`), each self-contained (its paths from paths.ts, its `components.schemas`
 * the kinds those operations name and everything they reference), and the index of them
 * by the hash of their bodies; each serialized once with its ETag.
 */
import { serialize, serializeCompressed } from '../document-response.js';
import type { SerializedDocument } from '../document-response.js';
import { PATCH_CONTENT_TYPES } from '../encoding/media-types.js';
import { CUSTOM_RESOURCE_PATCH_TYPES } from '../apiextensions/cr-strategy.js';
import { customResourceSchemas } from '../apiextensions/openapi.js';
import { RESOURCES } from '../resources.js';
import type { ResourceInfo } from '../resources.js';
import { catalog, renderDefinitions, renderType } from './catalogue.js';
import type { Catalog, Ref } from './catalogue.js';
import { retryable } from './documents.js';
import type {
  OpenAPIV3Document,
  OpenAPIV3Index,
  OperationV3,
  ParameterV3,
  PathItemV3,
  SchemaObject,
} from './documents.js';
import { INFO, RESPONSE_TEXT, SECURITY, gvTag, model, operationRefs, resourcePaths } from './paths.js';
import type { OperationSpec, ParamSpec } from './paths.js';

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
    // A custom resource takes no strategic merge patch; kubectl apply then sends a merge patch.
    const types =
      o.body.as === 'patch' ? (r.custom ? CUSTOM_RESOURCE_PATCH_TYPES : PATCH_CONTENT_TYPES) : ['*/*'];
    out.requestBody = { content: Object.fromEntries(types.map((m) => [m, { schema }])), required: true };
  }
  return out;
}

/** `api/v1`, `apis/apps/v1`, ...: the keys of the /openapi/v3 index, one per served group-version. */
export function openAPIV3Paths(custom: readonly ResourceInfo[] = []): string[] {
  const keys = [...RESOURCES, ...custom].map((r) =>
    r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`,
  );
  return [...new Set(keys)];
}

/**
 * Builds one group-version document (`api/v1`, `apis/apps/v1`); undefined when not served.
 * Its schemas are the kinds its operations name and everything they reference.
 */
export async function buildOpenAPIV3(
  gvPath: string,
  custom: readonly ResourceInfo[] = [],
): Promise<OpenAPIV3Document | undefined> {
  const served = [...RESOURCES, ...custom].filter(
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
  const customHere = served.filter((r) => r.custom);
  // What the custom resources' definitions refer to.
  if (customHere.length > 0) roots.push(model('V1ObjectMeta'), model('V1ListMeta'));
  const schemas = renderDefinitions(c, roots, 'v3');
  for (const r of customHere) Object.assign(schemas, customResourceSchemas(r, 'v3'));
  return {
    openapi: '3.0.0',
    info: { ...INFO },
    paths,
    components: { schemas, securitySchemes: SECURITY.schemes },
    security: SECURITY.requirement,
  };
}

let v3Promise: Promise<{ docs: Map<string, SerializedDocument>; index: SerializedDocument }> | undefined;
const NO_CUSTOM: readonly ResourceInfo[] = [];
let v3Custom: readonly ResourceInfo[] = NO_CUSTOM;
/** The built-in group-versions' documents, which no custom resource changes: kept across sets. */
const builtInDocs = new Map<string, SerializedDocument>();

/** Every group-version document and the index, built once per set of custom resources. */
export function openAPIV3All(custom: readonly ResourceInfo[] = NO_CUSTOM): Promise<{
  docs: Map<string, SerializedDocument>;
  index: SerializedDocument;
}> {
  if (custom !== v3Custom && !(custom.length === 0 && v3Custom.length === 0)) {
    v3Custom = custom;
    v3Promise = undefined;
  }
  const customKeys = new Set(custom.map((r) => `apis/${r.group}/${r.version}`));
  v3Promise ??= retryable(
    (async () => {
      const docs = new Map<string, SerializedDocument>();
      const index: OpenAPIV3Index = { paths: {} };
      for (const key of openAPIV3Paths(custom)) {
        let doc = customKeys.has(key) ? undefined : builtInDocs.get(key);
        if (!doc) {
          // Kept compressed (CompressedDocument): 2.7 MB of JSON in all for the built-ins.
          doc = serializeCompressed(await buildOpenAPIV3(key, custom));
          if (!customKeys.has(key)) builtInDocs.set(key, doc);
        }
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
export async function openAPIV3Index(
  custom: readonly ResourceInfo[] = NO_CUSTOM,
): Promise<SerializedDocument> {
  return (await openAPIV3All(custom)).index;
}

/** One group-version document (`api/v1`, `apis/apps/v1`) serialized once; undefined when not served. */
export async function openAPIV3(
  gvPath: string,
  custom: readonly ResourceInfo[] = NO_CUSTOM,
): Promise<SerializedDocument | undefined> {
  return (await openAPIV3All(custom)).docs.get(gvPath);
}
