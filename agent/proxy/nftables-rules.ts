/**
 * What kube-proxy's nftables mode writes, as text for `nft -f`: pure functions from the
 * Service ports this node serves to the table `ip k8ts` (nftTableFor()), after the layout of
 * pkg/proxy/nftables/proxier.go (Kubernetes 1.31+), so that Service traffic is rewritten in
 * the kernel and never enters a process.
 *
 * The fixed part (tableSkeleton):
 *
 *   map service-ips           clusterIP|ingressIP . proto . port : goto svc-…|ext-…
 *   map service-nodeports     proto . nodePort : goto ext-…
 *   map no-endpoint-services  clusterIP|ingressIP . proto . port : goto reject-chain | drop
 *   map no-endpoint-nodeports proto . nodePort : goto reject-chain | drop
 *   set cluster-ips           every clusterIP served
 *   chain nat-prerouting  (dstnat)        jump services; nodeports on the node's addresses
 *   chain nat-output      (output dstnat) the same for the node's own connections
 *   chain nat-postrouting (srcnat)        jump masquerading
 *   chain filter-input / filter-forward / filter-output (priority -110, before the DNAT):
 *                         new connections to a Service without endpoints are rejected
 *                         (ICMP port unreachable) or dropped (a traffic policy of Local
 *                         with none on this node);
 *   chain filter-input / filter-forward / filter-output-post-dnat (after the DNAT): what
 *                         is still addressed to a clusterIP (a port no Service has) is rejected.
 *   chain mark-for-masquerade / masquerading: mark 0x4000, then masquerade fully-random.
 *
 * NodePorts are not served on 127.0.0.0/8, as in kube-proxy's nftables mode (its iptables
 * mode needed route_localnet for them, which lets other hosts reach the node's loopback).
 *
 * Per Service port (servicePortObjects), named after the port's id
 * `namespace/name/protocol/port-name-or-number`:
 *
 *   svc-<id>   internal traffic: masquerade unless from the cluster CIDR; ClientIP
 *              affinity (`ip saddr @affinity-… goto ep-…`); then `numgen random mod N vmap`
 *              over the internal endpoints (internalTrafficPolicy Local: this node's).
 *   ext-<id>   NodePort and load-balancer traffic: externalTrafficPolicy Cluster masquerades
 *              and spreads over every endpoint; Local keeps the client's address and goes to
 *              local-<id> (this node's endpoints), except that pods and the node itself are
 *              sent to every endpoint (cluster-<id>, or svc-<id> when that is the same) as
 *              kube-proxy's short-circuit of pod-to-external traffic does.
 *   local-<id>, cluster-<id>  numgen over this node's, or every, endpoint (eTP Local only).
 *   ep-<id>__<ip>/<port>   hairpin masquerade, affinity update, `dnat to ip:port`.
 *   set affinity-<id>__<ip>/<port>  dynamic, with the affinity timeout.
 */
import { createHash } from 'node:crypto';
import type { Endpoint } from './balancer.js';
import { MASQUERADE_MARK, type KernelServicePort, type TableSettings } from './kernel-ports.js';

/** The table kube-proxy's nftables mode keeps (family ip); nothing outside it is touched. */
export const NFT_TABLE = 'k8ts';

/**
 * The table of the agent of node `nodeName` on a host named `hostname`: `k8ts` for the
 * host's own node (the default --node-name), `k8ts-<nodeName>` for another agent sharing the
 * host (each with its own --node-name and --node-ip, as the tests run them), so that a second
 * agent never rewrites the first's rules. Node names are DNS subdomains, which nft accepts
 * in a table name as they are.
 */
export function nftTableFor(nodeName: string, hostname: string): string {
  if (nodeName === hostname.toLowerCase()) return NFT_TABLE;
  // nft's names end at 256 bytes; a node name is at most 253.
  const name = `${NFT_TABLE}-${nodeName}`;
  return name.length <= 200
    ? name
    : `${name.slice(0, 180)}-${createHash('sha256').update(nodeName).digest('hex').slice(0, 16)}`;
}

/** The small table whose absence tells that the node's table was flushed away with it (`nft flush ruleset`). */
export function canaryTableFor(table: string): string {
  return `${table}-canary`;
}
/** The part of the table one Service port owns: chains by name (rule lines), map elements, sets. */
export interface PortObjects {
  chains: Map<string, string[]>;
  /** Map (or set) name → element key → verdict ('' for an element of a set). */
  elements: Map<string, Map<string, string>>;
  /** Set name → its definition (the text inside the braces). */
  sets: Map<string, string>;
  /**
   * Elements (`map|key`) claimed for a load-balancer ingress IP: a clusterIP's claim on the
   * same key wins over them, whoever came first (a status writer must not take a Service's
   * clusterIP).
   */
  weak: Set<string>;
}

