/**
 * ClusterIPAddresses (agent/proxy/cluster-ip.ts) against the real `ip` and kernel, inside a
 * network namespace this test makes (never the machine's own): an address removed from under
 * it (`ip addr del`, or `ip link del` of its dummy interface) is put back by reassert(), and a
 * UDP socket bound to the address (the cluster DNS's, or a userspace proxy's listener)
 * answers again once it is back. Where the kernel has no dummy driver the addresses are
 * labelled ones on `lo`, as the agent falls back to; both are read with `ip -br`.
 * Needs root (skipped otherwise); the namespace and the processes it starts are removed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../api/log.js';
import { runProgram } from '../agent/network/host-command.js';
import { ClusterIPAddresses, type IpCommand } from '../agent/proxy/cluster-ip.js';
import { untilTruthy } from './support/wait.js';

const root = process.getuid?.() === 0;
const NS = `k8ts-cip-${process.pid}`;
const IFACE = 'k8ts-cipe2e';
const A = '198.18.200.10';
const B = '198.18.200.11';
const PORT = 5353;

const inNs = ['nsenter', `--net=/var/run/netns/${NS}`];
const ip: IpCommand = (args) => runProgram('ip', ['-n', NS, ...args], { timeoutMs: 10_000 });

/** The IPv4 addresses of the namespace (all devices). */
async function held(): Promise<string[]> {
  const r = await ip(['-o', '-4', 'addr', 'show']);
  return [...r.stdout.matchAll(/inet (\d+\.\d+\.\d+\.\d+)\//g)].map((m) => m[1]!).sort();
}

/** One UDP exchange with A:PORT from inside the namespace: the reply, or the error's code. */
async function ask(): Promise<string> {
  const script = `const s = require('dgram').createSocket('udp4');
    const t = setTimeout(() => { console.log('timeout'); process.exit(0); }, 1000);
    s.on('message', (m) => { console.log(String(m)); process.exit(0); });
    s.on('error', (e) => { console.log(e.code); process.exit(0); });
    s.send('ping', ${PORT}, '${A}');`;
  const r = await runProgram(inNs[0]!, [...inNs.slice(1), process.execPath, '-e', script], {
    timeoutMs: 10_000,
  });
  return r.stdout.trim();
}

describe('ClusterIPAddresses in a network namespace', { skip: !root && 'needs root' }, () => {
  let echo: ChildProcess | undefined;
  let addresses: ClusterIPAddresses;

  before(async () => {
    const made = await runProgram('ip', ['netns', 'add', NS], { timeoutMs: 10_000 });
    assert.equal(made.code, 0, made.stderr);
    assert.equal((await ip(['link', 'set', 'lo', 'up'])).code, 0);
  });

  after(async () => {
    if (echo?.pid !== undefined && echo.exitCode === null) echo.kill('SIGKILL');
    await runProgram('ip', ['netns', 'del', NS], { timeoutMs: 10_000 });
  });

  it('puts back an address removed from under it, and a socket bound to it answers again', async () => {
    addresses = new ClusterIPAddresses({ interfaceName: IFACE, logger: silentLogger(), ip });
    const mode = await addresses.start();
    assert.ok(mode === 'dummy' || mode === 'loopback', `mode ${mode}`);
    assert.ok(await addresses.add(A));
    assert.ok(await addresses.add(B));
    assert.deepEqual(await addresses.reassert(), [], 'nothing missing');

    // A UDP server bound to A, inside the namespace.
    const script = `const s = require('dgram').createSocket('udp4');
      s.on('message', (m, r) => s.send('pong', r.port, r.address));
      s.bind(${PORT}, '${A}', () => console.log('ready'));`;
    echo = spawn(inNs[0]!, [...inNs.slice(1), process.execPath, '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    echo.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await untilTruthy('the UDP server ready', () => out.includes('ready'), 10_000, 20);
    assert.equal(await ask(), 'pong');

    // Someone removes A.
    const dev = mode === 'dummy' ? IFACE : 'lo';
    assert.equal((await ip(['addr', 'del', `${A}/32`, 'dev', dev])).code, 0);
    assert.ok(!(await held()).includes(A));
    assert.notEqual(await ask(), 'pong');
    assert.deepEqual(await addresses.reassert(), [A]);
    assert.deepEqual(
      (await held()).filter((x) => x.startsWith('198.18.')),
      [A, B],
    );
    assert.equal(await ask(), 'pong', 'the socket bound to it answers again');

    if (mode === 'dummy') {
      // Someone deletes the interface: it is made again with both addresses.
      assert.equal((await ip(['link', 'del', IFACE])).code, 0);
      assert.deepEqual((await addresses.reassert()).sort(), [A, B]);
      assert.deepEqual(
        (await held()).filter((x) => x.startsWith('198.18.')),
        [A, B],
      );
    }
    await addresses.stop();
    assert.deepEqual(
      (await held()).filter((x) => x.startsWith('198.18.')),
      [],
    );
  });
});
