// RestClient's fence: once it aborts, nothing more is sent and what is in flight ends, as a
// controller that lost its Lease must not write beside the next leader.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { resources } from './resource.js';
import { RestClient } from './rest.js';

describe('RestClient fence', () => {
  const seen: string[] = [];
  let held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url!.split('?')[0]}`);
      res.setHeader('content-type', 'application/json');
      // Watches and the slow path are held open until the test ends.
      if (req.url!.includes('watch=true') || req.url!.includes('/slow')) {
        res.writeHead(200);
        res.write('');
        held.push(res);
        return;
      }
      res.end(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'x' } }));
    });
  });
  let url = '';
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const r of held) r.destroy();
    held = [];
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('after the fence aborts, requests reject before anything is sent; those in flight and watches end', async () => {
    const term = new AbortController();
    const c = new RestClient({ server: url, fence: term.signal });
    try {
      await c.get(resources.configmaps, 'default', 'x');
      const slow = c.request('GET', '/slow');
      const watch = await c.watch(resources.configmaps, { namespace: 'default' });
      const events = (async () => {
        const got: unknown[] = [];
        for await (const ev of watch) got.push(ev);
        return got;
      })();
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(seen.length, 3);
      term.abort(new Error('leadership lost'));
      await assert.rejects(slow, /leadership lost/);
      assert.deepEqual(await events, [], 'the watch ended without events');
      await assert.rejects(
        c.create(resources.configmaps, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'y', namespace: 'default' },
        }),
        /leadership lost/,
      );
      await assert.rejects(c.get(resources.configmaps, 'default', 'x'), /leadership lost/);
      assert.equal(seen.length, 3, `nothing was sent after the fence: ${seen.join(', ')}`);
    } finally {
      c.close();
    }
  });

  it('a call with its own signal is also fenced, and its own signal still aborts it', async () => {
    const term = new AbortController();
    const c = new RestClient({ server: url, fence: term.signal });
    try {
      const own = new AbortController();
      const r = c.request('GET', '/slow', { signal: own.signal });
      own.abort(new Error('own'));
      await assert.rejects(r, /own/);
      term.abort(new Error('fenced'));
      await assert.rejects(
        c.get(resources.configmaps, 'default', 'x', { signal: new AbortController().signal }),
        /fenced/,
      );
    } finally {
      c.close();
    }
  });
});
