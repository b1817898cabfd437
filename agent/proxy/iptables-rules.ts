/**
 * What kube-proxy's iptables mode writes, as text for `iptables-restore --noflush`: pure
 * functions from the Service ports this node serves to chains of k8ts's own, after the
 * layout of pkg/proxy/iptables/proxier.go. Every chain's name starts with the node's prefix
 * (iptablesPrefixFor(): `K8TSP` for the node named after its host, `K8TSP<5 characters>`
 * for another agent on the host), so no chain of Docker's, of the pod network's
 * (`K8TS-FORWARD`, `K8TS-POSTROUTING`) or of another agent's is ever written or removed.
 * P below is the prefix.
 *
 *   nat    P-SERVICES      -d clusterIP -p tcp --dport port      -j P-SVC-… | P-SVL-…
 *                          -d ingressIP -p tcp --dport port      -j P-EXT-…
 *                          -d nodeIP (or: local, not 127.0.0.0/8) -j P-NODEPORTS   (last)
 *          P-NODEPORTS     -p tcp --dport nodePort               -j P-EXT-…
 *          P-SVC-<hash>    every endpoint: ! -s clusterCIDR to the clusterIP → P-MARK-MASQ;
 *                          ClientIP affinity (`-m recent --rcheck --seconds T --reap`);
 *                          then `-m statistic --mode random --probability 1/(n-i)` per endpoint
 *          P-SVL-<hash>    the same over this node's endpoints (a traffic policy of Local)
 *          P-EXT-<hash>    NodePort and ingress traffic: eTP Cluster marks and goes to
 *                          P-SVC; eTP Local sends pods and the node itself to P-SVC (the node
 *                          marked, kube-proxy's short-circuit) and the rest, unmarked, to P-SVL
 *          P-SEP-<hash>    -s endpoint → P-MARK-MASQ (hairpin); `-m recent --set`; DNAT
 *          P-MARK-MASQ     MARK --or-mark 0x4000
 *          P-POSTROUTING   marked: clear the mark, MASQUERADE --random-fully
 *   filter P-SERVICES      a clusterIP or ingress IP without endpoints: REJECT (ICMP port
 *                          unreachable), or DROP when a traffic policy of Local leaves none here
 *          P-EXTERNAL-SERVICES  the same for NodePorts
 *
 * jumped to from the built-in chains (jumps()): nat PREROUTING and OUTPUT → P-SERVICES,
 * POSTROUTING → P-POSTROUTING; filter INPUT and FORWARD (new connections) → both filter
 * chains, OUTPUT → P-SERVICES. INPUT too, unlike kube-proxy: k8ts's clusterIPs are local
 * addresses (cluster-ip.ts), so a pod's connection to one without endpoints is input here.
 *
 * Chains of a Service port are named after a hash of the node's prefix and the port's id
 * (`namespace/name/protocol/port`), as kube-proxy's are after a hash of the port's name, and
 * every rule says which Service it is for in a comment, so `iptables-save` reads like
 * `kubectl get svc`. NodePorts are not served on 127.0.0.0/8 (as in nftables mode;
 * kube-proxy's iptables mode sets route_localnet for them, which lets other hosts reach the
 * node's loopback, CVE-2020-8558): the proxy relays those with a socket of its own.
 */
import { createHash } from 'node:crypto';
import type { Endpoint } from './balancer.js';
import { MASQUERADE_MARK, type KernelServicePort, type TableSettings } from './kernel-ports.js';

/** The prefix of the chains of the agent whose node is named after its host. */
export const IPTABLES_PREFIX = 'K8TSP';

/** iptables' longest chain name (XT_EXTENSION_MAXNAMELEN − 1). */
export const MAX_CHAIN_NAME = 28;

/** The two tables k8ts's chains are in. */
export type IptablesTable = 'nat' | 'filter';

/** Chains by table: chain name → its rules (the text after `-A <chain> `), in order. */
export type IptablesChains = Record<IptablesTable, Map<string, string[]>>;

/** RFC 4648 base32 of `data` (no padding), as kube-proxy names its chains. */
function base32(data: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of data) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** The first `n` base32 characters of the SHA-256 of `text`. */
function hash(text: string, n: number): string {
  return base32(createHash('sha256').update(text).digest()).slice(0, n);
}

