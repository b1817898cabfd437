/**
 * ClusterDNS against the real API server (in-process, test/support/api.ts): its informers
 * fill the index, so a Service created through the API resolves, a headless Service's
 * endpoints follow its EndpointSlice, and a deleted Service goes NXDOMAIN; served on
 * 127.0.0.1 port 0 (`address`), so no address is added to the host.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { silentLogger } from '../../api/log.js';
import type { EndpointSlice, Service } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { untilTruthy } from '../../test/support/wait.js';
import { modelIp } from '../proxy/fake-ip.js';
import { captureLogger } from '../testing.js';
import { ClusterDNS } from './cluster-dns.js';
import { query, startTestResolver, type TestResolver } from './testing.js';

const HOST = '127.0.0.1';

describe('ClusterDNS', () => {
  let api: TestApi;
  let dns: ClusterDNS;
  let resolver: TestResolver;
  let port: number;

  before(async () => {
    api = await startTestApi();
    resolver = await startTestResolver({
      'outside.test': [{ name: 'outside.test', type: 'A', ttl: 60, class: 'IN', data: '198.18.0.20' }],
    });
    dns = new ClusterDNS({
      client: api.client,
      nodeName: 'dns-test',
      logger: silentLogger(),
      address: { host: HOST, port: 0 },
      upstreams: [{ host: HOST, port: resolver.port }],
    });
    await dns.start();
    port = dns.address!.port;
  });
  after(async () => {
    await dns?.stop();
    await resolver?.close();
    await api?.stop();
  });

  const a = async (name: string) => {
    const r = await query(HOST, port, name, 'A');
    return {
      rcode: r.rcode,
      ips: (r.packet.answers ?? []).filter((x) => x.type === 'A').map((x) => (x as { data: string }).data),
    };
  };

  it('a Service created through the API resolves, and NXDOMAIN once deleted', async () => {
    assert.equal((await a('web.default.svc.cluster.local')).rcode, 'NXDOMAIN');
    const created = await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80 }], selector: { app: 'web' } },
    });
    const ip = created.spec.clusterIP!;
    assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
    await untilTruthy(
      'web resolves',
      async () => (await a('web.default.svc.cluster.local')).ips[0] === ip,
      5000,
      20,
    );
    await api.client.delete(resources.services, 'default', 'web');
    await untilTruthy(
      'web is gone',
      async () => (await a('web.default.svc.cluster.local')).rcode === 'NXDOMAIN',
      5000,
      20,
    );
  });

  it('a headless Service answers its EndpointSlice’s ready endpoints as they change', async () => {
    await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db', namespace: 'default' },
      spec: { clusterIP: 'None', ports: [{ name: 'sql', port: 5432 }] },
    });
    const slice: EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'db-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'db' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.200.0.5'], hostname: 'db-0', conditions: { ready: true } }],
      ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }],
    };
    const made = await api.client.create<EndpointSlice>(resources.endpointslices, slice);
    await untilTruthy(
      'db-0 resolves',
      async () => (await a('db-0.db.default.svc.cluster.local')).ips[0] === '10.200.0.5',
      5000,
      20,
    );
    await api.client.update<EndpointSlice>(resources.endpointslices, {
      ...made,
      endpoints: [
        ...slice.endpoints,
        { addresses: ['10.200.0.6'], hostname: 'db-1', conditions: { ready: true } },
      ],
    });
    await untilTruthy(
      'both endpoints',
      async () => (await a('db.default.svc.cluster.local')).ips.sort().join() === '10.200.0.5,10.200.0.6',
      5000,
      20,
    );
  });

  it('a port another process holds: warned once, retried, served once it is free', async () => {
    const blocker = createSocket('udp4');
    await new Promise<void>((r) => blocker.bind(0, HOST, () => r()));
    const taken = blocker.address().port;
    const { logger, lines } = captureLogger();
    const second = new ClusterDNS({
      client: api.client,
      nodeName: 'dns-test-2',
      logger,
      address: { host: HOST, port: taken },
      upstreams: [],
      retryMs: 20,
    });
    try {
      await second.start();
      assert.equal(second.address, undefined);
      await untilTruthy(
        'retried',
        () => lines.filter((l) => l.message.startsWith('dns: cannot serve')).length >= 3,
        5000,
        10,
      );
      const warned = lines.filter((l) => l.level === 'warn' && l.message.startsWith('dns: cannot serve'));
      assert.equal(warned.length, 1, 'one warning, then debug lines');
      assert.match(String(warned[0]!.meta.error), /EADDRINUSE/);
      await new Promise<void>((r) => blocker.close(() => r()));
      await untilTruthy('served', () => second.address?.port === taken, 5000, 10);
      assert.equal((await query(HOST, taken, 'dns-version.cluster.local', 'TXT')).rcode, 'NOERROR');
    } finally {
      await second.stop();
      try {
        blocker.close();
      } catch {
        // closed above
      }
    }
  });

  it('puts its address back on its interface when it is removed from under it', async () => {
    // Not a local address, so the sockets cannot bind it: the address check runs regardless.
    const { ip, links } = modelIp();
    const third = new ClusterDNS({
      client: api.client,
      nodeName: 'dns-test-3',
      logger: silentLogger(),
      clusterDNS: ['198.18.250.53'],
      interfaceName: 'kdns-test',
      ip,
      upstreams: [],
      retryMs: 3_600_000,
      addressCheckMs: 20,
    });
    try {
      await third.start();
      assert.ok(links.get('kdns-test')?.has('198.18.250.53'));
      // Someone runs `ip addr del 198.18.250.53/32 dev kdns-test`.
      links.get('kdns-test')!.delete('198.18.250.53');
      await untilTruthy('the address put back', () => links.get('kdns-test')?.has('198.18.250.53'), 5000, 10);
    } finally {
      await third.stop();
    }
    assert.ok(!links.has('kdns-test'), 'stop() removes the interface');
  });

  it('forwards names outside the cluster to its upstreams', async () => {
    assert.deepEqual(await a('outside.test'), { rcode: 'NOERROR', ips: ['198.18.0.20'] });
  });
});
