import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HostCommand } from '../network/host-command.js';
import { LocalNodePortRules, localNodePortRules } from './local-nodeports.js';

describe('localNodePortRules (externalTrafficPolicy Local in nftables)', () => {
  it('one DNAT per NodePort with local endpoints, random over them, the table replaced whole', () => {
    const text = localNodePortRules(
      [
        {
          protocol: 'TCP',
          nodePort: 31000,
          endpoints: [
            { ip: '10.42.1.5', port: 8080 },
            { ip: '10.42.1.6', port: 8080 },
          ],
        },
        { protocol: 'UDP', nodePort: 30053, endpoints: [{ ip: '10.42.1.7', port: 53 }] },
        { protocol: 'TCP', nodePort: 30999, endpoints: [] },
      ],
      '198.18.0.11',
    );
    assert.equal(
      text,
      [
        'table ip k8ts-local-nodeports',
        'delete table ip k8ts-local-nodeports',
        'table ip k8ts-local-nodeports {',
        '  chain prerouting {',
        '    type nat hook prerouting priority dstnat; policy accept;',
        '    ip daddr 198.18.0.11 udp dport 30053 dnat to 10.42.1.7:53',
        '    ip daddr 198.18.0.11 tcp dport 31000 dnat to numgen random mod 2 map { 0 : 10.42.1.5 . 8080, 1 : 10.42.1.6 . 8080 }',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
  });
  it('matches every local address without a node IP, and writes nothing without rules', () => {
    assert.match(
      localNodePortRules(
        [{ protocol: 'TCP', nodePort: 31000, endpoints: [{ ip: '10.42.1.5', port: 80 }] }],
        undefined,
      )!,
      /fib daddr type local tcp dport 31000 dnat to 10\.42\.1\.5:80/,
    );
    assert.equal(
      localNodePortRules([{ protocol: 'TCP', nodePort: 31000, endpoints: [] }], '198.18.0.11'),
      undefined,
    );
  });
  it('replaces what an earlier run left at its first sync, then writes only on change', async () => {
    const calls: string[] = [];
    const host: HostCommand = async (file, args) => {
      calls.push([file, ...args].join(' '));
      return { code: 0, stdout: '', stderr: '' };
    };
    const rules = new LocalNodePortRules(host, '198.18.0.11', { warn: () => {} });
    await rules.sync([]);
    await rules.sync([]);
    const port = { protocol: 'TCP' as const, nodePort: 31000, endpoints: [{ ip: '10.42.1.5', port: 80 }] };
    await rules.sync([port]);
    await rules.sync([port]);
    await rules.remove();
    assert.deepEqual(calls, [
      'nft delete table ip k8ts-local-nodeports',
      'nft -f -',
      'nft delete table ip k8ts-local-nodeports',
    ]);
  });
});
