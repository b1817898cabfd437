/**
 * kube-proxy's nftables mode for one node: keeps the table `ip k8ts` (nftables-rules.ts)
 * in line with the Service ports the Proxy hands it, as pkg/proxy/nftables/proxier.go does.
 *
 *   const nft = new NftablesProxier({ host, logger, metrics });
 *   nft.update('default/web', ports, triggerTimes);   // any number of Services…
 *   await nft.flush(settings);                         // …then one transaction
 *
 * Writes are coalesced: update() only records what a Service wants; flush() writes every
 * Service changed since the last write in one `nft -f` transaction that touches only their
 * chains, sets and map elements (a change to one Service of 1,000 rewrites one). The first
 * flush, a change of settings, and a refused partial transaction (at once, in the same
 * flush) rewrite the whole table instead, created from scratch in the same transaction, so
 * there is no moment without rules.
 *
 * Two Services may briefly claim one map key (a nodePort moved from one to another, seen
 * in the other order): the first holder keeps it and the other gets it once it is free.
 *
 * UDP has no connection to end, so after a write, conntrack entries that still point at a
 * removed endpoint, or that recorded the reject of a Service that now has endpoints, are
 * deleted (`conntrack -D`), as kube-proxy's conntrack cleanup does.
 */
import type { Logger } from '../../api/log.js';
import type { EndpointSlice, Service, ServicePort } from '../../api/types.js';
import type { HostCommand } from '../network/host-command.js';
import { endpointKey } from './balancer.js';
import { DEFAULT_AFFINITY_SECONDS, endpointsForPort } from './endpoints.js';
import type { ProxyMetrics } from './metrics.js';
import {
  diffTransaction,
  emptyObjects,
  mergeObjects,
  servicePortObjects,
  tableSkeleton,
  type KernelServicePort,
  type PortObjects,
  type TableSettings,
} from './nftables-rules.js';