/**
 * The chain prefix of the agent of node `nodeName` on a host named `hostname`: `K8TSP` for
 * the host's own node, `K8TSP` and 5 base32 characters of the node name's hash for a
 * further agent on the host (as nftTableFor() gives each its own table), so that a second
 * agent never rewrites or removes the first's chains.
 */
export function iptablesPrefixFor(nodeName: string, hostname: string): string {
  return nodeName === hostname.toLowerCase() ? IPTABLES_PREFIX : `${IPTABLES_PREFIX}${hash(nodeName, 5)}`;
}

/** Whether `chain` is one of the chains of `prefix` (not another agent's, not the pod network's). */
export function isOwnChain(prefix: string, chain: string): boolean {
  return chain.startsWith(`${prefix}-`);
}

/** The fixed chains of `prefix`. */
export function fixedChains(prefix: string) {
  return {
    services: `${prefix}-SERVICES`,
    nodePorts: `${prefix}-NODEPORTS`,
    postrouting: `${prefix}-POSTROUTING`,
    markMasq: `${prefix}-MARK-MASQ`,
    externalServices: `${prefix}-EXTERNAL-SERVICES`,
  };
}

/** One jump from a built-in chain to one of k8ts's (`iptables -t <table> -I <builtin> 1 <rule…>`). */
export interface Jump {
  table: IptablesTable;
  builtin: string;
  /** The rule's arguments, ending in `-j <chain>`. */
  rule: string[];
  chain: string;
}

