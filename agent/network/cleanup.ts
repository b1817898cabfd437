/**
 * `k8ts agent --cleanup`: removes what the agent put into the host's kernel, which a
 * stopping agent leaves in place so that pod traffic keeps flowing across its restart (as
 * kube-proxy's and flannel's rules stay): the VXLAN device `k8ts.1` (with its neighbour
 * and FDB entries), the routes tagged `proto 107`, the iptables chains K8TS-FORWARD and
 * K8TS-POSTROUTING with their jumps, the nft tables `ip k8ts` (kube-proxy's nftables mode;
 * `ip k8ts-<node>` for an agent whose node is not named after the host)
 * and `ip k8ts-local-nodeports`, and the
 * node's ClusterIP interface (or its labelled addresses on `lo`). Containers and the
 * runtime's pod network are the runtime's to remove (`install-agent.sh --uninstall`).
 * Only names that are k8ts's own are touched; what is already gone is skipped.
 */
import { LOCAL_NODEPORTS_TABLE } from '../proxy/local-nodeports.js';
import { canaryTableFor, NFT_TABLE } from '../proxy/nftables-rules.js';
import { removeFirewall } from './firewall.js';
import type { HostCommand } from './host-command.js';
import { applyIpBatch, listPodRoutes, routeChanges } from './routes.js';
import { removeVxlanDevice } from './vxlan.js';

/**
 * Removes what the cross-host backends made: the VXLAN device, the proto 107 routes and
 * both iptables chains (a switch to backend none, and --cleanup).
 * @returns how many routes were removed.
 * @throws Error when a removal fails for another reason than absence.
 */
export async function removeCrossHostState(host: HostCommand): Promise<number> {
  await removeVxlanDevice(host);
  const routes = await listPodRoutes(host);
  await applyIpBatch(host, 'remove pod routes', routeChanges(routes, []));
  await removeFirewall(host);
  return routes.length;
}

/**
 * Removes the kernel state listed in the file comment; `clusterIPInterface` is the node's
 * ClusterIP interface name (clusterIPInterfaceFor(nodeName)), `nftTable` its kube-proxy
 * table (nftTableFor(nodeName, hostname)).
 * @returns one line per kind of state, saying what was done.
 * @throws Error when a removal fails for another reason than absence (e.g. not root).
 */
export async function cleanupNodeNetwork(
  host: HostCommand,
  clusterIPInterface: string,
  nftTable = NFT_TABLE,
): Promise<string[]> {
  const routes = await removeCrossHostState(host);
  const done = [
    'VXLAN device k8ts.1: removed (or absent)',
    `routes to other nodes' pods (proto 107): ${routes} removed`,
    'iptables chains K8TS-FORWARD, K8TS-POSTROUTING: removed (or absent)',
  ];
  await host('nft', ['delete', 'table', 'ip', canaryTableFor(nftTable)]);
  for (const table of [nftTable, LOCAL_NODEPORTS_TABLE]) {
    const nft = await host('nft', ['delete', 'table', 'ip', table]);
    done.push(`nft table ip ${table}: ${nft.code === 0 ? 'removed' : 'absent'}`);
  }
  const link = await host('ip', ['link', 'del', clusterIPInterface]);
  if (link.code === 0) {
    done.push(`ClusterIP interface ${clusterIPInterface}: removed`);
  } else {
    // No dummy driver: the addresses sit on lo under the interface's label.
    const label = `lo:${clusterIPInterface}`.slice(0, 15);
    const shown = await host('ip', ['-o', '-4', 'addr', 'show', 'dev', 'lo', 'label', label]);
    const addrs = [...shown.stdout.matchAll(/\binet (\d+\.\d+\.\d+\.\d+\/\d+)/g)].map((m) => m[1]!);
    for (const a of addrs) await host('ip', ['addr', 'del', a, 'dev', 'lo']);
    done.push(`ClusterIP addresses on lo (${label}): ${addrs.length} removed`);
  }
  return done;
}
