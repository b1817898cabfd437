/**
 * The Proxy against the real API server (in-process) with Services and EndpointSlices
 * written by hand, pointing at three TCP servers on this host's first non-loopback IPv4
 * address (EndpointSlices refuse loopback addresses, as Kubernetes does), one slice per
 * server: NodePort on 127.0.0.1 (nodeIP), round-robin, scaling down, ClientIP affinity,
 * refused endpoints skipped, ClusterIP from the host, bind failures, metrics, cleanup.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { silentLogger } from '../../api/log.js';
import type { EndpointSlice, Service } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import type { BindFailure } from './service-port.js';
import { Proxy } from './proxy.js';
import { untilTruthy } from '../../test/support/wait.js';

const NAMES = ['b0', 'b1', 'b2'];
/** This host's first non-internal IPv4 address. */
const HOST_IP = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

/** Polls `check` (support/wait.ts) with this file's deadline (5000 ms) and pace (20 ms). */
const until = <T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  ms = 5000,
) => untilTruthy(what, check, ms, 20);

/**
 * Sends `payload` from a new UDP socket (its own source port: a new proxy session), and
 * `again` more datagrams from the same socket; resolves with every reply, or rejects when
 * one does not come within `ms`.
 */
async function udpExchange(port: number, payload: string, again = 0, ms = 1000): Promise<string[]> {
  const socket = dgram.createSocket('udp4');
  try {
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    const replies: string[] = [];
    for (let i = 0; i <= again; i++) {
      const reply = new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no UDP reply')), ms);
        socket.once('message', (m) => {
          clearTimeout(timer);
          resolve(m.toString());
        });
      });
      socket.send(`${payload}#${i}`, port, '127.0.0.1');
      replies.push(await reply);
    }
    return replies;
  } finally {
    socket.close();
  }
}

/** One connection: what the backend says before closing. Rejects on a refused/reset connection. */
function request(host: string, port: number, localAddress?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, ...(localAddress ? { localAddress } : {}) });
    let out = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (out += d));
    s.on('end', () => (out ? resolve(out) : reject(new Error('closed without an answer'))));
    s.on('error', reject);
  });
}

async function requests(n: number, host: string, port: number, localAddress?: string): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await request(host, port, localAddress));
  return out;
}

const count = (xs: string[]): Record<string, number> => {
  const m: Record<string, number> = {};
  for (const x of xs) m[x] = (m[x] ?? 0) + 1;
  return m;
};

