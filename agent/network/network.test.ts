// The network module's own logic, with a recording fake of the kernel's programs: what it
// derives from the Node list (peers.ts), which route/neighbour/FDB changes it asks for
// (routes.ts, vxlan.ts, host-gw.ts) and the firewall it writes (firewall.ts). The real
// programs are exercised on simulated hosts by test/multihost.e2e.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NODE_ANNOTATIONS, formatNetConf, parseNetConf } from '../../api/netconf.js';
import type { Node } from '../../api/types.js';
import { ensureFirewall, firewallRules } from './firewall.js';
import type { CommandResult, HostCommand } from './host-command.js';
import { syncHostGw } from './host-gw.js';
import { networkAddress, peersOf } from './peers.js';
import { routeChanges } from './routes.js';
import { syncVxlanPeers, vtepMACFor } from './vxlan.js';

const node = (
  name: string,
  podCIDR: string | undefined,
  ann: Record<string, string> = {},
  ip = '',
): Node => ({
  metadata: { name, annotations: ann },
  spec: podCIDR ? { podCIDR } : {},
  status: ip ? { addresses: [{ type: 'InternalIP', address: ip }] } : {},
});
const vx = (ip: string, mac: string) => ({
  [NODE_ANNOTATIONS.backendType]: 'vxlan',
  [NODE_ANNOTATIONS.backendData]: JSON.stringify({ VNI: 1, VtepMAC: mac }),
  [NODE_ANNOTATIONS.publicIP]: ip,
});

/** A fake HostCommand answering from `answers` (keyed by `file args...`) and recording every call. */
function fakeHost(answers: Record<string, string>): { host: HostCommand; calls: string[]; stdin: string[] } {
  const calls: string[] = [];
  const stdin: string[] = [];
  const host: HostCommand = async (file, args, input): Promise<CommandResult> => {
    const line = [file, ...args].join(' ');
    calls.push(line);
    if (input !== undefined) stdin.push(input);
    return { code: 0, stdout: answers[line] ?? '', stderr: '' };
  };
  return { host, calls, stdin };
}