/** Maps whose keys are one space (a key is held by one Service across them). */
export function keySpace(map: string): string {
  return map === 'no-endpoint-services'
    ? 'service-ips'
    : map === 'no-endpoint-nodeports'
      ? 'service-nodeports'
      : map;
}

/** Load-balancer ingress IPs that are never served: loopback, "this network", link-local. */
const NOT_SERVED = /^(127|0)\.|^169\.254\./;

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The text of the table's fixed part, created once (and again at a full resync). */
export function tableSkeleton(s: Pick<TableSettings, 'nodeIP' | 'table'>): string {
  const t = `ip ${s.table}`;
  // Never 127.0.0.0/8 (see the file comment), never a clusterIP (they are local addresses too).
  const nodePorts = s.nodeIP
    ? `ip daddr ${s.nodeIP}`
    : 'fib daddr type local ip daddr != 127.0.0.0/8 ip daddr != @cluster-ips';
  const lines = [
    `add table ${t} { comment "k8ts kube-proxy (nftables mode)"; }`,
    `add map ${t} service-ips { type ipv4_addr . inet_proto . inet_service : verdict; }`,
    `add map ${t} service-nodeports { type inet_proto . inet_service : verdict; }`,
    `add map ${t} no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict; }`,
    `add map ${t} no-endpoint-nodeports { type inet_proto . inet_service : verdict; }`,
    `add set ${t} cluster-ips { type ipv4_addr; }`,
    `add chain ${t} reject-chain`,
    `add rule ${t} reject-chain reject`,
    `add chain ${t} mark-for-masquerade`,
    `add rule ${t} mark-for-masquerade mark set mark or ${MASQUERADE_MARK}`,
    `add chain ${t} masquerading`,
    `add rule ${t} masquerading mark and ${MASQUERADE_MARK} == 0 return`,
    `add rule ${t} masquerading mark set mark xor ${MASQUERADE_MARK}`,
    `add rule ${t} masquerading masquerade fully-random`,
    `add chain ${t} services`,
    `add rule ${t} services ip daddr . meta l4proto . th dport vmap @service-ips`,
    `add chain ${t} service-endpoints-check`,
    `add rule ${t} service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services`,
    `add chain ${t} nodeport-endpoints-check`,
    `add rule ${t} nodeport-endpoints-check ${nodePorts} meta l4proto . th dport vmap @no-endpoint-nodeports`,
    `add chain ${t} cluster-ips-check`,
    `add rule ${t} cluster-ips-check ip daddr @cluster-ips reject`,
    `add chain ${t} nat-prerouting { type nat hook prerouting priority dstnat; policy accept; }`,
    `add rule ${t} nat-prerouting jump services`,
    `add rule ${t} nat-prerouting ${nodePorts} meta l4proto . th dport vmap @service-nodeports`,
    `add chain ${t} nat-output { type nat hook output priority -100; policy accept; }`,
    `add rule ${t} nat-output jump services`,
    `add rule ${t} nat-output ${nodePorts} meta l4proto . th dport vmap @service-nodeports`,
    `add chain ${t} nat-postrouting { type nat hook postrouting priority srcnat; policy accept; }`,
    `add rule ${t} nat-postrouting jump masquerading`,
    // Input and forward come after the DNAT of prerouting; output's own -110 chain before
    // nat-output's, so the clusterIP check of output waits for the DNAT in a chain of its own.
    `add chain ${t} filter-input { type filter hook input priority -110; policy accept; }`,
    `add rule ${t} filter-input ct state new jump nodeport-endpoints-check`,
    `add rule ${t} filter-input ct state new jump service-endpoints-check`,
    `add rule ${t} filter-input ct state new jump cluster-ips-check`,
    `add chain ${t} filter-forward { type filter hook forward priority -110; policy accept; }`,
    `add rule ${t} filter-forward ct state new jump service-endpoints-check`,
    `add rule ${t} filter-forward ct state new jump cluster-ips-check`,
    `add chain ${t} filter-output { type filter hook output priority -110; policy accept; }`,
    `add rule ${t} filter-output ct state new jump service-endpoints-check`,
    `add rule ${t} filter-output ct state new jump nodeport-endpoints-check`,
    `add chain ${t} filter-output-post-dnat { type filter hook output priority -90; policy accept; }`,
    `add rule ${t} filter-output-post-dnat ct state new jump cluster-ips-check`,
  ];
  return lines.join('\n') + '\n';
}

