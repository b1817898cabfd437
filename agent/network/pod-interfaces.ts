/**
 * The network module's half of the Docker fast path (cri/docker/pod-interfaces.ts says why
 * and where the seam is): what a CNI bridge plugin with host-local IPAM does for a pod,
 * for a sandbox Docker started with NetworkMode none.
 *
 *   allocate   an address of the upper half of the podCIDR (ipam.ts; Docker's IPAM keeps
 *              the lower half)
 *   attach     1. in the host's namespace, one `ip -batch -`: a veth pair whose pod end is
 *                 created directly in the sandbox's namespace (`netns <pid>`) as eth0, both
 *                 ends with the backend's MTU, the pod end with Docker's MAC for its IP
 *                 (macOf); the host end `veth<id11>` joins the node's bridge (the Docker
 *                 network's `br-…`), goes up, in hairpin mode (as the CNI conflist's
 *                 hairpinMode, cni.ts: a pod reaching itself through a Service);
 *              2. in the sandbox's namespace (`nsenter -t <pid> -n ip -batch -`): lo up,
 *                 the address with the podCIDR's prefix on eth0, eth0 up, the bridge's
 *                 address as default gateway.
 *              Two processes per pod. The pod is then on the same bridge and subnet as
 *              Docker's endpoints: the routes to other nodes' podCIDRs and the firewall
 *              chains (cross-host.ts, firewall.ts) and Docker's per-network NAT apply
 *              unchanged.
 *   release    frees the address; the veth pair needs no removal: the kernel deletes it
 *              with the sandbox's network namespace.
 *   sweep      frees the addresses of owners that are no sandbox container any more.
 *
 * Enabled only where the agent owns the host's network (`enabled`: a cross-host backend
 * other than none, the condition of kube-proxy's nftables mode), so that an agent beside
 * others in the machine's own namespace (the single-host tests, `--flannel-backend none`)
 * makes no interfaces there.
 */
import type { BridgeNetwork, DockerPodInterfaces } from '../../cri/index.js';
import { mustRun, type HostCommand } from './host-command.js';
import { HostLocalIPAM } from './ipam.js';

/** Settings of VethPodInterfaces. */
export interface VethPodInterfacesConfig {
  /** Runs `ip` and `nsenter` in the host's namespace. */
  host: HostCommand;
  /** The IPAM's directory (e.g. `<dataDir>/docker-ipam`). */
  ipamDir: string;
  /** Whether the fast path applies now (see the file comment). */
  enabled: () => boolean;
}

/** The host end's name of sandbox `sandboxId`'s veth pair: `veth` + 11 hex digits (IFNAMSIZ). */
export function hostVethName(sandboxId: string): string {
  return `veth${sandboxId.slice(0, 11)}`;
}

/**
 * The pod interface's MAC address: `02:42:` and the four bytes of `ip`, as Docker derives
 * its endpoints' MACs, so that a pod IP handed out again keeps its MAC and no neighbour
 * entry elsewhere goes stale.
 */
export function macOf(ip: string): string {
  return ['02', '42', ...ip.split('.').map((o) => Number(o).toString(16).padStart(2, '0'))].join(':');
}

/**
 * The two `ip -batch` scripts of attach (see the file comment): `host` for the host's
 * namespace, `pod` for the sandbox's.
 */
export function attachScripts(req: { pid: number; sandboxId: string; ip: string; net: BridgeNetwork }): {
  host: string[];
  pod: string[];
} {
  const { net } = req;
  const mtu = net.mtu ? ` mtu ${net.mtu}` : '';
  const veth = hostVethName(req.sandboxId);
  const prefix = net.subnet.split('/')[1];
  return {
    host: [
      `link add ${veth}${mtu} type veth peer name eth0${mtu} address ${macOf(req.ip)} netns ${req.pid}`,
      `link set ${veth} master ${net.bridge} up`,
      `link set ${veth} type bridge_slave hairpin on`,
    ],
    pod: [
      'link set lo up',
      `addr add ${req.ip}/${prefix} dev eth0`,
      'link set eth0 up',
      `route add default via ${net.gateway} dev eth0`,
    ],
  };
}

/** The CNI-bridge-like plugin of the Docker adapter (see the file comment). */
export class VethPodInterfaces implements DockerPodInterfaces {
  private readonly ipam: HostLocalIPAM;

  constructor(private readonly cfg: VethPodInterfacesConfig) {
    if (!cfg.ipamDir) throw new Error('VethPodInterfaces: ipamDir is required');
    this.ipam = new HostLocalIPAM(cfg.ipamDir);
  }

  enabled(): boolean {
    return this.cfg.enabled();
  }

  allocate(net: BridgeNetwork, owner: string): Promise<string> {
    return this.ipam.allocate(net.name, net.range, owner);
  }

  /** @throws Error `pod interface of <sandbox>: ip …: <stderr>` when a step fails. */
  async attach(req: { pid: number; sandboxId: string; ip: string; net: BridgeNetwork }): Promise<void> {
    const scripts = attachScripts(req);
    const what = `pod interface of sandbox ${req.sandboxId.slice(0, 12)}`;
    await mustRun(this.cfg.host, what, 'ip', ['-batch', '-'], scripts.host.join('\n') + '\n');
    await mustRun(
      this.cfg.host,
      what,
      'nsenter',
      ['-t', String(req.pid), '-n', 'ip', '-batch', '-'],
      scripts.pod.join('\n') + '\n',
    );
  }

  release(network: string, ip: string, owner: string): Promise<void> {
    return this.ipam.release(network, ip, owner);
  }

  async sweep(network: string, owners: ReadonlySet<string>): Promise<number> {
    let freed = 0;
    for (const [ip, owner] of await this.ipam.reserved(network)) {
      if (owners.has(owner)) continue;
      await this.ipam.release(network, ip, owner);
      freed++;
    }
    return freed;
  }
}