describe('Proxy', () => {
  let api: TestApi;
  let proxy: Proxy;
  const ports: Record<string, number> = {};
  const servers: net.Server[] = [];
  const bindFailures: BindFailure[] = [];
  const iface = `k8tspt${process.pid % 100000}`;

  before(async () => {
    assert.ok(HOST_IP, 'this test needs a non-loopback IPv4 address on the host');
    api = await startTestApi();
    for (const name of [...NAMES, 'dead']) {
      const server = net.createServer((s) => s.end(name));
      await new Promise<void>((resolve) => server.listen(0, HOST_IP, () => resolve()));
      ports[name] = (server.address() as net.AddressInfo).port;
      servers.push(server);
    }
    // Nothing listens on the dead endpoint's port: connections to it are refused.
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()));
    proxy = new Proxy({
      client: api.client,
      nodeName: 'node-1',
      nodeIP: '127.0.0.1',
      clusterIPInterface: iface,
      logger: silentLogger(),
      connectTimeoutMs: 500,
      onBindError: (_svc, f) => bindFailures.push(f),
    });
    await proxy.start();
  });

  after(async () => {
    await proxy?.stop();
    for (const s of servers) s.close();
    await api?.stop();
  });

  let svc: Service;
  /** The slice of one backend (one endpoint, its own port), ready or not. */
  const slice = (name: string, ready: boolean): EndpointSlice => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `web-${name}`, namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [HOST_IP!], conditions: { ready, serving: ready, terminating: false } }],
    ports: [{ name: 'http', port: ports[name]!, protocol: 'TCP' }],
  });
  /** Makes exactly `names` ready (creating slices on first use). */
  const setReady = async (names: string[]): Promise<void> => {
    for (const name of [...NAMES, 'dead']) {
      const want = slice(name, names.includes(name));
      try {
        const current = await api.client.get<EndpointSlice>(
          resources.endpointslices,
          'default',
          `web-${name}`,
        );
        await api.client.update(resources.endpointslices, { ...want, metadata: current.metadata });
      } catch {
        await api.client.create(resources.endpointslices, want);
      }
    }
  };
  const nodePort = (): number => svc.spec.ports![0]!.nodePort!;
  const served = (names: string[]) => () => {
    const eps = proxy.snapshot()['default/web']?.http?.endpoints ?? [];
    const want = names
      .map((n) => ports[n]!)
      .sort((a, b) => a - b)
      .map((p) => `${HOST_IP}:${p}`);
    return eps.join() === want.join();
  };

  it('serves a NodePort on the node IP, round-robin across all ready endpoints', async () => {
    svc = await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        type: 'NodePort',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      },
    });
    await setReady(NAMES);
    await until('the endpoints to be served', served(NAMES));
    const answers = await until('the NodePort to answer', () => requests(30, '127.0.0.1', nodePort()));
    assert.deepEqual(count(answers), { b0: 10, b1: 10, b2: 10 });
  });

  it('after scaling to one endpoint, every request reaches it once the proxy has the change', async () => {
    await setReady(['b1']);
    // How soon the change arrives is bench:proxy's to measure (endpoint propagation);
    // here: once the NodePort's endpoints are only b1, no new connection goes elsewhere.
    await until('the NodePort to serve only b1', () => {
      const http = proxy.snapshot()['default/web']?.http;
      return http?.externalEndpoints.join() === `${HOST_IP}:${ports['b1']}` && served(['b1'])();
    });
    assert.deepEqual(count(await requests(20, '127.0.0.1', nodePort())), { b1: 20 });
  });

  it('skips an endpoint that refuses: no client error while another is ready', async () => {
    await setReady(['b0', 'dead', 'b2']);
    await until('the endpoints to be served', served(['b0', 'dead', 'b2']));
    const answers = await requests(30, '127.0.0.1', nodePort());
    assert.deepEqual(Object.keys(count(answers)).sort(), ['b0', 'b2']);
  });

  it('sessionAffinity ClientIP keeps one client on one endpoint', async () => {
    await setReady(NAMES);
    await until('the endpoints to be served', served(NAMES));
    await api.client.patch(resources.services, 'default', 'web', 'merge', {
      spec: { sessionAffinity: 'ClientIP' },
    });
    // Once affinity is on, 20 requests from one client all land on one endpoint.
    await until('affinity to take effect', async () => {
      const answers = await requests(20, '127.0.0.1', nodePort(), '127.0.0.1');
      return new Set(answers).size === 1;
    });
    // A different client address may land elsewhere but is sticky too.
    const other = await requests(10, '127.0.0.1', nodePort(), '127.0.0.99');
    assert.equal(new Set(other).size, 1);
    await api.client.patch(resources.services, 'default', 'web', 'merge', {
      spec: { sessionAffinity: 'None' },
    });
    await until(
      'round-robin again',
      async () => new Set(await requests(6, '127.0.0.1', nodePort())).size === 3,
    );
  });

  it('serves the ClusterIP from the host, on the address it added', async (t) => {
    if (proxy.addressMode === 'disabled') {
      // Only a machine where addresses cannot be changed at all may skip: not root, or no
      // iproute2. As root with `ip`, a disabled mode is a failure of ClusterIPAddresses.
      const canChange = process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0;
      assert.ok(!canChange, 'ClusterIP addresses are disabled although this process is root and has ip');
      t.skip('cannot add addresses here (not root, or no `ip`): ClusterIP not served');
      return;
    }
    const clusterIP = svc.spec.clusterIP!;
    assert.match(
      execFileSync('ip', ['-o', '-4', 'addr', 'show']).toString(),
      new RegExp(`inet ${clusterIP.replaceAll('.', '\\.')}/32`),
    );
    const answers = await until('the ClusterIP to answer', () => requests(6, clusterIP, 80));
    assert.deepEqual(Object.keys(count(answers)).sort(), NAMES);
  });

  it('counts connections and bytes per Service and endpoints per Service', async () => {
    const text = await proxy.metrics();
    const connections = /k8ts_proxy_connections_total\{service="default\/web",port="http"\} (\d+)/.exec(text);
    assert.ok(connections && Number(connections[1]) >= 100, text);
    assert.match(text, /k8ts_proxy_bytes_total\{service="default\/web",direction="out"\} [1-9]\d*/);
    assert.match(text, /k8ts_proxy_endpoints\{service="default\/web"\} 3/);
  });

  it('a port that cannot be bound is reported and the rest is served', async () => {
    // Hold a free port of the NodePort range on the node IP, then give a Service that nodePort.
    const holder = net.createServer();
    let port = 31000 + (process.pid % 1000);
    for (; ; port++) {
      const ok = await new Promise<boolean>((resolve) => {
        holder.once('error', () => resolve(false));
        holder.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (ok) break;
    }
    try {
      await api.client.create<Service>(resources.services, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'clash', namespace: 'default' },
        spec: {
          type: 'NodePort',
          selector: { app: 'web' },
          ports: [{ name: 'a', port: 81, nodePort: port }],
        },
      });
      const failure = await until('the bind failure to be reported', () =>
        bindFailures.find((f) => f.address.port === port && f.address.kind === 'NodePort'),
      );
      assert.equal(failure.error, 'EADDRINUSE');
      // The other Service keeps working.
      assert.equal((await requests(3, '127.0.0.1', nodePort())).length, 3);
    } finally {
      holder.close();
      await api.client.delete(resources.services, 'default', 'clash');
    }
  });

  it('a deleted Service closes its listeners and removes its ClusterIP', async () => {
    const clusterIP = svc.spec.clusterIP!;
    await api.client.delete(resources.services, 'default', 'web');
    await until('the Service to be gone', () => proxy.snapshot()['default/web'] === undefined);
    await assert.rejects(request('127.0.0.1', nodePort()), /ECONNREFUSED/);
    assert.doesNotMatch(
      execFileSync('ip', ['-o', '-4', 'addr', 'show']).toString(),
      new RegExp(`inet ${clusterIP.replaceAll('.', '\\.')}/`),
    );
  });

  it('UDP: sessions round-robin over the endpoints, keep theirs, skip one that refuses, and close with the Service', async () => {
    // Two UDP echo servers that say who they are, and a port where nothing listens.
    const udpServers: dgram.Socket[] = [];
    const udpPorts: Record<string, number> = {};
    try {
      for (const name of ['u0', 'u1', 'udead']) {
        const server = dgram.createSocket('udp4');
        server.on('message', (m, r) => server.send(`${name}:${m.toString()}`, r.port, r.address));
        await new Promise<void>((resolve) => server.bind(0, HOST_IP, () => resolve()));
        udpPorts[name] = server.address().port;
        udpServers.push(server);
      }
      udpServers.pop()!.close();
      const dns = await api.client.create<Service>(resources.services, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'dns', namespace: 'default' },
        spec: {
          type: 'NodePort',
          selector: { app: 'dns' },
          ports: [{ name: 'dns', port: 53, protocol: 'UDP' }],
        },
      });
      const udpSlice = (names: string[]): EndpointSlice => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'dns-a', namespace: 'default', labels: { 'kubernetes.io/service-name': 'dns' } },
        addressType: 'IPv4',
        // One slice port per endpoint port is not expressible: one slice per endpoint.
        endpoints: [{ addresses: [HOST_IP!], conditions: { ready: true } }],
        ports: [{ name: 'dns', port: udpPorts[names[0]!]!, protocol: 'UDP' }],
      });
      await api.client.create(resources.endpointslices, udpSlice(['u0']));
      await api.client.create(resources.endpointslices, {
        ...udpSlice(['u1']),
        metadata: { name: 'dns-b', namespace: 'default', labels: { 'kubernetes.io/service-name': 'dns' } },
      });
      const port = dns.spec.ports![0]!.nodePort!;
      await until(
        'the UDP port to be served',
        () => proxy.snapshot()['default/dns']?.dns?.endpoints.length === 2,
      );
      const firsts: string[] = [];
      for (let i = 0; i < 4; i++) {
        const replies = await until('a UDP reply', () => udpExchange(port, `q${i}`, 2));
        // One session, one endpoint: every datagram of that client reaches the same one.
        const who = replies.map((r) => r.split(':')[0]);
        assert.equal(new Set(who).size, 1, `one session stays on one endpoint: ${replies.join()}`);
        assert.deepEqual(
          replies.map((r) => r.split(':')[1]),
          [`q${i}#0`, `q${i}#1`, `q${i}#2`],
        );
        firsts.push(who[0]!);
      }
      assert.deepEqual(count(firsts), { u0: 2, u1: 2 });

      // Replace u1 with the dead port: a session sent there is refused (ICMP port
      // unreachable), and clients retrying get u0.
      await api.client.delete(resources.endpointslices, 'default', 'dns-b');
      await api.client.create(resources.endpointslices, {
        ...udpSlice(['udead']),
        metadata: { name: 'dns-b', namespace: 'default', labels: { 'kubernetes.io/service-name': 'dns' } },
      });
      await until(
        'the dead endpoint to be served',
        () =>
          proxy.snapshot()['default/dns']?.dns?.endpoints.includes(`${HOST_IP}:${udpPorts.udead}`) ?? false,
      );
      const answers: string[] = [];
      for (let i = 0; i < 6; i++) {
        answers.push(...(await until('a UDP reply after a retry', () => udpExchange(port, `r${i}`, 0, 300))));
      }
      assert.ok(
        answers.every((a) => a.startsWith('u0:')),
        answers.join(),
      );

      await api.client.delete(resources.services, 'default', 'dns');
      await until('the UDP Service to be gone', () => proxy.snapshot()['default/dns'] === undefined);
      await assert.rejects(udpExchange(port, 'after', 0, 300), /no UDP reply/);
    } finally {
      for (const s of udpServers) s.close();
      for (const name of ['dns-a', 'dns-b'])
        await api.client.delete(resources.endpointslices, 'default', name).catch(() => undefined);
    }
  });

  /** A connection through a Service deleted while it was open; stop() must end it. */
  let survivor: net.Socket | undefined;

  it('a Service deleted with a connection open: the listener closes at once, the connection may finish', async () => {
    const echo = net.createServer((c) => c.pipe(c));
    await new Promise<void>((resolve) => echo.listen(0, HOST_IP, () => resolve()));
    servers.push(echo);
    const long = await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'long', namespace: 'default' },
      spec: { type: 'NodePort', selector: { app: 'long' }, ports: [{ name: 'echo', port: 80 }] },
    });
    await api.client.create(resources.endpointslices, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'long-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'long' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [HOST_IP!], conditions: { ready: true } }],
      ports: [{ name: 'echo', port: (echo.address() as net.AddressInfo).port, protocol: 'TCP' }],
    });
    await until(
      'the echo Service to have its endpoint',
      () => proxy.snapshot()['default/long']?.echo?.endpoints.length === 1,
    );
    const port = long.spec.ports![0]!.nodePort!;
    const conn = net.connect({ host: '127.0.0.1', port });
    survivor = conn;
    conn.setEncoding('utf8');
    let got = '';
    conn.on('data', (d: string) => (got += d));
    conn.on('error', () => {});
    conn.write('before ');
    await until('the echo before the delete', () => got === 'before ');
    await api.client.delete(resources.services, 'default', 'long');
    await until('the Service to be gone', () => proxy.snapshot()['default/long'] === undefined);
    await assert.rejects(request('127.0.0.1', port), /ECONNREFUSED/);
    conn.write('after');
    await until('the echo after the delete', () => got === 'before after');
  });

  it('stop() leaves no listener, address or interface behind', async () => {
    const s = await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'last', namespace: 'default' },
      spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80 }] },
    });
    await until(
      'the Service to be served',
      () => (proxy.snapshot()['default/last']?.['80']?.listening.length ?? 0) > 0,
    );
    await proxy.stop();
    await assert.rejects(request('127.0.0.1', s.spec.ports![0]!.nodePort!), /ECONNREFUSED/);
    // The connection of the deleted Service, left to finish, is ended too.
    assert.ok(survivor, 'the previous test left its connection');
    await until('the deleted Service connection to be closed', () => survivor!.closed);
    const addrs = execFileSync('ip', ['-o', 'addr', 'show']).toString();
    assert.doesNotMatch(addrs, new RegExp(`inet ${s.spec.clusterIP!.replaceAll('.', '\\.')}/`));
    assert.doesNotMatch(addrs, new RegExp(iface));
  });
});
