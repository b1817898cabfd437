/**
 * What both kernel modes of kube-proxy (nftables.ts, iptables.ts) are given and share: one
 * Service port as the kernel serves it (KernelServicePort, made from a Service and its
 * EndpointSlices by kernelServicePorts()), the settings of a node's rules, the interface
 * KernelMode drives either proxier through, and the deletion of UDP conntrack entries a
 * write made stale (kube-proxy's conntrack cleanup, pkg/proxy/conntrack).
 */
import type { Logger } from '../../api/log.js';
import type { EndpointSlice, Service, ServicePort } from '../../api/types.js';
import type { HostCommand } from '../network/host-command.js';
import { endpointKey, type Endpoint } from './balancer.js';
import { usableClusterIP } from './cluster-ip.js';
import { DEFAULT_AFFINITY_SECONDS, endpointsForPort } from './endpoints.js';

/** The masquerade mark, kube-proxy's default (--iptables-masquerade-bit 14). */
export const MASQUERADE_MARK = '0x4000';

/** One Service port as the kernel serves it. */
export interface KernelServicePort {
  /** `namespace/name/tcp|udp/port-name-or-number`; unique on the node. */
  id: string;
  protocol: 'TCP' | 'UDP';
  /** The IPv4 clusterIP (none for a headless Service). */
  clusterIP?: string;
  port: number;
  /** The nodePort (NodePort and LoadBalancer Services). */
  nodePort?: number;
  /** status.loadBalancer.ingress IPs with ipMode VIP (unset counts as VIP). */
  loadBalancerIPs: readonly string[];
  /** Where ClusterIP traffic goes (internalTrafficPolicy applied). */
  internal: readonly Endpoint[];
  /** Where NodePort and load-balancer traffic goes (externalTrafficPolicy applied). */
  external: readonly Endpoint[];
  /** Every usable endpoint, on any node (where pods and the node itself go under eTP Local). */
  all: readonly Endpoint[];
  /** Whether the Service has any usable endpoint at all, on any node (reject vs drop). */
  hasEndpoints: boolean;
  externalTrafficLocal: boolean;
  /** ClientIP affinity timeout in seconds; 0: none. */
  affinitySeconds: number;
}

/** Where this node's rules apply. */
export interface TableSettings {
  /**
   * The name of this node's rules: in nftables mode the table (nftTableFor(); family ip),
   * in iptables mode the prefix of every chain (iptablesPrefixFor()).
   */
  table: string;
  /** The cluster CIDR (net-conf's Network): traffic from outside it to a clusterIP is masqueraded. */
  clusterCIDR: string;
  /** The node address NodePorts are served on (`--node-ip`); undefined: every local address. */
  nodeIP: string | undefined;
}

/**
 * One kernel mode's writer (NftablesProxier, IptablesProxier), as KernelMode drives it:
 * update() records what a Service wants, flush() writes what changed. See nftables.ts for
 * the contract; both never throw from flush() and checkTable().
 */
export interface KernelProxier {
  /** Records the ports `serviceKey` wants (undefined or []: its rules go); `triggerTimes` in wall-clock ms. */
  update(serviceKey: string, ports: KernelServicePort[] | undefined, triggerTimes?: number[]): void;
  /** Whether something is waiting to be written. */
  readonly pending: boolean;
  /** What the kernel serves for a Service now. */
  served(serviceKey: string): KernelServicePort[] | undefined;
  /** Writes what changed since the last flush. */
  flush(settings: TableSettings): Promise<void>;
  /** Forgets what was written (the rules were removed): the next flush() writes everything. */
  forget(): void;
  /** Whether removed objects wait for a later write that deletes them. */
  readonly hasStaleChains: boolean;
  /** Whether the rules were removed behind the proxier's back (then the next flush() writes everything). */
  checkTable(): Promise<boolean>;
}

/**
 * The kernel's view of Service `key`'s `ports` (by port key: the port's name, or its
 * number when unnamed) from its EndpointSlices: the traffic policies applied with
 * `nodeName`'s endpoints, the affinity timeout defaulted, LoadBalancer ingress IPs.
 * @returns the ports, and the most endpoints any of them has (the proxy's gauge).
 */
