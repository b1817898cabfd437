/**
 * kube-proxy's nftables mode: the rules of a Service port (nftables-rules.ts), the
 * transactions between two states, and the proxier's writes (nftables.ts) with a fake host
 * that records them. The real kernel runs these rules in the multi-host e2e
 * (test/multihost.e2e.test.ts) and in nftables-kernel.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CommandResult, HostCommand } from '../network/host-command.js';
import { ProxyMetrics } from './metrics.js';
import type { EndpointSlice, Service } from '../../api/types.js';
import { kernelServicePorts, type KernelServicePort } from './kernel-ports.js';
import { NftablesProxier } from './nftables.js';
import { diffTransaction, emptyObjects, nftTableFor, servicePortObjects } from './nftables-rules.js';

const settings = { table: 'k8ts', clusterCIDR: '10.42.0.0/16', nodeIP: '198.18.0.11' };
const ep = (ip: string, port = 8080) => ({ ip, port });

function port(over: Partial<KernelServicePort> = {}): KernelServicePort {
  return {
    id: 'default/web/tcp/http',
    protocol: 'TCP',
    clusterIP: '10.43.0.10',
    port: 80,
    loadBalancerIPs: [],
    internal: [ep('10.42.1.5'), ep('10.42.2.6')],
    external: [ep('10.42.1.5'), ep('10.42.2.6')],
    all: [ep('10.42.1.5'), ep('10.42.2.6')],
    hasEndpoints: true,
    externalTrafficLocal: false,
    affinitySeconds: 0,
    ...over,
  };
}

describe('nftables rules of one Service port', () => {
  it('spreads ClusterIP traffic at random over the endpoints, masquerading what comes from outside the cluster CIDR', () => {
    const o = servicePortObjects(port(), settings);
    assert.deepEqual(o.chains.get('svc-default/web/tcp/http'), [
      'ip daddr 10.43.0.10 tcp dport 80 ip saddr != 10.42.0.0/16 jump mark-for-masquerade',
      'numgen random mod 2 vmap { 0 : goto ep-default/web/tcp/http__10.42.1.5/8080, 1 : goto ep-default/web/tcp/http__10.42.2.6/8080 }',
    ]);
    assert.deepEqual(o.chains.get('ep-default/web/tcp/http__10.42.1.5/8080'), [
      'ip saddr 10.42.1.5 jump mark-for-masquerade',
      'meta l4proto tcp dnat to 10.42.1.5:8080',
    ]);
    assert.deepEqual(
      [...o.elements.get('service-ips')!],
      [['10.43.0.10 . tcp . 80', 'goto svc-default/web/tcp/http']],
    );
    assert.equal(o.elements.get('no-endpoint-services'), undefined);
  });

  it('rejects a Service without endpoints, and drops one whose traffic policy leaves none on this node', () => {
    const none = servicePortObjects(
      port({ internal: [], external: [], hasEndpoints: false, nodePort: 30080 }),
      settings,
    );
    assert.deepEqual(
      [...none.elements.get('no-endpoint-services')!],
      [['10.43.0.10 . tcp . 80', 'goto reject-chain']],
    );
    assert.deepEqual(
      [...none.elements.get('no-endpoint-nodeports')!],
      [['tcp . 30080', 'goto reject-chain']],
    );
    assert.equal(none.elements.get('service-ips'), undefined);
    const elsewhere = servicePortObjects(port({ internal: [], hasEndpoints: true }), settings);
    assert.deepEqual(
      [...elsewhere.elements.get('no-endpoint-services')!],
      [['10.43.0.10 . tcp . 80', 'drop']],
    );
  });

  it('keeps ClientIP affinity in a dynamic set per endpoint, with the timeout', () => {
    const o = servicePortObjects(port({ affinitySeconds: 60 }), settings);
    const set = 'affinity-default/web/tcp/http__10.42.1.5/8080';
    assert.equal(o.sets.get(set), 'type ipv4_addr; flags dynamic,timeout; timeout 60s;');
    assert.equal(
      o.chains.get('svc-default/web/tcp/http')![1],
      `ip saddr @${set} goto ep-default/web/tcp/http__10.42.1.5/8080`,
    );
    assert.ok(
      o.chains.get('ep-default/web/tcp/http__10.42.1.5/8080')!.includes(`update @${set} { ip saddr }`),
    );
  });

  it('masquerades NodePort traffic for externalTrafficPolicy Cluster, and keeps the client address for Local', () => {
    const cluster = servicePortObjects(port({ nodePort: 30080 }), settings);
    assert.equal(cluster.chains.get('ext-default/web/tcp/http')![0], 'jump mark-for-masquerade');
    assert.deepEqual(
      [...cluster.elements.get('service-nodeports')!],
      [['tcp . 30080', 'goto ext-default/web/tcp/http']],
    );
    const local = servicePortObjects(
      port({ nodePort: 30080, externalTrafficLocal: true, external: [ep('10.42.1.5')] }),
      settings,
    );
    const ext = local.chains.get('ext-default/web/tcp/http')!;
    assert.ok(!ext.includes('jump mark-for-masquerade'));
    assert.equal(ext.at(-1), 'goto local-default/web/tcp/http');
    assert.ok(ext.includes('ip saddr 10.42.0.0/16 goto svc-default/web/tcp/http'));
    assert.deepEqual(local.chains.get('local-default/web/tcp/http'), [
      'numgen random mod 1 vmap { 0 : goto ep-default/web/tcp/http__10.42.1.5/8080 }',
    ]);
    const noLocal = servicePortObjects(
      port({ nodePort: 30080, externalTrafficLocal: true, external: [] }),
      settings,
    );
    assert.equal(noLocal.chains.get('ext-default/web/tcp/http')!.at(-1), 'drop');
  });

  it('serves load-balancer ingress IPs like NodePorts, in the service-ips map', () => {
    const o = servicePortObjects(port({ loadBalancerIPs: ['198.18.0.50'] }), settings);
    assert.equal(
      o.elements.get('service-ips')!.get('198.18.0.50 . tcp . 80'),
      'goto ext-default/web/tcp/http',
    );
  });
});

describe('nftables rules against abuse and corner cases', () => {
  it("serves no load-balancer ingress IP on loopback, link-local or the Service's own clusterIP", () => {
    const o = servicePortObjects(
      port({ loadBalancerIPs: ['127.0.0.1', '169.254.169.254', '0.0.0.1', '10.43.0.10', '198.18.0.50'] }),
      settings,
    );
    assert.deepEqual([...o.elements.get('service-ips')!.keys()].sort(), [
      '10.43.0.10 . tcp . 80',
      '198.18.0.50 . tcp . 80',
    ]);
    assert.deepEqual([...o.weak], ['service-ips|198.18.0.50 . tcp . 80']);
  });

  it("lets a clusterIP take its key from another Service's load-balancer ingress IP, in either order", async () => {
    for (const order of [
      ['default/aaa', 'default/victim'],
      ['default/victim', 'default/aaa'],
    ]) {
      const { host, calls } = fakeHost();
      const nft = new NftablesProxier({
        host,
        logger: { warn() {}, info() {} },
        metrics: new ProxyMetrics(),
      });
      const want = {
        'default/aaa': [
          port({ id: 'default/aaa/tcp/80', clusterIP: '10.43.0.99', loadBalancerIPs: ['10.43.0.10'] }),
        ],
        'default/victim': [port({ id: 'default/victim/tcp/80', clusterIP: '10.43.0.10' })],
      } as Record<string, KernelServicePort[]>;
      for (const key of order) {
        nft.update(key, want[key]);
        await nft.flush(settings);
      }
      for (let i = 0; i < 3 && nft.pending; i++) await nft.flush(settings);
      const all = calls.map((c) => c.stdin ?? '').join('');
      const adds = [
        ...all.matchAll(/add element ip k8ts service-ips \{ 10\.43\.0\.10 \. tcp \. 80 : goto (\S+) \}/g),
      ].map((m) => m[1]);
      assert.equal(adds.at(-1), 'svc-default/victim/tcp/80', `order ${order.join(', ')}: ${adds.join(', ')}`);
      assert.ok(!nft.pending, 'settled');
    }
  });

  it('sends pods and the node to every endpoint under eTP Local even when iTP Local leaves none here', () => {
    const o = servicePortObjects(
      port({
        nodePort: 30080,
        internal: [],
        external: [],
        all: [ep('10.42.2.6')],
        externalTrafficLocal: true,
      }),
      settings,
    );
    assert.deepEqual(o.chains.get('ext-default/web/tcp/http'), [
      'ip saddr 10.42.0.0/16 goto cluster-default/web/tcp/http',
      'fib saddr type local jump mark-for-masquerade',
      'fib saddr type local goto cluster-default/web/tcp/http',
      'drop',
    ]);
    assert.deepEqual(o.chains.get('cluster-default/web/tcp/http'), [
      'numgen random mod 1 vmap { 0 : goto ep-default/web/tcp/http__10.42.2.6/8080 }',
    ]);
    assert.equal(o.elements.get('service-nodeports')!.get('tcp . 30080'), 'goto ext-default/web/tcp/http');
  });

  it('writes no chain nothing points to, for a Service without endpoints', () => {
    const o = servicePortObjects(
      port({ internal: [], external: [], all: [], hasEndpoints: false }),
      settings,
    );
    assert.deepEqual([...o.chains.keys()], []);
    assert.equal(o.elements.get('cluster-ips')!.get('10.43.0.10'), '');
  });

  it('counts only IPv4 endpoints (the table is family ip), and skips ipMode Proxy ingress IPs', () => {
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        type: 'LoadBalancer' as const,
        clusterIP: '10.43.0.10',
        ports: [{ name: 'http', port: 80, nodePort: 30080 }],
      },
      status: {
        loadBalancer: { ingress: [{ ip: '198.18.0.50' }, { ip: '198.18.0.51', ipMode: 'Proxy' as const }] },
      },
    };
    const v6 = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-v6', namespace: 'default' },
      addressType: 'IPv6',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [{ addresses: ['fd00::5'], conditions: { ready: true } }],
    };
    const { ports } = kernelServicePorts(
      'default/web',
      svc as unknown as Service,
      new Map([['http', svc.spec.ports[0]!]]),
      [v6 as unknown as EndpointSlice],
      'node-a',
    );
    assert.equal(
      ports[0]!.hasEndpoints,
      false,
      'a Service with IPv6 endpoints only is rejected, not dropped',
    );
    assert.deepEqual(ports[0]!.loadBalancerIPs, ['198.18.0.50']);
  });
});

describe('nftables transactions', () => {
  it('is empty between equal states, and touches only the changed chains otherwise', () => {
    const a = servicePortObjects(port(), settings);
    assert.equal(diffTransaction(a, servicePortObjects(port(), settings)).text, '');
    const b = servicePortObjects(
      port({ internal: [ep('10.42.1.5')], external: [ep('10.42.1.5')] }),
      settings,
    );
    const tx = diffTransaction(a, b);
    assert.deepEqual(tx.text.trim().split('\n'), [
      'add chain ip k8ts svc-default/web/tcp/http',
      'flush chain ip k8ts svc-default/web/tcp/http',
      'flush chain ip k8ts ep-default/web/tcp/http__10.42.2.6/8080',
      'add rule ip k8ts svc-default/web/tcp/http ip daddr 10.43.0.10 tcp dport 80 ip saddr != 10.42.0.0/16 jump mark-for-masquerade',
      'add rule ip k8ts svc-default/web/tcp/http numgen random mod 1 vmap { 0 : goto ep-default/web/tcp/http__10.42.1.5/8080 }',
    ]);
    // The endpoint's chain is only flushed: a kernel before 6.2 refuses its deletion in the
    // transaction that removes the last reference to it.
    assert.deepEqual(tx.staleChains, ['ep-default/web/tcp/http__10.42.2.6/8080']);
  });

  it('removes everything of a Service that went away, map elements before chains', () => {
    const tx = diffTransaction(servicePortObjects(port({ nodePort: 30080 }), settings), emptyObjects());
    const lines = tx.text.trim().split('\n');
    const firstFlush = lines.findIndex((l) => l.startsWith('flush chain'));
    assert.ok(
      lines.slice(0, firstFlush).some((l) => l.startsWith('delete element ip k8ts service-nodeports')),
    );
    assert.ok(lines.slice(0, firstFlush).includes('delete element ip k8ts cluster-ips { 10.43.0.10 }'));
    assert.equal(lines.filter((l) => l.startsWith('flush chain')).length, 4);
    assert.equal(tx.staleChains.length, 4);
    assert.ok(!lines.some((l) => l.startsWith('add ') || l.startsWith('delete chain')));
  });

  it('recreates an affinity set whose timeout changed, and rewrites the chains that use it', () => {
    const tx = diffTransaction(
      servicePortObjects(port({ affinitySeconds: 60 }), settings),
      servicePortObjects(port({ affinitySeconds: 120 }), settings),
    ).text;
    assert.match(tx, /delete set ip k8ts affinity-default\/web\/tcp\/http__10\.42\.1\.5\/8080\n/);
    assert.match(
      tx,
      /add set ip k8ts affinity-default\/web\/tcp\/http__10\.42\.1\.5\/8080 \{ .*timeout 120s; \}/,
    );
    assert.match(tx, /flush chain ip k8ts ep-default\/web\/tcp\/http__10\.42\.1\.5\/8080/);
    assert.ok(tx.indexOf('flush chain') < tx.indexOf('delete set'));
  });
});

/** A host whose `nft` answers `code` and records every call. */
function fakeHost(): {
  host: HostCommand;
  calls: { file: string; args: readonly string[]; stdin?: string }[];
  fail: { next: boolean };
} {
  const calls: { file: string; args: readonly string[]; stdin?: string }[] = [];
  const fail = { next: false };
  const host: HostCommand = (file, args, stdin) => {
    // route_localnet, set once before the first write, is checked on its own below.
    if (file !== 'sysctl') calls.push({ file, args, ...(stdin !== undefined ? { stdin } : {}) });
    const refused = file === 'nft' && fail.next;
    if (refused) fail.next = false;
    const r: CommandResult = refused
      ? { code: 1, stdout: '', stderr: 'Error: File exists' }
      : { code: 0, stdout: '', stderr: '' };
    return Promise.resolve(r);
  };
  return { host, calls, fail };
}

