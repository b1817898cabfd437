import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAgentOptions } from '../../cmd/options/agent.js';
import { cleanupCniNetwork, cleanupNodeNetwork } from './cleanup.js';
import { CNI_CONFLIST_FILE, cniBridgeName } from './cni.js';
import type { HostCommand } from './host-command.js';

const dir = mkdtempSync(join(tmpdir(), 'k8ts-cleanup-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A host whose only links are `links`; records every command. */
function fakeHost(links: Set<string>): { host: HostCommand; calls: string[] } {
  const calls: string[] = [];
  const host: HostCommand = async (file, args) => {
    calls.push([file, ...args].join(' '));
    const dev = args.at(-1)!;
    if (args[0] === 'link' && args[1] === 'show')
      return links.has(dev)
        ? { code: 0, stdout: `1: ${dev}: <UP>`, stderr: '' }
        : { code: 1, stdout: '', stderr: 'does not exist' };
    if (args[0] === 'link' && args[1] === 'del')
      return links.delete(dev) ? { code: 0, stdout: '', stderr: '' } : { code: 1, stdout: '', stderr: 'no' };
    return { code: 1, stdout: '', stderr: 'unexpected' };
  };
  return { host, calls };
}

describe('cleanupCniNetwork', () => {
  it("removes the node's conflist, CNI bridge and host-local leases, and nothing else", async () => {
    const confDir = join(dir, 'a', 'net.d');
    const dataDir = join(dir, 'a', 'agent');
    mkdirSync(confDir, { recursive: true });
    writeFileSync(join(confDir, CNI_CONFLIST_FILE), JSON.stringify({ name: 'k8ts-n1', plugins: [] }));
    writeFileSync(join(confDir, '10-other.conflist'), JSON.stringify({ name: 'other', plugins: [] }));
    const mine = join(dataDir, 'cni', 'networks', 'k8ts-n1');
    const theirs = join(dataDir, 'cni', 'networks', 'other');
    for (const d of [mine, theirs]) {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, '10.42.0.2'), 'x');
    }
    const links = new Set([cniBridgeName('n1'), 'cni0', cniBridgeName('n2')]);
    const { host } = fakeHost(links);
    const lines = await cleanupCniNetwork(host, { nodeName: 'n1', confDir, dataDir });
    assert.ok(!existsSync(join(confDir, CNI_CONFLIST_FILE)));
    assert.ok(existsSync(join(confDir, '10-other.conflist')));
    assert.ok(!existsSync(mine));
    assert.ok(existsSync(theirs));
    assert.deepEqual([...links].sort(), ['cni0', cniBridgeName('n2')].sort());
    assert.match(lines.join('\n'), new RegExp(`CNI bridge ${cniBridgeName('n1')}: removed`));
    // Again: everything is absent now.
    const again = await cleanupCniNetwork(host, { nodeName: 'n1', confDir, dataDir });
    assert.match(again.join('\n'), /conflist .*: absent/);
    assert.match(again.join('\n'), /bridge .*: absent/);
  });

  it('keeps a 00-k8ts.conflist that names another network', async () => {
    const confDir = join(dir, 'b');
    mkdirSync(confDir, { recursive: true });
    writeFileSync(join(confDir, CNI_CONFLIST_FILE), JSON.stringify({ name: 'k8ts-other-node' }));
    const { host } = fakeHost(new Set());
    const lines = await cleanupCniNetwork(host, {
      nodeName: 'n1',
      confDir,
      dataDir: join(dir, 'b', 'agent'),
    });
    assert.ok(existsSync(join(confDir, CNI_CONFLIST_FILE)));
    assert.match(lines[0]!, /kept \(its network is not k8ts-n1\)/);
  });

  it('a bridge that cannot be removed is an error', async () => {
    const host: HostCommand = async (_f, args) =>
      args[1] === 'show'
        ? { code: 0, stdout: '', stderr: '' }
        : { code: 2, stdout: '', stderr: 'Operation not permitted' };
    await assert.rejects(
      cleanupCniNetwork(host, { nodeName: 'n1', confDir: join(dir, 'c'), dataDir: join(dir, 'c') }),
      /Operation not permitted/,
    );
  });

  it('k8ts agent --cleanup takes --data-dir and --cni-conf-dir (defaults /etc/cni/net.d)', async () => {
    const o = await parseAgentOptions([
      '--cleanup',
      '--node-name',
      'n1',
      '--data-dir',
      '/tmp/d',
      '--cni-conf-dir',
      '/tmp/c',
    ]);
    assert.deepEqual(o, { cleanup: true, nodeName: 'n1', dataDir: '/tmp/d', cniConfDir: '/tmp/c' });
    const d = await parseAgentOptions(['--cleanup', '--node-name', 'n1']);
    assert.ok(d !== 'help' && 'cleanup' in d);
    assert.equal(d.cniConfDir, '/etc/cni/net.d');
  });
});

describe('cleanupNodeNetwork', () => {
  it("removes the ClusterIP interface and the cluster DNS's interface", async () => {
    const links = new Set(['k8ts-aaaaaaa', 'kdns-aaaaaaa', 'kdns-bbbbbbb']);
    // Links as in fakeHost; other `ip` commands succeed and print nothing, iptables and nft find nothing.
    const host: HostCommand = async (file, args) => {
      if (file !== 'ip') return { code: 1, stdout: '', stderr: 'No chain/target/match by that name.' };
      if (args[0] === 'link' && args[1] === 'del')
        return links.delete(args.at(-1)!)
          ? { code: 0, stdout: '', stderr: '' }
          : { code: 1, stdout: '', stderr: 'Cannot find device' };
      return { code: 0, stdout: '', stderr: '' };
    };
    const lines = await cleanupNodeNetwork(host, 'k8ts-aaaaaaa', 'k8ts', 'kdns-aaaaaaa');
    assert.deepEqual([...links], ['kdns-bbbbbbb']);
    assert.match(lines.join('\n'), /cluster DNS interface kdns-aaaaaaa: removed/);
  });
});
