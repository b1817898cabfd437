import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { Balancer, endpointKey, type Endpoint } from './balancer.js';
import { DialError, dialFirst, splice } from './forwarder.js';

const A = { ip: '10.0.0.1', port: 80 };
const B = { ip: '10.0.0.2', port: 80 };
const C = { ip: '10.0.0.3', port: 80 };
const first = (b: Balancer, client = '192.0.2.1'): string => endpointKey(b.candidates(client)[0]!);

describe('Balancer', () => {
  it('rotates round-robin and offers every endpoint once per connection', () => {
    const b = new Balancer({ clock: new FakeClock() });
    b.setEndpoints([A, B, C]);
    assert.deepEqual(
      Array.from({ length: 6 }, () => first(b)),
      ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'],
    );
    assert.deepEqual(b.candidates('x').map(endpointKey), ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']);
    assert.deepEqual(b.candidates('x').map(endpointKey), ['10.0.0.2:80', '10.0.0.3:80', '10.0.0.1:80']);
  });

  it('has no candidates without endpoints, and keeps rotating across endpoint changes', () => {
    const b = new Balancer({ clock: new FakeClock() });
    assert.deepEqual(b.candidates('x'), []);
    b.setEndpoints([A, B, C]);
    first(b);
    first(b);
    first(b);
    b.setEndpoints([A]);
    assert.deepEqual([first(b), first(b)], ['10.0.0.1:80', '10.0.0.1:80']);
  });

  it('ClientIP affinity keeps a client on its endpoint until the timeout passes without use', async () => {
    const clock = new FakeClock();
    const b = new Balancer({ clock, affinityTimeoutSeconds: 10 });
    b.setEndpoints([A, B, C]);
    const pick = (client: string): string => {
      const e = b.candidates(client)[0]!;
      b.connected(client, e);
      return endpointKey(e);
    };
    const one = pick('192.0.2.1');
    const two = pick('192.0.2.2');
    assert.notEqual(one, two);
    for (let i = 0; i < 5; i++) {
      await clock.advance(9_000); // each use renews the 10 s
      assert.equal(pick('192.0.2.1'), one);
    }
    await clock.advance(10_001);
    // Expired: the client goes back to the rotation (which has moved on meanwhile).
    const after = b.candidates('192.0.2.1').map(endpointKey);
    assert.equal(after.length, 3);
    assert.notEqual(after[0], one);
  });

  it('drops the affinity to an endpoint that went away, and all of them when the timeout changes', () => {
    const b = new Balancer({ clock: new FakeClock(), affinityTimeoutSeconds: 100 });
    b.setEndpoints([A, B]);
    b.connected('c', B);
    assert.equal(first(b, 'c'), '10.0.0.2:80');
    b.setEndpoints([A, C]);
    b.candidates('other');
    assert.notEqual(first(b, 'c'), '10.0.0.2:80');
    b.connected('c', C);
    b.setAffinityTimeout(0);
    assert.deepEqual([first(b, 'c'), first(b, 'c')].sort(), ['10.0.0.1:80', '10.0.0.3:80']);
  });

  it('without affinity, connected() records nothing', () => {
    const b = new Balancer({ clock: new FakeClock() });
    b.setEndpoints([A, B]);
    b.connected('c', B);
    assert.deepEqual([first(b, 'c'), first(b, 'c')], ['10.0.0.1:80', '10.0.0.2:80']);
  });
});

/** A TCP server on a free 127.0.0.1 port answering every connection with its `name`. */
async function namedServer(name: string): Promise<{ endpoint: Endpoint; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.end(name);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    endpoint: { ip: '127.0.0.1', port },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A 127.0.0.1 port nobody listens on (bound, then released). */
async function refusedEndpoint(): Promise<Endpoint> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return { ip: '127.0.0.1', port };
}

function readAll(s: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

/** dialFirst as a promise, with the sockets it creates collected in `created`. */
function dial(
  candidates: Endpoint[],
  timeoutMs: number,
  created: net.Socket[] = [],
): Promise<{ socket: net.Socket; endpoint: Endpoint }> {
  return new Promise((resolve, reject) =>
    dialFirst(
      candidates,
      timeoutMs,
      (s) => created.push(s),
      (err, socket, endpoint) => (err ? reject(err) : resolve({ socket: socket!, endpoint: endpoint! })),
    ),
  );
}

describe('dialFirst', () => {
  const servers: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('skips endpoints that refuse and connects to the next', async () => {
    const good = await namedServer('good');
    servers.push(good);
    const refused = await refusedEndpoint();
    const { socket, endpoint } = await dial([refused, refused, good.endpoint], 1000);
    assert.deepEqual(endpoint, good.endpoint);
    assert.equal(await readAll(socket), 'good');
  });

  it('fails with every attempt named when no endpoint accepts', async () => {
    const refused = await refusedEndpoint();
    await assert.rejects(dial([refused], 1000), (err: unknown) => {
      assert.ok(err instanceof DialError);
      assert.equal(err.attempts.length, 1);
      assert.equal(err.attempts[0]!.error, 'ECONNREFUSED');
      return true;
    });
    await assert.rejects(dial([], 1000), DialError);
  });

  it('an endpoint that does not answer in time is skipped (connect timeout)', async () => {
    const good = await namedServer('late-but-fine');
    servers.push(good);
    // 192.0.2.0/24 (TEST-NET-1) is not routed: the SYN goes unanswered or fails at once.
    const { endpoint } = await dial([{ ip: '192.0.2.1', port: 9 }, good.endpoint], 200);
    assert.deepEqual(endpoint, good.endpoint);
  });

  it('an endpoint net.connect refuses outright (port out of range) is skipped like a refusal', async () => {
    const good = await namedServer('after-bad-port');
    servers.push(good);
    const { endpoint } = await dial([{ ip: '127.0.0.1', port: 70_000 }, good.endpoint], 1000);
    assert.deepEqual(endpoint, good.endpoint);
    await assert.rejects(dial([{ ip: '127.0.0.1', port: 70_000 }], 1000), (err: unknown) => {
      assert.ok(err instanceof DialError);
      assert.equal(err.attempts[0]!.error, 'ERR_SOCKET_BAD_PORT');
      return true;
    });
  });

  it('a dial destroyed by its owner (the proxy stopping) fails instead of hanging', async () => {
    const created: net.Socket[] = [];
    // Not routed, so the connect is still pending when it is destroyed.
    const pending = dial([{ ip: '192.0.2.1', port: 9 }], 10_000, created);
    assert.equal(created.length, 1);
    created[0]!.destroy();
    await assert.rejects(pending, (err: unknown) => {
      assert.ok(err instanceof DialError);
      assert.ok(['closed', 'ENETUNREACH', 'EHOSTUNREACH'].includes(err.attempts[0]!.error), err.message);
      return true;
    });
  });
});

describe('splice', () => {
  it('relays both ways with half-close: the client finishes sending and still gets the answer', async () => {
    // An echo backend that answers only after the client's FIN.
    const backend = net.createServer({ allowHalfOpen: true }, (s) => {
      const chunks: Buffer[] = [];
      s.on('data', (d: Buffer) => chunks.push(d));
      s.on('end', () => s.end(Buffer.concat(chunks).toString().toUpperCase()));
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const backendPort = (backend.address() as net.AddressInfo).port;
    let counted: Promise<{ bytesIn: number; bytesOut: number }> | undefined;
    const front = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
      counted = dial([{ ip: '127.0.0.1', port: backendPort }], 1000).then(
        ({ socket }) => new Promise((resolve) => splice(client, socket, resolve)),
      );
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    try {
      const c = net.connect({
        port: (front.address() as net.AddressInfo).port,
        host: '127.0.0.1',
        allowHalfOpen: true,
      });
      const answer = readAll(c);
      c.write('hello ');
      c.end('proxy');
      assert.equal(await answer, 'HELLO PROXY');
      c.destroy();
      assert.deepEqual(await counted, { bytesIn: 11, bytesOut: 11 });
    } finally {
      await new Promise<void>((r) => front.close(() => r()));
      await new Promise<void>((r) => backend.close(() => r()));
    }
  });
});
