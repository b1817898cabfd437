import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../api/log.js';
import type { Service } from '../../api/types.js';
import { ClusterIPAddresses, clusterIPInterfaceFor, usableClusterIP, type IpCommand } from './cluster-ip.js';
import { modelIp } from './fake-ip.js';

const silent = silentLogger();

describe('clusterIPInterfaceFor', () => {
  it('is stable per node, distinct between nodes, and short enough for a lo: label', () => {
    // Stable across versions too: a restarted agent flushes the label it held before. The
    // expected names are the first 7 hex digits of `printf <node> | sha1sum`.
    const known: [string, string][] = [
      ['a', 'k8ts-86f7e43'],
      ['node-1', 'k8ts-b368283'],
      ['node-a', 'k8ts-0702c1c'],
      ['x'.repeat(253), 'k8ts-de4fcc1'],
    ];
    for (const [node, want] of known) assert.equal(clusterIPInterfaceFor(node), want, node);
    const nodes = ['a', 'b', 'node-1', 'node-2', 'spring-e2e-123-a', 'spring-e2e-123-b', 'x'.repeat(253)];
    const names = nodes.map(clusterIPInterfaceFor);
    assert.equal(new Set(names).size, nodes.length);
    for (const n of names) {
      assert.match(n, /^k8ts-[0-9a-f]{7}$/);
      assert.ok(`lo:${n}`.length <= 15);
    }
  });

  it("two agents' loopback start() flush only their own label", async () => {
    // The host's `lo` as `ip` sees it: label -> addresses (no dummy driver).
    const lo = new Map<string, Set<string>>();
    const ip: IpCommand = async (args) => {
      const a = [...args];
      if (a[0] === 'link') return { code: 2, stdout: '', stderr: 'Error: Unknown device type.' };
      if (a.join(' ').startsWith('-o -4 addr show dev lo label')) {
        const label = a[a.length - 1]!;
        const out = [...(lo.get(label) ?? [])].map((x) => `1: lo    inet ${x}/32 scope global ${label}\n`);
        return { code: 0, stdout: out.join(''), stderr: '' };
      }
      if (a[0] === 'addr' && a[1] === 'add') {
        const label = a[a.length - 1]!;
        lo.set(label, (lo.get(label) ?? new Set()).add(a[2]!.replace('/32', '')));
        return { code: 0, stdout: '', stderr: '' };
      }
      if (a[0] === 'addr' && a[1] === 'del') {
        for (const s of lo.values()) s.delete(a[2]!.replace('/32', ''));
        return { code: 0, stdout: '', stderr: '' };
      }
      return { code: 1, stdout: '', stderr: `unexpected: ip ${a.join(' ')}` };
    };
    const first = new ClusterIPAddresses({
      interfaceName: clusterIPInterfaceFor('node-a'),
      logger: silent,
      ip,
    });
    assert.equal(await first.start(), 'loopback');
    assert.equal(await first.add('10.43.0.10'), true);
    const second = new ClusterIPAddresses({
      interfaceName: clusterIPInterfaceFor('node-b'),
      logger: silent,
      ip,
    });
    assert.equal(await second.start(), 'loopback');
    assert.deepEqual([...(lo.get(`lo:${clusterIPInterfaceFor('node-a')}`) ?? [])], ['10.43.0.10']);
  });
});

describe('ClusterIPAddresses after a restart', () => {
  it('adopts what the earlier run left on its dummy interface, keeps what is claimed, prunes the rest', async () => {
    // The host as `ip` sees it: the interface exists, with two addresses of an earlier run.
    const held = new Set(['10.43.0.10', '10.43.0.11']);
    const calls: string[] = [];
    const ip: IpCommand = async (args) => {
      const a = args.join(' ');
      calls.push(a);
      if (a.startsWith('link add')) return { code: 2, stdout: '', stderr: 'RTNETLINK answers: File exists' };
      if (a.startsWith('link set')) return { code: 0, stdout: '', stderr: '' };
      if (a.startsWith('-o -4 addr show dev')) {
        const out = [...held].map((x) => `9: k8ts-x    inet ${x}/32 scope global k8ts-x\n`).join('');
        return { code: 0, stdout: out, stderr: '' };
      }
      if (a.startsWith('addr flush')) {
        held.clear();
        return { code: 0, stdout: '', stderr: '' };
      }
      if (args[0] === 'addr' && (args[1] === 'add' || args[1] === 'del')) {
        const addr = args[2]!.replace('/32', '');
        if (args[1] === 'add') held.add(addr);
        else held.delete(addr);
        return { code: 0, stdout: '', stderr: '' };
      }
      return { code: 1, stdout: '', stderr: `unexpected: ip ${a}` };
    };
    const addresses = new ClusterIPAddresses({ interfaceName: 'k8ts-x', logger: silent, ip });
    assert.equal(await addresses.start(), 'dummy');
    // Nothing is taken away at start: the host's connections to these stay routable.
    assert.deepEqual([...held].sort(), ['10.43.0.10', '10.43.0.11']);
    assert.equal(await addresses.add('10.43.0.10'), true);
    assert.equal(await addresses.add('10.43.0.12'), true);
    await addresses.pruneUnclaimed();
    assert.deepEqual([...held].sort(), ['10.43.0.10', '10.43.0.12']);
    assert.ok(!calls.some((c) => c.startsWith('addr flush')), calls.join('\n'));
    // What it adopted is its own: stop() removes it too.
    await addresses.stop();
    assert.deepEqual([...held], []);
  });
});