describe('peersOf', () => {
  const mac2 = '02:00:00:00:00:02';
  const nodes = [
    node('a', '10.42.0.0/24', vx('198.18.0.11', '02:00:00:00:00:01')),
    node('b', '10.42.1.0/24', vx('198.18.0.12', mac2)),
    node('c', undefined, vx('198.18.0.13', '02:00:00:00:00:03')), // no podCIDR yet
    node('d', '10.42.3.0/24', {}, '198.18.0.14'), // no annotations: InternalIP
    node('e', '10.42.4.0/24', { ...vx('198.18.0.15', 'zz'), [NODE_ANNOTATIONS.backendType]: 'vxlan' }), // bad MAC
  ];
  it('vxlan: other nodes with a podCIDR and a published VTEP MAC', () => {
    assert.deepEqual(peersOf('a', nodes, 'vxlan'), [
      { nodeName: 'b', podCIDR: '10.42.1.0/24', publicIP: '198.18.0.12', vtepMAC: mac2 },
    ]);
  });
  it('host-gw: other nodes with a podCIDR and an address (annotation, else InternalIP)', () => {
    assert.deepEqual(
      peersOf('a', nodes, 'host-gw').map((p) => `${p.nodeName} ${p.podCIDR} ${p.publicIP}`),
      ['b 10.42.1.0/24 198.18.0.12', 'd 10.42.3.0/24 198.18.0.14', 'e 10.42.4.0/24 198.18.0.15'],
    );
  });
  it('none: no peers; a node being deleted is no peer', () => {
    assert.deepEqual(peersOf('a', nodes, 'none'), []);
    const deleting = {
      ...nodes[1]!,
      metadata: { ...nodes[1]!.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    assert.deepEqual(peersOf('a', [nodes[0]!, deleting], 'vxlan'), []);
  });
  it('networkAddress', () => {
    assert.equal(networkAddress('10.42.7.0/24'), '10.42.7.0');
    assert.equal(networkAddress('10.42.7.9/24'), '10.42.7.0');
    assert.equal(networkAddress('10.0.0.0/8'), '10.0.0.0');
  });
});

describe('routeChanges', () => {
  const cases: [string, Parameters<typeof routeChanges>[0], Parameters<typeof routeChanges>[1], string[]][] =
    [
      [
        'nothing to do',
        [{ dst: '10.42.1.0/24', gateway: '198.18.0.12' }],
        [{ dst: '10.42.1.0/24', gateway: '198.18.0.12' }],
        [],
      ],
      [
        'a missing route is added',
        [],
        [{ dst: '10.42.1.0/24', gateway: '198.18.0.12' }],
        ['route replace 10.42.1.0/24 via 198.18.0.12 proto 107'],
      ],
      [
        "a changed gateway is replaced, a deleted node's route removed",
        [
          { dst: '10.42.1.0/24', gateway: '198.18.0.99' },
          { dst: '10.42.2.0/24', gateway: '198.18.0.13' },
        ],
        [{ dst: '10.42.1.0/24', gateway: '198.18.0.12' }],
        ['route replace 10.42.1.0/24 via 198.18.0.12 proto 107', 'route del 10.42.2.0/24 proto 107'],
      ],
      [
        'vxlan routes are onlink on the device',
        [{ dst: '10.42.1.0/24', gateway: '198.18.0.12', dev: 'eth0' }],
        [{ dst: '10.42.1.0/24', gateway: '10.42.1.0', dev: 'k8ts.1', onlink: true }],
        ['route replace 10.42.1.0/24 via 10.42.1.0 dev k8ts.1 onlink proto 107'],
      ],
    ];
  for (const [name, current, desired, want] of cases)
    it(name, () => assert.deepEqual(routeChanges(current, desired), want));
});

describe('syncVxlanPeers', () => {
  it('adds what is missing, removes what belongs to no peer, leaves what is right', async () => {
    const macB = '02:00:00:00:00:02';
    const { host, calls, stdin } = fakeHost({
      'ip -j -4 neigh show dev k8ts.1': JSON.stringify([
        { dst: '10.42.1.0', lladdr: macB, state: ['PERMANENT'] },
        { dst: '10.42.9.0', lladdr: '02:00:00:00:00:09', state: ['PERMANENT'] },
      ]),
      'bridge -j fdb show dev k8ts.1': JSON.stringify([
        { mac: macB, dst: '198.18.0.99', flags: ['self'] },
        { mac: '02:00:00:00:00:09', dst: '198.18.0.19', flags: ['self'] },
        { mac: '33:33:00:00:00:01', flags: ['self'] },
      ]),
      'ip -j -4 route show proto 107': JSON.stringify([
        { dst: '10.42.9.0/24', gateway: '10.42.9.0', dev: 'k8ts.1', flags: ['onlink'] },
      ]),
    });
    await syncVxlanPeers(host, [
      { nodeName: 'b', podCIDR: '10.42.1.0/24', publicIP: '198.18.0.12', vtepMAC: macB },
    ]);
    assert.deepEqual(stdin, [
      'neigh del 10.42.9.0 dev k8ts.1\n',
      [
        `fdb del ${macB} dev k8ts.1 dst 198.18.0.99 self`,
        'fdb del 02:00:00:00:00:09 dev k8ts.1 dst 198.18.0.19 self',
        `fdb append ${macB} dev k8ts.1 dst 198.18.0.12 self permanent`,
        '',
      ].join('\n'),
      'route replace 10.42.1.0/24 via 10.42.1.0 dev k8ts.1 onlink proto 107\nroute del 10.42.9.0/24 proto 107\n',
    ]);
    assert.ok(calls.some((c) => c.startsWith('bridge -force -batch')));
  });

  it('changes nothing when the kernel already agrees (an agent restart)', async () => {
    const macB = '02:00:00:00:00:02';
    const { host, stdin } = fakeHost({
      'ip -j -4 neigh show dev k8ts.1': JSON.stringify([
        { dst: '10.42.1.0', lladdr: macB, state: ['PERMANENT'] },
      ]),
      'bridge -j fdb show dev k8ts.1': JSON.stringify([{ mac: macB, dst: '198.18.0.12', flags: ['self'] }]),
      'ip -j -4 route show proto 107': JSON.stringify([
        { dst: '10.42.1.0/24', gateway: '10.42.1.0', dev: 'k8ts.1', flags: ['onlink'] },
      ]),
    });
    await syncVxlanPeers(host, [
      { nodeName: 'b', podCIDR: '10.42.1.0/24', publicIP: '198.18.0.12', vtepMAC: macB },
    ]);
    assert.deepEqual(stdin, []);
  });
});

describe('syncHostGw', () => {
  it('routes directly reachable peers and refuses one behind a router', async () => {
    const { host, stdin } = fakeHost({
      'ip -j route get 198.18.0.12': JSON.stringify([{ dst: '198.18.0.12', dev: 'eth0' }]),
      'ip -j route get 198.18.9.12': JSON.stringify([
        { dst: '198.18.9.12', gateway: '198.18.0.1', dev: 'eth0' },
      ]),
      'ip -j -4 route show proto 107': '[]',
    });
    const refused = await syncHostGw(host, [
      { nodeName: 'b', podCIDR: '10.42.1.0/24', publicIP: '198.18.0.12' },
      { nodeName: 'far', podCIDR: '10.42.2.0/24', publicIP: '198.18.9.12' },
    ]);
    assert.deepEqual(stdin, ['route replace 10.42.1.0/24 via 198.18.0.12 proto 107\n']);
    assert.equal(refused.length, 1);
    assert.equal(refused[0]!.nodeName, 'far');
    assert.match(refused[0]!.reason, /one L2 segment.*router 198\.18\.0\.1.*vxlan/);
  });
});

describe('firewallRules', () => {
  it('accepts forwarded pod traffic, masquerades only what leaves the cluster CIDR', () => {
    const rules = firewallRules({ clusterCIDR: '10.42.0.0/16', podCIDR: '10.42.3.0/24' });
    assert.match(rules, /^-A K8TS-FORWARD -s 10\.42\.0\.0\/16 .*-j ACCEPT$/m);
    assert.match(rules, /^-A K8TS-FORWARD -d 10\.42\.0\.0\/16 .*-j ACCEPT$/m);
    // kube-proxy's marked packets (hairpin) go on to iptables mode's masquerade.
    assert.match(
      rules,
      /^:K8TS-POSTROUTING - \[0:0\]\n-A K8TS-POSTROUTING -m mark --mark 0x4000\/0x4000 .*-j RETURN$/m,
    );
    // ACCEPT, not RETURN: a RETURN would go on to Docker's MASQUERADE in POSTROUTING.
    assert.match(rules, /^-A K8TS-POSTROUTING -s 10\.42\.0\.0\/16 -d 10\.42\.0\.0\/16 .*-j ACCEPT$/m);
    assert.match(rules, /^-A K8TS-POSTROUTING -s 10\.42\.3\.0\/24 ! -d 224\.0\.0\.0\/4 .*-j MASQUERADE$/m);
  });
});

describe('ensureFirewall', () => {
  const cfg = { clusterCIDR: '10.42.0.0/16', podCIDR: '10.42.3.0/24' };
  // `iptables -S` of the chains as iptables 1.8.9 (nft and legacy alike) prints what
  // firewallRules wrote, its escaped quote included.
  const listed = (podCIDR: string) => ({
    'iptables -w -t filter -S K8TS-FORWARD': [
      '-N K8TS-FORWARD',
      '-A K8TS-FORWARD -s 10.42.0.0/16 -m comment --comment "k8ts: pod traffic between nodes" -j ACCEPT',
      '-A K8TS-FORWARD -d 10.42.0.0/16 -m comment --comment "k8ts: pod traffic between nodes" -j ACCEPT',
      '',
    ].join('\n'),
    'iptables -w -t nat -S K8TS-POSTROUTING': [
      '-N K8TS-POSTROUTING',
      `-A K8TS-POSTROUTING -m mark --mark 0x4000/0x4000 -m comment --comment "k8ts: kube-proxy\\'s masquerade" -j RETURN`,
      '-A K8TS-POSTROUTING -s 10.42.0.0/16 -d 10.42.0.0/16 -m comment --comment "k8ts: no masquerade between pods" -j ACCEPT',
      `-A K8TS-POSTROUTING -s ${podCIDR} ! -d 224.0.0.0/4 -m comment --comment "k8ts: masquerade pod traffic leaving the cluster" -j MASQUERADE`,
      '',
    ].join('\n'),
    'iptables -w -t filter -S FORWARD':
      '-P FORWARD DROP\n-A FORWARD -j K8TS-FORWARD\n-A FORWARD -j DOCKER-USER\n',
    'iptables -w -t nat -S POSTROUTING': '-P POSTROUTING ACCEPT\n-A POSTROUTING -j K8TS-POSTROUTING\n',
  });
  const reads = [
    'iptables -w -t filter -S K8TS-FORWARD',
    'iptables -w -t nat -S K8TS-POSTROUTING',
    'iptables -w -t filter -S FORWARD',
    'iptables -w -t nat -S POSTROUTING',
  ];

  it('writes nothing when the chains and jumps are already as wanted (the resync of an unchanged host)', async () => {
    const { host, calls, stdin } = fakeHost(listed(cfg.podCIDR));
    await ensureFirewall(host, cfg);
    assert.deepEqual(calls, reads);
    assert.deepEqual(stdin, []);
  });

  it('writes only the chain that differs', async () => {
    const { host, calls, stdin } = fakeHost(listed('10.42.9.0/24'));
    await ensureFirewall(host, cfg);
    assert.deepEqual(calls, [...reads.slice(0, 2), 'iptables-restore -w --noflush', ...reads.slice(2)]);
    assert.equal(stdin.length, 1);
    assert.doesNotMatch(stdin[0]!, /\*filter|K8TS-FORWARD/);
    assert.match(stdin[0]!, /^\*nat\n:K8TS-POSTROUTING - \[0:0\]\n/);
    assert.match(stdin[0]!, /-s 10\.42\.3\.0\/24 ! -d 224\.0\.0\.0\/4 .*-j MASQUERADE\nCOMMIT\n$/);
  });

  it('writes both chains whole, in one transaction, when they are gone', async () => {
    const calls: string[] = [];
    const stdin: string[] = [];
    const answers: Record<string, string> = listed(cfg.podCIDR);
    const host: HostCommand = async (file, args, input) => {
      const line = [file, ...args].join(' ');
      calls.push(line);
      if (input !== undefined) stdin.push(input);
      // The chains were flushed away with their jumps (`iptables -F` and `-X` of everything).
      if (/-S K8TS-/.test(line))
        return { code: 1, stdout: '', stderr: 'iptables: No chain/target/match by that name.' };
      return { code: 0, stdout: answers[line] ?? '', stderr: '' };
    };
    await ensureFirewall(host, cfg);
    assert.deepEqual(stdin, [firewallRules(cfg)]);
    assert.equal(calls.filter((c) => c.startsWith('iptables-restore')).length, 1);
  });
});

describe('netconf and the VTEP MAC', () => {
  it('round-trips net-conf.json and refuses what flannel would not take', () => {
    const conf = { network: '10.42.0.0/16', backend: 'vxlan' as const, vni: 1, port: 8472 };
    assert.deepEqual(parseNetConf(formatNetConf(conf)), conf);
    assert.deepEqual(
      parseNetConf('{"Network":"10.42.0.0/16","Backend":{"Type":"host-gw"}}').backend,
      'host-gw',
    );
    assert.throws(
      () => parseNetConf('{"Network":"10.42.0.0/16","Backend":{"Type":"udp"}}'),
      /Backend.Type must be one of vxlan, host-gw, none/,
    );
    assert.throws(() => parseNetConf('{"Backend":{"Type":"vxlan"}}'), /Network must be an IPv4 CIDR/);
    assert.throws(() => parseNetConf('nope'), /not JSON/);
  });
  it('gives each node a stable, locally administered unicast MAC', () => {
    const mac = vtepMACFor('node-1');
    assert.equal(mac, vtepMACFor('node-1'));
    assert.notEqual(mac, vtepMACFor('node-2'));
    const first = parseInt(mac.slice(0, 2), 16);
    assert.equal(first & 0x03, 0x02, mac);
  });
});
