// Both ends of the agent tunnel in one process: the API server's TunnelServer on a plain
// HTTP server, the agent's TunnelClient, and an HTTP server standing in for the kubelet.
// It lives in test/ because it joins the two processes' halves: agent/ never imports
// control/ (agent/boundaries.test.ts).
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import winston from 'winston';
import { TUNNEL_PATH } from '../api/tunnel.js';
import { ApiError } from '../control/apiserver/status.js';
import { TunnelServer } from '../control/apiserver/tunnel.js';
import { captureLogger } from '../agent/testing.js';
import { TunnelClient, tunnelBackoffMs } from '../agent/kubelet/tunnel.js';
import { until as waitUntil } from './support/wait.js';

const TOKEN = 'K10testtoken';
const silent = winston.createLogger({ silent: true });

/** Polls `check` (support/wait.ts) with this file's deadline (10_000 ms) and pace (10 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 10_000) =>
  waitUntil(what, check, ms, 10);

/** An API-server stand-in: the tunnel's upgrades on an HTTP server. */
async function startHub(
  port = 0,
): Promise<{ tunnels: TunnelServer; server: Server; url: string; stop(): Promise<void> }> {
  const tunnels = new TunnelServer({
    authenticate: async (req) => req.headers.authorization === `Bearer ${TOKEN}`,
    logger: silent,
    dialTimeoutMs: 2000,
  });
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: IncomingMessage, socket, head) =>
    tunnels.handleUpgrade(req, socket, head, new URL(req.url ?? '/', 'http://hub')),
  );
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    tunnels,
    server,
    url,
    stop: async () => {
      tunnels.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A kubelet stand-in: answers every request with its path; `/big` streams `size` bytes, counting what it made. */
function kubelet(size = 0): { server: Server; generated: () => number } {
  let generated = 0;
  const server = createServer((req, res) => {
    if (req.url === '/big') {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 120);
      Readable.from(
        (function* () {
          while (generated < size) {
            generated += chunk.length;
            yield chunk;
          }
        })(),
      ).pipe(res);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`kubelet saw ${req.method} ${req.url}`);
  });
  return { server, generated: () => generated };
}

