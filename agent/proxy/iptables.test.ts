/**
 * kube-proxy's iptables mode: the chains of a Service port (iptables-rules.ts), the
 * `iptables-restore` input between two states, and the proxier's writes (iptables.ts) with a
 * fake host that records them. The real kernel runs these rules in
 * test/proxy-iptables.e2e.test.ts, on simulated hosts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CommandResult, HostCommand } from '../network/host-command.js';
import type { KernelServicePort } from './kernel-ports.js';
import { ProxyMetrics } from './metrics.js';
import { IptablesProxier, removeIptablesRules } from './iptables.js';
import {
  iptablesPrefixFor,
  iptablesRules,
  jumps,
  MAX_CHAIN_NAME,
  noChains,
  restoreInput,
} from './iptables-rules.js';

const settings = { table: 'K8TSP', clusterCIDR: '10.42.0.0/16', nodeIP: '198.18.0.11' };
const ep = (ip: string, port = 8080) => ({ ip, port });

function port(over: Partial<KernelServicePort> = {}): KernelServicePort {
  return {
    id: 'default/web/tcp/http',
    protocol: 'TCP',
    clusterIP: '10.43.0.10',
    port: 80,
    loadBalancerIPs: [],
    internal: [ep('10.42.1.5'), ep('10.42.2.6'), ep('10.42.2.7')],
    external: [ep('10.42.1.5'), ep('10.42.2.6'), ep('10.42.2.7')],
    all: [ep('10.42.1.5'), ep('10.42.2.6'), ep('10.42.2.7')],
    hasEndpoints: true,
    externalTrafficLocal: false,
    affinitySeconds: 0,
    ...over,
  };
}

/** The one nat chain whose name starts with `kind` (`K8TSP-SVC-`, …) and whose rules mention `text`. */
function natChain(ports: KernelServicePort[], kind: string, text = ''): [string, string[]] {
  const found = [...iptablesRules(ports, settings).nat].filter(
    ([name, rules]) => name.startsWith(kind) && rules.some((r) => r.includes(text)),
  );
  assert.equal(found.length, 1, `one ${kind} chain with ${text}: ${found.map(([n]) => n).join(', ')}`);
  return found[0]!;
}

