/**
 * Request parsing for the API server: which resource a URL names (Kubernetes' request
 * info resolver), and the request body (JSON, YAML or protobuf, at most 3 MiB).
 */
import type { IncomingMessage } from 'node:http';
import { yamlNestingExceeds } from './encoding/yaml-nesting.js';
import { goJsonSyntaxError, goTypeMetaError, summarizeData } from './encoding/go-json.js';
import { decodeYamlBody } from './encoding/yaml-body.js';
import type { KubeObject } from '../../api/object.js';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE } from './encoding/protobuf.js';
import { findResource, type ResourceInfo, type ResourceLookup, type Subresource } from './resources.js';
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

/**
 * How deep arrays and objects may nest in a request body. Kubernetes' decoders inherit Go
 * encoding/json's limit of 10 000 ("exceeded max depth"); V8 cannot go that far: its
 * JSON.stringify and structuredClone, which every stored object goes through, overflow the
 * stack near 2 000 levels of objects. 1 000 is far beyond any object of a served kind.
 */
export const MAX_JSON_NESTING_DEPTH = 1000;

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
 * `lookup` finds the resource (default: the built-in table; the API server passes one that
 * knows the custom resources too).
 * @returns undefined when the path is not a resource path (discovery and others).
 * @throws ApiError 404 for unknown groups, versions, resources or subresources;
 *   405 for a method the path does not support.
 */
