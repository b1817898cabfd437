/**
 * The shapes of the OpenAPI documents this folder serves (Swagger 2.0 for `/openapi/v2`,
 * OpenAPI 3.0 for `/openapi/v3/...`), the media types named for them, and the helper that
 * caches a document's promise while letting a failed build be tried again.
 */
import type { GroupVersionKind } from '../discovery.js';

/** A query or path parameter's type. */
export type ParamType = 'string' | 'integer' | 'boolean';

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

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

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
/**
 * Swagger 2.0 protobuf (gnostic), all that client-go's OpenAPISchema() asks for. kube-openapi
 * accepts this spelling (deprecated) and CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE, and
 * answers both with the latter.
 */
export const CONTENT_TYPE_OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** OpenAPI v3 protobuf; not served (406). kubectl asks for application/json. */
export const CONTENT_TYPE_OPENAPI_V3_PROTOBUF = 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf';

/** `p`, forgetting it (through `reset`) when it rejects, so that a later request builds again. */
export function retryable<T>(p: Promise<T>, reset: () => void): Promise<T> {
  return p.catch((err: unknown) => {
    reset();
    throw err;
  });
}
