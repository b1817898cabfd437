// One file because one client: the verbs, watch, TLS and URL cases of rest.ts, against in-process fake HTTP(S) servers.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { createSecureContext, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it, mock } from 'node:test';
import { parseLabelSelector } from '../meta/labels.js';
import {
  ApiStatusError,
  isAlreadyExists,
  isConflict,
  isConnectionRefused,
  isNotFound,
  isResourceExpired,
  RequestTimeoutError,
} from './errors.js';
import { resources } from './resource.js';
import { RestClient } from './rest.js';
import type { WatchEvent } from './watch.js';

interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void;

/** A tiny API server on 127.0.0.1:0 whose answers each test sets. */
function fakeServer(server: http.Server) {
  const state = {
    handler: ((_req, res) => json(res, 200, {})) as Handler,
    seen: [] as Seen[],
    connections: 0,
    url: '',
  };
  server.on('connection', () => state.connections++);
  server.on('secureConnection', () => state.connections++);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url!, 'http://x');
      const seen: Seen = {
        method: req.method!,
        path: u.pathname,
        query: Object.fromEntries(u.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      state.seen.push(seen);
      state.handler(req, res, seen);
    });
  });
  return {
    state,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => {
          const port = (server.address() as AddressInfo).port;
          state.url = `${server instanceof https.Server ? 'https' : 'http'}://127.0.0.1:${port}`;
          resolve(state.url);
        }),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure' as const,
  message,
  reason,
  code,
});

