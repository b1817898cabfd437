/**
 * kube-proxy's iptables mode for one node: keeps the chains of iptables-rules.ts in line
 * with the Service ports the Proxy hands it, as pkg/proxy/iptables/proxier.go does, through
 * the same `iptables-restore` Docker and the pod network use (iptables-nft or legacy, as the
 * host has it).
 *
 *   const ipt = new IptablesProxier({ host, logger, metrics });
 *   ipt.update('default/web', ports, triggerTimes);   // any number of Services…
 *   await ipt.flush(settings);                         // …then one iptables-restore
 *
 * Writes are coalesced: update() only records what a Service wants; flush() computes every
 * chain and writes, in one `iptables-restore --noflush` transaction, only the chains whose
 * rules changed (the fixed P-SERVICES and P-NODEPORTS with them, as kube-proxy's partial
 * syncs do), declaring each (which flushes it) and deleting the chains that went (`-X`) in
 * the same transaction. Chains of other programs, and of other agents on the host, are
 * never named. The first flush, a change of settings and a refused partial write (at once,
 * in the same flush) write every chain instead, and delete what an earlier run left of this
 * node's chains (found with `iptables-save`); then the jumps from the built-in chains are
 * inserted where missing (`iptables -C`, `-I … 1`).
 *
 * Every sync period KernelMode calls checkTable(): when a jump is gone, or P-POSTROUTING
 * lost its rules (an `iptables -F`, a firewall restart), everything is written again, as
 * kube-proxy's canary chains make it do.
 *
 * UDP conntrack entries a write made stale are deleted after it (kernel-ports.ts).
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
  fixedChains,
  iptablesRules,
  isOwnChain,
  jumps,
  noChains,
  restoreInput,
  savedChains,
  type IptablesChains,
  type IptablesTable,
} from './iptables-rules.js';

/** Settings of an IptablesProxier. */
export interface IptablesProxierConfig {
  host: HostCommand;
  logger: Pick<Logger, 'warn' | 'info'>;
  metrics: ProxyMetrics;
  /** Wall-clock milliseconds (for the programming latency); default Date.now. */
  now?: () => number;
}

/** Milliseconds after a refused full write before the next try. */
const FULL_WRITE_BACKOFF_MS = 30_000;

const TABLES: readonly IptablesTable[] = ['filter', 'nat'];

/**
 * This node's chains that are in the kernel (`iptables-save -t <table>`), by table; for
 * a host where iptables does not run, none.
 */
async function ownChainsInKernel(
  host: HostCommand,
  prefix: string,
): Promise<Record<IptablesTable, string[]>> {
  const out: Record<IptablesTable, string[]> = { nat: [], filter: [] };
  for (const table of TABLES) {
    const r = await host('iptables-save', ['-t', table]);
    if (r.code === 0) out[table] = savedChains(r.stdout).filter((c) => isOwnChain(prefix, c));
  }
  return out;
}

/**
 * Removes every chain of `prefix` and the jumps to them (`k8ts agent --cleanup`, and a node
 * that switched to another proxy mode); other chains are never touched. Where there is no
 * such chain, nothing is changed (only `iptables-save` runs). Never throws.
 * @returns how many chains were removed.
 */
export async function removeIptablesRules(host: HostCommand, prefix: string): Promise<number> {
  const chains = await ownChainsInKernel(host, prefix);
  const text = restoreInput(noChains(), noChains(), chains);
  if (text === '') return 0;
  // A jump to a chain keeps the chain from being deleted: the jumps go first.
  for (const j of jumps(prefix)) {
    for (let i = 0; i < 10; i++) {
      const r = await host('iptables', ['-w', '-t', j.table, '-D', j.builtin, ...j.rule]);
      if (r.code !== 0) break;
    }
  }
  const r = await host('iptables-restore', ['-w', '--noflush'], text);
  return r.code === 0 ? chains.nat.length + chains.filter.length : 0;
}

interface ServiceEntry {
  ports: KernelServicePort[];
  /** Trigger times (ms) of endpoint changes not yet live in the kernel. */
  triggers: number[];
}

/** Keeps kube-proxy's iptables chains of one node (see the file comment). */
export class IptablesProxier implements KernelProxier {
  private readonly desired = new Map<string, ServiceEntry>();
  /** What the kernel serves, per Service key. */
  private readonly written = new Map<string, KernelServicePort[]>();
  /** The chains in the kernel, as last written. */
  private chains: IptablesChains = noChains();
  private readonly dirty = new Set<string>();
  private settings: TableSettings | undefined;
  private needFull = true;
  private retryFullAt = 0;
  private readonly now: () => number;

