/**
 * The vxlan backend (flannel's, and k3s's default): one VXLAN device per host, `k8ts.1`
 * (VNI 1, UDP 8472, learning off, MTU of the node's interface − 50), holding the network
 * address of this node's pod CIDR as a /32. For every other node three entries, all
 * static (no multicast, no learning), as flannel's vxlan backend writes them:
 *
 *   ip neigh replace 10.42.2.0 lladdr <its VTEP MAC> dev k8ts.1 nud permanent      (ARP)
 *   bridge fdb append <its VTEP MAC> dev k8ts.1 dst <its public IP> self permanent  (FDB)
 *   ip route replace 10.42.2.0/24 via 10.42.2.0 dev k8ts.1 onlink proto 107
 *
 * so a packet for a pod there leaves through the device, gets the peer's MAC from the
 * neighbour entry and is sent in UDP to the peer's public IP by the FDB entry. The
 * device's MAC is derived from the node name (locally administered), so it stays the same
 * when the device is made again (node IP change, host reboot) and the other nodes' entries
 * stay right. An existing device with the right settings is kept as it is: an agent
 * restart changes nothing in the kernel and drops no connection.
 */
import { createHash } from 'node:crypto';
import { VXLAN_OVERHEAD } from '../../api/netconf.js';
import { mustRun, parseJSONList, type HostCommand } from './host-command.js';
import { networkAddress, type Peer } from './peers.js';
import { applyIpBatch, listPodRoutes, routeChanges } from './routes.js';

/** The VXLAN device's name (flannel's is `flannel.<VNI>`). */
export const VXLAN_DEVICE = 'k8ts.1';

