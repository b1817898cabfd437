/**
 * The Docker fast path's network half (pod-interfaces.ts, ipam.ts) on a fake HostCommand
 * that records the calls, and a temporary IPAM directory: the two iproute2 batches of an
 * attach, the failure of a step, and host-local-style allocation (O_EXCL files, after the
 * last reserved, owner-checked release, exhaustion).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { BridgeNetwork } from '../../cri/index.js';
import type { CommandResult, HostCommand } from './host-command.js';
import { HostLocalIPAM } from './ipam.js';
import { VethPodInterfaces, attachScripts, hostVethName } from './pod-interfaces.js';

const dir = mkdtempSync(join(tmpdir(), 'k8ts-pod-interfaces-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const net: BridgeNetwork = {
  name: 'k8ts-node-a',
  bridge: 'br-0123456789ab',
  subnet: '10.42.1.0/24',
  gateway: '10.42.1.1',
  range: { first: '10.42.1.128', last: '10.42.1.254' },
  mtu: 1450,
};

/** A HostCommand that records each call and answers with `answer(call)`. */
function fakeHost(answer: (file: string, args: readonly string[]) => CommandResult = () => ok) {
  const calls: { file: string; args: readonly string[]; stdin?: string }[] = [];
  const host: HostCommand = async (file, args, stdin) => {
    calls.push({ file, args, ...(stdin !== undefined ? { stdin } : {}) });
    return answer(file, args);
  };
  return { host, calls };
}
const ok: CommandResult = { code: 0, stdout: '', stderr: '' };

describe('VethPodInterfaces', () => {
  it('attach: one batch in the host namespace, one in the pod namespace through nsenter', async () => {
    const { host, calls } = fakeHost();
    const plugin = new VethPodInterfaces({ host, ipamDir: join(dir, 'a'), enabled: () => true });
    const sandboxId = 'f00dfacecafe0123456789';
    await plugin.attach({ pid: 4242, sandboxId, ip: '10.42.1.130', net });
    assert.equal(hostVethName(sandboxId), 'vethf00dfacecaf');
    assert.ok(hostVethName(sandboxId).length <= 15);
    assert.deepEqual(calls, [
      {
        file: 'ip',
        args: ['-batch', '-'],
        stdin:
          'link add vethf00dfacecaf mtu 1450 type veth peer name eth0 mtu 1450 address 02:42:0a:2a:01:82 netns 4242\n' +
          'link set vethf00dfacecaf master br-0123456789ab up\n' +
          'link set vethf00dfacecaf type bridge_slave hairpin on\n',
      },
      {
        file: 'nsenter',
        args: ['-t', '4242', '-n', 'ip', '-batch', '-'],
        stdin:
          'link set lo up\naddr add 10.42.1.130/24 dev eth0\nlink set eth0 up\n' +
          'route add default via 10.42.1.1 dev eth0\n',
      },
    ]);
  });

  it('no MTU: the kernel default; a failing step throws with its stderr and stops there', async () => {
    const noMtu = { ...net };
    delete noMtu.mtu;
    assert.match(
      attachScripts({ pid: 1, sandboxId: 'abc', ip: '10.42.1.200', net: noMtu }).host[0]!,
      /^link add vethabc type veth peer name eth0 address 02:42:0a:2a:01:c8 netns 1$/,
    );
    const { host, calls } = fakeHost(() => ({
      code: 2,
      stdout: '',
      stderr: 'RTNETLINK answers: File exists',
    }));
    const plugin = new VethPodInterfaces({ host, ipamDir: join(dir, 'b'), enabled: () => false });
    assert.equal(plugin.enabled(), false);
    await assert.rejects(
      plugin.attach({ pid: 7, sandboxId: 'abc', ip: '10.42.1.200', net }),
      /pod interface of sandbox abc: ip -batch -: RTNETLINK answers: File exists/,
    );
    assert.equal(calls.length, 1);
  });
});

describe('HostLocalIPAM', () => {
  it('hands out the range in order after the last reserved, one file per address, across instances', async () => {
    const ipamDir = join(dir, 'ipam1');
    const ipam = new HostLocalIPAM(ipamDir);
    const range = { first: '10.42.1.128', last: '10.42.1.130' };
    assert.equal(await ipam.allocate('n', range, 'pod-a'), '10.42.1.128');
    assert.equal(await ipam.allocate('n', range, 'pod-b'), '10.42.1.129');
    assert.equal(readFileSync(join(ipamDir, 'n', '10.42.1.129'), 'utf8'), 'pod-b');
    // Not reused at once: the search goes on after the last one given, then wraps.
    await ipam.release('n', '10.42.1.128', 'pod-a');
    assert.equal(await ipam.allocate('n', range, 'pod-c'), '10.42.1.130');
    // A second allocator (a restarted agent) reads the files and the last reserved.
    const again = new HostLocalIPAM(ipamDir);
    assert.equal(await again.allocate('n', range, 'pod-d'), '10.42.1.128');
    await assert.rejects(
      again.allocate('n', range, 'pod-e'),
      /no free address in 10.42.1.128-10.42.1.130 of n/,
    );
    assert.deepEqual([...(await again.reserved('n'))].sort(), [
      ['10.42.1.128', 'pod-d'],
      ['10.42.1.129', 'pod-b'],
      ['10.42.1.130', 'pod-c'],
    ]);
  });

  it("release frees only its owner's address; concurrent allocations never share one", async () => {
    const ipam = new HostLocalIPAM(join(dir, 'ipam2'));
    const range = { first: '10.42.1.128', last: '10.42.1.254' };
    const ips = await Promise.all(Array.from({ length: 30 }, (_, i) => ipam.allocate('n', range, `p${i}`)));
    assert.equal(new Set(ips).size, 30);
    await ipam.release('n', ips[0]!, 'someone-else');
    await ipam.release('n', '10.42.1.253', 'p0');
    assert.equal((await ipam.reserved('n')).get(ips[0]!), 'p0');
    await ipam.release('n', ips[0]!, 'p0');
    await ipam.release('n', ips[0]!, 'p0');
    assert.equal((await ipam.reserved('n')).has(ips[0]!), false);
  });
});

describe('VethPodInterfaces.sweep', () => {
  it('frees the addresses of owners that are no sandbox container any more', async () => {
    const { host } = fakeHost();
    const plugin = new VethPodInterfaces({ host, ipamDir: join(dir, 'sweep'), enabled: () => true });
    const a = await plugin.allocate(net, 'k8ts_POD_a');
    await plugin.allocate(net, 'k8ts_POD_gone');
    assert.equal(await plugin.sweep(net.name, new Set(['k8ts_POD_a'])), 1);
    assert.deepEqual(
      [...(await new HostLocalIPAM(join(dir, 'sweep')).reserved(net.name))],
      [[a, 'k8ts_POD_a']],
    );
  });
});
