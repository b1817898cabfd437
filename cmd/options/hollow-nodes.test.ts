import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from './common.js';
import { parseHollowNodesOptions } from './hollow-nodes.js';

const TOKEN = 'K10abc::abcdef.0123456789abcdef';

describe('k8ts hollow-nodes options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-hollow-opts-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const base = ['--server', 'https://10.0.0.1:6443', '--token', TOKEN, '--count', '20', '--data-dir', dir];

  it('fills in the defaults: a small real node, the hollow-node- prefix, warn', () => {
    assert.deepEqual(parseHollowNodesOptions(base), {
      server: 'https://10.0.0.1:6443',
      alternateServers: [],
      token: TOKEN,
      count: 20,
      prefix: 'hollow-node-',
      dataDir: dir,
      capacity: { cpu: 4, memoryBytes: 16 * 2 ** 30, pods: 110 },
      nodeIP: '127.0.0.1',
      jobPodRunTimeMs: 5_000,
      reportIntervalMs: 60_000,
      concurrency: 16,
      connectionsPerNode: 2,
      logLevel: 'warn',
    });
  });

  it('takes the size of the nodes, the prefix, the token from a file', () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const o = parseHollowNodesOptions([
      '--server',
      'https://k:6443',
      '--token-file',
      tokenFile,
      '--count',
      '5000',
      '--prefix',
      'hn-',
      '--cpu',
      '8',
      '--memory',
      '32Gi',
      '--max-pods',
      '250',
      '--job-pod-run-time',
      '500ms',
      '--node-ip',
      '10.9.0.1',
      '--connections-per-node',
      '1',
    ]);
    assert.ok(o !== 'help');
    assert.equal(o.token, TOKEN);
    assert.equal(o.prefix, 'hn-');
    assert.deepEqual(o.capacity, { cpu: 8, memoryBytes: 32 * 2 ** 30, pods: 250 });
    assert.equal(o.jobPodRunTimeMs, 500);
    assert.equal(o.connectionsPerNode, 1);
    assert.equal(o.nodeIP, '10.9.0.1');
  });

  it('takes several API servers: --server repeated or comma-separated, duplicates dropped', () => {
    const o = parseHollowNodesOptions([
      ...base,
      '--server',
      'https://10.0.0.2:6443,https://10.0.0.3:6443',
      '--server',
      'https://10.0.0.2:6443',
    ]);
    assert.ok(o !== 'help');
    assert.equal(o.server, 'https://10.0.0.1:6443');
    assert.deepEqual(o.alternateServers, ['https://10.0.0.2:6443', 'https://10.0.0.3:6443']);
  });

  it('needs no token once the first node has its credential', () => {
    const stored = mkdtempSync(join(tmpdir(), 'k8ts-hollow-opts-'));
    try {
      const argv = ['--server', 'https://k:6443', '--count', '2', '--data-dir', stored];
      assert.throws(() => parseHollowNodesOptions(argv), /--token or --token-file is required/);
      mkdirSync(join(stored, 'hollow-node-0', 'tls'), { recursive: true });
      writeFileSync(join(stored, 'hollow-node-0', 'tls', 'kubelet-client.crt'), '');
      const o = parseHollowNodesOptions(argv);
      assert.ok(o !== 'help' && o.token === undefined);
    } finally {
      rmSync(stored, { recursive: true, force: true });
    }
  });

  const refused: [string, string[], RegExp][] = [
    ['no server', ['--count', '1', '--token', TOKEN], /--server URL is required/],
    [
      'plain http',
      ['--server', 'http://k:6443', '--count', '1', '--token', TOKEN],
      /must be an https:\/\/ URL/,
    ],
    [
      'one plain http server among several',
      [...base, '--server', 'https://k:6443,http://j:6443'],
      /must be an https:\/\/ URL .*got http:\/\/j:6443/,
    ],
    ['no count', ['--server', 'https://k:6443', '--token', TOKEN], /--count N is required/],
    ['count 0', [...base.slice(0, 4), '--count', '0'], /--count must be a whole number from 1 to 100000/],
    ['bad prefix', [...base, '--prefix', 'Hollow_'], /--prefix must start a lowercase DNS name/],
    ['fractional cpu', [...base, '--cpu', '0.5'], /--cpu must be a whole number/],
    ['bad memory', [...base, '--memory', '16GB'], /--memory must be a quantity such as 16Gi/],
    ['tiny memory', [...base, '--memory', '64Mi'], /--memory must be more than 100Mi/],
    ['bad node ip', [...base, '--node-ip', 'localhost'], /--node-ip must be an IP address/],
    ['bad duration', [...base, '--job-pod-run-time', '5'], /--job-pod-run-time must be a duration/],
    ['two tokens', [...base, '--token-file', '/x'], /give --token or --token-file, not both/],
    [
      'no connections',
      [...base, '--connections-per-node', '0'],
      /--connections-per-node must be a whole number from 1 to 100/,
    ],
  ];
  for (const [what, argv, message] of refused) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => parseHollowNodesOptions(argv),
        (err: unknown) => err instanceof UsageError && message.test(err.message),
      );
    });
  }

  it('answers --help', () => {
    assert.equal(parseHollowNodesOptions(['--help']), 'help');
  });
});
