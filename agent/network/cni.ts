/**
 * The node's pod network on a CRI runtime (containerd's CRI plugin, CRI-O): the CNI
 * network configuration the runtime's CNI conf dir holds, which the kubelet leaves to
 * "the network plugin" and k8ts writes itself, from the Node's `spec.podCIDR`, as flannel's
 * daemon writes `/etc/cni/net.d/10-flannel.conflist` and k3s its own. The runtime reads the
 * directory (containerd: the first file in name order, and again whenever it changes) and
 * runs the plugins for each sandbox.
 *
 *   <confDir>/00-k8ts.conflist
 *   { "cniVersion": "0.4.0", "name": "k8ts-<node>",
 *     "plugins": [ { "type": "bridge", "bridge": "k8ts<hash>", "isGateway": true,
 *                    "ipMasq": true, "hairpinMode": true, "mtu": <backend's>,
 *                    "ipam": { "type": "host-local", "ranges": [[{ "subnet": <podCIDR> }]],
 *                              "routes": [{ "dst": "0.0.0.0/0" }],
 *                              "dataDir": <agent data dir>/cni/networks } },
 *                  { "type": "portmap", "capabilities": { "portMappings": true } } ] }
 *
 * The bridge is what the docker adapter's `k8ts-<node>` network is to Docker, so the
 * network between hosts (cross-host.ts, firewall.ts) applies to it unchanged: the bridge
 * holds the subnet's first address (the pods' default gateway, and the connected route for
 * the pod CIDR that traffic from other hosts takes), pods get the other addresses of the
 * podCIDR, traffic leaving the subnet is masqueraded by the plugin (as Docker's bridge
 * masquerades), and pod traffic to other nodes' pods is kept from that masquerade by
 * K8TS-POSTROUTING's ACCEPT, which comes first in POSTROUTING as it does before Docker's
 * rule. hostPorts are the portmap plugin's DNAT (CRI's PortMapping become its
 * `portMappings` capability). The loopback plugin is not in the list: containerd brings
 * every sandbox's `lo` up with it itself.
 *
 * The file is written only when its content changes (atomically: a temporary file renamed
 * into place, so the runtime never reads half of it); then the runtime is asked
 * (`runtime.ensurePodNetwork`) to confirm it has loaded the network with that subnet
 * before sandboxes are made on it.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NetworkService, PodNetworkConfig } from '../../cri/index.js';

/** The conflist's file name: `00-` so that it sorts before other files of a shared conf dir. */
export const CNI_CONFLIST_FILE = '00-k8ts.conflist';
/** The plugins the conflist needs in the bin dir (loopback: the runtime's own `lo`). */
export const CNI_PLUGINS = ['bridge', 'host-local', 'portmap', 'loopback'] as const;

/** The Linux bridge of `nodeName`'s pod network: `k8ts` + 8 hex digits of its SHA-1 (12 characters, under IFNAMSIZ). */
export function cniBridgeName(nodeName: string): string {
  return `k8ts${createHash('sha1').update(nodeName).digest('hex').slice(0, 8)}`;
}

/** What a conflist is made of. */
export interface ConflistConfig {
  /** The network's name (pod-network.ts's `k8ts-<node>`). */
  name: string;
  /** The Linux bridge (cniBridgeName). */
  bridge: string;
  /** The node's spec.podCIDR. */
  subnet: string;
  /** The pods' MTU (the cross-host backend's); unset: the bridge plugin's default. */
  mtu?: number;
  /** host-local's lease directory; unset: its default, /var/lib/cni/networks. */
  ipamDataDir?: string;
}

