/**
 * `/openapi/v2`: the Swagger 2.0 document of every served resource, its paths (paths.ts)
 * rendered with `definitions` from the catalogue, serialized once with its ETag; its
 * gnostic protobuf form (v2-protobuf.ts) encoded once from that JSON; and the Accept
 * negotiation between the two, as kube-openapi's handler does it.
 */
import { createHash } from 'node:crypto';
import { serializeCompressed } from '../document-response.js';
import { acceptableClauses } from '../negotiation.js';
import type { CompressedDocument } from '../document-response.js';
import { PATCH_CONTENT_TYPES } from '../encoding/media-types.js';
import { CUSTOM_RESOURCE_PATCH_TYPES } from '../apiextensions/cr-strategy.js';
import { customResourceSchemas } from '../apiextensions/openapi.js';
import { RESOURCES } from '../resources.js';
import type { ResourceInfo } from '../resources.js';
import { catalog, renderDefinitions, renderType } from './catalogue.js';
import type { Catalog, Ref } from './catalogue.js';
import { CONTENT_TYPE_OPENAPI_V2_PROTOBUF, retryable } from './documents.js';
import type { OpenAPIV2Document, OperationV2, ParameterV2, PathItemV2 } from './documents.js';
import { INFO, RESPONSE_TEXT, SECURITY, gvTag, model, operationRefs, resourcePaths } from './paths.js';
import type { OperationSpec, ParamSpec } from './paths.js';
import { CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE, encodeOpenAPIV2Protobuf } from './v2-protobuf.js';

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
  if (o.body)
    out.consumes =
      o.body.as === 'patch' ? [...(r.custom ? CUSTOM_RESOURCE_PATCH_TYPES : PATCH_CONTENT_TYPES)] : ['*/*'];
  return out;
}

/**
 * Builds the Swagger 2.0 document of every served resource, the custom ones `custom`
 * included (not cached; see openAPIV2()).
 */
export async function buildOpenAPIV2(custom: readonly ResourceInfo[] = []): Promise<OpenAPIV2Document> {
  const c = await catalog();
  const paths: Record<string, PathItemV2> = {};
  const roots: Ref[] = [];
  for (const r of [...RESOURCES, ...custom]) {
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
  const definitions = renderDefinitions(c, roots, 'v2');
  for (const r of custom) Object.assign(definitions, customResourceSchemas(r, 'v2'));
  return {
    swagger: '2.0',
    info: { ...INFO },
    paths,
    definitions,
    securityDefinitions: SECURITY.schemes,
    security: SECURITY.requirement,
  };
}

let v2Promise: Promise<CompressedDocument> | undefined;
let v2ProtobufPromise: Promise<{ body: Buffer; etag: string }> | undefined;
/** The custom resources the cached documents were built with (another set builds them again). */
const NO_CUSTOM: readonly ResourceInfo[] = [];
let v2Custom: readonly ResourceInfo[] = NO_CUSTOM;

function checkCustom(custom: readonly ResourceInfo[]): void {
  // Any empty set is the built-in documents.
  if (custom === v2Custom || (custom.length === 0 && v2Custom.length === 0)) return;
  v2Custom = custom;
  v2Promise = undefined;
  v2ProtobufPromise = undefined;
}

/**
 * `/openapi/v2` serialized once per set of custom resources, with its ETag, and kept
 * gzip-compressed (CompressedDocument: 0.2 MB instead of a 1.9 MB string for the process's life).
 */
export function openAPIV2(custom: readonly ResourceInfo[] = NO_CUSTOM): Promise<CompressedDocument> {
  checkCustom(custom);
  v2Promise ??= retryable(buildOpenAPIV2(custom).then(serializeCompressed), () => (v2Promise = undefined));
  return v2Promise;
}

/**
 * `/openapi/v2` as gnostic protobuf, encoded once from the JSON form (as kube-openapi's
 * ToProtoBinary does), with its own ETag (uppercase hex SHA-512 of the bytes). kube-openapi
 * tags both forms with the JSON's hash; here the same URL's two representations (Vary:
 * Accept) do not share a strong entity tag, so a cache cannot answer one with the other.
 */
export function openAPIV2Protobuf(
  custom: readonly ResourceInfo[] = NO_CUSTOM,
): Promise<{ body: Buffer; etag: string }> {
  checkCustom(custom);
  v2ProtobufPromise ??= retryable(
    openAPIV2(custom).then((json) => {
      const body = encodeOpenAPIV2Protobuf(JSON.parse(json.body) as OpenAPIV2Document);
      return { body, etag: createHash('sha512').update(body).digest('hex').toUpperCase() };
    }),
    () => (v2ProtobufPromise = undefined),
  );
  return v2ProtobufPromise;
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
export function negotiateV2(accept: string | undefined): 'json' | 'protobuf' | undefined {
  for (const m of acceptableClauses(accept)) {
    if (m.type !== 'application' && m.type !== '*') continue;
    if (m.subtype === '*' || m.subtype === V2_SUBTYPES.json) return 'json';
    if (m.subtype === V2_SUBTYPES.protobuf || m.subtype === V2_SUBTYPES.protobufDeprecated) return 'protobuf';
  }
  return undefined;
}