/** The chains, map elements and sets one Service port needs (see the file comment). */
export function servicePortObjects(p: KernelServicePort, s: TableSettings): PortObjects {
  const chains = new Map<string, string[]>();
  const elements = new Map<string, Map<string, string>>();
  const sets = new Map<string, string>();
  const weak = new Set<string>();
  const element = (map: string, key: string, verdict: string) => {
    let m = elements.get(map);
    if (!m) elements.set(map, (m = new Map()));
    m.set(key, verdict);
  };
  const proto = p.protocol.toLowerCase();
  const svcChain = `svc-${p.id}`;
  const extChain = `ext-${p.id}`;
  const localChain = `local-${p.id}`;
  const clusterChain = `cluster-${p.id}`;
  const noEndpoints = p.hasEndpoints ? 'drop' : 'goto reject-chain';

  const endpointChain = (e: Endpoint): string => `ep-${p.id}__${e.ip}/${e.port}`;
  const affinitySet = (e: Endpoint): string => `affinity-${p.id}__${e.ip}/${e.port}`;
  const spread = (eps: readonly Endpoint[]): string =>
    `numgen random mod ${eps.length} vmap { ${eps.map((e, i) => `${i} : goto ${endpointChain(e)}`).join(', ')} }`;
  const usable = (eps: readonly Endpoint[]): Endpoint[] =>
    eps.filter((e) => IPV4.test(e.ip) && Number.isInteger(e.port) && e.port > 0 && e.port < 65536);
  const internal = usable(p.internal);
  const external = usable(p.external);
  const all = usable(p.all);
  const sameEndpoints = (a: Endpoint[], b: Endpoint[]) =>
    a.length === b.length && a.every((e, i) => e.ip === b[i]!.ip && e.port === b[i]!.port);
  const affinityRules = (eps: readonly Endpoint[]): string[] =>
    p.affinitySeconds > 0 ? eps.map((e) => `ip saddr @${affinitySet(e)} goto ${endpointChain(e)}`) : [];
  const used = new Map<string, Endpoint>();
  const use = (eps: readonly Endpoint[]) => {
    for (const e of eps) used.set(endpointChain(e), e);
  };

  const clusterIP = p.clusterIP && IPV4.test(p.clusterIP) ? p.clusterIP : undefined;
  if (clusterIP) {
    element('cluster-ips', clusterIP, '');
    const key = `${clusterIP} . ${proto} . ${p.port}`;
    if (internal.length > 0) {
      chains.set(svcChain, [
        `ip daddr ${clusterIP} ${proto} dport ${p.port} ip saddr != ${s.clusterCIDR} jump mark-for-masquerade`,
        ...affinityRules(internal),
        spread(internal),
      ]);
      use(internal);
      element('service-ips', key, `goto ${svcChain}`);
    } else element('no-endpoint-services', key, noEndpoints);
  }

  const ingress = p.loadBalancerIPs.filter((ip) => IPV4.test(ip) && !NOT_SERVED.test(ip) && ip !== clusterIP);
  if (p.nodePort !== undefined || ingress.length > 0) {
    const ext: string[] = [];
    if (!p.externalTrafficLocal) {
      ext.push('jump mark-for-masquerade');
      if (external.length > 0) ext.push(...affinityRules(external), spread(external));
      use(external);
    } else {
      // Pods and the node itself get the Service's cluster-wide endpoints (kube-proxy's
      // short-circuit of pod-to-external traffic); others keep their address.
      if (all.length > 0) {
        let target = svcChain;
        if (!chains.has(svcChain) || !sameEndpoints(internal, all)) {
          target = clusterChain;
          chains.set(clusterChain, [...affinityRules(all), spread(all)]);
          use(all);
        }
        ext.push(`ip saddr ${s.clusterCIDR} goto ${target}`);
        ext.push('fib saddr type local jump mark-for-masquerade');
        ext.push(`fib saddr type local goto ${target}`);
      }
      if (external.length > 0) {
        chains.set(localChain, [...affinityRules(external), spread(external)]);
        use(external);
        ext.push(`goto ${localChain}`);
      } else ext.push('drop');
    }
    chains.set(extChain, ext);
    const reachable = external.length > 0 || (p.externalTrafficLocal && all.length > 0);
    if (p.nodePort !== undefined) {
      const key = `${proto} . ${p.nodePort}`;
      if (reachable) element('service-nodeports', key, `goto ${extChain}`);
      else element('no-endpoint-nodeports', key, noEndpoints);
    }
    for (const ip of ingress) {
      const key = `${ip} . ${proto} . ${p.port}`;
      const map = reachable ? 'service-ips' : 'no-endpoint-services';
      element(map, key, reachable ? `goto ${extChain}` : noEndpoints);
      weak.add(`${keySpace(map)}|${key}`);
    }
  }

  for (const [name, e] of used) {
    const rules = [`ip saddr ${e.ip} jump mark-for-masquerade`];
    if (p.affinitySeconds > 0) {
      sets.set(affinitySet(e), `type ipv4_addr; flags dynamic,timeout; timeout ${p.affinitySeconds}s;`);
      rules.push(`update @${affinitySet(e)} { ip saddr }`);
    }
    rules.push(`meta l4proto ${proto} dnat to ${e.ip}:${e.port}`);
    chains.set(name, rules);
  }
  return { chains, elements, sets, weak };
}