/** GET `path` on a tunnel stream to `node`. */
async function get(tunnels: TunnelServer, node: string, path: string): Promise<string> {
  const stream = await tunnels.dial(node);
  return new Promise((resolve, reject) => {
    const req = request({ path, headers: { connection: 'close' }, createConnection: () => stream as Socket });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('tunnelBackoffMs', () => {
  const cases: [failures: number, r: number, want: number][] = [
    [1, 0.5, 1000],
    [2, 0.5, 2000],
    [5, 0.5, 16_000],
    [6, 0.5, 30_000],
    [20, 0.5, 30_000],
    [1, 0, 800],
    [1, 0.999, 1200],
    [6, 0, 24_000],
  ];
  for (const [failures, r, want] of cases) {
    it(`after ${failures} failure(s) with jitter ${r}: ${want} ms`, () => {
      assert.equal(Math.round(tunnelBackoffMs(failures, r) / 10) * 10, want);
    });
  }
});

describe('agent tunnel', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('carries HTTP requests from the hub to the kubelet, several at once', async () => {
    const hub = await startHub();
    cleanups.push(() => hub.stop());
    const k = kubelet();
    const stop = new AbortController();
    const client = new TunnelClient({
      server: hub.url,
      token: TOKEN,
      nodeName: 'node-a',
      onStream: (s) => k.server.emit('connection', s),
      logger: silent,
    });
    const running = client.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await until('connected', () =>
      hub.tunnels.connectedNodes().includes('node-a') && client.connected ? true : undefined,
    );
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => get(hub.tunnels, 'node-a', `/containerLogs/ns/p${i}/c`)),
    );
    assert.deepEqual(
      answers,
      [1, 2, 3, 4, 5].map((i) => `kubelet saw GET /containerLogs/ns/p${i}/c`),
    );
  });

  it('answers 503 for a node without a tunnel', async () => {
    const hub = await startHub();
    cleanups.push(() => hub.stop());
    await assert.rejects(hub.tunnels.dial('nobody'), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.code, 503);
      assert.match(err.message, /no tunnel to node "nobody"/);
      return true;
    });
  });

  it('refuses an agent without the node token, and it keeps retrying', async () => {
    const hub = await startHub();
    cleanups.push(() => hub.stop());
    const log = captureLogger();
    const stop = new AbortController();
    const client = new TunnelClient({
      server: hub.url,
      token: 'wrong',
      nodeName: 'node-b',
      onStream: () => assert.fail('no stream for a refused agent'),
      logger: log.logger,
      minBackoffMs: 5,
      maxBackoffMs: 20,
    });
    const running = client.run(stop.signal);
    await until('two refusals', () =>
      log.lines.filter((e) => e.message === 'agent tunnel refused').length >= 2 ? true : undefined,
    );
    assert.equal(log.lines.find((e) => e.message === 'agent tunnel refused')?.meta.code, 401);
    assert.deepEqual(hub.tunnels.connectedNodes(), []);
    stop.abort();
    await running;
    // A stream dial-back for a made-up id is refused too.
    const res = await new Promise<IncomingMessage>((resolve) =>
      request(`${hub.url}${TUNNEL_PATH}/connect?node=node-b&id=${'a'.repeat(32)}`, {
        headers: { authorization: `Bearer ${TOKEN}`, connection: 'Upgrade', upgrade: 'k8ts-tunnel-stream' },
      })
        .on('response', resolve)
        .end(),
    );
    assert.equal(res.statusCode, 404);
  });

  it('reconnects by itself when the hub restarts', async () => {
    let hub = await startHub();
    const port = Number(new URL(hub.url).port);
    const k = kubelet();
    const stop = new AbortController();
    const client = new TunnelClient({
      server: hub.url,
      token: TOKEN,
      nodeName: 'node-c',
      onStream: (s) => k.server.emit('connection', s),
      logger: silent,
      minBackoffMs: 10,
      maxBackoffMs: 50,
    });
    const running = client.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
      await hub.stop();
    });
    await until('connected', () => (hub.tunnels.connectedNodes().includes('node-c') ? true : undefined));
    await hub.stop();
    await until('disconnected', () => (client.connected ? undefined : true));
    hub = await startHub(port);
    await until('connected again', () =>
      hub.tunnels.connectedNodes().includes('node-c') ? true : undefined,
    );
    assert.equal(await get(hub.tunnels, 'node-c', '/healthz'), 'kubelet saw GET /healthz');
  });

  it('does not read ahead of a slow reader (back-pressure end to end)', async () => {
    const hub = await startHub();
    cleanups.push(() => hub.stop());
    const total = 256 * 1024 * 1024;
    const k = kubelet(total);
    const stop = new AbortController();
    const client = new TunnelClient({
      server: hub.url,
      token: TOKEN,
      nodeName: 'node-d',
      onStream: (s) => k.server.emit('connection', s),
      logger: silent,
    });
    const running = client.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await until('connected', () => (hub.tunnels.connectedNodes().includes('node-d') ? true : undefined));
    const stream = await hub.tunnels.dial('node-d');
    const res = await new Promise<IncomingMessage>((resolve) =>
      request({ path: '/big', createConnection: () => stream as Socket })
        .on('response', resolve)
        .end(),
    );
    res.pause();
    // Wait until the kubelet stops producing (its writes are no longer drained), then check
    // that it stopped far short of the whole body: only socket buffers hold the difference.
    let last = -1;
    let steady = 0;
    await until('the producer stalls', async () => {
      await new Promise((r) => setTimeout(r, 50));
      const now = k.generated();
      steady = now === last ? steady + 1 : 0;
      last = now;
      return steady >= 5 ? true : undefined;
    });
    assert.ok(k.generated() < 64 * 1024 * 1024, `produced ${k.generated()} bytes for a paused reader`);
    res.destroy();
  });
});
