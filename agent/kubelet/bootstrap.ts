/**
 * The agent's node credential (kubelet TLS bootstrap, as control/apiserver/auth/
 * node-credential.ts describes the exchange). On first start with a join token
 * `K10<CA hash>::<id>.<secret>`:
 *
 * 1. download the cluster CA from the server's public `/cacerts` (without trusting the
 *    connection) and compare its SHA-256 with the token's CA hash — a server that cannot
 *    show the pinned CA is not trusted with anything;
 * 2. make a key pair and a certificate request for `CN=system:node:<node>,
 *    O=system:nodes`, and POST it, authenticated by the bootstrap token, over TLS verified
 *    against that CA;
 * 3. keep CA, certificate and key in `<data dir>/tls/` (0600), as the kubelet keeps
 *    `kubelet-client-current.pem`.
 *
 * Later starts use the stored credential; the token is not needed again.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { join } from 'node:path';
import type { Logger } from '../../api/log.js';
import { caHash, certificateSubject, createCertificateRequest, notAfter } from '../../api/tls/certs.js';
import { JoinTokenError, parseJoinToken } from '../../api/auth/bootstrap-token.js';
import { CA_CERTS_PATH, NODE_CREDENTIAL_PATH } from '../../api/auth/node-credential.js';
import { NODE_USER_PREFIX, SYSTEM_NODES } from '../../api/auth/user.js';

/** The TLS material an agent talks to the API server with. */
export interface NodeCredential {
  /** The cluster CA (PEM) that the server's certificate must chain to. */
  ca: string;
  /** The node's client certificate and key (PEM). */
  cert: string;
  key: string;
}

/** A failure to obtain a node credential that the person starting the agent must fix. */
export class BootstrapError extends Error {
  override readonly name = 'BootstrapError';
}

const FILES = { ca: 'server-ca.crt', cert: 'kubelet-client.crt', key: 'kubelet-client.key' } as const;

/** The stored credential of `nodeName` in `dataDir`, if complete, for this node and not expired. */
export function loadNodeCredential(
  dataDir: string,
  nodeName: string,
  now = new Date(),
): NodeCredential | undefined {
  const dir = join(dataDir, 'tls');
  const paths = Object.values(FILES).map((f) => join(dir, f));
  if (!paths.every((p) => existsSync(p))) return undefined;
  const cred = {
    ca: readFileSync(join(dir, FILES.ca), 'utf8'),
    cert: readFileSync(join(dir, FILES.cert), 'utf8'),
    key: readFileSync(join(dir, FILES.key), 'utf8'),
  };
  try {
    if (certificateSubject(cred.cert).commonName !== `${NODE_USER_PREFIX}${nodeName}`) return undefined;
    if (notAfter(cred.cert).getTime() <= now.getTime()) return undefined;
  } catch {
    return undefined;
  }
  return cred;
}

/**
 * Why loadNodeCredential() found nothing usable in `dataDir` for `nodeName`, in words
 * for the CLI; `otherNode` when the credential there is another node's (joining would
 * overwrite it).
 */
function storedCredentialProblem(dataDir: string, nodeName: string): { problem: string; otherNode?: string } {
  const dir = join(dataDir, 'tls');
  const missing = Object.values(FILES).filter((f) => !existsSync(join(dir, f)));
  if (missing.length === Object.keys(FILES).length)
    return { problem: `no node credential is stored in ${dir} yet` };
  if (missing.length > 0)
    return { problem: `the node credential in ${dir} is incomplete (missing ${missing.join(', ')})` };
  try {
    const cert = readFileSync(join(dir, FILES.cert), 'utf8');
    const holder = certificateSubject(cert).commonName;
    if (!holder.startsWith(NODE_USER_PREFIX))
      return { problem: `the credential in ${dir} is ${holder}'s, not a node's` };
    if (holder !== `${NODE_USER_PREFIX}${nodeName}`)
      return {
        problem: `the node credential in ${dir} is ${holder}'s, not node ${nodeName}'s`,
        otherNode: holder.slice(NODE_USER_PREFIX.length),
      };
    // loadNodeCredential() refuses a matching, readable certificate only when it expired.
    return { problem: `the node credential in ${dir} expired on ${notAfter(cert).toISOString()}` };
  } catch (err) {
    return { problem: `the node credential in ${dir} cannot be read: ${(err as Error).message}` };
  }
}

