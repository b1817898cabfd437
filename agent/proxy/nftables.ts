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
import type { HostCommand } from '../network/host-command.js';
import {
  deleteStaleConntrack,
  type KernelProxier,
  type KernelServicePort,
  type TableSettings,
} from './kernel-ports.js';
import type { ProxyMetrics } from './metrics.js';
import {
  canaryTableFor,
  diffTransaction,
  emptyObjects,
  keySpace,
  mergeObjects,
  servicePortObjects,
  tableSkeleton,
  type PortObjects,
} from './nftables-rules.js';

/** Settings of an NftablesProxier. */
export interface NftablesProxierConfig {
  host: HostCommand;
  logger: Pick<Logger, 'warn' | 'info'>;
  metrics: ProxyMetrics;
  /** Wall-clock milliseconds (for the programming latency); default Date.now. */
  now?: () => number;
}

interface ServiceEntry {
  ports: KernelServicePort[];
  /** Trigger times (ms) of endpoint changes not yet live in the kernel. */
  triggers: number[];
}

/** What one Service will hold after a write. */
interface Planned {
  ports: KernelServicePort[];
  objects: PortObjects;
}

/** Milliseconds a flushed chain waits before it is deleted (kernels before 6.2; see diffTransaction). */
const STALE_CHAIN_DELAY_MS = 1_000;
/** Milliseconds after a refused whole-table write before the next try. */
const FULL_WRITE_BACKOFF_MS = 30_000;

/** Keeps the nftables table of kube-proxy's nftables mode (see the file comment). */
export class NftablesProxier implements KernelProxier {
  private readonly desired = new Map<string, ServiceEntry>();
  /** What the kernel holds, per Service key. */
  private readonly written = new Map<string, Planned>();
  /** Element key (`keySpace|key`) → the Service holding it in the kernel. */
  private readonly owners = new Map<string, string>();
  /** Element key → Services that want it while another holds it (dirtied when it is free). */
  private readonly waiting = new Map<string, Set<string>>();
  /** Element keys a clusterIP waits for while an ingress IP's claim holds them. */
  private readonly strongWaiting = new Set<string>();
  private readonly dirty = new Set<string>();
  /** Flushed chains and sets to delete in a later write, with the time they went. */
  private readonly stale = new Map<string, { kind: 'chain' | 'set'; since: number }>();
  private settings: TableSettings | undefined;
  private needFull = true;
  private retryFullAt = 0;
  private readonly now: () => number;

  constructor(private readonly cfg: NftablesProxierConfig) {
    this.now = cfg.now ?? Date.now;
  }