export function kernelServicePorts(
  key: string,
  svc: Service,
  ports: ReadonlyMap<string, ServicePort>,
  slices: readonly EndpointSlice[],
  nodeName: string,
): { ports: KernelServicePort[]; endpointCount: number } {
  const clusterIP = usableClusterIP(svc);
  const type = svc.spec.type ?? 'ClusterIP';
  const out: KernelServicePort[] = [];
  let endpointCount = 0;
  // The table is family ip: IPv6 slices would count as endpoints that are not there.
  const ipv4 = slices.filter((sl) => sl.addressType === 'IPv4');
  for (const [portKey, sp] of ports) {
    const protocol = sp.protocol === 'UDP' ? 'UDP' : 'TCP';
    const portName = sp.name ?? '';
    const all = endpointsForPort(ipv4, portName, protocol).endpoints;
    const local = () => endpointsForPort(ipv4, portName, protocol, nodeName).endpoints;
    endpointCount = Math.max(endpointCount, all.length);
    out.push({
      id: `${key}/${protocol.toLowerCase()}/${portKey}`,
      protocol,
      ...(clusterIP !== undefined ? { clusterIP } : {}),
      port: sp.port,
      ...((type === 'NodePort' || type === 'LoadBalancer') && sp.nodePort ? { nodePort: sp.nodePort } : {}),
      loadBalancerIPs:
        type === 'LoadBalancer'
          ? // ipMode Proxy: the load balancer delivers to the node, not to the VIP.
            (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) =>
              i.ip && i.ipMode !== 'Proxy' ? [i.ip] : [],
            )
          : [],
      internal: svc.spec.internalTrafficPolicy === 'Local' ? local() : all,
      external: svc.spec.externalTrafficPolicy === 'Local' ? local() : all,
      all,
      hasEndpoints: all.length > 0,
      externalTrafficLocal: svc.spec.externalTrafficPolicy === 'Local',
      affinitySeconds:
        svc.spec.sessionAffinity === 'ClientIP'
          ? (svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS)
          : 0,
    });
  }
  return { ports: out, endpointCount };
}

/**
 * Deletes the UDP conntrack entries a write from `before` to `after` (Service key → its
 * ports, undefined: none) made stale (`conntrack -D`): UDP has no connection to end, so
 * a flow would stay on a removed endpoint, or on the reject of a Service that had no
 * endpoints, for conntrack's UDP timeout. Failures are only logged; never throws.
 */
export async function deleteStaleConntrack(
  host: HostCommand,
  logger: Pick<Logger, 'warn'>,
  before: ReadonlyMap<string, readonly KernelServicePort[] | undefined>,
  after: ReadonlyMap<string, readonly KernelServicePort[] | undefined>,
): Promise<void> {
  const deletions: string[][] = [];
  for (const [k, oldPorts] of before) {
    const now = new Map((after.get(k) ?? []).map((p) => [p.id, p]));
    for (const o of oldPorts ?? []) {
      if (o.protocol !== 'UDP') continue;
      const n = now.get(o.id);
      const kept = new Set(
        [...(n?.internal ?? []), ...(n?.external ?? []), ...(n?.all ?? [])].map(endpointKey),
      );
      for (const e of new Map(
        [...o.internal, ...o.external, ...o.all].map((e) => [endpointKey(e), e]),
      ).values()) {
        if (kept.has(endpointKey(e))) continue;
        // By the reply's source, the endpoint itself: `--dst-nat <ip>` misses a DNAT that
        // changed only the port (an endpoint on the node's own address).
        const endpoint = ['--reply-src', e.ip, '--reply-port-src', String(e.port)];
        for (const ip of [...(o.clusterIP ? [o.clusterIP] : []), ...o.loadBalancerIPs])
          deletions.push(['--orig-dst', ip, '--orig-port-dst', String(o.port), ...endpoint]);
        if (o.nodePort) deletions.push(['--orig-port-dst', String(o.nodePort), ...endpoint]);
      }
    }
    for (const n of now.values()) {
      if (n.protocol !== 'UDP') continue;
      const o = oldPorts?.find((p) => p.id === n.id);
      // A Service port that went from no endpoints (or none known: a Service first seen) to
      // some, as kube-proxy's NewlyActiveUDPServices: its flows so far were rejected, or,
      // sent before the rules were written, delivered to the node itself; either way not
      // DNATed, and their entry would keep the same 5-tuple off the endpoints for
      // conntrack's UDP timeout (a client that keeps asking never lets it expire). Only
      // entries that were not DNATed are deleted: their reply comes from the address and
      // port the client sent to. Live flows to endpoints are left alone.
      if (n.internal.length > 0 && n.clusterIP && !(o && o.internal.length > 0))
        deletions.push([
          '--orig-dst',
          n.clusterIP,
          '--orig-port-dst',
          String(n.port),
          '--reply-src',
          n.clusterIP,
        ]);
      if (n.external.length > 0 && n.nodePort && !(o && o.external.length > 0))
        deletions.push(['--orig-port-dst', String(n.nodePort), '--reply-port-src', String(n.nodePort)]);
    }
  }
  for (const args of deletions) {
    const r = await host('conntrack', ['-D', '-p', 'udp', ...args]);
    // Exit 1 with "0 flow entries" is conntrack's way of saying there was nothing to delete.
    if (r.code !== 0 && !/0 flow entries/.test(r.stderr))
      logger.warn('proxy: cannot delete stale UDP conntrack entries', {
        args: args.join(' '),
        error: r.stderr.trim(),
      });
  }
}