export function resolveResource(
  method: string,
  pathname: string,
  query: URLSearchParams,
  lookup: ResourceLookup = findResource,
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
  rest = rest.map(decodePathSegment);
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
  const resource = lookup(group, version, resourceName!);
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

/**
 * One segment of a request path, percent-decoded.
 * @throws ApiError 400 for a malformed escape (`%zz`, a cut-off `%4`, bytes that are not
 *   UTF-8), as Go's URL parser refuses the request in kube-apiserver.
 */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`invalid URL escape in the request path segment "${segment.slice(0, 256)}"`);
  }
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
 * A text body whose arrays and objects nest deeper than MAX_JSON_NESTING_DEPTH is refused
 * here, before any parser sees it.
 * @throws ApiError 413 when it is larger: a declared size is refused unread; a body that
 *   grows past the limit (chunked) is refused at that point and the rest is read and
 *   dropped, so that the client is still there to read the 413 (memory stays bounded by
 *   the limit). 400 for a body nested too deeply. The request's own error when it fails
 *   or closes before its end.
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
    const binary = mediaType(req.headers['content-type']) === PROTOBUF_MEDIA_TYPE;
    const finish = (err: Error | undefined): void => {
      if (done) return;
      done = true;
      if (err) {
        reject(err);
        return;
      }
      const bytes = Buffer.concat(chunks);
      if (!binary && nestingExceeds(bytes, MAX_JSON_NESTING_DEPTH)) {
        reject(nestedTooDeeply());
        return;
      }
      resolve(bytes.toString(binary ? 'latin1' : 'utf8'));
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        // The rest is read and dropped ('data' keeps flowing, and `done` ignores it).
        finish(requestEntityTooLarge(limit));
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

/** 400 for a body nested deeper than MAX_JSON_NESTING_DEPTH, in Go encoding/json's words. */
export function nestedTooDeeply(): ApiError {
  return badRequest(
    `the body of the request could not be decoded: exceeded max depth (${MAX_JSON_NESTING_DEPTH} levels of arrays and objects)`,
  );
}

const QUOTE = 0x22; // "
const APOSTROPHE = 0x27; // '
const BACKSLASH = 0x5c;

/**
 * Whether the arrays and objects of a JSON or YAML text nest deeper than `limit`: counts
 * `[` and `{` against `]` and `}` outside quoted strings (JSON's "…" with backslash
 * escapes; YAML's '…' too). For YAML this sees flow collections only; block nesting is
 * bounded by the body limit (each level is one more character of indentation on a line)
 * and checked on the parsed value (checkValueNesting). Linear, allocates nothing.
 */
export function nestingExceeds(text: Uint8Array, limit: number): boolean {
  let depth = 0;
  let quote = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== 0) {
      if (c === BACKSLASH && quote === QUOTE) i++;
      else if (c === quote) quote = 0;
      continue;
    }
    if (c === QUOTE || c === APOSTROPHE) quote = c;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Refuses a parsed body (YAML's block collections, which nestingExceeds does not see)
 * nested deeper than MAX_JSON_NESTING_DEPTH.
 * @throws ApiError 400, as readBody for a text nested too deeply.
 */
export function checkValueNesting(value: unknown): void {
  if (valueNestingExceeds(value, MAX_JSON_NESTING_DEPTH)) throw nestedTooDeeply();
}

/**
 * Whether a parsed value nests arrays and objects deeper than `limit` (an explicit stack,
 * so that the check itself cannot overflow).
 */
function valueNestingExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(v))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
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

/** An object body as decoded, with what strict YAML decoding found in it. */
export interface DecodedObjectBody {
  obj: KubeObject;
  /**
   * For a YAML body: go-yaml v2's strict errors (`line 7: key "a" already set in map`),
   * which fieldValidation Warn and Strict report (encoding/yaml-body.ts); else empty.
   */
  yamlStrictErrors: string[];
}

/**
 * Decodes an object body (POST/PUT) from JSON, YAML (as go-yaml v2 under sigs.k8s.io/yaml:
 * YAML 1.1, the first document, repeated keys' last value; encoding/yaml-body.ts) or
 * protobuf (encoding/protobuf.ts). A string body is readBody's: UTF-8 text, or latin1 for
 * protobuf. `null` (or an empty YAML document) is an empty object, as the serializer
 * leaves apiVersion and kind to the request's defaults.
 * @param kind the kind the request creates or replaces, when known: a body that does not
 *   decode is then refused in the create and update handlers' words (transformDecodeError,
 *   SimpleMetaFactory.Interpret), `the object provided is unrecognized (must be of type
 *   ConfigMap): couldn't get version/kind; json parse error: invalid character 'a' looking
 *   for beginning of value (6170695665...)`; without it, as `the body of the request could
 *   not be decoded as JSON: <encoding/json's words>`.
 * @throws ApiError 415 for other media types, 400 for a body that does not parse or is
 *   not an object.
 */
export function decodeObjectBody(
  raw: Buffer | string,
  contentType: string | undefined,
  kind?: string,
): DecodedObjectBody {
  const type = mediaType(contentType) || 'application/json';
  if (type === PROTOBUF_MEDIA_TYPE) {
    return {
      obj: decodeProtobufObject(typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw),
      yamlStrictErrors: [],
    };
  }
  const body = typeof raw === 'string' ? raw : raw.toString('utf8');
  let value: unknown;
  let yamlStrictErrors: string[] = [];
  // transformDecodeError's words for a body whose apiVersion/kind cannot be read.
  const unrecognized = (why: string): ApiError =>
    badRequest(
      `the object provided is unrecognized (must be of type ${kind}): ${why} (${summarizeData(body)})`,
    );
  if (type === 'application/json') {
    try {
      value = JSON.parse(body);
    } catch (err) {
      const why = goJsonSyntaxError(body) ?? (err as Error).message;
      if (kind !== undefined) throw unrecognized(`couldn't get version/kind; json parse error: ${why}`);
      throw badRequest(`the body of the request could not be decoded as JSON: ${why}`);
    }
  } else if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
    // Before the parser, which recurses once per level (encoding/yaml-nesting.ts).
    if (yamlNestingExceeds(body, MAX_JSON_NESTING_DEPTH)) throw nestedTooDeeply();
    try {
      ({ value, strictErrors: yamlStrictErrors } = decodeYamlBody(body));
    } catch (err) {
      if (kind !== undefined) throw unrecognized((err as Error).message);
      throw badRequest(`the body of the request could not be decoded as YAML: ${(err as Error).message}`);
    }
    checkValueNesting(value);
  } else {
    throw unsupportedMediaType(type, OBJECT_MEDIA_TYPES);
  }
  if (value === null) value = {};
  const typeMetaError = goTypeMetaError(value);
  if (typeMetaError !== undefined) {
    if (kind !== undefined)
      throw unrecognized(`couldn't get version/kind; json parse error: ${typeMetaError}`);
    throw badRequest('the body of the request must be a JSON or YAML object');
  }
  return { obj: value as KubeObject, yamlStrictErrors };
}

/** The object of `decodeObjectBody` alone (bodies strict YAML decoding does not apply to). */
export function decodeObject(raw: Buffer | string, contentType: string | undefined): KubeObject {
  return decodeObjectBody(raw, contentType).obj;
}

/** 404 for a namespace named in a URL that does not exist (NamespaceLifecycle admission). */
export function namespaceNotFound(namespace: string): ApiError {
  return notFound({ group: '', resource: 'namespaces', name: namespace });
}

/**
 * The request's target as a URL (origin-form `/api/...`, or absolute-form).
 * @throws ApiError 400 when it does not parse (`GET http://[ HTTP/1.1`), as Go's net/http
 *   refuses such a request line.
 */
export function requestURL(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://apiserver');
  } catch {
    throw badRequest(
      `the request target could not be parsed as a URL: ${JSON.stringify((req.url ?? '').slice(0, 256))}`,
    );
  }
}
