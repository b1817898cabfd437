/**
 * What the pod network needs of the host's firewall, as flannel asks of it: forwarding of
 * pod traffic between hosts, and masquerade of pod traffic that leaves the cluster CIDR —
 * and of nothing else, so pods see each other's real addresses.
 *
 *   filter  K8TS-FORWARD      -s <cluster CIDR> -j ACCEPT; -d <cluster CIDR> -j ACCEPT
 *   nat     K8TS-POSTROUTING  -m mark --mark 0x4000/0x4000 -j RETURN
 *                             -s <cluster CIDR> -d <cluster CIDR> -j ACCEPT
 *                             -s <pod CIDR> ! -d 224.0.0.0/4 -j MASQUERADE
 *
 * each jumped to from the first rule of FORWARD / POSTROUTING. Why iptables and not a
 * table of our own in nftables: a packet passes only when every base chain of a hook
 * accepts it, and Docker's FORWARD chain (policy DROP, in iptables-nft's `filter` table)
 * drops a new connection from another host to a pod unless a rule in that same chain
 * accepts it; and Docker's own masquerade rule (`-s <pod CIDR> ! -o <bridge>`) would
 * rewrite pod-to-pod traffic to other hosts unless an ACCEPT comes before it in
 * POSTROUTING (ACCEPT ends the nat table's traversal; a RETURN from our chain would go on
 * to Docker's rule). So the rules go where Docker's are, through the same `iptables` Docker
 * uses, in chains of k8ts's own. What kube-proxy marked for masquerade (0x4000: a pod
 * reaching itself through a Service, the hairpin) returns first, as flannel's
 * FLANNEL-POSTROUTING lets it, so that iptables mode's masquerade chain after this one
 * (agent/proxy/iptables-rules.ts) still sees it.
 *
 * Each chain is read first and, when it is missing or differs, written whole in one
 * `iptables-restore --noflush` transaction (atomic: no moment without the accept rules); an
 * unchanged chain is not written (the resync every 30 s then only reads). The jump is moved
 * back to the top when something (Docker at its restart) inserted rules before it. Rules of
 * other chains are never touched.
 */
import { MASQUERADE_MARK } from '../proxy/kernel-ports.js';
import { mustRun, type HostCommand } from './host-command.js';

export const FORWARD_CHAIN = 'K8TS-FORWARD';
export const POSTROUTING_CHAIN = 'K8TS-POSTROUTING';

/** What the rules are made of. */
export interface FirewallConfig {
  /** The cluster CIDR (net-conf's Network). */
  clusterCIDR: string;
  /** This node's pod CIDR. */
  podCIDR: string;
}

/** One of the two chains: its iptables table, the built-in chain that jumps to it, its rules. */
interface ChainSpec {
  table: 'filter' | 'nat';
  builtin: 'FORWARD' | 'POSTROUTING';
  chain: string;
  /** The `-A` lines, in order. */
  rules: string[];
}

/** Both chains as `cfg` wants them. */
function chainSpecs(cfg: FirewallConfig): ChainSpec[] {
  const comment = (c: string) => `-m comment --comment "${c}"`;
  const f = FORWARD_CHAIN;
  const p = POSTROUTING_CHAIN;
  return [
    {
      table: 'filter',
      builtin: 'FORWARD',
      chain: f,
      rules: [
        `-A ${f} -s ${cfg.clusterCIDR} ${comment('k8ts: pod traffic between nodes')} -j ACCEPT`,
        `-A ${f} -d ${cfg.clusterCIDR} ${comment('k8ts: pod traffic between nodes')} -j ACCEPT`,
      ],
    },
    {
      table: 'nat',
      builtin: 'POSTROUTING',
      chain: p,
      rules: [
        `-A ${p} -m mark --mark ${MASQUERADE_MARK}/${MASQUERADE_MARK} ${comment("k8ts: kube-proxy's masquerade")} -j RETURN`,
        `-A ${p} -s ${cfg.clusterCIDR} -d ${cfg.clusterCIDR} ${comment('k8ts: no masquerade between pods')} -j ACCEPT`,
        `-A ${p} -s ${cfg.podCIDR} ! -d 224.0.0.0/4 ${comment('k8ts: masquerade pod traffic leaving the cluster')} -j MASQUERADE`,
      ],
    },
  ];
}