/** A transaction, and the chains and sets it left flushed but in place (see diffTransaction). */
export interface Transaction {
  text: string;
  staleChains: string[];
  staleSets: string[];
}

/**
 * One transaction from `before` to `after` (the objects of one or more Service ports) in
 * table `ip <table>`; its text is '' when they are equal. Chains and sets that go away are
 * flushed, not deleted: kernels before 6.2 notice only a moment later that a chain a map
 * element pointed to is free, and refuse its deletion in the same transaction (kube-proxy
 * deletes its stale chains in a later sync, as NftablesProxier does with staleChains).
 */
export function diffTransaction(before: PortObjects, after: PortObjects, table = NFT_TABLE): Transaction {
  const t = `ip ${table}`;
  const out: string[] = [];
  const changedSets = new Set<string>();
  for (const [name, def] of after.sets) if (before.sets.get(name) !== def) changedSets.add(name);
  const removedSets = [...before.sets.keys()].filter((n) => !after.sets.has(n));
  const touchesSet = (rules: string[], names: Iterable<string>): boolean => {
    for (const n of names) if (rules.some((r) => r.includes(`@${n} `) || r.endsWith(`@${n}`))) return true;
    return false;
  };
  const recreated = [...changedSets].filter((n) => before.sets.has(n));
  const dirtyChains = [...after.chains].filter(([name, rules]) => {
    const old = before.chains.get(name);
    return !old || old.join('\n') !== rules.join('\n') || touchesSet(rules, recreated);
  });
  const removedChains = [...before.chains.keys()].filter((n) => !after.chains.has(n));
  const brace = (key: string, verdict: string) => (verdict === '' ? `{ ${key} }` : `{ ${key} : ${verdict} }`);

  for (const [map, els] of before.elements) {
    const next = after.elements.get(map);
    for (const [key, verdict] of els)
      if (next?.get(key) !== verdict) out.push(`delete element ${t} ${map} { ${key} }`);
  }
  // `add chain` of an existing chain is a no-op (a stale chain coming back); flush empties it.
  for (const [name] of dirtyChains) out.push(`add chain ${t} ${name}`);
  for (const [name] of dirtyChains) if (before.chains.has(name)) out.push(`flush chain ${t} ${name}`);
  for (const name of removedChains) out.push(`flush chain ${t} ${name}`);
  for (const name of recreated) out.push(`delete set ${t} ${name}`);
  for (const name of changedSets) out.push(`add set ${t} ${name} { ${after.sets.get(name)} }`);
  for (const [name, rules] of dirtyChains) for (const r of rules) out.push(`add rule ${t} ${name} ${r}`);
  for (const [map, els] of after.elements) {
    const old = before.elements.get(map);
    for (const [key, verdict] of els)
      if (old?.get(key) !== verdict) out.push(`add element ${t} ${map} ${brace(key, verdict)}`);
  }
  return {
    text: out.length > 0 ? out.join('\n') + '\n' : '',
    staleChains: removedChains,
    staleSets: removedSets,
  };
}

/** No objects (a Service port not yet written, or gone). */
export function emptyObjects(): PortObjects {
  return { chains: new Map(), elements: new Map(), sets: new Map(), weak: new Set() };
}

/** The objects of several Service ports together (their names never overlap: each is prefixed by the port's id). */
export function mergeObjects(parts: Iterable<PortObjects>): PortObjects {
  const all = emptyObjects();
  for (const p of parts) {
    for (const [k, v] of p.chains) all.chains.set(k, v);
    for (const [k, v] of p.sets) all.sets.set(k, v);
    for (const w of p.weak) all.weak.add(w);
    for (const [map, els] of p.elements) {
      let m = all.elements.get(map);
      if (!m) all.elements.set(map, (m = new Map()));
      for (const [key, verdict] of els) if (!m.has(key)) m.set(key, verdict);
    }
  }
  return all;
}