/** Settings of an NftablesProxier. */
export interface NftablesProxierConfig {
  host: HostCommand;
  logger: Pick<Logger, 'warn' | 'info'>;
  metrics: ProxyMetrics;
  /** Wall-clock milliseconds (for the programming latency); default Date.now. */
  now?: () => number;
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
  const clusterIP = svc.spec.clusterIPs?.[0] ?? svc.spec.clusterIP;
  const type = svc.spec.type ?? 'ClusterIP';
  const out: KernelServicePort[] = [];
  let endpointCount = 0;
  for (const [portKey, sp] of ports) {
    const protocol = sp.protocol === 'UDP' ? 'UDP' : 'TCP';
    const portName = sp.name ?? '';
    const all = endpointsForPort(slices, portName, protocol).endpoints;
    const local = () => endpointsForPort(slices, portName, protocol, nodeName).endpoints;
    endpointCount = Math.max(endpointCount, all.length);
    out.push({
      id: `${key}/${protocol.toLowerCase()}/${portKey}`,
      protocol,
      ...(clusterIP && clusterIP !== 'None' ? { clusterIP } : {}),
      port: sp.port,
      ...((type === 'NodePort' || type === 'LoadBalancer') && sp.nodePort ? { nodePort: sp.nodePort } : {}),
      loadBalancerIPs:
        type === 'LoadBalancer'
          ? (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : []))
          : [],
      internal: svc.spec.internalTrafficPolicy === 'Local' ? local() : all,
      external: svc.spec.externalTrafficPolicy === 'Local' ? local() : all,
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

interface ServiceEntry {
  ports: KernelServicePort[];
  /** Trigger times (ms) of endpoint changes not yet live in the kernel. */
  triggers: number[];
}

/** Keeps the nftables table of kube-proxy's nftables mode (see the file comment). */
export class NftablesProxier {
  private readonly desired = new Map<string, ServiceEntry>();
  /** What the kernel holds, per Service key. */
  private readonly written = new Map<string, { ports: KernelServicePort[]; objects: PortObjects }>();
  /** Map key (`map|key`) → the Service holding it in the kernel. */
  private readonly owners = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private settings: TableSettings | undefined;
  private needFull = true;
  private routeLocalnetSet = false;
  private readonly now: () => number;

  constructor(private readonly cfg: NftablesProxierConfig) {
    this.now = cfg.now ?? Date.now;
  }

  /**
   * Whether `nft` can program this host: undefined when it can, else the reason (nft
   * missing, no permission). Lists nothing and changes nothing.
   */
  static async unavailable(host: HostCommand): Promise<string | undefined> {
    const r = await host('nft', ['-c', '-f', '-'], 'add table ip k8ts-probe\n');
    return r.code === 0 ? undefined : r.stderr.trim() || `nft exited with ${r.code}`;
  }

  /**
   * Records the ports `serviceKey` wants in the kernel (undefined or []: none, its rules go).
   * `triggerTimes` are the wall-clock ms of the endpoint changes this reflects, for the
   * network programming latency.
   */
  update(serviceKey: string, ports: KernelServicePort[] | undefined, triggerTimes: number[] = []): void {
    const prev = this.desired.get(serviceKey);
    if (!ports || ports.length === 0) this.desired.delete(serviceKey);
    else this.desired.set(serviceKey, { ports, triggers: [...(prev?.triggers ?? []), ...triggerTimes] });
    this.dirty.add(serviceKey);
  }

  /** Whether `serviceKey` has rules in the kernel (or wants some). */
  has(serviceKey: string): boolean {
    return this.desired.has(serviceKey) || this.written.has(serviceKey);
  }

  /** Whether something is waiting to be written. */
  get pending(): boolean {
    return this.dirty.size > 0 || this.needFull;
  }

  /** What the kernel serves for a Service now (Proxy.snapshot()). */
  served(serviceKey: string): KernelServicePort[] | undefined {
    return this.written.get(serviceKey)?.ports;
  }

  /**
   * Writes what changed since the last flush in one transaction (or the whole table, see
   * the file comment). Never throws: a refused transaction is logged and counted, and the
   * next flush rewrites the table whole.
   */
  async flush(settings: TableSettings): Promise<void> {
    if (
      this.settings === undefined ||
      this.settings.clusterCIDR !== settings.clusterCIDR ||
      this.settings.table !== settings.table ||
      this.settings.nodeIP !== settings.nodeIP
    ) {
      this.settings = settings;
      this.needFull = true;
    }
    if (!this.needFull && this.dirty.size === 0) return;
    if (!this.routeLocalnetSet) {
      // NodePorts on 127.0.0.1 (as kube-proxy's iptables mode serves them): the kernel
      // routes a loopback source off the host only with route_localnet; the table drops
      // what would abuse it (nftables-rules.ts, filter-input).
      const r = await this.cfg.host('sysctl', ['-w', 'net.ipv4.conf.all.route_localnet=1']);
      if (r.code !== 0)
        this.cfg.logger.warn('proxy: cannot set route_localnet; NodePorts are not served on 127.0.0.1', {
          error: r.stderr.trim(),
        });
      this.routeLocalnetSet = true;
    }
    const full = this.needFull;
    const keys = full ? [...new Set([...this.desired.keys(), ...this.written.keys()])] : [...this.dirty];
    this.dirty.clear();
    const before = new Map(keys.map((k) => [k, this.written.get(k)]));
    if (full) this.owners.clear();
    const plan = this.plan(keys, full);
    const text = full
      ? `add table ip ${settings.table}\ndelete table ip ${settings.table}\n${tableSkeleton(settings)}` +
        diffTransaction(
          emptyObjects(),
          mergeObjects([...plan.values()].map((p) => p.objects)),
          settings.table,
        )
      : diffTransaction(
          mergeObjects(keys.map((k) => this.written.get(k)?.objects ?? emptyObjects())),
          mergeObjects(keys.map((k) => plan.get(k)?.objects ?? emptyObjects())),
          settings.table,
        );
    if (text !== '') {
      const r = await this.cfg.host('nft', ['-f', '-'], text);
      if (r.code !== 0) {
        this.cfg.metrics.nftWriteErrors.inc();
        this.cfg.logger.warn('proxy: nftables refused the rules; rewriting the table whole', {
          error: r.stderr.trim().slice(0, 2000),
          full,
        });
        for (const k of keys) this.dirty.add(k);
        if (full) this.written.clear();
        this.needFull = true;
        // A partial write failed on a table that is not what we think (removed by hand, an
        // earlier refusal): rewrite it whole at once. A refused full write waits for the next flush.
        if (!full) await this.flush(settings);
        return;
      }
      this.cfg.metrics.nftWrites.inc({ kind: full ? 'full' : 'partial' });
    }
    this.needFull = false;
    const doneAt = this.now();
    for (const k of keys) {
      const p = plan.get(k);
      if (p) this.written.set(k, p);
      else this.written.delete(k);
      const entry = this.desired.get(k);
      for (const t of entry?.triggers ?? [])
        this.cfg.metrics.networkProgramming.observe(Math.max(0, doneAt - t) / 1000);
      if (entry) entry.triggers = [];
    }
    // Services that wanted a key another one held: the holder may have let it go.
    for (const [k, entry] of this.desired) if (plan.get(k)?.blocked && entry) this.dirty.add(k);
    await this.clearStaleConntrack(before, plan);
  }

  /**
   * Whether the table is gone from the kernel though rules were written (a firewall
   * restart's `nft flush ruleset`, a hand-made delete): then the next flush() rewrites it
   * whole. Asks nft for one small base chain only (the canary kube-proxy's iptables mode
   * keeps for the same purpose). Never throws.
   */
  async checkTable(): Promise<boolean> {
    if (this.needFull || !this.settings) return false;
    const r = await this.cfg.host('nft', ['list', 'chain', 'ip', this.settings.table, 'services']);
    if (r.code === 0) return false;
    this.cfg.logger.warn('proxy: the nftables table is gone; writing it again', { error: r.stderr.trim() });
    this.written.clear();
    this.owners.clear();
    for (const k of this.desired.keys()) this.dirty.add(k);
    this.needFull = true;
    return true;
  }

  /** What each of `keys` will hold after this write, with map keys another Service holds left out. */
  private plan(
    keys: string[],
    full: boolean,
  ): Map<string, { ports: KernelServicePort[]; objects: PortObjects; blocked: boolean }> {
    const settings = this.settings!;
    const out = new Map<string, { ports: KernelServicePort[]; objects: PortObjects; blocked: boolean }>();
    // Keys these Services give up are free for the others in the same write.
    if (!full)
      for (const k of keys)
        for (const [map, els] of this.written.get(k)?.objects.elements ?? [])
          for (const key of els.keys())
            if (this.owners.get(`${map}|${key}`) === k) this.owners.delete(`${map}|${key}`);
    for (const k of keys.sort()) {
      const entry = this.desired.get(k);
      if (!entry) continue;
      const objects = mergeObjects(entry.ports.map((p) => servicePortObjects(p, settings)));
      let blocked = false;
      for (const [map, els] of objects.elements)
        for (const key of [...els.keys()]) {
          const owner = this.owners.get(`${map}|${key}`);
          if (owner !== undefined && owner !== k) {
            els.delete(key);
            blocked = true;
          } else this.owners.set(`${map}|${key}`, k);
        }
      out.set(k, { ports: entry.ports, objects, blocked });
    }
    return out;
  }

  /** Deletes UDP conntrack entries the write made stale (see the file comment); failures only logged. */
  private async clearStaleConntrack(
    before: Map<string, { ports: KernelServicePort[] } | undefined>,
    after: Map<string, { ports: KernelServicePort[] }>,
  ): Promise<void> {
    const deletions: string[][] = [];
    for (const [k, old] of before) {
      const now = new Map((after.get(k)?.ports ?? []).map((p) => [p.id, p]));
      for (const o of old?.ports ?? []) {
        if (o.protocol !== 'UDP') continue;
        const n = now.get(o.id);
        const kept = new Set([...(n?.internal ?? []), ...(n?.external ?? [])].map(endpointKey));
        for (const e of new Map([...o.internal, ...o.external].map((e) => [endpointKey(e), e])).values()) {
          if (kept.has(endpointKey(e))) continue;
          // By the reply's source, the endpoint itself: `--dst-nat <ip>` misses a DNAT that
          // changed only the port (an endpoint on the node's own address).
          const endpoint = ['--reply-src', e.ip, '--reply-port-src', String(e.port)];
          if (o.clusterIP)
            deletions.push(['--orig-dst', o.clusterIP, '--orig-port-dst', String(o.port), ...endpoint]);
          if (o.nodePort) deletions.push(['--orig-port-dst', String(o.nodePort), ...endpoint]);
        }
      }
      for (const n of now.values()) {
        if (n.protocol !== 'UDP' || n.internal.length === 0) continue;
        const o = old?.ports.find((p) => p.id === n.id);
        if (o && o.internal.length > 0) continue;
        if (n.clusterIP) deletions.push(['--orig-dst', n.clusterIP, '--orig-port-dst', String(n.port)]);
      }
    }
    for (const args of deletions) {
      const r = await this.cfg.host('conntrack', ['-D', '-p', 'udp', ...args]);
      // Exit 1 with "0 flow entries" is conntrack's way of saying there was nothing to delete.
      if (r.code !== 0 && !/0 flow entries/.test(r.stderr))
        this.cfg.logger.warn('proxy: cannot delete stale UDP conntrack entries', {
          args: args.join(' '),
          error: r.stderr.trim(),
        });
    }
  }
}