/** The `iptables-restore --noflush` input that writes `specs`' chains whole. */
function restoreInput(specs: readonly ChainSpec[]): string {
  return [...specs.flatMap((c) => [`*${c.table}`, `:${c.chain} - [0:0]`, ...c.rules, 'COMMIT']), ''].join(
    '\n',
  );
}

/** The `iptables-restore --noflush` input that writes both chains whole. */
export function firewallRules(cfg: FirewallConfig): string {
  return restoreInput(chainSpecs(cfg));
}

/**
 * Whether `iptables -S <chain>` output is exactly `spec`'s rules. iptables prints a rule as
 * it was written here (the options in this order, a comment with spaces in double quotes)
 * but escapes quotes in it (`kube-proxy\'s`): escapes are undone before comparing.
 */
function chainIsAsWanted(listed: string, spec: ChainSpec): boolean {
  const unescape = (l: string) => l.replace(/\\(.)/g, '$1');
  const rules = listed
    .split('\n')
    .filter((l) => l.startsWith('-A '))
    .map(unescape);
  return rules.length === spec.rules.length && rules.every((r, i) => r === spec.rules[i]);
}

/**
 * Brings the chains in line and makes each jump the first rule of its built-in chain,
 * writing only what is missing or different: each chain is read first (`iptables -S`, as
 * the proxy's kernel modes check their canary before a rewrite), and a chain that is
 * already exactly as wanted is not written again, so the periodic resync of an unchanged
 * host only reads. A chain that differs (or is gone: a firewall restart, `iptables -F`) is
 * written whole, both in one `iptables-restore --noflush` when both differ.
 * @throws Error when iptables fails (not installed, no permission).
 */
export async function ensureFirewall(host: HostCommand, cfg: FirewallConfig): Promise<void> {
  const specs = chainSpecs(cfg);
  const stale: ChainSpec[] = [];
  for (const spec of specs) {
    const listed = await host('iptables', ['-w', '-t', spec.table, '-S', spec.chain]);
    // A chain that does not exist is an error to `iptables -S`: it is written.
    if (listed.code !== 0 || !chainIsAsWanted(listed.stdout, spec)) stale.push(spec);
  }
  if (stale.length > 0)
    await mustRun(
      host,
      'write the pod network firewall rules',
      'iptables-restore',
      ['-w', '--noflush'],
      restoreInput(stale),
    );
  for (const { table, builtin, chain } of specs) {
    const listed = await mustRun(host, `list ${table} ${builtin}`, 'iptables', [
      '-w',
      '-t',
      table,
      '-S',
      builtin,
    ]);
    const rules = listed.split('\n').filter((l) => l.startsWith('-A '));
    const jump = `-A ${builtin} -j ${chain}`;
    if (rules[0] === jump && rules.filter((r) => r === jump).length === 1) continue;
    // Insert first, then remove the others (from the end, so the positions stay right):
    // there is a jump in place at every moment.
    await mustRun(host, `jump to ${chain}`, 'iptables', ['-w', '-t', table, '-I', builtin, '1', '-j', chain]);
    const now = (
      await mustRun(host, `list ${table} ${builtin}`, 'iptables', ['-w', '-t', table, '-S', builtin])
    )
      .split('\n')
      .filter((l) => l.startsWith('-A '));
    for (let i = now.length - 1; i > 0; i--) {
      if (now[i] !== jump) continue;
      await mustRun(host, `remove a second jump to ${chain}`, 'iptables', [
        '-w',
        '-t',
        table,
        '-D',
        builtin,
        String(i + 1),
      ]);
    }
  }
}

/** Removes both chains and their jumps (`k8ts agent --cleanup`, a switch to backend none); idempotent. */
export async function removeFirewall(host: HostCommand): Promise<void> {
  for (const [table, builtin, chain] of [
    ['filter', 'FORWARD', FORWARD_CHAIN],
    ['nat', 'POSTROUTING', POSTROUTING_CHAIN],
  ] as const) {
    while ((await host('iptables', ['-w', '-t', table, '-D', builtin, '-j', chain])).code === 0);
    await host('iptables', ['-w', '-t', table, '-F', chain]);
    await host('iptables', ['-w', '-t', table, '-X', chain]);
  }
}
