/**
 * What this node must know of the others to reach their pods: for every other Node with a
 * `spec.podCIDR`, its public IP (the `flannel.alpha.coreos.com/public-ip` annotation it
 * published, else its InternalIP) and, for vxlan, its VTEP MAC (`backend-data`). A pure
 * function of the Node list, so that the kernel state is always recomputed from the whole
 * current list (level-triggered: a missed watch event changes nothing).
 */
import { NODE_ANNOTATIONS, type Backend } from '../../api/netconf.js';
import type { Node } from '../../api/types.js';

/** Another node as the backends need it. */
export interface Peer {
  nodeName: string;
  /** e.g. `10.42.2.0/24`. */
  podCIDR: string;
  /** The address its encapsulated (vxlan) or routed (host-gw) pod traffic goes to. */
  publicIP: string;
  /** Its VXLAN device's MAC, when it published one. */
  vtepMAC?: string;
}

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const CIDR4 = /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/;

/** The VTEP MAC in a node's `backend-data` annotation, or undefined when absent or malformed. */
export function vtepMACOf(node: Node): string | undefined {
  const data = node.metadata?.annotations?.[NODE_ANNOTATIONS.backendData];
  if (!data) return undefined;
  try {
    const mac = (JSON.parse(data) as { VtepMAC?: unknown } | null)?.VtepMAC;
    return typeof mac === 'string' && MAC.test(mac) ? mac.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** The address other nodes send this node's pod traffic to. */
export function publicIPOf(node: Node): string | undefined {
  const annotated = node.metadata?.annotations?.[NODE_ANNOTATIONS.publicIP];
  if (annotated && IPV4.test(annotated)) return annotated;
  return node.status?.addresses?.find((a) => a.type === 'InternalIP' && IPV4.test(a.address))?.address;
}

/**
 * The peers of node `self` among `nodes` for `backend`, sorted by name: nodes being deleted
 * are left out (their routes go as soon as deletion starts), and so are nodes that lack
 * what the backend needs (no podCIDR yet; for vxlan, no VTEP MAC published yet, or a node
 * published as another backend's).
 */
export function peersOf(self: string, nodes: readonly Node[], backend: Backend): Peer[] {
  if (backend === 'none') return [];
  const peers: Peer[] = [];
  for (const n of nodes) {
    const name = n.metadata?.name;
    if (!name || name === self || n.metadata?.deletionTimestamp) continue;
    const podCIDR = n.spec?.podCIDR;
    const publicIP = publicIPOf(n);
    if (!podCIDR || !CIDR4.test(podCIDR) || !publicIP) continue;
    if (backend === 'vxlan') {
      const type = n.metadata?.annotations?.[NODE_ANNOTATIONS.backendType];
      const vtepMAC = vtepMACOf(n);
      if (type !== 'vxlan' || !vtepMAC) continue;
      peers.push({ nodeName: name, podCIDR, publicIP, vtepMAC });
    } else {
      peers.push({ nodeName: name, podCIDR, publicIP });
    }
  }
  return peers.sort((a, b) => (a.nodeName < b.nodeName ? -1 : a.nodeName > b.nodeName ? 1 : 0));
}

/** The network address of an IPv4 CIDR (`10.42.2.0/24` → `10.42.2.0`); flannel's gateway of a remote subnet on the VXLAN device. */
export function networkAddress(cidr: string): string {
  const [ip, bits] = cidr.split('/') as [string, string];
  const n = ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
  const mask = Number(bits) === 0 ? 0 : (0xffffffff << (32 - Number(bits))) >>> 0;
  const net = (n & mask) >>> 0;
  return [24, 16, 8, 0].map((s) => (net >>> s) & 255).join('.');
}
