/**
 * The host-gw backend (flannel's): every other node's pod CIDR is routed to that node's
 * public IP, `ip route replace 10.42.2.0/24 via 198.18.0.12 proto 107`. No encapsulation,
 * so pods get the full MTU and the host's throughput; it needs every node on one L2
 * segment, since the next hop must be the node itself. A peer that is reached through a
 * router (its public IP has a gateway in `ip route get`) is refused with a message saying
 * so, and gets no route.
 */
import type { Peer } from './peers.js';
import { mustRun, type HostCommand } from './host-command.js';
import { applyIpBatch, listPodRoutes, routeChanges, type PodRoute } from './routes.js';

/** A peer host-gw could not route to, and why. */
export interface RefusedPeer {
  nodeName: string;
  reason: string;
}

/**
 * Brings the host-gw routes in line with `peers`: one route per directly reachable peer,
 * every other route of this module's removed.
 * @returns the peers refused (not on this host's L2 segment).
 * @throws Error when `ip` fails.
 */
export async function syncHostGw(host: HostCommand, peers: readonly Peer[]): Promise<RefusedPeer[]> {
  const refused: RefusedPeer[] = [];
  const desired: PodRoute[] = [];
  for (const p of peers) {
    const out = await mustRun(host, `route to node ${p.nodeName}`, 'ip', ['-j', 'route', 'get', p.publicIP]);
    const via = (JSON.parse(out) as { gateway?: string }[])[0]?.gateway;
    if (via) {
      refused.push({
        nodeName: p.nodeName,
        reason: `host-gw needs every node on one L2 segment, but node ${p.nodeName} (${p.publicIP}) is reached through the router ${via}; use --flannel-backend vxlan`,
      });
      continue;
    }
    desired.push({ dst: p.podCIDR, gateway: p.publicIP });
  }
  await applyIpBatch(host, 'host-gw routes', routeChanges(await listPodRoutes(host), desired));
  return refused;
}
