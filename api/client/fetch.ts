/**
 * A WHATWG `fetch` over node:http/https that honours a kubeconfig's connection settings
 * (CA, client certificate and key, bearer token, insecure-skip-tls-verify), which the
 * global fetch cannot take without an undici dispatcher. For code that speaks plain fetch
 * (leader election's lease client, tests); the RestClient is the API client otherwise.
 *
 *   const f = configuredFetch(loadKubeconfig(path).config);
 *   const res = await f(`${server}/api/v1/namespaces`);
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { Readable } from 'node:stream';
import { createSecureContext } from 'node:tls';
import { ConnectingAgent } from './connect.js';
import type { RestClientConfig } from './rest.js';

/** fetch's init; of `body`, strings and byte arrays are supported (others throw a TypeError). */
export type FetchInit = Pick<RequestInit, 'method' | 'headers' | 'body' | 'signal'>;

/** fetch(url, init) with `config`'s TLS settings and token (an explicit Authorization header wins). */
export type ConfiguredFetch = (url: string | URL, init?: FetchInit) => Promise<Response>;

/** How long an idle connection is kept (ms): as the RestClient's, below the servers' own idle timeouts. */
const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/**
 * A fetch with `config`'s TLS material (or its `connect`) and bearer token. Answers are `Response`s with a
 * streamed body. Its connections are kept alive for 4 s between requests (a Lease renewed
 * every 2 s reuses one) and share one TLS context: a new connection and a new context (the
 * key and certificates parsed again) for each request were 0.7 % of the control process
 * in bench:scale, from the leader elections' renewals alone.
 */
export function configuredFetch(
  config: Pick<
    RestClientConfig,
    'ca' | 'cert' | 'key' | 'token' | 'insecureSkipTLSVerify' | 'tlsServerName' | 'connect'
  >,
): ConfiguredFetch {
  // With `connect` (RestClientConfig.connect), every request is plain HTTP over the
  // connections it opens, whatever the URL's scheme; the TLS settings are not used.
  const connect = config.connect;
  const connecting = connect
    ? new ConnectingAgent({ keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS }, connect)
    : undefined;
  const agent =
    connecting ??
    new https.Agent({
      keepAlive: true,
      timeout: IDLE_SOCKET_TIMEOUT_MS,
      secureContext: createSecureContext({
        ...(config.ca ? { ca: config.ca } : {}),
        ...(config.cert ? { cert: config.cert } : {}),
        ...(config.key ? { key: config.key } : {}),
      }),
      ...(config.insecureSkipTLSVerify ? { rejectUnauthorized: false } : {}),
      ...(config.tlsServerName ? { servername: config.tlsServerName } : {}),
    });
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      const headers: Record<string, string> = {};
      if (config.token) headers.authorization = `Bearer ${config.token}`;
      for (const [k, v] of new Headers(init.headers).entries()) headers[k] = v;
      const raw = init.body ?? undefined;
      if (raw !== undefined && typeof raw !== 'string' && !(raw instanceof Uint8Array)) {
        reject(new TypeError('configuredFetch: only string and byte-array bodies are supported'));
        return;
      }
      const body = raw;
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      if (connecting) url.protocol = 'http:';
      const transport = url.protocol === 'https:' ? https : http;
      const req = transport.request(
        url,
        {
          method: init.method ?? 'GET',
          headers,
          ...(url.protocol === 'https:' || connecting ? { agent } : {}),
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) for (const x of v) h.append(k, x);
            else if (v !== undefined) h.set(k, v);
          }
          const nullBody = status === 204 || status === 304 || init.method === 'HEAD';
          if (nullBody) res.resume();
          resolve(
            new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage ?? '',
              headers: h,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