  /**
   * Whether `nft` can program this host as this mode needs: undefined when it can, else
   * the reason (nft missing, no permission, a kernel without nat, fib, numgen, reject or
   * timeout sets). Checks a whole sample table with `nft -c` (the kernel validates the
   * transaction and applies nothing).
   */
  static async unavailable(host: HostCommand): Promise<string | undefined> {
    const settings: TableSettings = { table: 'k8ts-probe', clusterCIDR: '10.42.0.0/16', nodeIP: undefined };
    const sample = servicePortObjects(
      {
        id: 'probe/probe/tcp/80',
        protocol: 'TCP',
        clusterIP: '10.43.0.1',
        port: 80,
        nodePort: 30000,
        loadBalancerIPs: [],
        internal: [{ ip: '10.42.0.2', port: 80 }],
        external: [{ ip: '10.42.0.2', port: 80 }],
        all: [{ ip: '10.42.0.2', port: 80 }],
        hasEndpoints: true,
        externalTrafficLocal: true,
        affinitySeconds: 60,
      },
      settings,
    );
    const text = tableSkeleton(settings) + diffTransaction(emptyObjects(), sample, settings.table).text;
    const r = await host('nft', ['-c', '-f', '-'], text);
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

  /** Whether something is waiting to be written (a backed-off whole-table write counts). */
  get pending(): boolean {
    return this.dirty.size > 0 || this.needFull;
  }

  /** What the kernel serves for a Service now (Proxy.snapshot()). */
  served(serviceKey: string): KernelServicePort[] | undefined {
    return this.written.get(serviceKey)?.ports;
  }

  /**
   * Writes what changed since the last flush in one transaction (or the whole table, see
   * the file comment), and deletes the chains flushed at least a second ago. Never throws:
   * a refused partial write is followed at once by a whole-table write; a refused
   * whole-table write is logged and counted, and tried again after FULL_WRITE_BACKOFF_MS.
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
    const now = this.now();
    const dueStale = [...this.stale].filter(([, s]) => now - s.since >= STALE_CHAIN_DELAY_MS);
    if (this.needFull && now < this.retryFullAt) return;
    if (!this.needFull && this.dirty.size === 0 && dueStale.length === 0) return;
    const full = this.needFull;
    const keys = full ? [...new Set([...this.desired.keys(), ...this.written.keys()])] : [...this.dirty];
    this.dirty.clear();
    const before = new Map(keys.map((k) => [k, this.written.get(k)]));
    if (full) {
      this.owners.clear();
      this.strongWaiting.clear();
    }
    const plan = this.plan(keys, full);
    const t = `ip ${settings.table}`;
    let text: string;
    let stale: { chains: string[]; sets: string[] } = { chains: [], sets: [] };
    if (full) {
      const canary = `ip ${canaryTableFor(settings.table)}`;
      text =
        `add table ${t}\ndelete table ${t}\nadd table ${canary}\n${tableSkeleton(settings)}` +
        diffTransaction(
          emptyObjects(),
          mergeObjects([...plan.values()].map((p) => p.objects)),
          settings.table,
        ).text;
    } else {
      const tx = diffTransaction(
        mergeObjects(keys.map((k) => this.written.get(k)?.objects ?? emptyObjects())),
        mergeObjects(keys.map((k) => plan.get(k)?.objects ?? emptyObjects())),
        settings.table,
      );
      // A chain that comes back before its deletion is simply in use again.
      for (const p of plan.values())
        for (const name of [...p.objects.chains.keys(), ...p.objects.sets.keys()]) this.stale.delete(name);
      const deletions = dueStale
        .filter(([name]) => this.stale.has(name))
        .map(([name, s]) => `delete ${s.kind} ${t} ${name}`);
      text = deletions.length > 0 ? deletions.join('\n') + '\n' + tx.text : tx.text;
      stale = { chains: tx.staleChains, sets: tx.staleSets };
    }
    if (text !== '') {
      const r = await this.cfg.host('nft', ['-f', '-'], text);
      if (r.code !== 0) {
        this.cfg.metrics.nftWriteErrors.inc();
        this.cfg.logger.warn('proxy: nftables refused the rules; rewriting the table whole', {
          error: r.stderr.trim().slice(0, 2000),
          full,
        });
        for (const k of keys) this.dirty.add(k);
        if (full) {
          this.written.clear();
          this.retryFullAt = now + FULL_WRITE_BACKOFF_MS;
        }
        this.needFull = true;
        // A partial write failed on a table that is not what we think (removed by hand, an
        // earlier refusal): rewrite it whole at once.
        if (!full) await this.flush(settings);
        return;
      }
      this.cfg.metrics.nftWrites.inc({ kind: full ? 'full' : 'partial' });
    }
    this.needFull = false;
    if (full) this.stale.clear();
    else {
      for (const [name] of dueStale) this.stale.delete(name);
      for (const name of stale.chains) this.stale.set(name, { kind: 'chain', since: now });
      for (const name of stale.sets) this.stale.set(name, { kind: 'set', since: now });
    }
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
    await deleteStaleConntrack(
      this.cfg.host,
      this.cfg.logger,
      new Map([...before].map(([k, p]) => [k, p?.ports])),
      new Map([...plan].map(([k, p]) => [k, p.ports])),
    );
  }

  /** Forgets what was written (the table was removed): the next flush() writes it whole. */
  forget(): void {
    this.written.clear();
    this.owners.clear();
    this.waiting.clear();
    this.strongWaiting.clear();
    this.stale.clear();
    for (const k of this.desired.keys()) this.dirty.add(k);
    this.needFull = true;
    this.retryFullAt = 0;
  }

  /** Whether chains flushed away wait for their deletion (the caller flushes again a second later). */
  get hasStaleChains(): boolean {
    return this.stale.size > 0;
  }

  /**
   * Whether the table is gone from the kernel though rules were written (a firewall
   * restart's `nft flush ruleset`, a hand-made delete): then the next flush() rewrites it
   * whole. Asks only for the names of the tables (`nft list tables`): the table itself and
   * the empty canary written with it (canaryTableFor), as kube-proxy's iptables mode keeps
   * canary chains; listing the big table's content costs seconds with thousands of
   * Services. A table flushed but left in place goes unnoticed. Never throws.
   */
  async checkTable(): Promise<boolean> {
    if (this.needFull || !this.settings) return false;
    const r = await this.cfg.host('nft', ['list', 'tables', 'ip']);
    const tables = new Set(r.stdout.split('\n').map((l) => l.trim()));
    const wanted = [this.settings.table, canaryTableFor(this.settings.table)].map((t) => `table ip ${t}`);
    if (r.code !== 0 || wanted.every((t) => tables.has(t))) return false;
    this.cfg.logger.warn('proxy: the nftables table is gone; writing it again', {
      tables: [...tables].join(', '),
    });
    this.written.clear();
    this.owners.clear();
    for (const k of this.desired.keys()) this.dirty.add(k);
    this.needFull = true;
    return true;
  }

  /**
   * What each of `keys` will hold after this write. An element another Service holds is
   * left out (the Service waits for it), except that a clusterIP's claim takes a key from
   * a load-balancer ingress IP's claim (the holder is written again without it).
   */
  private plan(keys: string[], full: boolean): Map<string, Planned> {
    const settings = this.settings!;
    const out = new Map<string, Planned>();
    const release = (key: string) => {
      this.owners.delete(key);
      for (const w of this.waiting.get(key) ?? []) this.dirty.add(w);
      this.waiting.delete(key);
    };
    // Keys these Services give up are free for the others in the same write.
    if (!full)
      for (const k of keys)
        for (const [map, els] of this.written.get(k)?.objects.elements ?? [])
          for (const key of els.keys()) {
            const owned = `${keySpace(map)}|${key}`;
            if (this.owners.get(owned) === k) release(owned);
          }
    const planned = keys.flatMap((k) => {
      const entry = this.desired.get(k);
      return entry
        ? [{ k, entry, objects: mergeObjects(entry.ports.map((p) => servicePortObjects(p, settings))) }]
        : [];
    });
    // Strong claims (clusterIPs, nodePorts) first, so that in a whole-table write no ingress
    // IP takes a clusterIP whatever the order of the Services.
    for (const weakPass of [false, true])
      for (const { k, objects } of planned.sort((a, b) => a.k.localeCompare(b.k)))
        for (const [map, els] of objects.elements)
          for (const key of [...els.keys()]) {
            const owned = `${keySpace(map)}|${key}`;
            if (objects.weak.has(owned) !== weakPass) continue;
            const owner = this.owners.get(owned);
            // A free key a clusterIP waits for is not for an ingress IP to take.
            const reserved = weakPass && owner === undefined && this.strongWaiting.has(owned);
            if (!reserved && (owner === undefined || owner === k)) {
              this.owners.set(owned, k);
              if (!weakPass) this.strongWaiting.delete(owned);
              continue;
            }
            els.delete(key);
            const waiters = this.waiting.get(owned) ?? new Set<string>();
            waiters.add(k);
            this.waiting.set(owned, waiters);
            if (!weakPass && owner !== undefined && this.written.get(owner)?.objects.weak.has(owned)) {
              this.strongWaiting.add(owned);
              this.dirty.add(owner);
            }
          }
    for (const { k, entry, objects } of planned) out.set(k, { ports: entry.ports, objects });
    return out;
  }
}
