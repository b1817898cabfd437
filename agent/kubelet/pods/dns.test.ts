/**
 * The pod's resolv.conf, hostname and FQDN as the kubelet forms them (dns.ts), case by case
 * after pkg/kubelet/network/dns/dns_test.go: every dnsPolicy, dnsConfig merging, the libc
 * limits, and the fallbacks without a cluster DNS or a host resolv.conf.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DNSConfig } from '../../../cri/index.js';
import { podSandboxConfig } from './config.js';
import {
  DnsConfigurer,
  kernelHostname,
  parseResolvConf,
  podDNSConfig,
  podHostnameAndDomain,
  type NodeDNS,
} from './dns.js';
import type { KubeletPod, KubeletPodSpec } from './types.js';

const pod = (spec: Partial<KubeletPodSpec> = {}, name = 'web-0'): KubeletPod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'shop', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'img:1' }], ...spec },
});

const HOST: DNSConfig = {
  servers: ['192.0.2.53', '192.0.2.54'],
  searches: ['corp.example'],
  options: ['edns0'],
};
const node = (over: Partial<NodeDNS> = {}): NodeDNS => ({
  host: HOST,
  clusterDNS: ['10.43.0.10'],
  clusterDomain: 'cluster.local',
  nodeIPs: ['192.0.2.10'],
  ...over,
});
const CLUSTER: DNSConfig = {
  servers: ['10.43.0.10'],
  searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'],
  options: ['ndots:5'],
};

describe('parseResolvConf', () => {
  it('accumulates nameservers, keeps the last search line without trailing dots, merges options', () => {
    const text = [
      '# generated',
      'nameserver 192.0.2.53',
      'search old.example',
      'nameserver   192.0.2.54  ',
      'nameserver',
      'search a.example. . b.example',
      'options ndots:2 timeout:1',
      'options ndots:3 edns0',
      'domain ignored.example',
    ].join('\n');
    assert.deepEqual(parseResolvConf(text), {
      servers: ['192.0.2.53', '192.0.2.54'],
      searches: ['a.example', 'b.example'],
      options: ['ndots:3', 'timeout:1', 'edns0'],
    });
  });
});

describe('podDNSConfig', () => {
  const cases: [string, KubeletPod, NodeDNS, DNSConfig][] = [
    ['ClusterFirst (unset) is the cluster DNS with the host search list after', pod(), node(), CLUSTER],
    ['ClusterFirst named', pod({ dnsPolicy: 'ClusterFirst' }), node(), CLUSTER],
    ['Default is the host resolv.conf', pod({ dnsPolicy: 'Default' }), node(), HOST],
    ['ClusterFirst on hostNetwork falls back to Default', pod({ hostNetwork: true }), node(), HOST],
    [
      'ClusterFirstWithHostNet on hostNetwork is the cluster DNS',
      pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }),
      node(),
      CLUSTER,
    ],
    [
      'None is only the dnsConfig',
      pod({
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['203.0.113.1'],
          searches: ['x.example'],
          options: [{ name: 'ndots', value: '2' }],
        },
      }),
      node(),
      { servers: ['203.0.113.1'], searches: ['x.example'], options: ['ndots:2'] },
    ],
    [
      'dnsConfig is appended without duplicates and its options replace by name',
      pod({
        dnsConfig: {
          nameservers: ['10.43.0.10', '203.0.113.1'],
          searches: ['svc.cluster.local', 'extra.example'],
          options: [{ name: 'ndots', value: '1' }, { name: 'edns0' }, { name: 'single-request' }],
        },
      }),
      node(),
      {
        servers: ['10.43.0.10', '203.0.113.1'],
        searches: [...CLUSTER.searches, 'extra.example'],
        options: ['ndots:1', 'edns0', 'single-request'],
      },
    ],
    [
      'the host search list is not repeated',
      pod(),
      node({ host: { servers: ['192.0.2.53'], searches: ['cluster.local', 'corp.example'], options: [] } }),
      CLUSTER,
    ],
    [
      'no cluster domain: only the host search list',
      pod(),
      node({ clusterDomain: '' }),
      { servers: ['10.43.0.10'], searches: ['corp.example'], options: ['ndots:5'] },
    ],
    [
      '--resolv-conf "": Default is the node loopback with search .',
      pod({ dnsPolicy: 'Default' }),
      node({ host: undefined }),
      { servers: ['127.0.0.1'], searches: ['.'], options: [] },
    ],
    [
      'at most 3 nameservers',
      pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1', '1.1.1.2', '1.1.1.3', '1.1.1.4'] } }),
      node(),
      { servers: ['1.1.1.1', '1.1.1.2', '1.1.1.3'], searches: [], options: [] },
    ],
  ];
  for (const [what, p, n, want] of cases) {
    it(what, () => {
      const { config } = podDNSConfig(p, n);
      assert.deepEqual(config, want);
    });
  }

  it('without a cluster DNS, ClusterFirst falls back to Default with MissingClusterDNS on the pod and the node', () => {
    const { config, events } = podDNSConfig(pod(), node({ clusterDNS: [] }));
    assert.deepEqual(config, HOST);
    assert.deepEqual(
      events.map((e) => [e.on, e.reason]),
      [
        ['node', 'MissingClusterDNS'],
        ['pod', 'MissingClusterDNS'],
      ],
    );
    assert.match(
      events[1]!.message,
      /^pod: "web-0_shop\(u1\)"\. kubelet does not have ClusterDNS IP configured/,
    );
  });

  it('a search line over 32 domains or 2048 characters is cut, with DNSConfigForming', () => {
    const many = Array.from({ length: 40 }, (_, i) => `d${i}.example`);
    const over32 = podDNSConfig(
      pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: many } }),
      node(),
    );
    assert.deepEqual(over32.config.searches, many.slice(0, 32));
    assert.equal(over32.events[0]?.reason, 'DNSConfigForming');
    const long = Array.from(
      { length: 20 },
      (_, i) => `${String(i).repeat(63)}.${'x'.repeat(63)}.${'y'.repeat(63)}.example`,
    );
    const tooLong = podDNSConfig(
      pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: long } }),
      node(),
    );
    assert.ok(tooLong.config.searches.join(' ').length <= 2048);
    assert.deepEqual(tooLong.config.searches, long.slice(0, tooLong.config.searches.length));
    assert.ok(tooLong.config.searches.length < long.length);
    const within = podDNSConfig(pod(), node());
    assert.deepEqual(within.events, []);
  });
});

describe('hostname and FQDN', () => {
  it('spec.hostname over the pod name, a subdomain makes the domain', () => {
    assert.deepEqual(podHostnameAndDomain(pod({ hostname: 'db', subdomain: 'dbs' }), 'cluster.local'), {
      hostname: 'db',
      domain: 'dbs.shop.svc.cluster.local',
    });
    assert.deepEqual(podHostnameAndDomain(pod(), 'cluster.local'), { hostname: 'web-0', domain: '' });
  });
  it('a pod name over 63 characters is cut and loses a trailing dash', () => {
    const name = `${'a'.repeat(62)}-bcd`;
    assert.equal(podHostnameAndDomain(pod({}, name), 'cluster.local').hostname, 'a'.repeat(62));
  });
  it('setHostnameAsFQDN gives the kernel the FQDN, at most 64 characters', () => {
    assert.equal(kernelHostname('db', 'dbs.shop.svc.cluster.local', true), 'db.dbs.shop.svc.cluster.local');
    assert.equal(kernelHostname('db', 'dbs.shop.svc.cluster.local', false), 'db');
    assert.equal(kernelHostname('db', '', true), 'db');
    assert.throws(
      () => kernelHostname('h'.repeat(40), 'dbs.shop.svc.cluster.local', true),
      /FQDN .* is too long/,
    );
  });
  it('the sandbox config carries the FQDN hostname', () => {
    const p = pod({ hostname: 'db', subdomain: 'dbs', setHostnameAsFQDN: true });
    const cfg = podSandboxConfig(p, 0, {
      nodeName: 'n',
      nodeIP: '192.0.2.10',
      network: 'net',
      clusterDomain: 'k8s.test',
    });
    assert.equal(cfg.hostname, 'db.dbs.shop.svc.k8s.test');
  });
});

describe('DnsConfigurer', () => {
  it('warns once when the host file names only loopback nameservers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-dns-'));
    try {
      const file = join(dir, 'resolv.conf');
      writeFileSync(file, 'nameserver 127.0.0.53\noptions edns0\n');
      const warnings: string[] = [];
      const c = new DnsConfigurer({
        clusterDNS: () => ['10.43.0.10'],
        resolvConf: file,
        nodeIPs: [],
        warn: (m) => warnings.push(m),
      });
      await c.podDNS(pod());
      await c.podDNS(pod());
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /only loopback nameservers \(127\.0\.0\.53\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads --resolv-conf at each call and asks for the cluster DNS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-dns-'));
    try {
      const file = join(dir, 'resolv.conf');
      writeFileSync(file, 'nameserver 192.0.2.53\nsearch corp.example\n');
      let cluster: string[] = [];
      const c = new DnsConfigurer({
        clusterDNS: async () => cluster,
        resolvConf: file,
        nodeIPs: ['192.0.2.10'],
      });
      assert.deepEqual((await c.podDNS(pod())).config, {
        servers: ['192.0.2.53'],
        searches: ['corp.example'],
        options: [],
      });
      cluster = ['10.43.0.10'];
      writeFileSync(file, 'nameserver 192.0.2.53\nsearch other.example\n');
      assert.deepEqual((await c.podDNS(pod())).config.searches, [
        'shop.svc.cluster.local',
        'svc.cluster.local',
        'cluster.local',
        'other.example',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