/** The conflist (CNI spec 0.4.0) of the file comment, as an object. */
export function cniConflist(cfg: ConflistConfig): Record<string, unknown> {
  return {
    cniVersion: '0.4.0',
    name: cfg.name,
    plugins: [
      {
        type: 'bridge',
        bridge: cfg.bridge,
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ...(cfg.mtu !== undefined ? { mtu: cfg.mtu } : {}),
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: cfg.subnet }]],
          // The pod's default route, via the bridge's address (Docker gives its own).
          routes: [{ dst: '0.0.0.0/0' }],
          ...(cfg.ipamDataDir !== undefined ? { dataDir: cfg.ipamDataDir } : {}),
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}

/** Settings of a CniPodNetwork. */
export interface CniPodNetworkConfig {
  nodeName: string;
  /** The runtime's CNI conf dir (`--cni-conf-dir`); created when missing. */
  confDir: string;
  /** Where the plugins are (`--cni-bin-dir`); checked, never written. */
  binDir: string;
  /** host-local's lease directory (the agent's `<data dir>/cni/networks`). */
  ipamDataDir?: string;
  /**
   * The runtime, asked after each write to confirm it has loaded the network
   * (cri/containerd's ensurePodNetwork waits for it); undefined: no confirmation.
   */
  runtime?: Pick<NetworkService, 'ensurePodNetwork'>;
}

/**
 * The node's pod network as CNI configuration (see the file comment): the NetworkService
 * half that pod-network.ts's PodNetworkManager drives, for a runtime whose network is CNI.
 */
export class CniPodNetwork implements Pick<NetworkService, 'ensurePodNetwork' | 'removePodNetwork'> {
  readonly bridge: string;
  readonly path: string;
  private readonly cfg: CniPodNetworkConfig;

  constructor(cfg: CniPodNetworkConfig) {
    if (!cfg.nodeName) throw new Error('CniPodNetwork: nodeName is required');
    if (!cfg.confDir || !cfg.binDir) throw new Error('CniPodNetwork: confDir and binDir are required');
    this.cfg = cfg;
    this.bridge = cniBridgeName(cfg.nodeName);
    this.path = join(cfg.confDir, CNI_CONFLIST_FILE);
  }

  /**
   * Writes the conflist for `config` (name, subnet = podCIDR, mtu) when it differs from
   * the file's, then waits for the runtime to confirm it. Pods made before keep their
   * addresses; new ones get addresses of the new subnet.
   * @throws Error naming the missing plugins and the bin dir (Debian's
   *   containernetworking-plugins), or the conf dir that cannot be written; the runtime's
   *   CriError when it does not load the network.
   */
  async ensurePodNetwork(config: PodNetworkConfig): Promise<void> {
    const missing = CNI_PLUGINS.filter((p) => !existsSync(join(this.cfg.binDir, p)));
    if (missing.length > 0) {
      throw new Error(
        `CNI plugins ${missing.join(', ')} not found in ${this.cfg.binDir} (Debian package containernetworking-plugins; --cni-bin-dir)`,
      );
    }
    const text = `${JSON.stringify(
      cniConflist({
        name: config.name,
        bridge: this.bridge,
        subnet: config.subnet,
        ...(config.mtu !== undefined ? { mtu: config.mtu } : {}),
        ...(this.cfg.ipamDataDir !== undefined ? { ipamDataDir: this.cfg.ipamDataDir } : {}),
      }),
      null,
      2,
    )}\n`;
    const current = await readFile(this.path, 'utf8').catch(() => undefined);
    if (current !== text) {
      try {
        await mkdir(this.cfg.confDir, { recursive: true });
        const tmp = `${this.path}.tmp-${process.pid}`;
        // Not *.conflist/*.conf/*.json: the runtime ignores the file until it is renamed.
        await writeFile(tmp, text, { mode: 0o644 });
        await rename(tmp, this.path);
      } catch (err) {
        throw new Error(`cannot write the CNI configuration ${this.path}: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    await this.cfg.runtime?.ensurePodNetwork(config);
  }

  /** Removes the conflist (sandboxes made on it keep their network); idempotent. */
  async removePodNetwork(_name: string): Promise<void> {
    await rm(this.path, { force: true });
  }
}