/** A stable, locally administered unicast MAC for node `nodeName`'s VTEP. */
export function vtepMACFor(nodeName: string): string {
  const h = createHash('sha256').update(`k8ts-vtep:${nodeName}`).digest();
  h[0] = (h[0]! & 0xfe) | 0x02;
  return [...h.subarray(0, 6)].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** The interface holding `ip`, with its MTU. */
export interface HostInterface {
  name: string;
  mtu: number;
}

/**
 * The interface that holds the address `ip`.
 * @throws Error when no interface has it (the VXLAN device must send from a local address).
 */
export async function interfaceWithAddress(host: HostCommand, ip: string): Promise<HostInterface> {
  const links = parseJSONList<{ ifname: string; mtu: number; addr_info?: { local?: string }[] }>(
    await mustRun(host, 'list addresses', 'ip', ['-j', '-4', 'addr', 'show']),
  );
  const link = links.find((l) => (l.addr_info ?? []).some((a) => a.local === ip));
  if (!link)
    throw new Error(`the node IP ${ip} is on no interface of this host; give --node-ip one of its addresses`);
  return { name: link.ifname, mtu: link.mtu };
}

/** Settings of the device. */
export interface VxlanDeviceConfig {
  nodeName: string;
  /** The source of encapsulated packets: the node's public IP. */
  nodeIP: string;
  /** This node's pod CIDR; its network address goes on the device. */
  podCIDR: string;
  vni: number;
  port: number;
}

/** What the device is, once ensured. */
export interface VxlanDevice {
  mac: string;
  /** The MTU pods get: the node interface's minus VXLAN_OVERHEAD. */
  mtu: number;
}

interface LinkDetail {
  address?: string;
  mtu?: number;
  flags?: string[];
  linkinfo?: {
    info_kind?: string;
    info_data?: { id?: number; local?: string; port?: number; learning?: boolean; link?: string };
  };
  addr_info?: { local?: string; prefixlen?: number }[];
}

/**
 * Makes the device exist with `cfg`'s settings: kept when it already matches, made again
 * when it does not (another VNI, port or local address, e.g. after the node IP changed).
 * @throws Error when `ip` fails or the node IP is on no interface.
 */
export async function ensureVxlanDevice(host: HostCommand, cfg: VxlanDeviceConfig): Promise<VxlanDevice> {
  const uplink = await interfaceWithAddress(host, cfg.nodeIP);
  const mac = vtepMACFor(cfg.nodeName);
  const mtu = uplink.mtu - VXLAN_OVERHEAD;
  const shown = await host('ip', ['-j', '-d', 'link', 'show', VXLAN_DEVICE]);
  const link = shown.code === 0 ? parseJSONList<LinkDetail>(shown.stdout)[0] : undefined;
  const d = link?.linkinfo?.info_data;
  const matches =
    link?.linkinfo?.info_kind === 'vxlan' &&
    d?.id === cfg.vni &&
    d?.local === cfg.nodeIP &&
    d?.port === cfg.port &&
    d?.learning === false &&
    d?.link === uplink.name &&
    link.address === mac;
  if (link && !matches)
    await mustRun(host, 'remove the outdated VXLAN device', 'ip', ['link', 'del', VXLAN_DEVICE]);
  if (!matches) {
    await mustRun(host, 'create the VXLAN device', 'ip', [
      'link',
      'add',
      VXLAN_DEVICE,
      'address',
      mac,
      'type',
      'vxlan',
      'id',
      String(cfg.vni),
      'local',
      cfg.nodeIP,
      'dev',
      uplink.name,
      'dstport',
      String(cfg.port),
      'nolearning',
    ]);
  }
  if (!matches || link?.mtu !== mtu || !(link?.flags ?? []).includes('UP')) {
    await mustRun(host, 'bring up the VXLAN device', 'ip', [
      'link',
      'set',
      VXLAN_DEVICE,
      'mtu',
      String(mtu),
      'up',
    ]);
  }
  // The device's address: this node's pod network address, and nothing else.
  const want = networkAddress(cfg.podCIDR);
  const addrs =
    parseJSONList<LinkDetail>(
      await mustRun(host, 'list the VXLAN device address', 'ip', [
        '-j',
        '-4',
        'addr',
        'show',
        'dev',
        VXLAN_DEVICE,
      ]),
    )[0]?.addr_info ?? [];
  for (const a of addrs) {
    if (a.local !== want || a.prefixlen !== 32)
      await mustRun(host, 'remove an old VXLAN address', 'ip', [
        'addr',
        'del',
        `${a.local}/${a.prefixlen}`,
        'dev',
        VXLAN_DEVICE,
      ]);
  }
  if (!addrs.some((a) => a.local === want && a.prefixlen === 32))
    await mustRun(host, 'address the VXLAN device', 'ip', ['addr', 'add', `${want}/32`, 'dev', VXLAN_DEVICE]);
  return { mac, mtu };
}

/** Removes the device (its routes, neighbours and FDB entries go with it); idempotent. */
export async function removeVxlanDevice(host: HostCommand): Promise<void> {
  const r = await host('ip', ['link', 'del', VXLAN_DEVICE]);
  if (r.code !== 0 && !/cannot find|does not exist/i.test(r.stderr)) {
    throw new Error(`remove the VXLAN device: ${r.stderr.trim()}`);
  }
}

/**
 * Brings the neighbour, FDB and route entries in line with `peers` (each must have a
 * vtepMAC): adds what is missing or different, removes what belongs to no peer. Entries
 * that are already right are not touched.
 * @throws Error when `ip` or `bridge` fails.
 */
export async function syncVxlanPeers(host: HostCommand, peers: readonly Peer[]): Promise<void> {
  const neigh = parseJSONList<{ dst: string; lladdr?: string; state?: string[] }>(
    await mustRun(host, 'list VXLAN neighbours', 'ip', ['-j', '-4', 'neigh', 'show', 'dev', VXLAN_DEVICE]),
  );
  const fdb = parseJSONList<{ mac: string; dst?: string; flags?: string[] }>(
    await mustRun(host, 'list VXLAN FDB', 'bridge', ['-j', 'fdb', 'show', 'dev', VXLAN_DEVICE]),
  ).filter((e) => e.dst !== undefined);
  const wantNeigh = new Map(peers.map((p) => [networkAddress(p.podCIDR), p.vtepMAC!]));
  const wantFdb = new Map(peers.map((p) => [p.vtepMAC!, p.publicIP]));

  const ipLines: string[] = [];
  for (const [dst, mac] of wantNeigh) {
    const have = neigh.find((n) => n.dst === dst);
    if (have?.lladdr === mac && (have.state ?? []).includes('PERMANENT')) continue;
    ipLines.push(`neigh replace ${dst} lladdr ${mac} dev ${VXLAN_DEVICE} nud permanent`);
  }
  for (const n of neigh) if (!wantNeigh.has(n.dst)) ipLines.push(`neigh del ${n.dst} dev ${VXLAN_DEVICE}`);
  // Stale FDB entries go first: a MAC whose node moved to another IP is then added anew.
  const bridgeLines: string[] = [];
  for (const e of fdb) {
    if (wantFdb.get(e.mac) !== e.dst)
      bridgeLines.push(`fdb del ${e.mac} dev ${VXLAN_DEVICE} dst ${e.dst} self`);
  }
  for (const [mac, dst] of wantFdb) {
    if (fdb.some((e) => e.mac === mac && e.dst === dst)) continue;
    bridgeLines.push(`fdb append ${mac} dev ${VXLAN_DEVICE} dst ${dst} self permanent`);
  }
  // Neighbours and FDB before routes: a route is used the moment it exists.
  await applyIpBatch(host, 'VXLAN neighbours', ipLines);
  if (bridgeLines.length > 0)
    await mustRun(host, 'VXLAN FDB', 'bridge', ['-force', '-batch', '-'], bridgeLines.join('\n') + '\n');
  const routes = peers.map((p) => ({
    dst: p.podCIDR,
    gateway: networkAddress(p.podCIDR),
    dev: VXLAN_DEVICE,
    onlink: true,
  }));
  await applyIpBatch(host, 'VXLAN routes', routeChanges(await listPodRoutes(host), routes));
}