function saveNodeCredential(dataDir: string, cred: NodeCredential): void {
  const dir = join(dataDir, 'tls');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  for (const [k, file] of Object.entries(FILES)) {
    const path = join(dir, file);
    writeFileSync(path, cred[k as keyof NodeCredential], { mode: 0o600 });
    chmodSync(path, 0o600);
  }
}

interface HttpAnswer {
  status: number;
  body: string;
}

function request(
  url: URL,
  opts: https.RequestOptions,
  body: string | undefined,
  signal: AbortSignal | undefined,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { ...opts, timeout: 15_000, ...(signal ? { signal } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url.origin} within 15 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

const RETRYABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

/** Options of bootstrapNodeCredential(). */
export interface BootstrapOptions {
  /** The API server's https:// URL. */
  server: string;
  /** Other API servers of the same cluster: a join that cannot reach one tries the next. */
  alternateServers?: readonly string[];
  /** The join token; needed only when no credential is stored. */
  token?: string;
  nodeName: string;
  dataDir: string;
  logger: Logger;
  signal?: AbortSignal;
}

/**
 * The node's credential: the stored one, or a new one obtained with the join token
 * (retrying while the server cannot be reached, each of `server` and `alternateServers` in
 * turn, until `signal` aborts).
 * A stored credential whose CA is not the one a given token pins (another cluster's) is
 * replaced by joining again; one of another node (the data dir is that node's) is never.
 * @throws BootstrapError for a missing or malformed token, a data dir holding another
 *   node's credential, a server whose CA does not match the token's hash, or a token the
 *   server refuses (wrong, expired or revoked).
 */
export async function bootstrapNodeCredential(opts: BootstrapOptions): Promise<NodeCredential> {
  let parsed;
  try {
    parsed = opts.token ? parseJoinToken(opts.token) : undefined;
  } catch (err) {
    if (err instanceof JoinTokenError) throw new BootstrapError(`invalid join token: ${err.message}`);
    throw err;
  }
  const stored = loadNodeCredential(opts.dataDir, opts.nodeName);
  if (stored && (!parsed || caHash(stored.ca) === parsed.caHash)) {
    opts.logger.info('using the stored node credential', {
      node: opts.nodeName,
      dir: join(opts.dataDir, 'tls'),
    });
    return stored;
  }
  // Another node's credential is never replaced: that node could not come back.
  const problem = stored ? undefined : storedCredentialProblem(opts.dataDir, opts.nodeName);
  if (problem?.otherNode !== undefined)
    throw new BootstrapError(
      `${problem.problem}: run with --node-name ${problem.otherNode}, or give node ${opts.nodeName} its own --data-dir`,
    );
  if (!parsed) throw new BootstrapError(`${problem!.problem}; give --token or --token-file to join`);
  if (stored) {
    // A credential of another cluster (its CA is not the one the token pins) is replaced.
    opts.logger.warn(
      "the stored node credential is another cluster's (its CA is not the join token's); joining again",
      {
        node: opts.nodeName,
        dir: join(opts.dataDir, 'tls'),
      },
    );
  }
  const servers = [opts.server, ...(opts.alternateServers ?? [])];
  let delay = 1000;
  for (let attempt = 0; ; attempt++) {
    const server = servers[attempt % servers.length]!;
    const base = new URL(server);
    try {
      const cred = await exchange(base, parsed, opts);
      saveNodeCredential(opts.dataDir, cred);
      opts.logger.info('obtained a node credential', {
        node: opts.nodeName,
        user: `${NODE_USER_PREFIX}${opts.nodeName}`,
      });
      return cred;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (err instanceof BootstrapError || !code || !RETRYABLE.has(code) || opts.signal?.aborted) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        throw err;
      }
      opts.logger.warn('cannot reach the server to join; retrying', {
        server,
        error: String(err),
      });
      // The next server at once; after a round of them, the backoff.
      if ((attempt + 1) % servers.length !== 0) continue;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

async function exchange(
  base: URL,
  token: { caHash: string; token: string },
  opts: BootstrapOptions,
): Promise<NodeCredential> {
  // 1. The CA, fetched without trust and checked against the hash the token pins.
  const caAnswer = await request(
    new URL(CA_CERTS_PATH, base),
    { rejectUnauthorized: false },
    undefined,
    opts.signal,
  );
  if (caAnswer.status !== 200)
    throw new BootstrapError(
      `the server at ${base.origin} did not serve its CA at ${CA_CERTS_PATH} (HTTP ${caAnswer.status})`,
    );
  const ca = caAnswer.body;
  let hash: string;
  try {
    hash = caHash(ca);
  } catch {
    throw new BootstrapError(`the server at ${base.origin} served no PEM certificate at ${CA_CERTS_PATH}`);
  }
  if (hash !== token.caHash)
    throw new BootstrapError(
      `the server's CA (sha256 ${hash}) does not match the CA hash in the join token (${token.caHash}): refusing to trust ${base.origin}`,
    );
  // 2. The certificate request, sent with the bootstrap token over verified TLS.
  const { csr, key } = await createCertificateRequest(`${NODE_USER_PREFIX}${opts.nodeName}`, [SYSTEM_NODES]);
  const body = JSON.stringify({ csr });
  const answer = await request(
    new URL(NODE_CREDENTIAL_PATH, base),
    {
      method: 'POST',
      ca,
      headers: {
        authorization: `Bearer ${token.token}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
    },
    body,
    opts.signal,
  );
  if (answer.status === 401)
    throw new BootstrapError(
      'the server refused the join token (401 Unauthorized): it is wrong, expired or was revoked',
    );
  if (answer.status === 403)
    throw new BootstrapError(
      `the join token may not obtain node credentials (403 Forbidden): ${statusMessage(answer.body)}`,
    );
  if (answer.status !== 201)
    throw new BootstrapError(
      `obtaining a node credential failed (HTTP ${answer.status}): ${statusMessage(answer.body)}`,
    );
  const cert = (JSON.parse(answer.body) as { certificate?: string }).certificate;
  if (!cert) throw new BootstrapError('the server answered without a certificate');
  return { ca, cert, key };
}

function statusMessage(body: string): string {
  try {
    const s = JSON.parse(body) as { message?: string };
    return s.message ?? body.slice(0, 200);
  } catch {
    return body.slice(0, 200);
  }
}

/** Why checkPlainHTTP let a server pass: it answered HTTP, or it is only slow or not up yet. */
export type PlainHTTPCheck = 'http' | 'no-answer' | 'unreachable';

/**
 * Fails fast when `server` is an `http://` URL whose port does not speak plain HTTP: a
 * `k8ts server` serves HTTPS unless started with `--insecure-http`, and an agent given
 * `http://` for it would otherwise retry "socket hang up" for ever. Sends one `GET
 * /version` with a deadline of `timeoutMs` (default 5000 ms); a server that is not up yet
 * passes, so that the agent's own retries wait for it.
 * @returns 'http' when it answered HTTP (any status), 'no-answer' when nothing came back
 *   by the deadline (a slow server), 'unreachable' when the connection failed (refused, no
 *   route).
 * @throws BootstrapError when the port answers with something other than HTTP, or closes
 *   the connection without answering.
 */
export async function checkPlainHTTP(
  server: string,
  opts: { timeoutMs?: number } = {},
): Promise<PlainHTTPCheck> {
  const url = new URL('/version', server);
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const req = http.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve(undefined);
    });
    // A server that is slow, not one that is not HTTP: destroyed with its own code.
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err));
  });
  if (!failure) return 'http';
  const notHTTP = failure.code === 'ECONNRESET' || failure.code?.startsWith('HPE_') === true;
  if (notHTTP) {
    throw new BootstrapError(
      `${server} does not answer plain HTTP (${failure.message}); a k8ts server serves HTTPS unless started with --insecure-http: use --server ${server.replace(/^http:/, 'https:')}`,
    );
  }
  return failure.code === 'ETIMEDOUT' ? 'no-answer' : 'unreachable';
}
