// RestClient's maxConnections: concurrent requests share at most that many connections, and
// one still waiting for a connection rejects at its own deadline or abort, not when a
// connection frees (hollow nodes: thousands of clients in one process, issue 20).
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { RequestTimeoutError } from './errors.js';
import { resources } from './resource.js';
import { RestClient } from './rest.js';

describe('RestClient maxConnections', () => {
  let connections = 0;
  /** Answers held until the test releases them (`/hold`). */
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url!.startsWith('/hold')) held.push(res);
      else if (req.url!.includes('watch=true')) {
        // A watch: headers now, the stream held open until the client leaves.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        held.push(res);
      } else setImmediate(() => res.end('{"kind":"ConfigMap","metadata":{"name":"x"}}'));
    });
  });
  server.on('connection', () => connections++);
  server.keepAliveTimeout = 60_000;
  let url = '';
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const r of held) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sends 40 concurrent requests over at most 2 connections', async () => {
    connections = 0;
    const c = new RestClient({ server: url, maxConnections: 2 });
    try {
      const got = await Promise.all(
        Array.from({ length: 40 }, () => c.get(resources.configmaps, 'default', 'x')),
      );
      assert.equal(got.length, 40);
      assert.ok(connections >= 1 && connections <= 2, `${connections} connections`);
    } finally {
      c.close();
    }
  });

  it('rejects a request waiting for a connection at its deadline, and one whose signal aborts', async () => {
    const c = new RestClient({ server: url, maxConnections: 1 });
    try {
      const first = c.request('GET', '/hold');
      const waiting = c.request('GET', '/queued', { timeoutMs: 50 });
      const aborted = new AbortController();
      const waitingToo = c.request('GET', '/queued', { signal: aborted.signal });
      aborted.abort(new Error('caller gave up'));
      // The first answer is held until both waiting requests have settled (or 10 s, so that
      // the previous code, which settled them only once the connection was free, fails
      // here instead of hanging).
      const settled = Promise.allSettled([waiting, waitingToo]);
      const release = setTimeout(() => held.shift()?.end('{}'), 10_000);
      const [timedOut, gaveUp] = await settled;
      const stillHeld = held.length === 1;
      clearTimeout(release);
      held.shift()?.end('{}');
      await first;
      assert.ok(stillHeld, 'both rejected while the only connection was still busy');
      assert.equal(timedOut.status, 'rejected');
      assert.ok((timedOut as PromiseRejectedResult).reason instanceof RequestTimeoutError);
      assert.equal(gaveUp.status, 'rejected');
      assert.match(String((gaveUp as PromiseRejectedResult).reason), /caller gave up/);
      // The connection serves the next request.
      assert.deepEqual(await c.get(resources.configmaps, 'default', 'x'), {
        kind: 'ConfigMap',
        metadata: { name: 'x' },
      });
    } finally {
      c.close();
    }
  });

  it('does not count watches: requests still go while more watches are open than maxConnections', async () => {
    const c = new RestClient({ server: url, maxConnections: 1 });
    const watches: { stop(): void }[] = [];
    try {
      // Two open watches (the server holds them), then a request: before, the watches held
      // the only connection and the request waited until its deadline.
      for (let i = 0; i < 2; i++)
        watches.push(await c.watch(resources.configmaps, { namespace: 'default', timeoutSeconds: 60 }));
      assert.deepEqual(
        await c.request('GET', '/api/v1/namespaces/default/configmaps/x', { timeoutMs: 2_000 }),
        {
          kind: 'ConfigMap',
          metadata: { name: 'x' },
        },
      );
    } finally {
      for (const w of watches) w.stop();
      c.close();
    }
  });

  it('refuses a maxConnections that is not a whole number of at least 1', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      assert.throws(() => new RestClient({ server: url, maxConnections: bad }), TypeError, String(bad));
  });
});