  constructor(private readonly cfg: IptablesProxierConfig) {
    this.now = cfg.now ?? Date.now;
  }

  /**
   * Whether iptables can program this host as this mode needs: undefined when it can, else
   * the reason (iptables-restore missing, no permission, a match or target the kernel or
   * iptables lacks: statistic, recent, addrtype, conntrack, comment, mark, MASQUERADE
   * --random-fully, DNAT, REJECT). Checks a sample of every kind of rule with
   * `iptables-restore --test` (nothing is applied).
   */
  static async unavailable(host: HostCommand): Promise<string | undefined> {
    const ep = { ip: '10.42.0.2', port: 80 };
    const chains = iptablesRules(
      [
        {
          id: 'probe/probe/tcp/80',
          protocol: 'TCP',
          clusterIP: '10.43.0.1',
          port: 80,
          nodePort: 30000,
          loadBalancerIPs: ['198.18.0.100'],
          internal: [ep, { ip: '10.42.0.3', port: 80 }],
          external: [ep],
          all: [ep, { ip: '10.42.0.3', port: 80 }],
          hasEndpoints: true,
          externalTrafficLocal: true,
          affinitySeconds: 60,
        },
        {
          id: 'probe/elsewhere/tcp/80',
          protocol: 'TCP',
          clusterIP: '10.43.0.3',
          port: 80,
          nodePort: 30002,
          loadBalancerIPs: [],
          internal: [],
          external: [],
          all: [ep],
          hasEndpoints: true,
          externalTrafficLocal: true,
          affinitySeconds: 0,
        },
        {
          id: 'probe/empty/tcp/80',
          protocol: 'TCP',
          clusterIP: '10.43.0.2',
          port: 80,
          nodePort: 30001,
          loadBalancerIPs: [],
          internal: [],
          external: [],
          all: [],
          hasEndpoints: false,
          externalTrafficLocal: false,
          affinitySeconds: 0,
        },
      ],
      { table: 'K8TSPPROBE', clusterCIDR: '10.42.0.0/16', nodeIP: undefined },
    );
    const r = await host('iptables-restore', ['-w', '--noflush', '--test'], restoreInput(noChains(), chains));
    return r.code === 0 ? undefined : r.stderr.trim() || `iptables-restore exited with ${r.code}`;
  }

  /** Records the ports `serviceKey` wants (undefined or []: its rules go); see KernelProxier. */
  update(serviceKey: string, ports: KernelServicePort[] | undefined, triggerTimes: number[] = []): void {
    const prev = this.desired.get(serviceKey);
    if (!ports || ports.length === 0) this.desired.delete(serviceKey);
    else this.desired.set(serviceKey, { ports, triggers: [...(prev?.triggers ?? []), ...triggerTimes] });
    this.dirty.add(serviceKey);
  }

  /** Whether something is waiting to be written (a backed-off full write counts). */
  get pending(): boolean {
    return this.dirty.size > 0 || this.needFull;
  }

  /** What the kernel serves for a Service now. */
  served(serviceKey: string): KernelServicePort[] | undefined {
    return this.written.get(serviceKey);
  }

  /** Chains are deleted in the write that removes their last use: none wait. */
  get hasStaleChains(): boolean {
    return false;
  }