describe('the table of a node', () => {
  it('is ip k8ts for the node named after its host, and one of its own for a second agent on the host', async () => {
    assert.equal(nftTableFor('host-a', 'host-a'), 'k8ts');
    assert.equal(nftTableFor('second', 'host-a'), 'k8ts-second');
    const { host, calls } = fakeHost();
    const nft = new NftablesProxier({ host, logger: { warn() {}, info() {} }, metrics: new ProxyMetrics() });
    nft.update('default/a', [port()]);
    await nft.flush({ ...settings, table: 'k8ts-second' });
    assert.match(calls[0]!.stdin!, /^add table ip k8ts-second\ndelete table ip k8ts-second\n/);
    assert.doesNotMatch(calls[0]!.stdin!, /ip k8ts /, "nothing in the other agent's table");
  });
});

describe('NftablesProxier', () => {
  const logger = { warn() {}, info() {} };

  it('writes the whole table first, then one partial transaction with only the changed Service', async () => {
    const { host, calls } = fakeHost();
    const metrics = new ProxyMetrics();
    const nft = new NftablesProxier({ host, logger, metrics });
    for (let i = 0; i < 50; i++)
      nft.update(`default/s${i}`, [port({ id: `default/s${i}/tcp/80`, clusterIP: `10.43.1.${i}` })]);
    await nft.flush(settings);
    assert.equal(calls.length, 1);
    assert.match(calls[0]!.stdin!, /^add table ip k8ts\ndelete table ip k8ts\n/);
    assert.equal((calls[0]!.stdin!.match(/add chain ip k8ts svc-/g) ?? []).length, 50);

    nft.update('default/s7', [
      port({ id: 'default/s7/tcp/80', clusterIP: '10.43.1.7', internal: [ep('10.42.1.5')] }),
    ]);
    await nft.flush(settings);
    assert.equal(calls.length, 2);
    const partial = calls[1]!.stdin!;
    assert.doesNotMatch(partial, /delete table/);
    assert.deepEqual([...new Set([...partial.matchAll(/default\/s(\d+)\//g)].map((m) => m[1]))], ['7']);
    await nft.flush(settings);
    assert.equal(calls.length, 2, 'nothing changed, nothing written');
    assert.match(await metrics.registry.metrics(), /k8ts_proxy_nftables_writes_total\{kind="partial"\} 1/);
  });

  it("never sets route_localnet: NodePorts are not served on 127.0.0.0/8, as in kube-proxy's nftables mode", async () => {
    const files: string[] = [];
    const host: HostCommand = (file, _args, stdin) => {
      files.push(file);
      if (stdin !== undefined) assert.doesNotMatch(stdin, /route_localnet/);
      return Promise.resolve({ code: 0, stdout: '', stderr: '' });
    };
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics() });
    nft.update('default/a', [port({ nodePort: 30080 })]);
    await nft.flush({ ...settings, nodeIP: undefined });
    assert.deepEqual(files, ['nft']);
  });

  it('after a refused whole-table write, waits before it tries again', async () => {
    const calls: string[] = [];
    let now = 1_000_000;
    const host: HostCommand = (file, _args, stdin) => {
      calls.push(stdin ?? '');
      return Promise.resolve({ code: 1, stdout: '', stderr: 'Error: Could not process rule' });
    };
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics(), now: () => now });
    nft.update('default/a', [port()]);
    await nft.flush(settings);
    await nft.flush(settings);
    assert.equal(calls.length, 1, 'no second try at once');
    now += 30_000;
    await nft.flush(settings);
    assert.equal(calls.length, 2);
  });

  it('deletes the chains it flushed away only in a later write, a second on', async () => {
    const { host, calls } = fakeHost();
    let now = 1_000_000;
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics(), now: () => now });
    nft.update('default/a', [port()]);
    await nft.flush(settings);
    nft.update('default/a', [
      port({ internal: [ep('10.42.1.5')], external: [ep('10.42.1.5')], all: [ep('10.42.1.5')] }),
    ]);
    await nft.flush(settings);
    const gone = 'ep-default/web/tcp/http__10.42.2.6/8080';
    assert.match(calls.at(-1)!.stdin!, new RegExp(`flush chain ip k8ts ${gone.replace(/[/.]/g, '\\$&')}`));
    assert.doesNotMatch(calls.at(-1)!.stdin!, /delete chain/);
    assert.ok(nft.hasStaleChains);
    now += 500;
    await nft.flush(settings);
    assert.equal(calls.length, 2, 'too early: nothing to write');
    now += 600;
    await nft.flush(settings);
    assert.equal(calls.at(-1)!.stdin, `delete chain ip k8ts ${gone}\n`);
    assert.ok(!nft.hasStaleChains);
  });

  it('after a refused partial transaction, rewrites the table whole at once', async () => {
    const { host, calls, fail } = fakeHost();
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics() });
    nft.update('default/a', [port()]);
    await nft.flush(settings);
    fail.next = true;
    nft.update('default/a', [port({ internal: [ep('10.42.9.9')] })]);
    await nft.flush(settings);
    assert.equal(calls.length, 3, 'the refused partial write, then the whole table in the same flush');
    assert.doesNotMatch(calls[1]!.stdin!, /delete table/);
    assert.match(calls.at(-1)!.stdin!, /^add table ip k8ts\ndelete table ip k8ts\n/);
    assert.match(calls.at(-1)!.stdin!, /10\.42\.9\.9/);
    assert.ok(!nft.pending);
  });

  it('notices a table removed behind its back, and writes it whole again', async () => {
    const { host, calls } = fakeHost();
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics() });
    nft.update('default/a', [port()]);
    await nft.flush(settings);
    const listing: HostCommand = (file, args, stdin) =>
      file === 'nft' && args[0] === 'list'
        ? Promise.resolve({
            code: 0,
            stdout: 'table ip filter\ntable ip k8ts\ntable ip k8ts-canary\n',
            stderr: '',
          })
        : host(file, args, stdin);
    const nft1 = new NftablesProxier({ host: listing, logger, metrics: new ProxyMetrics() });
    nft1.update('default/a', [port()]);
    await nft1.flush(settings);
    assert.equal(await nft1.checkTable(), false, 'both tables listed: nothing to do');
    // The table deleted by hand, its canary left.
    const gone: HostCommand = (file, args, stdin) =>
      file === 'nft' && args[0] === 'list'
        ? Promise.resolve({ code: 0, stdout: 'table ip filter\ntable ip k8ts-canary\n', stderr: '' })
        : host(file, args, stdin);
    const nft2 = new NftablesProxier({ host: gone, logger, metrics: new ProxyMetrics() });
    nft2.update('default/a', [port()]);
    await nft2.flush(settings);
    assert.equal(await nft2.checkTable(), true);
    await nft2.flush(settings);
    assert.match(
      calls.at(-1)!.stdin!,
      /^add table ip k8ts\ndelete table ip k8ts\nadd table ip k8ts-canary\n[^]*svc-default\/web\/tcp\/http/,
    );
  });

  it('gives a nodePort two Services claim to the first holder, and to the other once it is free', async () => {
    const { host, calls } = fakeHost();
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics() });
    nft.update('default/a', [port({ id: 'default/a/tcp/80', clusterIP: '10.43.0.1', nodePort: 30080 })]);
    await nft.flush(settings);
    nft.update('default/b', [port({ id: 'default/b/tcp/80', clusterIP: '10.43.0.2', nodePort: 30080 })]);
    await nft.flush(settings);
    assert.doesNotMatch(calls.at(-1)!.stdin!, /add element ip k8ts service-nodeports/);
    nft.update('default/a', undefined);
    await nft.flush(settings);
    assert.match(calls.at(-1)!.stdin!, /delete element ip k8ts service-nodeports \{ tcp \. 30080 \}/);
    await nft.flush(settings);
    assert.match(
      calls.at(-1)!.stdin!,
      /add element ip k8ts service-nodeports \{ tcp \. 30080 : goto ext-default\/b\/tcp\/80 \}/,
    );
  });

  it('deletes the UDP conntrack entries of a removed endpoint, and of a Service that had none', async () => {
    const { host, calls } = fakeHost();
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics() });
    const udp = (eps: ReturnType<typeof ep>[]) =>
      port({
        id: 'default/dns/udp/53',
        protocol: 'UDP',
        port: 53,
        internal: eps,
        external: eps,
        all: eps,
        hasEndpoints: eps.length > 0,
      });
    nft.update('default/dns', [udp([])]);
    await nft.flush(settings);
    nft.update('default/dns', [udp([ep('10.42.1.5', 53), ep('10.42.1.6', 53)])]);
    await nft.flush(settings);
    assert.deepEqual(calls.at(-1)!.args, [
      '-D',
      '-p',
      'udp',
      '--orig-dst',
      '10.43.0.10',
      '--orig-port-dst',
      '53',
      '--reply-src',
      '10.43.0.10',
    ]);
    nft.update('default/dns', [udp([ep('10.42.1.5', 53)])]);
    await nft.flush(settings);
    assert.deepEqual(calls.at(-1)!.args, [
      '-D',
      '-p',
      'udp',
      '--orig-dst',
      '10.43.0.10',
      '--orig-port-dst',
      '53',
      '--reply-src',
      '10.42.1.6',
      '--reply-port-src',
      '53',
    ]);
  });

  it('deletes the not-DNATed UDP entries of a NodePort Service first seen with endpoints (sent before its rules)', async () => {
    const { host, calls } = fakeHost();
    const nft = new NftablesProxier({ host, logger, metrics: new ProxyMetrics() });
    const eps = [ep('10.42.1.5', 5353)];
    nft.update('default/udpecho', [
      port({
        id: 'default/udpecho/udp/53',
        protocol: 'UDP',
        port: 53,
        nodePort: 30053,
        internal: eps,
        external: eps,
        all: eps,
        hasEndpoints: true,
      }),
    ]);
    await nft.flush(settings);
    const deletions = calls.filter((c) => c.file === 'conntrack').map((c) => c.args.join(' '));
    assert.deepEqual(deletions, [
      '-D -p udp --orig-dst 10.43.0.10 --orig-port-dst 53 --reply-src 10.43.0.10',
      '-D -p udp --orig-port-dst 30053 --reply-port-src 30053',
    ]);
  });

  it("observes the network programming latency from the slices' trigger times", async () => {
    const { host } = fakeHost();
    const metrics = new ProxyMetrics();
    let now = 10_000;
    const nft = new NftablesProxier({ host, logger, metrics, now: () => now });
    nft.update('default/a', [port()], [9_700]);
    now = 10_050;
    await nft.flush(settings);
    const text = await metrics.registry.metrics();
    assert.match(text, /k8ts_proxy_network_programming_duration_seconds_sum 0\.35/);
    assert.match(text, /k8ts_proxy_network_programming_duration_seconds_count 1/);
  });
});