/** The jumps of `prefix` (see the file comment), in the order they are inserted. */
export function jumps(prefix: string): Jump[] {
  const c = fixedChains(prefix);
  const jump = (table: IptablesTable, builtin: string, chain: string, comment: string, newOnly: boolean) => ({
    table,
    builtin,
    chain,
    rule: [
      ...(newOnly ? ['-m', 'conntrack', '--ctstate', 'NEW'] : []),
      '-m',
      'comment',
      '--comment',
      comment,
      '-j',
      chain,
    ],
  });
  return [
    jump('nat', 'PREROUTING', c.services, 'k8ts service portals', false),
    jump('nat', 'OUTPUT', c.services, 'k8ts service portals', false),
    jump('nat', 'POSTROUTING', c.postrouting, 'k8ts postrouting rules', false),
    jump('filter', 'INPUT', c.services, 'k8ts service portals', true),
    jump('filter', 'INPUT', c.externalServices, 'k8ts externally-visible service portals', true),
    jump('filter', 'FORWARD', c.services, 'k8ts service portals', true),
    jump('filter', 'FORWARD', c.externalServices, 'k8ts externally-visible service portals', true),
    jump('filter', 'OUTPUT', c.services, 'k8ts service portals', true),
  ];
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
/** Load-balancer ingress IPs that are never served: loopback, "this network", link-local. */
const NOT_SERVED = /^(127|0)\.|^169\.254\./;

/** A comment argument (ids are `[a-z0-9.-/]`, so double quotes are enough). */
const comment = (text: string) => `-m comment --comment "${text}"`;

/** kube-proxy's probability text: 1/n with ten decimals. */
export function probability(n: number): string {
  return (1 / n).toFixed(10);
}

/**
 * Every chain of `ports` on a node with `s` (s.table is the chain prefix): the fixed
 * chains (always, even empty) and those of each Service port. Ports are taken in id order,
 * so the rules are the same for the same ports whatever order they came in; where two
 * ports claim one address and port, the first rule in the chain wins (a clusterIP's before
 * any ingress IP's).
 */
export function iptablesRules(ports: readonly KernelServicePort[], s: TableSettings): IptablesChains {
  const p = s.table;
  const c = fixedChains(p);
  const nat = new Map<string, string[]>();
  const filter = new Map<string, string[]>();
  const services: string[] = [];
  const ingressRules: string[] = [];
  const nodePorts: string[] = [];
  const filterServices: string[] = [];
  const externalServices: string[] = [];
  nat.set(c.services, services);
  nat.set(c.nodePorts, nodePorts);
  nat.set(c.markMasq, [`-j MARK --or-mark ${MASQUERADE_MARK}`]);
  nat.set(c.postrouting, [
    `-m mark ! --mark ${MASQUERADE_MARK}/${MASQUERADE_MARK} -j RETURN`,
    `-j MARK --xor-mark ${MASQUERADE_MARK}`,
    `${comment('k8ts service traffic requiring SNAT')} -j MASQUERADE --random-fully`,
  ]);
  filter.set(c.services, filterServices);
  filter.set(c.externalServices, externalServices);
  // Never 127.0.0.0/8 (see the file comment).
  const localDst = s.nodeIP ? `-d ${s.nodeIP}/32` : '-m addrtype --dst-type LOCAL ! -d 127.0.0.0/8';

  for (const sp of [...ports].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const proto = sp.protocol.toLowerCase();
    const match = `-p ${proto} -m ${proto}`;
    const usable = (eps: readonly Endpoint[]): Endpoint[] =>
      eps.filter((e) => IPV4.test(e.ip) && Number.isInteger(e.port) && e.port > 0 && e.port < 65536);
    const all = usable(sp.all);
    const internal = usable(sp.internal);
    const external = usable(sp.external);
    const h = (what: string) => hash(`${p}|${sp.id}${what}`, MAX_CHAIN_NAME - p.length - 5);
    const svc = `${p}-SVC-${h('')}`;
    const svl = `${p}-SVL-${h('')}`;
    const ext = `${p}-EXT-${h('')}`;
    const sep = (e: Endpoint) => `${p}-SEP-${h(` ${e.ip}:${e.port}`)}`;
    const same = (a: Endpoint[], b: Endpoint[]) =>
      a.length === b.length && a.every((e, i) => e.ip === b[i]!.ip && e.port === b[i]!.port);
    /** The chain that spreads over `eps`: P-SVC for every endpoint, P-SVL for this node's. */
    const spreadChain = (eps: Endpoint[]) => (same(eps, all) ? svc : svl);
    const spread = (eps: Endpoint[]): string[] => {
      const rules: string[] = [];
      if (sp.affinitySeconds > 0)
        for (const e of eps)
          rules.push(
            `${comment(`${sp.id} -> ${e.ip}:${e.port}`)} -m recent --name ${sep(e)} --rcheck --seconds ${sp.affinitySeconds} --reap -j ${sep(e)}`,
          );
      eps.forEach((e, i) => {
        const pick =
          i < eps.length - 1
            ? ` -m statistic --mode random --probability ${probability(eps.length - i)}`
            : '';
        rules.push(`${comment(`${sp.id} -> ${e.ip}:${e.port}`)}${pick} -j ${sep(e)}`);
      });
      return rules;
    };
    const used = new Map<string, Endpoint>();
    const chain = (name: string, eps: Endpoint[]) => {
      if (!nat.has(name)) {
        nat.set(name, spread(eps));
        for (const e of eps) used.set(sep(e), e);
      }
      return nat.get(name)!;
    };
    const noEndpoints = sp.hasEndpoints
      ? `${comment(`${sp.id} has no local endpoints`)} -j DROP`
      : `${comment(`${sp.id} has no endpoints`)} -j REJECT --reject-with icmp-port-unreachable`;

    const clusterIP = sp.clusterIP && IPV4.test(sp.clusterIP) ? sp.clusterIP : undefined;
    const dport = (ip: string, port: number) => `-d ${ip}/32 ${match} --dport ${port}`;
    if (clusterIP) {
      if (internal.length > 0) {
        const target = spreadChain(internal);
        const rules = chain(target, internal);
        // kube-proxy's masqueradeAll false: only what comes from outside the cluster CIDR.
        const masq = `! -s ${s.clusterCIDR} ${dport(clusterIP, sp.port)} ${comment(`${sp.id} cluster IP`)} -j ${c.markMasq}`;
        if (!rules.includes(masq)) rules.unshift(masq);
        services.push(`${dport(clusterIP, sp.port)} ${comment(`${sp.id} cluster IP`)} -j ${target}`);
      } else filterServices.push(`${dport(clusterIP, sp.port)} ${noEndpoints}`);
    }

    const ingress = sp.loadBalancerIPs.filter(
      (ip) => IPV4.test(ip) && !NOT_SERVED.test(ip) && ip !== clusterIP,
    );
    // NodePort and load-balancer traffic.
    if (sp.nodePort !== undefined || ingress.length > 0) {
      const rules: string[] = [];
      if (!sp.externalTrafficLocal) {
        if (external.length > 0) {
          rules.push(`${comment(`masquerade traffic for ${sp.id} external destinations`)} -j ${c.markMasq}`);
          rules.push(`-j ${spreadChain(external)}`);
          chain(spreadChain(external), external);
        }
      } else {
        // Pods and the node itself go to every endpoint (kube-proxy's short-circuit of
        // pod-to-external traffic); others keep their address and go to this node's.
        if (all.length > 0) {
          chain(svc, all);
          rules.push(
            `-s ${s.clusterCIDR} ${comment(`pod traffic for ${sp.id} external destinations`)} -j ${svc}`,
          );
          rules.push(
            `-m addrtype --src-type LOCAL ${comment(`masquerade LOCAL traffic for ${sp.id}`)} -j ${c.markMasq}`,
          );
          rules.push(`-m addrtype --src-type LOCAL ${comment(`route LOCAL traffic for ${sp.id}`)} -j ${svc}`);
        }
        if (external.length > 0) {
          rules.push(`-j ${spreadChain(external)}`);
          chain(spreadChain(external), external);
        }
      }
      const reachable = external.length > 0 || (sp.externalTrafficLocal && all.length > 0);
      if (reachable) nat.set(ext, rules);
      // Only what was not sent on (DNAT) is dropped: pods and the node reach an eTP Local
      // Service without endpoints here through the short-circuit.
      const unsent = external.length === 0 && reachable ? '-m conntrack ! --ctstate DNAT ' : '';
      const dropped = sp.hasEndpoints
        ? `${unsent}${comment(`${sp.id} has no local endpoints`)} -j DROP`
        : noEndpoints;
      if (sp.nodePort !== undefined) {
        if (reachable) nodePorts.push(`${match} --dport ${sp.nodePort} ${comment(sp.id)} -j ${ext}`);
        if (external.length === 0)
          externalServices.push(`${localDst} ${match} --dport ${sp.nodePort} ${dropped}`);
      }
      for (const ip of ingress) {
        if (reachable)
          ingressRules.push(`${dport(ip, sp.port)} ${comment(`${sp.id} loadbalancer IP`)} -j ${ext}`);
        if (external.length === 0) filterServices.push(`${dport(ip, sp.port)} ${dropped}`);
      }
    }

    for (const [name, e] of used) {
      const recent = sp.affinitySeconds > 0 ? ` -m recent --name ${name} --set` : '';
      nat.set(name, [
        `-s ${e.ip}/32 ${comment(sp.id)} -j ${c.markMasq}`,
        `${match} ${comment(sp.id)}${recent} -j DNAT --to-destination ${e.ip}:${e.port}`,
      ]);
    }
  }
  // clusterIPs first, so that no ingress IP takes one; the NodePorts jump last, as kube-proxy's.
  services.push(...ingressRules);
  services.push(
    `${localDst} ${comment('k8ts service nodeports; NOTE: this must be the last rule in this chain')} -j ${c.nodePorts}`,
  );
  return { nat, filter };
}

/** No chains (nothing written yet). */
export function noChains(): IptablesChains {
  return { nat: new Map(), filter: new Map() };
}

/**
 * The `iptables-restore --noflush` input from `before` to `after`: every chain that is new
 * or changed is declared (which creates or flushes it) and written whole; every chain of
 * `before` not in `after`, and every name of `remove`, is declared and deleted (`-X`) in the
 * same transaction, after the rules that jumped to it were rewritten. Tables without a
 * change are left out; '' when nothing changed.
 */
export function restoreInput(
  before: IptablesChains,
  after: IptablesChains,
  remove: Record<IptablesTable, readonly string[]> = { nat: [], filter: [] },
): string {
  let out = '';
  for (const table of ['filter', 'nat'] as const) {
    const changed = [...after[table]].filter(
      ([name, rules]) => before[table].get(name)?.join('\n') !== rules.join('\n'),
    );
    const gone = new Set([...before[table].keys()].filter((n) => !after[table].has(n)));
    for (const n of remove[table]) if (!after[table].has(n)) gone.add(n);
    if (changed.length === 0 && gone.size === 0) continue;
    const lines = [`*${table}`];
    for (const [name] of changed) lines.push(`:${name} - [0:0]`);
    for (const name of gone) lines.push(`:${name} - [0:0]`);
    for (const [name, rules] of changed) for (const r of rules) lines.push(`-A ${name} ${r}`);
    for (const name of gone) lines.push(`-X ${name}`);
    lines.push('COMMIT');
    out += lines.join('\n') + '\n';
  }
  return out;
}

/** The chain names (`:NAME` lines) in `iptables-save -t <table>` output. */
export function savedChains(save: string): string[] {
  return [...save.matchAll(/^:(\S+)/gm)].map((m) => m[1]!);
}
