/**
 * The HTTP layer of the documents the API server serves from memory (discovery, OpenAPI),
 * without I/O: a document serialized once with its entity tag, 200 with
 * ETag or 304 for `If-None-Match`, and metav1.Status answers. The server copies a
 * DocumentResponse's status, headers and body onto its response.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { ApiError } from './status.js';

/** What per-group discovery, `/version` and the OpenAPI v2/v3 JSON documents answer with. */
export const CONTENT_TYPE_JSON = 'application/json';

/** What a document endpoint needs from the request. */
export interface DocumentRequest {
  /** URL path without the query, e.g. `/apis/apps/v1`. */
  path: string;
  /** The raw query string (with or without `?`), or parsed parameters. */
  query?: string | URLSearchParams;
  /** The `Accept` header. */
  accept?: string;
  /** The `If-None-Match` header. */
  ifNoneMatch?: string;
  /** The `Accept-Encoding` header (documents kept compressed are sent so when it admits gzip). */
  acceptEncoding?: string;
}

/**
 * A complete answer: copy `status`, `headers` and `body` onto the HTTP response. `B` is
 * `string | Buffer` where a binary form may be served (the protobuf `/openapi/v2`).
 */
export interface DocumentResponse<B extends string | Buffer = string> {
  status: number;
  headers: Record<string, string>;
  /** Empty for 304 and redirects. */
  body: B;
}

/** A serialized document with its entity tag (uppercase hex SHA-512 of the body, as kube-openapi computes it). */
export interface SerializedDocument {
  body: string;
  etag: string;
}

/** Serializes `value` once and tags it. */
export function serialize(value: unknown): SerializedDocument {
  const body = JSON.stringify(value);
  return { body, etag: createHash('sha512').update(body).digest('hex').toUpperCase() };
}

/**
 * A serialized document kept gzip-compressed, for the large ones a server holds for its
 * whole life and serves seldom (the OpenAPI documents: 2.7 MB of JSON, 0.4 MB so). The
 * ETag is the JSON's, as serialize() computes it; `body` decompresses on each read, and a
 * request that accepts gzip is answered with `gzip` as it is (documentResponse).
 */
export class CompressedDocument implements SerializedDocument {
  readonly gzip: Buffer;
  readonly etag: string;

  constructor(json: string) {
    this.gzip = gzipSync(json);
    this.etag = createHash('sha512').update(json).digest('hex').toUpperCase();
  }

  /** The JSON text (decompressed now: some 6 ms for /openapi/v2's 1.9 MB). */
  get body(): string {
    return gunzipSync(this.gzip).toString('utf8');
  }
}

/** serialize(), compressed. */
export function serializeCompressed(value: unknown): CompressedDocument {
  return new CompressedDocument(JSON.stringify(value));
}

/**
 * Whether an `Accept-Encoding` header admits gzip (`gzip` or `*` with a q above 0), as
 * net/http's clients send it unasked and kube-apiserver's compression filter honours it.
 */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [coding = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/** A metav1.Status answer (404 NotFound, 406 NotAcceptable). */
export function statusResponse(err: ApiError): DocumentResponse {
  return {
    status: err.code,
    headers: { 'Content-Type': CONTENT_TYPE_JSON },
    body: JSON.stringify(err.toStatus()),
  };
}

/**
 * 200 with ETag (and Vary: Accept, since the same path has several representations), or
 * 304 when `If-None-Match` names the current ETag.
 */
export function documentResponse<B extends string | Buffer = string>(
  doc: { body: B; etag: string },
  contentType: string,
  ifNoneMatch: string | undefined,
  extraHeaders: Record<string, string> = {},
): DocumentResponse<B | ''> {
  const quoted = `"${doc.etag}"`;
  const headers = { 'Content-Type': contentType, ETag: quoted, Vary: 'Accept', ...extraHeaders };
  const tags = ifNoneMatch?.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (tags?.includes(quoted) || tags?.includes('*')) return { status: 304, headers, body: '' };
  return { status: 200, headers, body: doc.body };
}

/**
 * documentResponse() of a document kept compressed: its gzip bytes as they are, with
 * `Content-Encoding: gzip`, when `acceptEncoding` admits gzip (acceptsGzip; Go's net/http
 * asks for it unless told not to, and kube-apiserver's compression filter answers so),
 * else the decompressed JSON. Vary names Accept-Encoding too.
 */
export function compressedDocumentResponse(
  doc: SerializedDocument,
  contentType: string,
  ifNoneMatch: string | undefined,
  acceptEncoding: string | undefined,
  extraHeaders: Record<string, string> = {},
): DocumentResponse<string | Buffer> {
  if (!(doc instanceof CompressedDocument))
    return documentResponse(doc, contentType, ifNoneMatch, extraHeaders);
  const gzip = acceptsGzip(acceptEncoding);
  const res = documentResponse<string | Buffer>(
    {
      etag: doc.etag,
      get body() {
        return gzip ? doc.gzip : doc.body;
      },
    },
    contentType,
    ifNoneMatch,
    { Vary: 'Accept, Accept-Encoding', ...extraHeaders },
  );
  if (gzip && res.status === 200) res.headers['Content-Encoding'] = 'gzip';
  return res;
}
