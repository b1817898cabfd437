/**
 * The paths that are not resources: the node credential exchange and `/cacerts` (secure
 * serving only), discovery and OpenAPI documents, `/healthz`, `/livez`, `/readyz` and
 * `/metrics` (kube-apiserver's non-resource handlers: the discovery and OpenAPI handlers,
 * healthz, the metrics endpoint), and the service account issuer's OIDC discovery documents
 * `/.well-known/openid-configuration` and `/openid/v1/jwks` (served when the server issues
 * service account tokens; RBAC's system:service-account-issuer-discovery lets service
 * accounts read them). Authorization has already run (handlers/filters.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type client from 'prom-client';
import { CA_CERTS_PATH, NODE_CREDENTIAL_PATH } from '../../../api/auth/node-credential.js';
import type { KeyPair } from '../../../api/tls/certs.js';
import { signNodeCredential } from '../auth/node-credential.js';
import { JWKS_PATH, OPENID_CONFIG_PATH, type ServiceAccountTokens } from '../auth/serviceaccount-token.js';
import { discoveryResponse } from '../discovery.js';
import type { DocumentResponse } from '../document-response.js';
import { openAPIResponse } from '../openapi/index.js';
import type { Registry } from '../registry.js';
import type { ResourceInfo } from '../resources.js';
import { readBody } from '../request.js';
import { ApiError, badRequest } from '../status.js';
import { writeJson } from './response.js';

/** What the non-resource paths read: the cluster CA (secure serving), the Nodes, the metrics. */
export interface NonResourceDeps {
  /** Secure serving's CA, which signs node credentials and is served at `/cacerts`; undefined: neither path is served. */
  security: { ca: KeyPair } | undefined;
  /** The nodes' registry: a node credential is signed only for a Node that exists or for a bootstrapper. */
  nodes: Registry;
  /** The registry `/metrics` exposes. */
  metrics: client.Registry;
  /** The custom resources served now (discovery and OpenAPI list them); default none. */
  customResources?: readonly ResourceInfo[];
  /** The service account token issuer and where its JWKS is served; undefined: no OIDC documents. */
  serviceAccountIssuer?: { tokens: ServiceAccountTokens; jwksURI: string };
}

/**
 * Answers a GET or HEAD of a non-resource path, or POST of the node credential exchange.
 * @throws ApiError 404 NotFound for any other path or method, 400 for a malformed
 *   credential request.
 */
export async function serveNonResource(
  deps: NonResourceDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const sec = deps.security;
  if (sec && url.pathname === NODE_CREDENTIAL_PATH && req.method === 'POST') {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw badRequest('the body must be JSON: {"csr": "<PEM certificate request>"}');
    }
    const nodes = deps.nodes;
    const nodeExists = async (name: string): Promise<boolean> => {
      try {
        await nodes.get(undefined, name);
        return true;
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) return false;
        throw err;
      }
    };
    writeJson(res, 201, await signNodeCredential(sec.ca, body, nodeExists));
    return;
  }
  if (sec && url.pathname === CA_CERTS_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
    res.writeHead(200, { 'Content-Type': 'application/x-pem-file' }).end(sec.ca.cert);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  const docReq = {
    path: url.pathname,
    query: url.searchParams,
    ...(req.headers.accept ? { accept: req.headers.accept } : {}),
    ...(req.headers['if-none-match'] ? { ifNoneMatch: req.headers['if-none-match'] } : {}),
    ...(req.headers['accept-encoding'] ? { acceptEncoding: req.headers['accept-encoding'] } : {}),
  };
  const custom = deps.customResources ?? [];
  const doc = discoveryResponse(docReq, { custom }) ?? (await openAPIResponse(docReq, custom));
  if (doc) {
    writeDocument(res, doc);
    return;
  }
  const issuer = deps.serviceAccountIssuer;
  if (issuer && (url.pathname === OPENID_CONFIG_PATH || url.pathname === JWKS_PATH)) {
    // As kube-apiserver's openidmetadata handlers: public caching for an hour.
    const json = url.pathname === JWKS_PATH;
    const body = JSON.stringify(
      json ? await issuer.tokens.jwks() : issuer.tokens.openIDConfiguration(issuer.jwksURI),
    );
    res
      .writeHead(200, {
        'Content-Type': json ? 'application/jwk-set+json' : 'application/json',
        'Cache-Control': 'public, max-age=3600',
        'Content-Length': Buffer.byteLength(body),
      })
      .end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  switch (url.pathname) {
    case '/healthz':
    case '/livez':
    case '/readyz':
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
      return;
    case '/metrics':
      res.writeHead(200, { 'Content-Type': deps.metrics.contentType }).end(await deps.metrics.metrics());
      return;
  }
  throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

function writeDocument(res: ServerResponse, doc: DocumentResponse<string | Buffer>): void {
  res.writeHead(doc.status, { ...doc.headers, 'Content-Length': Buffer.byteLength(doc.body) });
  res.end(doc.body);
}
