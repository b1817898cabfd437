/**
 * The one info line the Proxy logs with the mode in effect (`kube-proxy mode nftables`, or
 * `kube-proxy mode userspace (fallback: <why>)`), against the in-process API server with a
 * fake kernel: nothing touches the host's network.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { Logger } from '../../api/log.js';
import type { Service } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { untilTruthy } from '../../test/support/wait.js';
import type { HostCommand } from '../network/host-command.js';
import type { IpCommand } from './cluster-ip.js';
import type { ProxyMode } from './mode.js';
import { Proxy } from './proxy.js';

/** A logger that keeps its info lines. */
function infoLines(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const none = () => {};
  return { lines, logger: { debug: none, warn: none, error: none, info: (m) => void lines.push(m) } };
}

/** `ip` and the kernel's tools, all answering 0 but `nft -c` (the availability check) where `refuse` says. */
const fakeIp: IpCommand = () => Promise.resolve({ code: 0, stdout: '', stderr: '' });
const fakeHost =
  (refuse?: string): HostCommand =>
  (file, args) =>
    Promise.resolve(
      refuse !== undefined && file === 'nft' && args[0] === '-c'
        ? { code: 1, stdout: '', stderr: `${refuse}\nmore detail` }
        : { code: 0, stdout: '', stderr: '' },
    );

describe('Proxy: the mode in effect is logged', () => {
  let api: TestApi;
  const proxies: Proxy[] = [];

  before(async () => {
    api = await startTestApi();
    await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80 }], selector: { app: 'web' } },
    });
  });

  after(async () => {
    for (const p of proxies) await p.stop();
    await api?.stop();
  });

  const start = async (
    mode: ProxyMode,
    kernel: { refuse?: string; enabled: () => boolean; decided?: () => boolean },
  ) => {
    const { logger, lines } = infoLines();
    const proxy = new Proxy({
      client: api.client,
      nodeName: 'node-1',
      nodeIP: '127.0.0.1',
      clusterIPInterface: 'k8ts-modelog',
      logger,
      ip: fakeIp,
      syncPeriodMs: 0,
      mode,
      kernel: {
        host: fakeHost(kernel.refuse),
        enabled: kernel.enabled,
        ...(kernel.decided ? { decided: kernel.decided } : {}),
        clusterCIDR: () => '10.42.0.0/16',
        table: 'k8ts-modelog',
        chainPrefix: 'K8TSPMODE',
      },
    });
    proxies.push(proxy);
    await proxy.start();
    assert.ok(await proxy.waitForIdle());
    return { proxy, modeLines: () => lines.filter((l) => l.startsWith('kube-proxy mode')) };
  };

  it('says nftables where it programs the kernel, and userspace with the reason once the backend is none', async () => {
    let enabled = true;
    const { proxy, modeLines } = await start('nftables', { enabled: () => enabled });
    assert.deepEqual(modeLines(), ['kube-proxy mode nftables']);
    assert.equal(proxy.mode, 'nftables');
    enabled = false;
    proxy.resyncAll();
    assert.ok(await proxy.waitForIdle());
    assert.deepEqual(modeLines(), [
      'kube-proxy mode nftables',
      "kube-proxy mode userspace (fallback: the cluster network backend is none, so the kernel is not the proxy's to program)",
    ]);
    assert.equal(proxy.mode, 'userspace');
    // Reconciles that change nothing log nothing more.
    proxy.resyncAll();
    assert.ok(await proxy.waitForIdle());
    assert.equal(modeLines().length, 2);
  });

  it("names the tool's refusal when the kernel mode cannot be used here", async () => {
    // iptables mode's own check (iptables-restore --test) passes with the fake.
    const iptables = await start('iptables', {
      refuse: 'Error: Could not process rule',
      enabled: () => true,
    });
    assert.deepEqual(iptables.modeLines(), ['kube-proxy mode iptables']);
    const refused = await start('nftables', { refuse: 'Error: Could not process rule', enabled: () => true });
    assert.deepEqual(refused.modeLines(), [
      'kube-proxy mode userspace (fallback: nftables cannot be used here: Error: Could not process rule)',
    ]);
  });

  it("names the tool's refusal in the first line, logged before the cluster network setting is known", async () => {
    // A refused nft serves in userspace whatever the setting says: the line is not held back,
    // and its reason is the refusal, not the absence of kernel access.
    let decided = false;
    const { proxy, modeLines } = await start('nftables', {
      refuse: 'Error: Could not process rule',
      enabled: () => true,
      decided: () => decided,
    });
    const refused =
      'kube-proxy mode userspace (fallback: nftables cannot be used here: Error: Could not process rule)';
    assert.deepEqual(modeLines(), [refused]);
    decided = true;
    proxy.resyncAll();
    assert.ok(await proxy.waitForIdle());
    assert.deepEqual(modeLines(), [refused]);
  });

  it('says userspace without a fallback when userspace is asked for', async () => {
    const { modeLines } = await start('userspace', { enabled: () => true });
    assert.deepEqual(modeLines(), ['kube-proxy mode userspace']);
  });

  it('says nothing until the cluster network setting is known', async () => {
    let decided = false;
    const { proxy, modeLines } = await start('nftables', { enabled: () => true, decided: () => decided });
    assert.deepEqual(modeLines(), []);
    decided = true;
    proxy.resyncAll();
    await untilTruthy('the mode logged', () => modeLines().length > 0, 5000, 20);
    assert.deepEqual(modeLines(), ['kube-proxy mode nftables']);
  });
});