describe('RestClient', () => {
  const fake = fakeServer(http.createServer());
  let client: RestClient;
  before(async () => {
    await fake.listen();
    client = new RestClient({ server: fake.state.url, token: 'secret', userAgent: 'test/1' });
  });
  after(async () => {
    client.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.state.seen.length = 0;
    fake.state.handler = (_req, res, seen) => json(res, 200, { echo: seen.path });
  });

  it('sends each verb to the right path, with JSON and credentials', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', resourceVersion: '7' },
    };
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } };
    const cases: { call: () => Promise<unknown>; want: Partial<Seen> & { contentType?: string } }[] = [
      {
        call: () => client.get(resources.pods, 'ns', 'p'),
        want: { method: 'GET', path: '/api/v1/namespaces/ns/pods/p' },
      },
      {
        call: () => client.get(resources.nodes, undefined, 'n1'),
        want: { method: 'GET', path: '/api/v1/nodes/n1' },
      },
      {
        call: () => client.get(resources.deployments, 'ns', 'd', { subresource: 'scale' }),
        want: { method: 'GET', path: '/apis/apps/v1/namespaces/ns/deployments/d/scale' },
      },
      {
        call: () =>
          client.list(resources.pods, {
            namespace: 'ns',
            labelSelector: parseLabelSelector('app=web,tier in (fe)'),
            fieldSelector: 'spec.nodeName=n1',
            limit: 500,
            continue: 'tok',
          }),
        want: {
          method: 'GET',
          path: '/api/v1/namespaces/ns/pods',
          query: {
            labelSelector: 'app=web,tier in (fe)',
            fieldSelector: 'spec.nodeName=n1',
            limit: '500',
            continue: 'tok',
          },
        },
      },
      { call: () => client.list(resources.pods), want: { method: 'GET', path: '/api/v1/pods', query: {} } },
      {
        call: () => client.create(resources.pods, pod, { fieldManager: 'rs-controller', dryRun: true }),
        want: {
          method: 'POST',
          path: '/api/v1/namespaces/ns/pods',
          query: { fieldManager: 'rs-controller', dryRun: 'All' },
          body: JSON.stringify(pod),
          contentType: 'application/json',
        },
      },
      {
        call: () =>
          client.create(
            resources.pods,
            {
              apiVersion: 'v1',
              kind: 'Binding',
              metadata: { name: 'p', namespace: 'ns' },
              target: { name: 'n1' },
            },
            { subresource: 'binding' },
          ),
        want: { method: 'POST', path: '/api/v1/namespaces/ns/pods/p/binding' },
      },
      { call: () => client.create(resources.nodes, node), want: { method: 'POST', path: '/api/v1/nodes' } },
      {
        call: () => client.update(resources.pods, pod),
        want: { method: 'PUT', path: '/api/v1/namespaces/ns/pods/p' },
      },
      {
        call: () => client.updateStatus(resources.pods, pod),
        want: { method: 'PUT', path: '/api/v1/namespaces/ns/pods/p/status', body: JSON.stringify(pod) },
      },
      {
        call: () => client.patch(resources.pods, 'ns', 'p', 'merge', { metadata: { labels: { a: 'b' } } }),
        want: {
          method: 'PATCH',
          contentType: 'application/merge-patch+json',
          body: '{"metadata":{"labels":{"a":"b"}}}',
        },
      },
      {
        call: () => client.patch(resources.pods, 'ns', 'p', 'json', [{ op: 'remove', path: '/x' }]),
        want: { method: 'PATCH', contentType: 'application/json-patch+json' },
      },
      {
        call: () => client.patch(resources.pods, 'ns', 'p', 'strategic', {}, { subresource: 'status' }),
        want: {
          path: '/api/v1/namespaces/ns/pods/p/status',
          contentType: 'application/strategic-merge-patch+json',
        },
      },
      {
        call: () =>
          client.patch(resources.pods, 'ns', 'p', 'apply', pod, { fieldManager: 'me', force: true }),
        want: { contentType: 'application/apply-patch+yaml', query: { fieldManager: 'me', force: 'true' } },
      },
      {
        call: () =>
          client.delete(resources.pods, 'ns', 'p', {
            gracePeriodSeconds: 0,
            propagationPolicy: 'Foreground',
            preconditions: { uid: 'u1' },
          }),
        want: {
          method: 'DELETE',
          path: '/api/v1/namespaces/ns/pods/p',
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            gracePeriodSeconds: 0,
            propagationPolicy: 'Foreground',
            preconditions: { uid: 'u1' },
          }),
        },
      },
    ];
    for (const [i, c] of cases.entries()) {
      fake.state.seen.length = 0;
      await c.call();
      const seen = fake.state.seen[0]!;
      const { contentType, ...want } = c.want;
      for (const [k, v] of Object.entries(want))
        assert.deepEqual(seen[k as keyof Seen], v, `case ${i}: ${k}`);
      if (contentType) assert.equal(seen.headers['content-type'], contentType, `case ${i}`);
      assert.equal(seen.headers.authorization, 'Bearer secret');
      assert.equal(seen.headers['user-agent'], 'test/1');
      assert.equal(seen.headers.accept, 'application/json');
    }
  });

  it('resolves with the parsed body', async () => {
    fake.state.handler = (_req, res) => json(res, 201, { kind: 'Pod', metadata: { name: 'x' } });
    assert.deepEqual(await client.get(resources.pods, 'ns', 'x'), { kind: 'Pod', metadata: { name: 'x' } });
  });

  it('refuses calls that cannot be addressed', () => {
    assert.throws(() => client.get(resources.pods, undefined, 'p'), TypeError);
    assert.throws(() => client.create(resources.pods, { metadata: { name: 'p' } }), TypeError);
    assert.throws(() => client.update(resources.pods, { metadata: { namespace: 'ns' } }), TypeError);
    assert.throws(() => client.patch(resources.pods, 'ns', 'p', 'apply', {}), /fieldManager/);
    assert.throws(() => new RestClient({ server: 'ftp://x' }), TypeError);
    assert.throws(() => new RestClient({ server: 'nope' }), TypeError);
    assert.throws(() => new RestClient({ server: 'http://x', cert: 'c' }), TypeError);
  });

  it('turns metav1.Status failures into ApiStatusError', async () => {
    interface Case {
      code: number;
      body: unknown;
      want: { code: number; reason: string; message: string };
      is?: (e: unknown) => boolean;
    }
    /** A failure answered with a metav1.Status of `code`, `reason` and `message`. */
    const statusCase = (code: number, reason: string, message: string, is: Case['is']): Case => ({
      code,
      body: status(code, reason, message),
      want: { code, reason, message },
      is,
    });
    const cases: Case[] = [
      statusCase(404, 'NotFound', 'pods "p" not found', isNotFound),
      statusCase(409, 'AlreadyExists', 'pods "p" already exists', isAlreadyExists),
      statusCase(409, 'Conflict', 'the object has been modified', isConflict),
      statusCase(410, 'Expired', 'too old', isResourceExpired),
      { code: 502, body: 'bad gateway', want: { code: 502, reason: 'Unknown', message: 'bad gateway' } },
      {
        code: 503,
        body: '',
        want: {
          code: 503,
          reason: 'ServiceUnavailable',
          message: 'the server responded with 503 ServiceUnavailable',
        },
      },
    ];
    for (const c of cases) {
      fake.state.handler = (_req, res) => {
        if (typeof c.body === 'string') {
          res.writeHead(c.code);
          res.end(c.body);
        } else json(res, c.code, c.body);
      };
      const err = await client.get(resources.pods, 'ns', 'p').then(
        () => assert.fail('resolved'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ApiStatusError, String(err));
      assert.deepEqual({ code: err.code, reason: err.reason, message: err.message }, c.want);
      assert.equal(err.status.code, c.want.code);
      if (c.is) assert.ok(c.is(err));
    }
  });

  it('times out and aborts', async () => {
    fake.state.handler = () => {}; // never answers
    const slow = new RestClient({ server: fake.state.url, timeoutMs: 50 });
    await assert.rejects(slow.get(resources.pods, 'ns', 'p'), RequestTimeoutError);
    const ac = new AbortController();
    const call = client.get(resources.pods, 'ns', 'p', { signal: ac.signal });
    ac.abort(new Error('cancelled'));
    await assert.rejects(call, /cancelled/);
    await assert.rejects(
      client.get(resources.pods, 'ns', 'p', { signal: AbortSignal.abort(new Error('early')) }),
      /early/,
    );
    // A body that stalls halfway also runs into the deadline.
    fake.state.handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"kind":');
    };
    await assert.rejects(slow.get(resources.pods, 'ns', 'p'), RequestTimeoutError);
    slow.close();
  });

  it('reports a refused connection with its code', async () => {
    const srv = http.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const c = new RestClient({ server: `http://127.0.0.1:${port}` });
    const err = await c.get(resources.pods, 'ns', 'p').catch((e: unknown) => e);
    assert.ok(isConnectionRefused(err), String(err));
    c.close();
  });

  it('keeps connections alive', async () => {
    const before = fake.state.connections;
    for (let i = 0; i < 5; i++) await client.get(resources.pods, 'ns', 'p');
    assert.ok(fake.state.connections - before <= 1, `${fake.state.connections - before} connections`);
  });

  describe('watch', () => {
    const events: WatchEvent[] = [
      { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '11' } } },
      { type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '12' } } },
      { type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '15' } } },
      { type: 'ERROR', object: status(410, 'Expired', 'too old resource version: 1 (5)') },
    ];

    it('streams events until the server ends the response, with the watch parameters', async () => {
      fake.state.handler = (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const text = events.map((e) => `${JSON.stringify(e)}\n`).join('');
        // Odd chunk boundaries: mid-line, several lines at once.
        const cuts = [5, 40, 41, 200];
        let at = 0;
        for (const cut of cuts) {
          res.write(text.slice(at, cut));
          at = cut;
        }
        res.end(text.slice(at));
      };
      const w = await client.watch(resources.pods, {
        namespace: 'ns',
        resourceVersion: '10',
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
        labelSelector: 'app=web',
      });
      const got: WatchEvent[] = [];
      for await (const ev of w) got.push(ev);
      assert.deepEqual(got, events);
      assert.deepEqual(fake.state.seen[0]!.query, {
        watch: 'true',
        resourceVersion: '10',
        allowWatchBookmarks: 'true',
        timeoutSeconds: '300',
        labelSelector: 'app=web',
      });
      assert.equal(fake.state.seen[0]!.path, '/api/v1/namespaces/ns/pods');
      assert.throws(() => w[Symbol.asyncIterator](), /once/);
    });

    it('rejects when the server refuses the watch (410)', async () => {
      fake.state.handler = (_req, res) => json(res, 410, status(410, 'Expired', 'too old'));
      const err = await client.watch(resources.pods, { resourceVersion: '1' }).catch((e: unknown) => e);
      assert.ok(isResourceExpired(err), String(err));
    });

    it('stop() ends the iteration without an error and closes the connection', async () => {
      let closed!: () => void;
      const serverSawClose = new Promise<void>((r) => (closed = r));
      fake.state.handler = (req, res) => {
        res.writeHead(200);
        res.write(`${JSON.stringify(events[0])}\n`);
        res.on('close', () => closed());
        void req;
      };
      const w = await client.watch(resources.pods);
      const got: WatchEvent[] = [];
      for await (const ev of w) {
        got.push(ev);
        w.stop();
      }
      assert.equal(got.length, 1);
      await serverSawClose;
    });

    it('the signal stops it as well, and breaking out of the loop closes it', async () => {
      fake.state.handler = (_req, res) => {
        res.writeHead(200);
        res.write(`${JSON.stringify(events[0])}\n${JSON.stringify(events[1])}\n`);
      };
      const ac = new AbortController();
      const w = await client.watch(resources.pods, { signal: ac.signal });
      const got: WatchEvent[] = [];
      for await (const ev of w) {
        got.push(ev);
        if (got.length === 2) ac.abort();
      }
      assert.equal(got.length, 2);
      const w2 = await client.watch(resources.pods);
      for await (const _ of w2) break;
    });

    it('a broken connection makes the iteration throw', async () => {
      fake.state.handler = (req, res) => {
        res.writeHead(200);
        res.write(`${JSON.stringify(events[0])}\n`, () => setImmediate(() => req.socket.destroy()));
      };
      const w = await client.watch(resources.pods);
      const got: WatchEvent[] = [];
      await assert.rejects(async () => {
        for await (const ev of w) got.push(ev);
      });
      assert.equal(got.length, 1);
    });
  });

  it('fromKubeconfig', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-rest-'));
    try {
      const path = join(dir, 'kubeconfig.yaml');
      writeFileSync(
        path,
        [
          'apiVersion: v1',
          'kind: Config',
          `clusters: [{name: c, cluster: {server: "${fake.state.url}", insecure-skip-tls-verify: true}}]`,
          'users: [{name: u, user: {token: from-file}}]',
          'contexts: [{name: x, context: {cluster: c, user: u}}]',
          'current-context: x',
        ].join('\n'),
      );
      const c = RestClient.fromKubeconfig(path);
      await c.get(resources.nodes, undefined, 'n');
      assert.equal(fake.state.seen.at(-1)!.headers.authorization, 'Bearer from-file');
      assert.equal(fake.state.seen.at(-1)!.headers['user-agent'], 'k8ts-client');
      c.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('RestClient over TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-tls-'));
  const pki = makePki(dir);
  let fake: ReturnType<typeof fakeServer>;
  before(async () => {
    if (!pki) return;
    const server = https.createServer({
      key: pki.serverKey,
      cert: pki.serverCert,
      ca: pki.ca,
      requestCert: true,
      rejectUnauthorized: false,
    });
    // As k8ts's API server (SERVER_KEEP_ALIVE_TIMEOUT_MS): idle connections are the client's to close.
    server.keepAliveTimeout = 60_000;
    fake = fakeServer(server);
    fake.state.handler = (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      json(res, 200, { clientCN: peer?.subject?.CN ?? null });
    };
    await fake.listen();
  });
  after(async () => {
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'verifies the server against the CA and presents the client certificate',
    { skip: !pki && 'no openssl' },
    async () => {
      const c = new RestClient({
        server: fake.state.url,
        ca: pki!.ca,
        cert: pki!.clientCert,
        key: pki!.clientKey,
      });
      assert.deepEqual(await c.get(resources.nodes, undefined, 'n'), { clientCN: 'admin' });
      c.close();
      const untrusted = new RestClient({ server: fake.state.url });
      await assert.rejects(
        untrusted.get(resources.nodes, undefined, 'n'),
        /self[- ]signed|unable to verify|certificate/i,
      );
      untrusted.close();
      const insecure = new RestClient({ server: fake.state.url, insecureSkipTLSVerify: true });
      assert.deepEqual(await insecure.get(resources.nodes, undefined, 'n'), { clientCN: null });
      insecure.close();
    },
  );

  it(
    'makes one TLS context for all its connections, not one per connection',
    { skip: !pki && 'no openssl' },
    async () => {
      const c = new RestClient({
        server: fake.state.url,
        ca: pki!.ca,
        cert: pki!.clientCert,
        key: pki!.clientKey,
      });
      // Node's tls.connect makes a context of its own (tls.createSecureContext) for a
      // connection given none.
      const made = mock.method(tls, 'createSecureContext');
      const handler = fake.state.handler;
      const sockets = new Set<unknown>();
      const waiting: (() => void)[] = [];
      // Every answer waits until all 4 requests arrived, so each has a connection of its own.
      fake.state.handler = (req, res, seen) => {
        sockets.add(req.socket);
        waiting.push(() => handler(req, res, seen));
        if (waiting.length === 4) for (const answer of waiting) answer();
      };
      try {
        const got = await Promise.all(
          Array.from({ length: 4 }, () => c.get(resources.nodes, undefined, 'n')),
        );
        assert.deepEqual(got, Array(4).fill({ clientCN: 'admin' }));
        assert.equal(sockets.size, 4);
        assert.equal(made.mock.callCount(), 0, 'a TLS context was made per connection');
      } finally {
        made.mock.restore();
        fake.state.handler = handler;
        c.close();
      }
    },
  );

  it(
    'uses a given secureContext for every connection, and keeps idle connections idleTimeoutMs',
    { skip: !pki && 'no openssl' },
    async () => {
      const c = new RestClient({
        server: fake.state.url,
        ca: pki!.ca,
        cert: pki!.clientCert,
        key: pki!.clientKey,
        secureContext: createSecureContext({ ca: pki!.ca, cert: pki!.clientCert, key: pki!.clientKey }),
        idleTimeoutMs: 60_000,
      });
      const sockets = new Set<unknown>();
      const handler = fake.state.handler;
      fake.state.handler = (req, res, seen) => {
        sockets.add(req.socket);
        handler(req, res, seen);
      };
      try {
        assert.deepEqual(await c.get(resources.nodes, undefined, 'n'), { clientCN: 'admin' });
        // Past the default idle timeout (4 s) the same connection is still there.
        await new Promise((r) => setTimeout(r, 4_500));
        assert.deepEqual(await c.get(resources.nodes, undefined, 'n'), { clientCN: 'admin' });
        assert.equal(sockets.size, 1);
      } finally {
        fake.state.handler = handler;
        c.close();
      }
      // The context is what is used: a client whose context holds no client certificate
      // presents none, whatever `cert` says.
      const anonymous = new RestClient({
        server: fake.state.url,
        ca: pki!.ca,
        cert: pki!.clientCert,
        key: pki!.clientKey,
        secureContext: createSecureContext({ ca: pki!.ca }),
      });
      assert.deepEqual(await anonymous.get(resources.nodes, undefined, 'n'), { clientCN: null });
      anonymous.close();
    },
  );
});

