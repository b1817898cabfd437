/**
 * The DNS server over real UDP and TCP sockets on 127.0.0.1 (port 0), with a test
 * resolver (testing.ts, dns-packet on 127.0.0.1) as its upstream: the cluster's records,
 * case preserved, NXDOMAIN vs NODATA, FORMERR for a broken query and answering on after it,
 * truncation to TCP, forwarding with the cache (hits not reaching the upstream, negative
 * caching, TTLs counted down), TCP fallback upstream, SERVFAIL without upstreams.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as dnsPacket from 'dns-packet';
import { silentLogger } from '../../api/log.js';
import type { Service } from '../../api/types.js';
import { Forwarder } from './forwarder.js';
import { parseResolvConf } from './resolv-conf.js';
import { ClusterRecords } from './records.js';
import { DnsServer } from './server.js';
import { exchange, query, startTestResolver, type TestResolver } from './testing.js';

const HOST = '127.0.0.1';

function svc(name: string, spec: Service['spec']): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec };
}

describe('DnsServer', () => {
  let resolver: TestResolver;
  let tcResolver: TestResolver;
  let server: DnsServer;
  let port: number;
  const now = { t: 1_000_000 };
  const records = new ClusterRecords('cluster.local');

  before(async () => {
    resolver = await startTestResolver({
      'example.test': [{ name: 'example.test', type: 'A', ttl: 300, class: 'IN', data: '198.18.0.10' }],
      'short.test': [{ name: 'short.test', type: 'A', ttl: 2, class: 'IN', data: '198.18.0.11' }],
    });
    tcResolver = await startTestResolver(
      { 'big.test': [{ name: 'big.test', type: 'A', ttl: 60, class: 'IN', data: '198.18.0.12' }] },
      { truncateUdp: true },
    );
    records.setService(
      'default/spring-service',
      svc('spring-service', {
        clusterIP: '10.43.0.50',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      }),
      [],
    );
    records.setService('default/ext', svc('ext', { type: 'ExternalName', externalName: 'example.test' }), []);
    const upstreams = [{ host: HOST, port: resolver.port }];
    const clock = { now: () => now.t, setTimeout, clearTimeout, sleep: async () => {} };
    const forwarder = new Forwarder({ upstreams: () => upstreams, clock });
    server = new DnsServer({ records, forwarder, logger: silentLogger(), clock });
    port = (await server.listen({ host: HOST, port: 0 })).port;
    assert.ok(port > 0);
  });
  after(async () => {
    await server?.close();
    await resolver?.close();
    await tcResolver?.close();
  });

  for (const transport of ['udp', 'tcp'] as const) {
    it(`answers a Service's A record over ${transport}, authoritative, in the query's case`, async () => {
      const r = await query(HOST, port, 'Spring-Service.DEFAULT.svc.cluster.local', 'A', {
        transport,
        id: 777,
      });
      assert.equal(r.rcode, 'NOERROR');
      assert.equal(r.packet.id, 777);
      assert.ok(r.packet.flag_aa);
      assert.equal(r.packet.questions![0]!.name, 'Spring-Service.DEFAULT.svc.cluster.local');
      assert.deepEqual(
        r.packet.answers!.map((a) => [
          a.name,
          a.type,
          (a as { ttl: number }).ttl,
          (a as { data: string }).data,
        ]),
        [['Spring-Service.DEFAULT.svc.cluster.local', 'A', 5, '10.43.0.50']],
      );
    });
  }

  it('answers SRV with the target in the additional section, and the same question again from its memo', async () => {
    for (const id of [1, 2]) {
      const r = await query(HOST, port, '_http._tcp.spring-service.default.svc.cluster.local', 'SRV', { id });
      assert.equal(r.packet.id, id);
      assert.deepEqual((r.packet.answers![0] as { data: unknown }).data, {
        priority: 0,
        weight: 100,
        port: 8080,
        target: 'spring-service.default.svc.cluster.local',
      });
      assert.equal((r.packet.additionals![0] as { data: string }).data, '10.43.0.50');
    }
  });

  it('a changed Service is answered anew (the memo is per index generation)', async () => {
    const before = await query(HOST, port, 'spring-service.default.svc.cluster.local', 'A');
    assert.equal((before.packet.answers![0] as { data: string }).data, '10.43.0.50');
    records.setService(
      'default/spring-service',
      svc('spring-service', {
        clusterIP: '10.43.0.51',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      }),
      [],
    );
    const changed = await query(HOST, port, 'spring-service.default.svc.cluster.local', 'A');
    assert.equal((changed.packet.answers![0] as { data: string }).data, '10.43.0.51');
    const ptr = await query(HOST, port, '51.0.43.10.in-addr.arpa', 'PTR');
    assert.equal(
      (ptr.packet.answers![0] as { data: string }).data,
      'spring-service.default.svc.cluster.local',
    );
  });

  it('tells NXDOMAIN from NODATA, both with the zone SOA', async () => {
    const nx = await query(HOST, port, 'nothing.default.svc.cluster.local', 'A');
    assert.equal(nx.rcode, 'NXDOMAIN');
    assert.equal(nx.packet.authorities![0]!.type, 'SOA');
    const nodata = await query(HOST, port, 'spring-service.default.svc.cluster.local', 'AAAA');
    assert.equal(nodata.rcode, 'NOERROR');
    assert.equal(nodata.packet.answers!.length, 0);
    assert.equal(nodata.packet.authorities![0]!.type, 'SOA');
  });

  it('pod names, dns-version', async () => {
    const pod = await query(HOST, port, '10-244-1-7.default.pod.cluster.local', 'A');
    assert.equal((pod.packet.answers![0] as { data: string }).data, '10.244.1.7');
    const v = await query(HOST, port, 'dns-version.cluster.local', 'TXT');
    assert.deepEqual((v.packet.answers![0] as { data: Buffer[] }).data.map(String), ['1.1.0']);
  });

  it('answers FORMERR to a query it cannot parse, and goes on answering', async () => {
    // A header claiming one question, then a label running past the end of the message.
    const broken = Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0x3f, 0x61]);
    for (const transport of ['udp', 'tcp'] as const) {
      const raw = await exchange(HOST, port, broken, { transport });
      assert.equal(raw.readUInt16BE(0), 0x1234, 'the ID is the query’s');
      assert.equal(raw.readUInt16BE(2) & 0x8000, 0x8000, 'a response');
      assert.equal(raw.readUInt16BE(2) & 0xf, 1, 'FORMERR');
    }
    const ok = await query(HOST, port, 'spring-service.default.svc.cluster.local', 'A');
    assert.equal(ok.rcode, 'NOERROR');
  });

  it('forwards names outside the zone, then answers them from the cache with TTLs counted down', async () => {
    const first = await query(HOST, port, 'example.test', 'A');
    assert.equal(first.rcode, 'NOERROR');
    assert.ok(!first.packet.flag_aa);
    assert.equal((first.packet.answers![0] as { data: string }).data, '198.18.0.10');
    assert.equal((first.packet.answers![0] as { ttl: number }).ttl, 300);
    const asked = resolver.asked.filter((q) => q === 'example.test/A').length;
    now.t += 10_000;
    const second = await query(HOST, port, 'EXAMPLE.test', 'A');
    assert.equal(second.packet.answers![0]!.name, 'EXAMPLE.test');
    assert.equal((second.packet.answers![0] as { ttl: number }).ttl, 290, 'the cached TTL counts down');
    assert.equal(
      resolver.asked.filter((q) => q === 'example.test/A').length,
      asked,
      'a cache hit asks no upstream',
    );
  });

  it('expires cached answers after their TTL', async () => {
    await query(HOST, port, 'short.test', 'A');
    const asked = () => resolver.asked.filter((q) => q === 'short.test/A').length;
    const n = asked();
    await query(HOST, port, 'short.test', 'A');
    assert.equal(asked(), n);
    now.t += 3000;
    await query(HOST, port, 'short.test', 'A');
    assert.equal(asked(), n + 1);
  });

  it('caches denials for the SOA minimum', async () => {
    const a = await query(HOST, port, 'missing.test', 'A');
    assert.equal(a.rcode, 'NXDOMAIN');
    const n = resolver.asked.filter((q) => q === 'missing.test/A').length;
    const b = await query(HOST, port, 'missing.test', 'A');
    assert.equal(b.rcode, 'NXDOMAIN');
    assert.equal(resolver.asked.filter((q) => q === 'missing.test/A').length, n);
  });

  it('chases an ExternalName outside the zone through the forwarder', async () => {
    const r = await query(HOST, port, 'ext.default.svc.cluster.local', 'A');
    assert.deepEqual(
      r.packet.answers!.map((a) => `${a.name} ${a.type} ${(a as { data: string }).data}`),
      ['ext.default.svc.cluster.local CNAME example.test', 'example.test A 198.18.0.10'],
    );
  });

  it('falls back to TCP upstream when the UDP answer is truncated', async () => {
    const upstreams = [{ host: HOST, port: tcResolver.port }];
    const fw = new Forwarder({ upstreams: () => upstreams });
    const a = await fw.resolve({ name: 'big.test', type: 'A' });
    assert.equal(a.rcode, 'NOERROR');
    assert.equal((a.answers[0] as { data: string }).data, '198.18.0.12');
  });

  it('SERVFAIL when no upstream answers', async () => {
    const fw = new Forwarder({ upstreams: () => [] });
    assert.equal((await fw.resolve({ name: 'x.test', type: 'A' })).rcode, 'SERVFAIL');
  });

  it('truncates a UDP answer over 512 bytes so that the client retries over TCP', async () => {
    const many = new ClusterRecords('cluster.local');
    const eps = Array.from({ length: 60 }, (_, i) => ({
      addresses: [`10.9.0.${i + 1}`],
      conditions: { ready: true },
    }));
    many.setService('default/big', svc('big', { clusterIP: 'None' }), [
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'big-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'big' } },
        addressType: 'IPv4',
        endpoints: eps,
      },
    ]);
    const s = new DnsServer({
      records: many,
      forwarder: new Forwarder({ upstreams: () => [] }),
      logger: silentLogger(),
    });
    const { port: p } = await s.listen({ host: HOST, port: 0 });
    try {
      const udp = await query(HOST, p, 'big.default.svc.cluster.local', 'A');
      assert.ok(udp.packet.flag_tc);
      assert.equal(udp.packet.answers!.length, 0);
      const tcp = await query(HOST, p, 'big.default.svc.cluster.local', 'A', { transport: 'tcp' });
      assert.equal(tcp.packet.answers!.length, 60);
      const edns = await query(HOST, p, 'big.default.svc.cluster.local', 'A', { edns: 4096 });
      assert.ok(!edns.packet.flag_tc);
      assert.equal(edns.packet.answers!.length, 60);
      assert.ok(edns.packet.additionals!.some((a) => a.type === 'OPT'));
    } finally {
      await s.close();
    }
  });

  it('a type it has no records of (HTTPS, 65) is NODATA for a Service name', async () => {
    const q = dnsPacket.encode({
      type: 'query',
      id: 65,
      questions: [{ name: 'spring-service.default.svc.cluster.local', type: 'A' }],
    });
    q.writeUInt16BE(65, q.length - 4);
    const r = dnsPacket.decode(await exchange(HOST, port, q));
    assert.equal((r as { rcode?: string }).rcode, 'NOERROR');
    assert.equal(r.answers!.length, 0);
    assert.equal(r.questions![0]!.type, 'UNKNOWN_65');
  });

  it('NOTIMP for another opcode', async () => {
    const q = dnsPacket.encode({
      type: 'query',
      id: 9,
      flags: 2 << 11,
      questions: [{ name: 'a.test', type: 'A' }],
    });
    const raw = await exchange(HOST, port, q);
    assert.equal(raw.readUInt16BE(2) & 0xf, 4);
  });
});

describe('parseResolvConf', () => {
  it('reads nameservers, with ports for tests, skipping the rest', () => {
    assert.deepEqual(
      parseResolvConf(
        '# x\nsearch a.b\nnameserver 192.0.2.1\nnameserver 127.0.0.1:5353\nnameserver [::1]:54\nnameserver fe80::1%eth0\noptions ndots:5\n',
      ),
      [
        { host: '192.0.2.1', port: 53 },
        { host: '127.0.0.1', port: 5353 },
        { host: '::1', port: 54 },
      ],
    );
  });
});
