// RestClient with several API servers (alternateServers): which failures move it to the
// next server, which requests are sent again there, and that its watches follow.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { Reflector } from './reflector.js';
import { listWatchFor } from './listwatch.js';
import { resources } from './resource.js';
import { RestClient } from './rest.js';
import { ApiStatusError } from './errors.js';
import type { KubeObject } from '../object.js';

interface Fake {
  url: string;
  /** method + path of every request received. */
  seen: string[];
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  server: http.Server;
  close(): Promise<void>;
}

const fakes: Fake[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

async function fake(name: string): Promise<Fake> {
  const f: Fake = {
    url: '',
    seen: [],
    handler: (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ kind: 'ConfigMap', metadata: { name, resourceVersion: '5' } }));
    },
    server: http.createServer(),
    close: async () => {
      f.server.closeAllConnections();
      await new Promise((r) => f.server.close(r));
    },
  };
  f.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    req.on('end', () => {
      f.seen.push(`${req.method} ${req.url!.split('?')[0]}`);
      f.handler(req, res);
    });
  });
  await new Promise<void>((r) => f.server.listen(0, '127.0.0.1', r));
  f.url = `http://127.0.0.1:${(f.server.address() as AddressInfo).port}`;
  fakes.push(f);
  return f;
}

/** A URL on which nothing listens (connection refused). */
async function deadURL(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  await new Promise((r) => s.close(r));
  return url;
}

/** A handler that breaks the connection without an answer (as a server killed mid-request). */
const reset = (req: http.IncomingMessage) => req.socket.destroy();

const cm = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
});

describe('RestClient failover', () => {
  it('a refused request goes to the next server, which stays current', async () => {
    const b = await fake('b');
    const dead = await deadURL();
    const c = new RestClient({ server: dead, alternateServers: [b.url] });
    try {
      assert.deepEqual(c.servers, [dead, b.url]);
      const got = await c.get(resources.configmaps, 'default', 'x');
      assert.equal(got.metadata?.name, 'b');
      assert.equal(c.server, b.url);
      // A refused write was never sent: it is sent to the next server.
      await c.create(resources.configmaps, cm('y'));
      assert.deepEqual(b.seen, [
        'GET /api/v1/namespaces/default/configmaps/x',
        'POST /api/v1/namespaces/default/configmaps',
      ]);
    } finally {
      c.close();
    }
  });

  it('a write whose connection broke is not sent again; the next request goes to the next server', async () => {
    const a = await fake('a');
    const b = await fake('b');
    a.handler = reset;
    const c = new RestClient({ server: a.url, alternateServers: [b.url] });
    try {
      await assert.rejects(c.create(resources.configmaps, cm('y')), (err: NodeJS.ErrnoException) => {
        assert.equal(err.code, 'ECONNRESET');
        return true;
      });
      assert.deepEqual(b.seen, [], 'the write may have been done: not repeated');
      assert.equal(c.server, b.url);
      assert.equal((await c.get(resources.configmaps, 'default', 'x')).metadata?.name, 'b');
    } finally {
      c.close();
    }
  });

  it('a read whose connection broke is sent again to the next server', async () => {
    const a = await fake('a');
    const b = await fake('b');
    a.handler = reset;
    const c = new RestClient({ server: a.url, alternateServers: [b.url] });
    try {
      assert.equal((await c.get(resources.configmaps, 'default', 'x')).metadata?.name, 'b');
      assert.deepEqual(a.seen, ['GET /api/v1/namespaces/default/configmaps/x']);
    } finally {
      c.close();
    }
  });

  it('an answer, even a 5xx, is no reason to move; all servers down rejects with the last error', async () => {
    const a = await fake('a');
    const b = await fake('b');
    a.handler = (_req, res) => {
      res.statusCode = 503;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          code: 503,
          reason: 'ServiceUnavailable',
          message: 'x',
        }),
      );
    };
    const c = new RestClient({ server: a.url, alternateServers: [b.url] });
    try {
      await assert.rejects(c.get(resources.configmaps, 'default', 'x'), ApiStatusError);
      assert.equal(c.server, a.url);
      assert.deepEqual(b.seen, []);
    } finally {
      c.close();
    }
    const d = new RestClient({ server: await deadURL(), alternateServers: [await deadURL()] });
    try {
      await assert.rejects(d.get(resources.configmaps, 'default', 'x'), { code: 'ECONNREFUSED' });
    } finally {
      d.close();
    }
  });

  it('moving off a server ends the watches open on it, and an informer resumes from its resourceVersion on the next', async () => {
    const a = await fake('a');
    const b = await fake('b');
    const watchRVs: string[] = [];
    // Both serve the same list; a keeps its watch open, without events.
    const serve = (self: Fake, name: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
      const u = new URL(req.url!, 'http://x');
      res.setHeader('content-type', 'application/json');
      if (u.searchParams.get('watch') === 'true') {
        watchRVs.push(`${name}@${u.searchParams.get('resourceVersion')}`);
        res.writeHead(200);
        res.write('');
        if (name === 'b') {
          res.write(
            `${JSON.stringify({ type: 'ADDED', object: { kind: 'ConfigMap', metadata: { name: 'late', namespace: 'default', resourceVersion: '12' } } })}\n`,
          );
        }
        return;
      }
      if (u.pathname.endsWith('/configmaps/x')) {
        // a's server is going away: this request breaks.
        if (self === a) {
          req.socket.destroy();
          return;
        }
      }
      res.end(
        JSON.stringify({
          kind: 'ConfigMapList',
          metadata: { resourceVersion: '10' },
          items: [{ metadata: { name: 'first', namespace: 'default', resourceVersion: '9' } }],
        }),
      );
    };
    a.handler = serve(a, 'a');
    b.handler = serve(b, 'b');
    const c = new RestClient({ server: a.url, alternateServers: [b.url] });
    const names = new Set<string>();
    const reflector = new Reflector<KubeObject>({
      listerWatcher: listWatchFor(c, resources.configmaps),
      store: {
        replace: (items) => items.forEach((i) => names.add(i.metadata!.name!)),
        add: (o) => names.add(o.metadata!.name!),
        update: () => {},
        delete: () => {},
      },
      backoff: { initialMs: 10, maxMs: 10 },
    });
    const stop = new AbortController();
    const running = reflector.run(stop.signal);
    try {
      await waitFor(() => watchRVs.includes('a@10'));
      // Another request of the same client finds a gone: the open watch ends and follows.
      await c.get(resources.configmaps, 'default', 'x').catch(() => undefined);
      await waitFor(() => names.has('late'));
      assert.deepEqual(watchRVs, ['a@10', 'b@10']);
      assert.equal(c.server, b.url);
    } finally {
      stop.abort();
      await running;
      c.close();
    }
  });
});

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
