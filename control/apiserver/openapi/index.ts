/**
 * The OpenAPI documents: `/openapi/v2` (Swagger 2.0, JSON or gnostic protobuf — see
 * v2.ts and v2-protobuf.ts), `/openapi/v3` (the index of
 * group-version documents, v3.ts) and `/openapi/v3/api/v1`, `/openapi/v3/apis/<g>/<v>` (OpenAPI
 * 3.0, JSON). Both versions come from ONE schema source: the @kubernetes/client-node model
 * classes (`getAttributeTypeMap()` for fields and types, the JSDoc of their `.d.ts` files
 * for descriptions and, through `?`, which fields are required), walked from the model of
 * every served kind, plus patch-meta.ts for the strategic-merge-patch extensions the
 * generated models do not carry.
 *
 * The folder, one concern per file: documents.ts (the document shapes and media types),
 * models.ts (reading the client-node models), catalogue.ts (the per-kind schema catalogue
 * and its rendering as definitions or component schemas), paths.ts (the served paths and
 * operations in one neutral form), v2.ts and v3.ts (the two documents, built and cached),
 * v2-protobuf.ts (v2's gnostic protobuf form). This file answers the HTTP requests.
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
 * Cost: the schema catalog is built once, lazily, on first use (the attribute maps of the
 * ~370 reachable model modules read from their text, and their `.d.ts`, not the whole
 * client-node package, whose import alone takes over a second); each JSON document is
 * serialized once and cached gzip-compressed with the SHA-512 ETag of its JSON
 * (CompressedDocument: 0.4 MB instead of 2.7 MB of strings held for the process's life),
 * and sent compressed to clients that accept gzip, as kubectl does; the protobuf form of
 * v2 is built on its first request, with the ETag of its bytes.
 */
import {
  CONTENT_TYPE_JSON,
  compressedDocumentResponse,
  documentResponse,
  statusResponse,
} from '../document-response.js';
import { acceptableClauses } from '../negotiation.js';
import type { DocumentRequest, DocumentResponse } from '../document-response.js';
import type { ResourceInfo } from '../resources.js';
import { ApiError } from '../status.js';
import { CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE } from './v2-protobuf.js';
import { negotiateV2, openAPIV2, openAPIV2Protobuf } from './v2.js';
import { openAPIV3, openAPIV3All, openAPIV3Index } from './v3.js';

export type {
  OpenAPIV2Document,
  OpenAPIV3Document,
  OpenAPIV3Index,
  OperationAction,
  OperationV2,
  OperationV3,
  ParameterV2,
  ParameterV3,
  PathItemV2,
  ParamType,
  PathItemV3,
  SchemaObject,
} from './documents.js';
export { CONTENT_TYPE_OPENAPI_V2_PROTOBUF, CONTENT_TYPE_OPENAPI_V3_PROTOBUF } from './documents.js';
export { CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE } from './v2-protobuf.js';
export { PATCH_CONTENT_TYPES } from '../encoding/media-types.js';
export {
  definitionName,
  groupPackage,
  isQuantityField,
  loadModels,
  modelDefinitionNames,
} from './catalogue.js';
export { modelAttributeTypeMap, parseModelAttributes, parseModelDocs } from './models.js';
export type { AttributeType } from './models.js';
export { buildOpenAPIV2, openAPIV2, openAPIV2Protobuf } from './v2.js';
export { buildOpenAPIV3, openAPIV3, openAPIV3Index, openAPIV3Paths } from './v3.js';

/** Builds and caches the JSON documents now (e.g. at server start, so the first kubectl does not wait). */
export async function warmOpenAPI(): Promise<void> {
  // Not the protobuf form of v2 (about 0.5 s more): kubectl asks for it only when v3 has
  // no document for a manifest's group-version; it is built on that first request.
  await Promise.all([openAPIV2(), openAPIV3All()]);
}

const NO_CUSTOM: readonly ResourceInfo[] = [];

/** Whether `accept` admits JSON (no header, `application/json`, `application/*`, `*\/*`). */
function acceptsJSON(accept: string | undefined): boolean {
  return acceptableClauses(accept).some(
    (m) => (m.type === 'application' || m.type === '*') && (m.subtype === 'json' || m.subtype === '*'),
  );
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
 * `If-None-Match` (304) on all of them. `custom`: the custom resources served now (the same
 * array until that changes; the documents are cached per array).
 */
export async function openAPIResponse(
  req: DocumentRequest,
  custom: readonly ResourceInfo[] = NO_CUSTOM,
): Promise<DocumentResponse<string | Buffer> | undefined> {
  const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
  if (path === '/openapi/v2') {
    switch (negotiateV2(req.accept)) {
      case 'json':
        return compressedDocumentResponse(
          await openAPIV2(custom),
          CONTENT_TYPE_JSON,
          req.ifNoneMatch,
          req.acceptEncoding,
        );
      case 'protobuf':
        return documentResponse(
          await openAPIV2Protobuf(custom),
          CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE,
          req.ifNoneMatch,
        );
      default:
        return notAcceptable([CONTENT_TYPE_JSON, CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE]);
    }
  }
  if (path === '/openapi/v3') {
    return documentResponse(await openAPIV3Index(custom), CONTENT_TYPE_JSON, req.ifNoneMatch);
  }
  if (!path.startsWith('/openapi/v3/')) return undefined;
  const key = path.slice('/openapi/v3/'.length);
  const doc = await openAPIV3(key, custom);
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
    return compressedDocumentResponse(doc, CONTENT_TYPE_JSON, req.ifNoneMatch, req.acceptEncoding, {
      'Cache-Control': 'public, immutable',
      Expires: new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString(),
    });
  }
  return compressedDocumentResponse(doc, CONTENT_TYPE_JSON, req.ifNoneMatch, req.acceptEncoding);
}
