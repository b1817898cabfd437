/**
 * The Docker adapter's network plugin seam: sandboxes whose pod interface the agent makes
 * itself instead of Docker's libnetwork.
 *
 * Why: a sandbox on a Docker bridge network costs Docker an endpoint (a veth, the
 * network's sandbox and its iptables bookkeeping) under the daemon's network lock —
 * measured at about 200 ms of a pod's 380 ms, and serialised when pods start together
 * (scripts/bench-podstartup.ts). A sandbox with `NetworkMode: none` starts in a few tens
 * of ms; the pod's eth0 is then wired as a CNI bridge plugin does (a veth pair into the
 * node's existing bridge, an address from the node's podCIDR by host-local-style IPAM).
 *
 * Where the seam is: as in dockershim, whose RunPodSandbox started the sandbox container
 * and then called the network plugin (SetUpPod), and whose PodSandboxStatus asked the
 * plugin for the IP, the adapter decides per sandbox and calls the plugin; the plugin
 * (the agent's network module, agent/network/pod-interfaces.ts) is the only part that
 * runs `ip` or touches IPAM files. The adapter keeps the pod IP on a label of the sandbox
 * container (`io.k8ts.pod-ip`), so PodSandboxStatus, and a restarted agent adopting the
 * sandbox, read it from Docker alone.
 *
 * Sharing the subnet with Docker's IPAM: the Docker network is created with `IPRange` =
 * the lower half of the podCIDR (dockerIPRange), so Docker hands out only those addresses
 * (to sandboxes that keep Docker's network: hostPort pods, which Docker publishes); the
 * plugin allocates only from the upper half (podInterfaceRange). A network without that
 * IPRange (made by an older agent and still in use) gets no fast path. Before its first
 * allocation on a network, an adapter sweeps the addresses no sandbox container of its
 * node holds any more (an agent killed between allocate and create leaks one otherwise).
 */

/** The node's bridge network as a pod interface joins it. */
export interface BridgeNetwork {
  /** The Docker network's name (also the IPAM's key). */
  name: string;
  /** The Linux bridge device of the network (`br-<id12>`, or its bridge.name option). */
  bridge: string;
  /** The podCIDR, `a.b.c.d/n`. */
  subnet: string;
  /** The bridge's address, the pod's default gateway. */
  gateway: string;
  /** The addresses the plugin may hand out, inclusive (podInterfaceRange). */
  range: { first: string; last: string };
  /** The pod interface's MTU; undefined: the kernel's default (1500). */
  mtu?: number;
}

/** What the adapter asks of the agent's network module (see the file comment). */
export interface DockerPodInterfaces {
  /**
   * True when sandboxes may be given an interface by the plugin now: the agent owns the
   * host's network (a cross-host backend other than none, as kube-proxy's nftables mode).
   */
  enabled(): boolean;
  /**
   * Reserves an address of `net.range` for `owner` (the sandbox container's name).
   * @returns the address, `a.b.c.d`.
   * @throws Error when every address of the range is taken.
   */
  allocate(net: BridgeNetwork, owner: string): Promise<string>;
  /**
   * Gives the sandbox whose first process is `pid` its eth0 with `ip` on `net`'s bridge
   * and the gateway as default route.
   * @throws Error when a command fails (the adapter then removes the sandbox).
   */
  attach(req: { pid: number; sandboxId: string; ip: string; net: BridgeNetwork }): Promise<void>;
  /** Frees `ip` of network `network` if `owner` holds it; anything else is done. */
  release(network: string, ip: string, owner: string): Promise<void>;
  /**
   * Frees every address of `network` whose owner is not in `owners` (the names of all this
   * node's sandbox containers): what an agent killed between allocate and create, or
   * sandboxes removed behind its back, held.
   * @returns how many were freed.
   */
  sweep(network: string, owners: ReadonlySet<string>): Promise<number>;
}

const toInt = (ip: string): number => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
const toIp = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/** `a.b.c.d/n` → first address and prefix length; undefined when not IPv4 with 8 ≤ n ≤ 29. */
function parse(cidr: string): { base: number; bits: number } | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  if (!m) return undefined;
  const bits = Number(m[5]);
  if (m.slice(1, 5).some((o) => Number(o) > 255) || bits < 8 || bits > 29) return undefined;
  const size = 2 ** (32 - bits);
  const addr = toInt(m.slice(1, 5).join('.'));
  return { base: addr - (addr % size), bits };
}

/**
 * The part of `subnet` Docker's IPAM may hand out: its lower half (`10.42.1.0/24` →
 * `10.42.1.0/25`); undefined for a subnet that is not IPv4 /8–/29.
 */
export function dockerIPRange(subnet: string): string | undefined {
  const p = parse(subnet);
  return p && `${toIp(p.base)}/${p.bits + 1}`;
}

/**
 * The addresses the plugin hands out: the upper half of `subnet` without its broadcast
 * address (`10.42.1.0/24` → .128–.254); undefined as for dockerIPRange.
 */
export function podInterfaceRange(subnet: string): { first: string; last: string } | undefined {
  const p = parse(subnet);
  if (!p) return undefined;
  const size = 2 ** (32 - p.bits);
  return { first: toIp(p.base + size / 2), last: toIp(p.base + size - 2) };
}

/** The first host address of `subnet` (`10.42.1.0/24` → `10.42.1.1`): Docker's default gateway. */
export function firstHost(subnet: string): string {
  const p = parse(subnet);
  return p ? toIp(p.base + 1) : '';
}