describe('iptables rules of one Service port', () => {
  it('spreads ClusterIP traffic with statistic --probability 1/(n-i), masquerading what comes from outside the cluster CIDR', () => {
    const chains = iptablesRules([port()], settings);
    const services = chains.nat.get('K8TSP-SERVICES')!;
    const [svc, rules] = natChain([port()], 'K8TSP-SVC-');
    assert.equal(
      services[0],
      `-d 10.43.0.10/32 -p tcp -m tcp --dport 80 -m comment --comment "default/web/tcp/http cluster IP" -j ${svc}`,
    );
    assert.match(services.at(-1)!, /^-d 198\.18\.0\.11\/32 .*-j K8TSP-NODEPORTS$/, 'the NodePorts jump last');
    assert.match(
      rules[0]!,
      /^! -s 10\.42\.0\.0\/16 -d 10\.43\.0\.10\/32 -p tcp -m tcp --dport 80 .*-j K8TSP-MARK-MASQ$/,
    );
    assert.deepEqual(
      rules.slice(1).map((r) => / --probability (\S+)/.exec(r)?.[1] ?? 'rest'),
      ['0.3333333333', '0.5000000000', 'rest'],
    );
    const sep = / -j (\S+)$/.exec(rules[1]!)![1]!;
    assert.deepEqual(chains.nat.get(sep), [
      `-s 10.42.1.5/32 -m comment --comment "default/web/tcp/http" -j K8TSP-MARK-MASQ`,
      `-p tcp -m tcp -m comment --comment "default/web/tcp/http" -j DNAT --to-destination 10.42.1.5:8080`,
    ]);
    assert.deepEqual(chains.nat.get('K8TSP-POSTROUTING'), [
      '-m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-j MARK --xor-mark 0x4000',
      '-m comment --comment "k8ts service traffic requiring SNAT" -j MASQUERADE --random-fully',
    ]);
    assert.deepEqual(chains.filter.get('K8TSP-SERVICES'), []);
  });

  it('rejects a Service without endpoints in the filter table, and drops one whose traffic policy leaves none here', () => {
    const none = iptablesRules(
      [port({ internal: [], external: [], all: [], hasEndpoints: false, nodePort: 30080 })],
      settings,
    );
    assert.deepEqual(none.filter.get('K8TSP-SERVICES'), [
      '-d 10.43.0.10/32 -p tcp -m tcp --dport 80 -m comment --comment "default/web/tcp/http has no endpoints" -j REJECT --reject-with icmp-port-unreachable',
    ]);
    assert.deepEqual(none.filter.get('K8TSP-EXTERNAL-SERVICES'), [
      '-d 198.18.0.11/32 -p tcp -m tcp --dport 30080 -m comment --comment "default/web/tcp/http has no endpoints" -j REJECT --reject-with icmp-port-unreachable',
    ]);
    assert.equal(none.nat.get('K8TSP-NODEPORTS')!.length, 0);
    assert.ok(![...none.nat.keys()].some((n) => /-(SVC|SEP|EXT)-/.test(n)), 'no chain nothing jumps to');
    const elsewhere = iptablesRules([port({ internal: [] })], settings);
    assert.match(elsewhere.filter.get('K8TSP-SERVICES')![0]!, /has no local endpoints" -j DROP$/);
  });

  it('keeps ClientIP affinity with -m recent, per endpoint, with the timeout', () => {
    const sticky = [port({ affinitySeconds: 600 })];
    const [, rules] = natChain(sticky, 'K8TSP-SVC-');
    const checks = rules.filter((r) => r.includes('--rcheck'));
    assert.equal(checks.length, 3);
    for (const r of checks) {
      const [, name, target] = /--name (\S+) --rcheck --seconds 600 --reap -j (\S+)$/.exec(r)!;
      assert.equal(name, target, 'the list is named after the endpoint chain it leads to');
    }
    const [sep, sepRules] = natChain(sticky, 'K8TSP-SEP-', '10.42.2.6:8080');
    assert.match(
      sepRules[1]!,
      new RegExp(`-m recent --name ${sep} --set -j DNAT --to-destination 10\\.42\\.2\\.6:8080$`),
    );
  });

  it('masquerades NodePort traffic for externalTrafficPolicy Cluster, and keeps the client address for Local', () => {
    const cluster = [port({ nodePort: 30080 })];
    const [ext, extRules] = natChain(cluster, 'K8TSP-EXT-');
    assert.match(extRules[0]!, /-j K8TSP-MARK-MASQ$/);
    assert.match(extRules[1]!, /^-j K8TSP-SVC-/);
    assert.ok(
      iptablesRules(cluster, settings)
        .nat.get('K8TSP-NODEPORTS')!
        .includes(`-p tcp -m tcp --dport 30080 -m comment --comment "default/web/tcp/http" -j ${ext}`),
    );

    const local = [port({ nodePort: 30080, externalTrafficLocal: true, external: [ep('10.42.1.5')] })];
    const [, rules] = natChain(local, 'K8TSP-EXT-');
    assert.equal(rules.length, 4);
    assert.match(rules[0]!, /^-s 10\.42\.0\.0\/16 .*-j K8TSP-SVC-/, 'pods go to every endpoint');
    assert.match(
      rules[1]!,
      /^-m addrtype --src-type LOCAL .*-j K8TSP-MARK-MASQ$/,
      'the node itself is masqueraded',
    );
    assert.match(rules[2]!, /^-m addrtype --src-type LOCAL .*-j K8TSP-SVC-/);
    assert.match(rules[3]!, /^-j K8TSP-SVL-/, 'others, unmarked, to this node’s endpoints');
    const [, svl] = natChain(local, 'K8TSP-SVL-');
    assert.deepEqual(svl.length, 1);
    assert.match(svl[0]!, /10\.42\.1\.5:8080/);

    // No endpoint here: others dropped in the filter table, unless sent on (the short-circuit).
    const none = iptablesRules(
      [port({ nodePort: 30080, externalTrafficLocal: true, external: [] })],
      settings,
    );
    assert.match(
      none.filter.get('K8TSP-EXTERNAL-SERVICES')![0]!,
      /^-d 198\.18\.0\.11\/32 -p tcp -m tcp --dport 30080 -m conntrack ! --ctstate DNAT .*-j DROP$/,
    );
    assert.equal(none.nat.get('K8TSP-NODEPORTS')!.length, 1, 'pods and the node still get through');
  });

  it('serves load-balancer ingress IPs through the EXT chain, after every clusterIP, never on loopback', () => {
    const chains = iptablesRules(
      [
        port({ id: 'default/lb/tcp/http', loadBalancerIPs: ['198.18.0.50', '127.0.0.1', '10.43.0.20'] }),
        port({ id: 'default/other/tcp/http', clusterIP: '10.43.0.20' }),
      ],
      settings,
    );
    const services = chains.nat.get('K8TSP-SERVICES')!;
    assert.deepEqual(
      services.map((r) => /^-d (\S+)/.exec(r)?.[1]),
      ['10.43.0.10/32', '10.43.0.20/32', '198.18.0.50/32', '10.43.0.20/32', '198.18.0.11/32'],
    );
    assert.match(services[2]!, /loadbalancer IP" -j K8TSP-EXT-/);
  });

  it('serves NodePorts on every local address but 127.0.0.0/8 without a node IP (no route_localnet)', () => {
    const chains = iptablesRules([port({ nodePort: 30080 })], { ...settings, nodeIP: undefined });
    assert.match(
      chains.nat.get('K8TSP-SERVICES')!.at(-1)!,
      /^-m addrtype --dst-type LOCAL ! -d 127\.0\.0\.0\/8 .*-j K8TSP-NODEPORTS$/,
    );
  });
});

describe('the chains of a node', () => {
  it('start with K8TSP for the node named after its host and with a prefix of its own for another, and fit in 28 characters', () => {
    assert.equal(iptablesPrefixFor('host-a', 'Host-A'), 'K8TSP');
    const second = iptablesPrefixFor('second', 'host-a');
    assert.match(second, /^K8TSP[A-Z2-7]{5}$/);
    assert.notEqual(second, iptablesPrefixFor('third', 'host-a'));
    const ports = [
      port({ nodePort: 30080, externalTrafficLocal: true, external: [ep('10.42.1.5')], affinitySeconds: 60 }),
      port({
        id: 'default/empty/udp/53',
        protocol: 'UDP',
        internal: [],
        external: [],
        all: [],
        hasEndpoints: false,
      }),
    ];
    for (const prefix of ['K8TSP', second]) {
      const chains = iptablesRules(ports, { ...settings, table: prefix });
      const text = restoreInput(noChains(), chains);
      const names = [...text.matchAll(/^:(\S+)/gm)].map((m) => m[1]!);
      assert.ok(names.length > 8);
      for (const n of names) {
        assert.ok(n.length <= MAX_CHAIN_NAME, `${n} is longer than ${MAX_CHAIN_NAME}`);
        assert.ok(n.startsWith(`${prefix}-`), n);
      }
      // Every jump target is a chain of this node's (or a built-in target).
      for (const m of text.matchAll(/ -j (\S+)/g))
        assert.ok(
          m[1]!.startsWith(`${prefix}-`) || /^(MARK|MASQUERADE|DNAT|REJECT|DROP|RETURN)$/.test(m[1]!),
          m[1],
        );
    }
    for (const j of jumps(second)) assert.ok(j.chain.startsWith(`${second}-`));
  });
});

describe('iptables-restore input', () => {
  it('is empty between equal states, and holds only the changed chains otherwise', () => {
    const a = [port({ id: 'default/a/tcp/80' }), port({ id: 'default/b/tcp/80', clusterIP: '10.43.0.11' })];
    const before = iptablesRules(a, settings);
    assert.equal(restoreInput(before, iptablesRules(a, settings)), '');
    const b = [a[0]!, port({ id: 'default/b/tcp/80', clusterIP: '10.43.0.11', internal: [ep('10.42.9.9')] })];
    const text = restoreInput(before, iptablesRules(b, settings));
    assert.doesNotMatch(text, /\*filter/, 'the filter table did not change');
    const aChains = [...before.nat.keys()].filter((n) =>
      before.nat.get(n)!.some((r) => r.includes('default/a/')),
    );
    for (const n of aChains.filter((n) => n !== 'K8TSP-SERVICES'))
      assert.doesNotMatch(text, new RegExp(`^:${n} `, 'm'));
    // b's clusterIP now goes to an SVL chain (internalTrafficPolicy Local): SERVICES changes too.
    assert.match(text, /^:K8TSP-SERVICES /m);
    assert.match(text, /10\.42\.9\.9:8080/);
  });

  it('declares and deletes the chains of a Service that went away, in the same transaction, after the jumps to them', () => {
    const before = iptablesRules([port({ nodePort: 30080 })], settings);
    const text = restoreInput(before, iptablesRules([], settings));
    const deleted = [...text.matchAll(/^-X (\S+)$/gm)].map((m) => m[1]!);
    assert.equal(deleted.length, 5, 'SVC, EXT and three SEP chains');
    for (const d of deleted) assert.match(text, new RegExp(`^:${d} - \\[0:0\\]$`, 'm'));
    assert.ok(text.indexOf('-X ') > text.lastIndexOf('-A '), 'deletions come after every rule');
    assert.match(text, /^:K8TSP-SERVICES - \[0:0\]\n/m);
  });
});

/** A host that answers iptables-save with `saved` (by table) and records every call. */
function fakeHost(saved: Partial<Record<'nat' | 'filter', string>> = {}) {
  const calls: { file: string; args: readonly string[]; stdin?: string }[] = [];
  const jumpsIn = new Set<string>();
  const fail = { next: false };
  const host: HostCommand = (file, args, stdin) => {
    calls.push({ file, args, ...(stdin !== undefined ? { stdin } : {}) });
    const ok = (stdout = ''): Promise<CommandResult> => Promise.resolve({ code: 0, stdout, stderr: '' });
    const no = (stderr: string): Promise<CommandResult> => Promise.resolve({ code: 1, stdout: '', stderr });
    if (file === 'iptables-save') return ok(saved[args[1] as 'nat' | 'filter'] ?? '');
    if (file === 'iptables-restore') {
      if (fail.next) {
        fail.next = false;
        return no("iptables-restore: Chain 'K8TSP-SVC-X' does not exist");
      }
      return ok();
    }
    if (file === 'iptables') {
      const [, , table, op, builtin, ...rest] = args;
      const key = `${table} ${builtin} ${rest.filter((a) => a !== '1').join(' ')}`;
      if (op === '-C') return jumpsIn.has(key) ? ok() : no('Bad rule');
      if (op === '-I') return (jumpsIn.add(key), ok());
      if (op === '-D') return jumpsIn.delete(key) ? ok() : no('Bad rule');
      if (op === '-S')
        return ok(
          [...jumpsIn]
            .filter((k) => k.startsWith(`${table} ${builtin} `))
            .map((k) => `-A ${builtin} ${k.split(' ').slice(2).join(' ')}`)
            .join('\n') + (builtin === 'K8TSP-POSTROUTING' ? '\n-A x\n-A y\n-A z\n' : ''),
        );
    }
    if (file === 'conntrack') return no('0 flow entries have been deleted.');
    return no(`unexpected ${file}`);
  };
  return { host, calls, jumpsIn, fail };
}

/** The stdin of every iptables-restore run. */
const restores = (calls: ReturnType<typeof fakeHost>['calls']) =>
  calls.filter((c) => c.file === 'iptables-restore').map((c) => c.stdin!);

describe('IptablesProxier', () => {
  const logger = { warn() {}, info() {} };

  it("writes every chain first, deleting only what an earlier run left of this node's, then inserts the jumps once", async () => {
    const { host, calls, jumpsIn } = fakeHost({
      nat: [
        '*nat',
        ':PREROUTING ACCEPT [0:0]',
        ':DOCKER - [0:0]',
        ':K8TS-POSTROUTING - [0:0]',
        ':K8TSP-SVC-LEFTOVER - [0:0]',
        ':K8TSPABCDE-SVC-OTHERNODE - [0:0]',
        'COMMIT',
      ].join('\n'),
    });
    const metrics = new ProxyMetrics();
    const ipt = new IptablesProxier({ host, logger, metrics });
    ipt.update('default/web', [port()]);
    await ipt.flush(settings);
    const [full] = restores(calls);
    assert.match(full!, /^-X K8TSP-SVC-LEFTOVER$/m);
    assert.doesNotMatch(full!, /OTHERNODE|DOCKER|K8TS-POSTROUTING/);
    assert.equal(jumpsIn.size, jumps('K8TSP').length);
    assert.deepEqual(
      calls.find((c) => c.file === 'iptables-restore')!.args,
      ['-w', '--noflush'],
      'never a flush of whole tables',
    );

    const before = calls.length;
    ipt.update('default/web', [port({ internal: [ep('10.42.1.5')] })]);
    await ipt.flush(settings);
    const partial = calls.slice(before);
    assert.deepEqual(
      partial.map((c) => c.file),
      ['iptables-restore'],
      'a partial write: one restore, no listing, no jump checks',
    );
    assert.doesNotMatch(partial[0]!.stdin!, /-X K8TSP-SVC-LEFTOVER/);
    await ipt.flush(settings);
    assert.equal(calls.length, before + 1, 'nothing changed, nothing written');
    assert.match(await metrics.registry.metrics(), /k8ts_proxy_iptables_restores_total\{kind="partial"\} 1/);
  });

  it('after a refused partial write, writes every chain again at once', async () => {
    const { host, calls, fail } = fakeHost();
    const ipt = new IptablesProxier({ host, logger, metrics: new ProxyMetrics() });
    ipt.update('default/web', [port()]);
    await ipt.flush(settings);
    fail.next = true;
    ipt.update('default/web', [port({ internal: [ep('10.42.9.9')] })]);
    await ipt.flush(settings);
    const r = restores(calls);
    assert.equal(r.length, 3, 'the full write, the refused partial one, the full one again');
    assert.match(r[2]!, /^:K8TSP-MARK-MASQ /m, 'every chain');
    assert.match(r[2]!, /10\.42\.9\.9/);
    assert.ok(!ipt.pending);
  });

  it('after a refused full write, waits before it tries again', async () => {
    let now = 1_000_000;
    const { host, calls, fail } = fakeHost();
    const ipt = new IptablesProxier({ host, logger, metrics: new ProxyMetrics(), now: () => now });
    ipt.update('default/web', [port()]);
    fail.next = true;
    await ipt.flush(settings);
    await ipt.flush(settings);
    assert.equal(restores(calls).length, 1, 'no second try at once');
    now += 30_000;
    await ipt.flush(settings);
    assert.equal(restores(calls).length, 2);
    assert.ok(!ipt.pending);
  });

  it('notices a jump or its masquerade chain gone, and writes everything again', async () => {
    const { host, calls, jumpsIn } = fakeHost();
    const ipt = new IptablesProxier({ host, logger, metrics: new ProxyMetrics() });
    ipt.update('default/web', [port()]);
    await ipt.flush(settings);
    assert.equal(await ipt.checkTable(), false, 'everything in place');
    jumpsIn.delete([...jumpsIn].find((k) => k.startsWith('nat PREROUTING'))!);
    assert.equal(await ipt.checkTable(), true);
    assert.ok(ipt.pending);
    await ipt.flush(settings);
    assert.match(restores(calls).at(-1)!, /^:K8TSP-POSTROUTING /m);
    assert.equal(jumpsIn.size, jumps('K8TSP').length, 'the jump is back');
  });

  it("observes the network programming latency from the slices' trigger times", async () => {
    const { host } = fakeHost();
    const metrics = new ProxyMetrics();
    const ipt = new IptablesProxier({ host, logger, metrics, now: () => 10_500 });
    ipt.update('default/web', [port()], [10_000]);
    await ipt.flush(settings);
    assert.match(
      await metrics.registry.metrics(),
      /k8ts_proxy_network_programming_duration_seconds_sum 0\.5\n/,
    );
  });

  it('checks that iptables-restore takes every kind of rule, applying nothing', async () => {
    const { host, calls } = fakeHost();
    assert.equal(await IptablesProxier.unavailable(host), undefined);
    assert.deepEqual(calls[0]!.args, ['-w', '--noflush', '--test']);
    for (const m of [
      'statistic',
      'recent',
      'addrtype',
      'conntrack',
      'REJECT',
      'DNAT',
      'MASQUERADE --random-fully',
    ])
      assert.match(calls[0]!.stdin!, new RegExp(m));
    const refused: HostCommand = () =>
      Promise.resolve({ code: 2, stdout: '', stderr: "iptables-restore: Couldn't load match `recent'" });
    assert.match((await IptablesProxier.unavailable(refused))!, /recent/);
  });
});

describe('removeIptablesRules', () => {
  it("removes the node's jumps and chains, and nothing of another node's", async () => {
    const { host, calls, jumpsIn } = fakeHost({
      nat: ':K8TSP-SERVICES - [0:0]\n:K8TSP-SVC-A - [0:0]\n:K8TSPABCDE-SERVICES - [0:0]\n:K8TS-POSTROUTING - [0:0]\n',
      filter: ':K8TSP-SERVICES - [0:0]\n:K8TS-FORWARD - [0:0]\n',
    });
    for (const j of [...jumps('K8TSP'), ...jumps('K8TSPABCDE')])
      jumpsIn.add(`${j.table} ${j.builtin} ${j.rule.join(' ')}`);
    assert.equal(await removeIptablesRules(host, 'K8TSP'), 3);
    assert.equal(jumpsIn.size, jumps('K8TSPABCDE').length, "the other node's jumps stay");
    const text = restores(calls)[0]!;
    assert.deepEqual(
      [...text.matchAll(/^-X (\S+)$/gm)].map((m) => m[1]),
      ['K8TSP-SERVICES', 'K8TSP-SERVICES', 'K8TSP-SVC-A'],
    );
    assert.doesNotMatch(text, /ABCDE|K8TS-/);
  });

  it('changes nothing where there is no chain of the node', async () => {
    const { host, calls } = fakeHost({ nat: ':DOCKER - [0:0]\n' });
    assert.equal(await removeIptablesRules(host, 'K8TSP'), 0);
    assert.deepEqual(
      calls.map((c) => c.file),
      ['iptables-save', 'iptables-save'],
    );
  });
});
