/**
 * Test-only: a tiny HTTP server that answers discovery and OpenAPI from the real document
 * builders (control/apiserver/discovery.ts and openapi/), records every request, and
 * hands anything else to the test; plus a way to run the real `kubectl` against it with a
 * throwaway kubeconfig, HOME and discovery cache.
 *
 * It is not the API server: it exists so that kubectl's discovery, explain, validation
 * and apply logic can be exercised against the documents before the server exists.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { discoveryResponse } from '../../control/apiserver/discovery.js';
import type { DocumentResponse } from '../../control/apiserver/document-response.js';
import { openAPIResponse } from '../../control/apiserver/openapi/index.js';

export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  accept: string | undefined;
  contentType: string | undefined;
  body: string;
  /** The status the server answered with. */
  status: number;
}

export interface DocsServerOptions {
  /**
   * Answer `/api` and `/apis` per group even when the client asks for aggregated
   * discovery (a server without aggregated discovery, as before Kubernetes 1.26).
   */
  legacyDiscoveryOnly?: boolean;
  /** Rewrites OpenAPI v3 group-version documents before they are sent (for negative tests). */
  rewriteOpenAPIV3?: (doc: Record<string, unknown>) => void;
  /** Answers every request the documents do not (object endpoints a test fakes). */
  handle?: (req: RecordedRequest) => DocumentResponse | undefined;
}

export interface DocsServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request so far, in arrival order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

function notFound(path: string): DocumentResponse {
  return {
    status: 404,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `the server could not find the requested resource (${path})`,
      reason: 'NotFound',
      code: 404,
    }),
  };
}

/** Starts the server on 127.0.0.1, on a free port. */
export async function startDocsServer(opts: DocsServerOptions = {}): Promise<DocsServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const recorded: RecordedRequest = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          accept: req.headers.accept,
          contentType: req.headers['content-type'],
          body: Buffer.concat(chunks).toString('utf8'),
          status: 0,
        };
        requests.push(recorded);
        let answer: DocumentResponse<string | Buffer> | undefined;
        try {
          if (recorded.method === 'GET') {
            const docReq = {
              path: url.pathname,
              query: url.searchParams,
              accept: opts.legacyDiscoveryOnly ? 'application/json' : req.headers.accept,
              ifNoneMatch: req.headers['if-none-match'],
              // kubectl asks for gzip (Go's transport does, unasked): the OpenAPI
              // documents are then sent compressed, as the API server sends them.
              acceptEncoding: req.headers['accept-encoding'],
            };
            answer = discoveryResponse(docReq);
            if (!answer) {
              answer = await openAPIResponse({ ...docReq, accept: req.headers.accept });
              if (
                answer?.status === 200 &&
                opts.rewriteOpenAPIV3 &&
                url.pathname.startsWith('/openapi/v3/')
              ) {
                const gzipped = answer.headers['Content-Encoding'] === 'gzip';
                const text = (gzipped ? gunzipSync(answer.body) : answer.body).toString();
                const doc = JSON.parse(text) as Record<string, unknown>;
                opts.rewriteOpenAPIV3(doc);
                answer = { ...answer, headers: { ...answer.headers }, body: JSON.stringify(doc) };
                delete answer.headers['ETag'];
                delete answer.headers['Content-Encoding'];
              }
            }
          }
          answer ??= opts.handle?.(recorded) ?? notFound(url.pathname);
        } catch (err) {
          answer = { status: 500, headers: { 'Content-Type': 'text/plain' }, body: String(err) };
        }
        recorded.status = answer.status;
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

export interface KubectlResult {
  /** Exit code; null when killed (timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  /**
   * Runs `kubectl <args>` against the server (asynchronously: the server lives in this
   * process), each run with a fresh `--cache-dir`, killed after `timeoutMs`.
   */
  run(args: readonly string[], opts?: { timeoutMs?: number }): Promise<KubectlResult>;
  /** A directory for the test's own files (manifests); removed by cleanup(). */
  dir: string;
  cleanup(): Promise<void>;
}

/** Writes a kubeconfig for `serverUrl` (plain http, no credentials) into a temp dir. */
export async function kubectlFor(serverUrl: string): Promise<Kubectl> {
  const dir = await mkdtemp(join(tmpdir(), 'k8ts-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: docs\n  cluster:\n    server: ${serverUrl}`,
      'users:',
      '- name: docs\n  user: {}',
      'contexts:',
      '- name: docs\n  context:\n    cluster: docs\n    user: docs\n    namespace: default',
      'current-context: docs',
      '',
    ].join('\n'),
  );
  let runs = 0;
  return {
    dir,
    run: (args, opts = {}) =>
      new Promise<KubectlResult>((resolve) => {
        const cacheDir = join(dir, `cache-${runs++}`);
        execFile(
          'kubectl',
          [...args, `--cache-dir=${cacheDir}`],
          {
            env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig },
            timeout: opts.timeoutMs ?? 30_000,
            maxBuffer: 64 * 1024 * 1024,
          },
          (err, stdout, stderr) => {
            const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
            resolve({ code, stdout, stderr });
          },
        );
      }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
