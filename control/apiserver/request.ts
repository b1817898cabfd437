/**
 * Request parsing for the API server: which resource a URL names (Kubernetes' request
 * info resolver), and the request body (JSON, YAML or protobuf, at most 3 MiB).
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../api/object.js';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE } from './protobuf.js';
import { findResource, type ResourceInfo, type Subresource } from './resources.js';
import {
  badRequest,
  methodNotAllowed,
  notFound,
  requestEntityTooLarge,
  unsupportedMediaType,
  ApiError,
} from './status.js';

/** Kubernetes' limit on request bodies (apiserver's MaxRequestBodyBytes). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The request verbs of Kubernetes' RequestInfo (and RBAC). */
export type RequestVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** What a resource URL names. */
export interface ResourceRequest {
  resource: ResourceInfo;
  /** The namespace of the URL (namespaced resources; undefined = all namespaces). */
  namespace: string | undefined;
  name: string | undefined;
  subresource: Subresource | undefined;
  verb: RequestVerb;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * Resolves `/api/v1/...` and `/apis/<group>/<version>/...` paths to a resource request:
 *   [/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
 * and `/api/v1/namespaces/{name}[/status]` for namespaces themselves.
 * @returns undefined when the path is not a resource path (discovery and others).
 * @throws ApiError 404 for unknown groups, versions, resources or subresources;
 *   405 for a method the path does not support.
 */
export function resolveResource(
  method: string,
  pathname: string,
  query: URLSearchParams,
): ResourceRequest | undefined {
  const parts = pathname.split('/').filter((p) => p !== '');
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  rest = rest.map((p) => decodeURIComponent(p));
  let namespace: string | undefined;
  // /namespaces/{ns}/{resource}/... — but /namespaces/{name} and /namespaces/{name}/status are the namespace itself.
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(rest.length === 3 && NAMESPACE_SUBRESOURCES.has(rest[2]!))
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resourceName, name, subresource, ...extra] = rest;
  const resource = findResource(group, version, resourceName!);
  if (!resource || extra.length > 0) {
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  }
  if (namespace !== undefined && !resource.namespaced) {
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  }
  if (subresource !== undefined && !resource.subresources.includes(subresource as Subresource)) {
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  }
  const verb = verbOf(method, name, query);
  if (!verb) throw methodNotAllowed(method, `${resource.resource}${name ? '/{name}' : ''}`);
  if (!resource.verbs.includes(verb) && subresource === undefined) {
    throw methodNotAllowed(method, resource.resource);
  }
  return { resource, namespace, name, subresource: subresource as Subresource | undefined, verb };
}

function verbOf(method: string, name: string | undefined, query: URLSearchParams): RequestVerb | undefined {
  const watch = query.get('watch') === 'true' || query.get('watch') === '1';
  switch (method) {
    case 'GET':
      if (watch) return 'watch';
      return name === undefined ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return name === undefined ? undefined : 'update';
    case 'PATCH':
      return name === undefined ? undefined : 'patch';
    case 'DELETE':
      return name === undefined ? 'deletecollection' : 'delete';
    default:
      return undefined;
  }
}

/**
 * Reads a request body of at most `limit` bytes, as UTF-8 text — except a protobuf body
 * (Content-Type application/vnd.kubernetes.protobuf), which is binary: it comes back as
 * latin1, one char per byte, which decodeObject turns back into the bytes. Read through
 * 'data' events (an async iterator per request costs more than the rest of reading).
 * @throws ApiError 413 when it is larger (a declared size is refused unread; a body that
 *   grows past the limit ends the connection); the request's own error when it fails or
 *   closes before its end.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    return Promise.reject(requestEntityTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    if (req.errored) {
      reject(req.errored);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: Error | undefined): void => {
      if (done) return;
      done = true;
      if (err) reject(err);
      else {
        const bytes = Buffer.concat(chunks);
        resolve(
          bytes.toString(mediaType(req.headers['content-type']) === PROTOBUF_MEDIA_TYPE ? 'latin1' : 'utf8'),
        );
      }
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        finish(requestEntityTooLarge(limit));
        // As leaving a for-await loop over the request did: the stream (and its connection) ends.
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => finish(undefined));
    req.once('error', (err) => finish(err));
    // 'close' follows 'end' on every request: build the error (and its stack) only when
    // the body really was cut short.
    req.once('close', () => {
      if (!done) finish(prematureClose());
    });
  });
}

/** The error of a request that closed before its end, as Node's stream utilities name it. */
function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/** The media types an object body may be sent in. */
export const OBJECT_MEDIA_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
] as const;

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Decodes an object body (POST/PUT) from JSON, YAML or protobuf (protobuf.ts). A string
 * body is readBody's: UTF-8 text, or latin1 for protobuf.
 * @throws ApiError 415 for other media types, 400 for a body that does not parse or is
 *   not an object.
 */
export function decodeObject(raw: Buffer | string, contentType: string | undefined): KubeObject {
  const type = mediaType(contentType) || 'application/json';
  if (type === PROTOBUF_MEDIA_TYPE) {
    return decodeProtobufObject(typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw);
  }
  const body = typeof raw === 'string' ? raw : raw.toString('utf8');
  let value: unknown;
  if (type === 'application/json') {
    try {
      value = JSON.parse(body);
    } catch (err) {
      throw badRequest(`the body of the request could not be decoded as JSON: ${(err as Error).message}`);
    }
  } else if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
    try {
      value = parseYaml(body);
    } catch (err) {
      throw badRequest(`the body of the request could not be decoded as YAML: ${(err as Error).message}`);
    }
  } else {
    throw unsupportedMediaType(type, OBJECT_MEDIA_TYPES);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('the body of the request must be a JSON or YAML object');
  }
  return value as KubeObject;
}

/** 404 for a namespace named in a URL that does not exist (NamespaceLifecycle admission). */
export function namespaceNotFound(namespace: string): ApiError {
  return notFound({ group: '', resource: 'namespaces', name: namespace });
}