/**
 * A throwaway CA, a server certificate for 127.0.0.1 and a client certificate (CN admin);
 * undefined when there is no `openssl` to run. Any other openssl failure throws.
 */
function makePki(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    ssl('version');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=k8ts-test-ca',
    '-days',
    '1',
  );
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [name, subj, ext] of [
    ['server', '/CN=127.0.0.1', ['-extfile', 'server.ext']],
    ['client', '/O=system:masters/CN=admin', []],
  ] as const) {
    ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      ...ext,
    );
  }
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return {
    ca: read('ca.crt'),
    serverKey: read('server.key'),
    serverCert: read('server.crt'),
    clientKey: read('client.key'),
    clientCert: read('client.crt'),
  };
}

describe('RestClient request targets', () => {
  /** What the URL of `server` with `path` appended and `query` set asks for (the client's rule). */
  function viaUrl(server: string, path: string, query: Record<string, string> | URLSearchParams): string {
    const url = new URL(server);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
    if (query instanceof URLSearchParams) url.search = query.toString();
    else for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    return `${url.pathname}${url.search}`;
  }

  it('asks for exactly what the WHATWG URL of base + path + query names', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cases: { base: string; path: string; query: Record<string, string> | URLSearchParams }[] = [
      { base: '', path: '/api/v1/namespaces/ns/pods/p', query: {} },
      { base: '/', path: '/api/v1/pods', query: { labelSelector: 'app in (a, b),x!=y', limit: '5' } },
      { base: '/prefix//', path: '/api/v1/pods', query: new URLSearchParams({ fieldSelector: 'a=b&c' }) },
      { base: '', path: '/api/v1/namespaces/ns/pods/a%20b', query: { q: 'ünïcödé +/?#' } },
      { base: '', path: '/api/v1/namespaces/ns/pods/../x', query: {} },
      { base: '', path: '/api/v1/namespaces/ns/pods/%2E%2e/status', query: {} },
      { base: '', path: '/api/v1/namespaces/ns/pods/a b"<{|}>`', query: {} },
      { base: '', path: '/api/v1/namespaces/ns/pods/x\\y', query: {} },
      { base: '/?keep=1', path: '/api/v1/pods', query: { watch: 'true' } },
      { base: '/?keep=1', path: '/api/v1/pods', query: {} },
    ];
    try {
      for (const c of cases) {
        const client = new RestClient({ server: `${origin}${c.base}` });
        try {
          await client.request('GET', c.path, { query: c.query });
        } finally {
          client.close();
        }
        assert.equal(seen.pop(), viaUrl(`${origin}${c.base}`, c.path, c.query), `${c.base} ${c.path}`);
      }
    } finally {
      server.close();
    }
  });
});
