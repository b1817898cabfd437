/**
 * externalTrafficPolicy: Local in the kernel, so that the pod sees the client's own
 * address (a relay through the proxy's sockets would show the node's). For each NodePort
 * of such a Service that has endpoints on this node, one DNAT rule in a table of k8ts's
 * own, `ip k8ts-local-nodeports`, spread at random over the local endpoints as
 * kube-proxy's nftables mode does (numgen):
 *
 *   table ip k8ts-local-nodeports {
 *     chain prerouting {
 *       type nat hook prerouting priority dstnat; policy accept;
 *       ip daddr 198.18.0.11 tcp dport 31000 dnat to numgen random mod 2 map { 0 : 10.42.1.5 . 8080, 1 : 10.42.1.6 . 8080 }
 *     }
 *   }
 *
 * Only packets that arrive from outside pass prerouting: connections the host itself
 * makes to its NodePort still reach the proxy's listener, which serves them from the same
 * local endpoints. The reply needs no rule (conntrack undoes the DNAT), and the forward to
 * the pod is accepted by the pod network's K8TS-FORWARD chain (agent/network/firewall.ts).
 *
 * The table is written whole in one `nft -f` transaction (add, delete, define) whenever
 * the rules change (and at the first sync, which replaces what an earlier run left), and
 * removed when no rule is left; a stopping agent leaves it in place, as kube-proxy does. Nothing outside the
 * table is touched. Used only where the agent may program the kernel (a cross-host
 * backend other than none); elsewhere externalTrafficPolicy Local still keeps traffic on
 * local endpoints, through the proxy, without the client's address.
 */
import type { HostCommand } from '../network/host-command.js';
import type { Endpoint } from './balancer.js';

export const LOCAL_NODEPORTS_TABLE = 'k8ts-local-nodeports';

/** One NodePort with its local endpoints. */
export interface LocalNodePort {
  protocol: 'TCP' | 'UDP';
  nodePort: number;
  endpoints: readonly Endpoint[];
}

/** The `nft -f` input for `ports` (NodePorts on `nodeIP`, or on every local address when undefined); undefined when there is nothing to write. */
export function localNodePortRules(
  ports: readonly LocalNodePort[],
  nodeIP: string | undefined,
): string | undefined {
  const rules: string[] = [];
  const match = nodeIP ? `ip daddr ${nodeIP}` : 'fib daddr type local';
  const sorted = [...ports].sort((a, b) => a.nodePort - b.nodePort || a.protocol.localeCompare(b.protocol));
  for (const p of sorted) {
    const eps = p.endpoints.filter((e) => /^\d+\.\d+\.\d+\.\d+$/.test(e.ip));
    if (eps.length === 0) continue;
    const target =
      eps.length === 1
        ? `dnat to ${eps[0]!.ip}:${eps[0]!.port}`
        : `dnat to numgen random mod ${eps.length} map { ${eps.map((e, i) => `${i} : ${e.ip} . ${e.port}`).join(', ')} }`;
    rules.push(`    ${match} ${p.protocol.toLowerCase()} dport ${p.nodePort} ${target}`);
  }
  if (rules.length === 0) return undefined;
  const t = `ip ${LOCAL_NODEPORTS_TABLE}`;
  return [
    `table ${t}`,
    `delete table ${t}`,
    `table ${t} {`,
    '  chain prerouting {',
    '    type nat hook prerouting priority dstnat; policy accept;',
    ...rules,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Keeps the table in line with the NodePorts given to sync(). */
export class LocalNodePortRules {
  /** What the table holds: null until the first sync (an earlier run of the agent may have left one). */
  private written: string | undefined | null = null;
  private warned = false;

  constructor(
    private readonly host: HostCommand,
    private readonly nodeIP: string | undefined,
    private readonly logger: { warn(message: string, meta?: Record<string, unknown>): unknown },
  ) {}

  /** Writes the rules for `ports` when they differ from what was written; never throws (failures are logged once). */
  async sync(ports: readonly LocalNodePort[]): Promise<void> {
    const text = localNodePortRules(ports, this.nodeIP);
    if (text === this.written) return;
    const r =
      text === undefined
        ? await this.host('nft', ['delete', 'table', 'ip', LOCAL_NODEPORTS_TABLE])
        : await this.host('nft', ['-f', '-'], text);
    if (r.code === 0 || (text === undefined && /no such file|not found/i.test(r.stderr))) {
      this.written = text;
      this.warned = false;
      return;
    }
    if (!this.warned) {
      this.warned = true;
      this.logger.warn(
        'proxy: cannot write the externalTrafficPolicy Local rules; such NodePorts are relayed without the client address',
        {
          error: r.stderr.trim(),
        },
      );
    }
  }

  /** Removes the table (`k8ts agent --cleanup`); a stopping agent leaves it, so traffic keeps flowing. */
  async remove(): Promise<void> {
    await this.sync([]);
  }
}
