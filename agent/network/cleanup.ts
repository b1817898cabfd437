/**
 * `k8ts agent --cleanup`: removes what the agent put into the host's kernel, which a
 * stopping agent leaves in place so that pod traffic keeps flowing across its restart (as
 * kube-proxy's and flannel's rules stay): the VXLAN device `k8ts.1` (with its neighbour
 * and FDB entries), the routes tagged `proto 107`, the iptables chains K8TS-FORWARD and
 * K8TS-POSTROUTING with their jumps, the nft tables `ip k8ts` (kube-proxy's nftables mode;
 * `ip k8ts-<node>` for an agent whose node is not named after the host)
 * and `ip k8ts-local-nodeports`, the iptables chains of kube-proxy's iptables mode
 * (`K8TSP-…`, `K8TSP<hash>-…` for another node; iptables-rules.ts) with their jumps, and the
 * node's ClusterIP interface and its cluster DNS interface (agent/dns/, `kdns-<hash>`), or
 * their labelled addresses on `lo`; on a CNI runtime
 * (cleanupCniNetwork) the conflist the agent wrote (cni.ts: `<conf dir>/00-k8ts.conflist`,
 * only while it names the node's network `k8ts-<node>`), the CNI bridge `k8ts<hash>` and
 * host-local's leases of that network (`<data dir>/cni/networks/k8ts-<node>`). Containers and
 * Docker's pod network are the runtime's to remove (`install-agent.sh --uninstall`).
 * Only names that are k8ts's own are touched; what is already gone is skipped.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CNI_CONFLIST_FILE, cniBridgeName } from './cni.js';
import { podNetworkName } from './pod-network.js';
import { LOCAL_NODEPORTS_TABLE } from '../proxy/local-nodeports.js';
import { canaryTableFor, NFT_TABLE } from '../proxy/nftables-rules.js';
import { IPTABLES_PREFIX } from '../proxy/iptables-rules.js';
import { removeIptablesRules } from '../proxy/iptables.js';
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
 * table (nftTableFor(nodeName, hostname)), `chainPrefix` the prefix of its iptables-mode
 * chains (iptablesPrefixFor(nodeName, hostname)).
 * @returns one line per kind of state, saying what was done.
 * @throws Error when a removal fails for another reason than absence (e.g. not root).
 */
export async function cleanupNodeNetwork(
  host: HostCommand,
  clusterIPInterface: string,
  nftTable = NFT_TABLE,
  dnsInterface?: string,
  chainPrefix = IPTABLES_PREFIX,
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
  const chains = await removeIptablesRules(host, chainPrefix);
  done.push(`iptables chains ${chainPrefix}-* (kube-proxy's iptables mode): ${chains} removed`);
  done.push(await removeAddressInterface(host, clusterIPInterface, 'ClusterIP'));
  if (dnsInterface !== undefined) done.push(await removeAddressInterface(host, dnsInterface, 'cluster DNS'));
  return done;
}

/**
 * Removes a dummy interface of addresses (cluster-ip.ts), or where there was no dummy
 * driver its addresses on lo under the label `lo:<name>`; says what was done.
 */
async function removeAddressInterface(host: HostCommand, name: string, what: string): Promise<string> {
  const link = await host('ip', ['link', 'del', name]);
  if (link.code === 0) return `${what} interface ${name}: removed`;
  const label = `lo:${name}`.slice(0, 15);
  const shown = await host('ip', ['-o', '-4', 'addr', 'show', 'dev', 'lo', 'label', label]);
  const addrs = [...shown.stdout.matchAll(/\binet (\d+\.\d+\.\d+\.\d+\/\d+)/g)].map((m) => m[1]!);
  for (const a of addrs) await host('ip', ['addr', 'del', a, 'dev', 'lo']);
  return `${what} addresses on lo (${label}): ${addrs.length} removed`;
}

/** Where a CNI node's pod network lives (cni.ts): `--cni-conf-dir` and the agent's data dir. */
export interface CniCleanupConfig {
  nodeName: string;
  confDir: string;
  /** The agent's `--data-dir` (host-local's leases are under `cni/networks`). */
  dataDir: string;
}

/**
 * Removes the CNI network state of the file comment: the conflist (kept, and said so, when it
 * names another network), the bridge, the leases dir.
 * @returns one line per kind of state, saying what was done.
 * @throws Error when the bridge exists and cannot be removed (e.g. not root), or a file
 *   cannot be removed for another reason than absence.
 */
export async function cleanupCniNetwork(host: HostCommand, cfg: CniCleanupConfig): Promise<string[]> {
  const name = podNetworkName(cfg.nodeName);
  const done: string[] = [];
  const conflist = join(cfg.confDir, CNI_CONFLIST_FILE);
  const text = await readFile(conflist, 'utf8').catch(() => undefined);
  let owner: unknown;
  try {
    owner = text === undefined ? undefined : (JSON.parse(text) as { name?: unknown }).name;
  } catch {
    owner = undefined;
  }
  if (text === undefined) {
    done.push(`CNI conflist ${conflist}: absent`);
  } else if (owner === name) {
    await rm(conflist, { force: true });
    done.push(`CNI conflist ${conflist}: removed`);
  } else {
    done.push(`CNI conflist ${conflist}: kept (its network is not ${name})`);
  }
  const bridge = cniBridgeName(cfg.nodeName);
  const shown = await host('ip', ['link', 'show', 'dev', bridge]);
  if (shown.code === 0) {
    const del = await host('ip', ['link', 'del', bridge]);
    if (del.code !== 0) throw new Error(`ip link del ${bridge}: ${del.stderr.trim()}`);
    done.push(`CNI bridge ${bridge}: removed`);
  } else {
    done.push(`CNI bridge ${bridge}: absent`);
  }
  const leases = join(cfg.dataDir, 'cni', 'networks', name);
  await rm(leases, { recursive: true, force: true });
  done.push(`host-local leases ${leases}: removed (or absent)`);
  return done;
}