  /**
   * Writes what changed since the last flush (see the file comment). Never throws: a
   * refused partial write is followed at once by a full one; a refused full write is
   * logged and counted, and tried again after FULL_WRITE_BACKOFF_MS.
   */
  async flush(settings: TableSettings): Promise<void> {
    if (
      this.settings === undefined ||
      this.settings.clusterCIDR !== settings.clusterCIDR ||
      this.settings.table !== settings.table ||
      this.settings.nodeIP !== settings.nodeIP
    ) {
      if (this.settings && this.settings.table !== settings.table) this.chains = noChains();
      this.settings = settings;
      this.needFull = true;
    }
    const now = this.now();
    if (this.needFull && now < this.retryFullAt) return;
    if (!this.needFull && this.dirty.size === 0) return;
    const full = this.needFull;
    const keys = [...this.dirty];
    this.dirty.clear();
    const desiredPorts = [...this.desired.values()].flatMap((e) => e.ports);
    const after = iptablesRules(desiredPorts, settings);
    let text: string;
    if (full) {
      // Everything written whole, and what an earlier run left of this node's chains deleted.
      const left = await ownChainsInKernel(this.cfg.host, settings.table);
      text = restoreInput(noChains(), after, left);
    } else text = restoreInput(this.chains, after);
    if (text !== '') {
      const r = await this.cfg.host('iptables-restore', ['-w', '--noflush'], text);
      if (r.code !== 0) {
        this.cfg.metrics.iptablesRestoreFailures.inc();
        this.cfg.logger.warn('proxy: iptables-restore refused the rules; writing every chain again', {
          error: r.stderr.trim().slice(0, 2000),
          full,
        });
        for (const k of keys) this.dirty.add(k);
        if (full) this.retryFullAt = now + FULL_WRITE_BACKOFF_MS;
        this.needFull = true;
        // The chains are not what we think (removed by hand, an earlier refusal): all at once.
        if (!full) await this.flush(settings);
        return;
      }
      this.cfg.metrics.iptablesRestores.inc({ kind: full ? 'full' : 'partial' });
    }
    this.chains = after;
    this.needFull = false;
    if (full) await this.ensureJumps(settings.table);
    const before = new Map(
      (full ? [...new Set([...this.written.keys(), ...this.desired.keys()])] : keys).map((k) => [
        k,
        this.written.get(k),
      ]),
    );
    const doneAt = this.now();
    for (const k of before.keys()) {
      const entry = this.desired.get(k);
      if (entry) this.written.set(k, entry.ports);
      else this.written.delete(k);
      for (const t of entry?.triggers ?? [])
        this.cfg.metrics.networkProgramming.observe(Math.max(0, doneAt - t) / 1000);
      if (entry) entry.triggers = [];
    }
    await deleteStaleConntrack(
      this.cfg.host,
      this.cfg.logger,
      before,
      new Map([...before.keys()].map((k) => [k, this.written.get(k)])),
    );
  }

  /** Forgets what was written (the chains were removed): the next flush() writes every chain. */
  forget(): void {
    this.written.clear();
    this.chains = noChains();
    for (const k of this.desired.keys()) this.dirty.add(k);
    this.needFull = true;
    this.retryFullAt = 0;
  }

  /**
   * Whether this node's rules are gone though they were written: a jump from a built-in
   * chain missing, or P-POSTROUTING without its rules (it always has three, so it is the
   * canary of a flush). Then the next flush() writes every chain. Lists only the built-in
   * chains and P-POSTROUTING (`iptables -S`), never the big ones. Never throws.
   */
  async checkTable(): Promise<boolean> {
    if (this.needFull || !this.settings) return false;
    const prefix = this.settings.table;
    const missing: string[] = [];
    const listed = new Map<string, string[]>();
    const list = async (table: string, chain: string): Promise<string[] | undefined> => {
      const key = `${table}/${chain}`;
      if (!listed.has(key)) {
        const r = await this.cfg.host('iptables', ['-w', '-t', table, '-S', chain]);
        if (r.code !== 0) return undefined;
        listed.set(
          key,
          r.stdout.split('\n').filter((l) => l.startsWith('-A ')),
        );
      }
      return listed.get(key);
    };
    for (const j of jumps(prefix)) {
      const rules = await list(j.table, j.builtin);
      if (rules && !rules.some((l) => l.endsWith(` -j ${j.chain}`))) missing.push(`${j.table} ${j.builtin}`);
    }
    const canary = fixedChains(prefix).postrouting;
    const post = await list('nat', canary);
    if (!post || post.length < 3) missing.push(`nat ${canary}`);
    if (missing.length === 0) return false;
    this.cfg.logger.warn('proxy: iptables rules are gone; writing them again', {
      missing: missing.join(', '),
    });
    this.forget();
    return true;
  }

  /** Inserts each jump of `prefix` first in its built-in chain where it is missing; failures logged. */
  private async ensureJumps(prefix: string): Promise<void> {
    for (const j of jumps(prefix)) {
      const check = await this.cfg.host('iptables', ['-w', '-t', j.table, '-C', j.builtin, ...j.rule]);
      if (check.code === 0) continue;
      const r = await this.cfg.host('iptables', ['-w', '-t', j.table, '-I', j.builtin, '1', ...j.rule]);
      if (r.code !== 0)
        this.cfg.logger.warn('proxy: cannot insert the jump to a k8ts chain', {
          table: j.table,
          chain: j.builtin,
          error: r.stderr.trim(),
        });
    }
  }
}