describe('ClusterIPAddresses.reassert', () => {
  it('puts back what was removed from under it, and the interface; one read when nothing is missing', async () => {
    const { ip, links, calls } = modelIp();
    const addresses = new ClusterIPAddresses({ interfaceName: 'k8ts-x', logger: silent, ip });
    assert.equal(await addresses.start(), 'dummy');
    assert.equal(await addresses.add('10.43.0.10'), true);
    assert.equal(await addresses.add('10.43.0.11'), true);
    calls.length = 0;
    assert.deepEqual(await addresses.reassert(), []);
    assert.deepEqual(calls, ['-br -4 addr show dev k8ts-x']);

    // Someone runs `ip addr del 10.43.0.11/32 dev k8ts-x`.
    links.get('k8ts-x')!.delete('10.43.0.11');
    calls.length = 0;
    assert.deepEqual(await addresses.reassert(), ['10.43.0.11']);
    assert.deepEqual(calls, ['-br -4 addr show dev k8ts-x', 'addr add 10.43.0.11/32 dev k8ts-x']);
    assert.deepEqual([...links.get('k8ts-x')!].sort(), ['10.43.0.10', '10.43.0.11']);

    // ... or `ip link del k8ts-x`.
    links.delete('k8ts-x');
    assert.deepEqual((await addresses.reassert()).sort(), ['10.43.0.10', '10.43.0.11']);
    assert.deepEqual([...links.get('k8ts-x')!].sort(), ['10.43.0.10', '10.43.0.11']);

    // A removed Service's address is not put back.
    await addresses.remove('10.43.0.10');
    links.get('k8ts-x')!.clear();
    assert.deepEqual(await addresses.reassert(), ['10.43.0.11']);
    assert.deepEqual([...links.get('k8ts-x')!], ['10.43.0.11']);

    await addresses.stop();
    assert.ok(!links.has('k8ts-x'), 'the interface it made again is removed by stop()');
  });

  it('leaves alone what an earlier run left and no Service claimed, and does nothing once stopped', async () => {
    const { ip, links, calls } = modelIp();
    links.set('k8ts-x', new Set(['10.43.0.20']));
    const addresses = new ClusterIPAddresses({ interfaceName: 'k8ts-x', logger: silent, ip });
    assert.equal(await addresses.start(), 'dummy');
    links.get('k8ts-x')!.clear();
    assert.deepEqual(await addresses.reassert(), []);
    assert.deepEqual([...links.get('k8ts-x')!], []);
    await addresses.stop();
    calls.length = 0;
    assert.deepEqual(await addresses.reassert(), []);
    assert.deepEqual(calls, []);
  });
});

describe('usableClusterIP', () => {
  const svc = (spec: Service['spec']): Service => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 's' },
    spec,
  });
  it('reads a stored address with leading zeros as kube-proxy does (ParseIPSloppy), canonical', () => {
    assert.equal(
      usableClusterIP(svc({ clusterIP: '10.43.000.50', clusterIPs: ['10.43.000.50'] })),
      '10.43.0.50',
    );
    assert.equal(usableClusterIP(svc({ clusterIP: '010.043.0.5' })), '10.43.0.5');
    assert.equal(usableClusterIP(svc({ clusterIP: '10.43.0.7' })), '10.43.0.7');
  });
  it('is undefined for headless, ExternalName and IPv6 Services', () => {
    assert.equal(usableClusterIP(svc({ clusterIP: 'None' })), undefined);
    assert.equal(usableClusterIP(svc({ type: 'ExternalName', externalName: 'x.example.com' })), undefined);
    assert.equal(usableClusterIP(svc({ clusterIP: 'fd00::10' })), undefined);
  });
});
