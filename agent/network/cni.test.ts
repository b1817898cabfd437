import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { PodNetworkConfig } from '../../cri/index.js';
import { CNI_CONFLIST_FILE, CNI_PLUGINS, CniPodNetwork, cniBridgeName, cniConflist } from './cni.js';

const dir = mkdtempSync(join(tmpdir(), 'k8ts-cni-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A bin dir holding (empty stand-ins for) `plugins`. */
function binDir(name: string, plugins: readonly string[]): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  for (const p of plugins) writeFileSync(join(d, p), '');
  return d;
}

const net: PodNetworkConfig = { name: 'k8ts-n1', subnet: '10.42.3.0/24', labels: { 'io.k8ts.node': 'n1' } };

describe('CNI conflist', () => {
  it('bridge + host-local from the podCIDR, with the MTU, and portmap for hostPorts', () => {
    assert.deepEqual(
      cniConflist({
        name: 'k8ts-n1',
        bridge: 'k8tsabc',
        subnet: '10.42.3.0/24',
        mtu: 1450,
        ipamDataDir: '/d',
      }),
      {
        cniVersion: '0.4.0',
        name: 'k8ts-n1',
        plugins: [
          {
            type: 'bridge',
            bridge: 'k8tsabc',
            isGateway: true,
            ipMasq: true,
            hairpinMode: true,
            mtu: 1450,
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet: '10.42.3.0/24' }]],
              routes: [{ dst: '0.0.0.0/0' }],
              dataDir: '/d',
            },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      },
    );
  });

  it('names a bridge per node, within IFNAMSIZ', () => {
    assert.match(cniBridgeName('node-1'), /^k8ts[0-9a-f]{8}$/);
    assert.notEqual(cniBridgeName('node-1'), cniBridgeName('node-2'));
    assert.ok(cniBridgeName('a-very-long-node-name.example.com').length <= 15);
  });

  it('writes the file, rewrites it only when it changes, and asks the runtime to confirm each time', async () => {
    const confDir = join(dir, 'net.d');
    const confirmed: PodNetworkConfig[] = [];
    const cni = new CniPodNetwork({
      nodeName: 'n1',
      confDir,
      binDir: binDir('bin', CNI_PLUGINS),
      ipamDataDir: '/var/lib/k8ts-agent/cni/networks',
      runtime: { ensurePodNetwork: async (c) => void confirmed.push(c) },
    });
    const path = join(confDir, CNI_CONFLIST_FILE);
    await cni.ensurePodNetwork(net);
    const first = JSON.parse(readFileSync(path, 'utf8')) as ReturnType<typeof cniConflist>;
    assert.deepEqual(
      first,
      cniConflist({
        name: 'k8ts-n1',
        bridge: cniBridgeName('n1'),
        subnet: '10.42.3.0/24',
        ipamDataDir: '/var/lib/k8ts-agent/cni/networks',
      }),
    );
    const mtime = statSync(path).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    await cni.ensurePodNetwork(net);
    assert.equal(statSync(path).mtimeMs, mtime, 'an unchanged conflist is not written again');
    await cni.ensurePodNetwork({ ...net, subnet: '10.42.9.0/24', mtu: 1450 });
    const moved = readFileSync(path, 'utf8');
    assert.match(moved, /10\.42\.9\.0\/24/);
    assert.match(moved, /"mtu": 1450/);
    assert.equal(confirmed.length, 3);
    await cni.removePodNetwork(net.name);
    await cni.removePodNetwork(net.name);
    assert.ok(!existsSync(path));
  });

  it('missing plugins: an error naming them and the bin dir, and nothing written', async () => {
    const confDir = join(dir, 'net.d-missing');
    const bin = binDir('bin-partial', ['bridge', 'loopback']);
    const cni = new CniPodNetwork({ nodeName: 'n1', confDir, binDir: bin });
    await assert.rejects(cni.ensurePodNetwork(net), (err: Error) => {
      assert.match(err.message, /CNI plugins host-local, portmap not found in/);
      assert.ok(err.message.includes(bin));
      return true;
    });
    assert.ok(!existsSync(join(confDir, CNI_CONFLIST_FILE)));
  });

  it("the runtime's refusal is the error", async () => {
    const cni = new CniPodNetwork({
      nodeName: 'n1',
      confDir: join(dir, 'net.d-refused'),
      binDir: binDir('bin', CNI_PLUGINS),
      runtime: {
        ensurePodNetwork: () => Promise.reject(new Error('the runtime has not loaded it')),
      },
    });
    await assert.rejects(cni.ensurePodNetwork(net), /has not loaded it/);
  });
});
