/**
 * The Proxy's side of the kernel modes (proxy.ts hands Services to it; nftables.ts or
 * iptables.ts writes them): whether the kernel is the proxy's to program now, the background
 * writer that coalesces Service changes into few `nft` / `iptables-restore` runs, the
 * periodic check that the rules are still there, the endpoint-change times behind the
 * programming-latency SLI, and the removal of rules an earlier run left: all of this node's
 * where this one serves in userspace, and the other kernel mode's (and userspace mode's
 * `ip k8ts-local-nodeports`) once this one's are written (as kube-proxy cleans up the modes
 * it does not run).
 */
import { hostname } from 'node:os';
import type { Clock } from '../../api/clock.js';
import type { Logger } from '../../api/log.js';
import type { HostCommand } from '../network/host-command.js';
import { iptablesPrefixFor } from './iptables-rules.js';
import { IptablesProxier, removeIptablesRules } from './iptables.js';
import type { KernelProxier, KernelServicePort } from './kernel-ports.js';
import { LOCAL_NODEPORTS_TABLE } from './local-nodeports.js';
import type { ProxyMetrics } from './metrics.js';
import type { KernelProxyMode, ProxyMode } from './mode.js';
import { NftablesProxier } from './nftables.js';
import { canaryTableFor, nftTableFor } from './nftables-rules.js';

/** Milliseconds after a write that flushed chains away before the write that deletes them. */
const STALE_RETRY_MS = 1_100;

/** Where the proxy may program the kernel (ProxyConfig.kernel). */
export interface KernelAccess {
  host: HostCommand;
  /** Whether the kernel is the proxy's (the agent: a cluster network backend other than none). */
  enabled(): boolean;
  /**
   * Whether enabled() is known yet (the cluster network setting was read); default true.
   * Until then a kernel mode writes nothing and serves nothing: an agent restarting with
   * its rules in the kernel leaves them as they are until it knows the setting.
   */
  decided?(): boolean;
  /** The cluster CIDR (net-conf's Network), once known; the kernel modes need it. */
  clusterCIDR?(): string | undefined;
  /** nftables mode's table; default nftTableFor(nodeName, the host's name). */
  table?: string;
  /** iptables mode's chain prefix; default iptablesPrefixFor(nodeName, the host's name). */
  chainPrefix?: string;
}

/** What a KernelMode is made of. */
export interface KernelModeConfig {
  kernel: KernelAccess;
  /** userspace: the kernel is only cleaned of what an earlier run left. */
  mode: ProxyMode;
  nodeName: string;
  nodeIP: string | undefined;
  logger: Logger;
  metrics: ProxyMetrics;
  clock: Clock;
  /** Milliseconds between table checks; 0: none. */
  checkPeriodMs: number;
}

/** See the file comment. */
export class KernelMode {
  private nft: KernelProxier | undefined;
  private readonly kernelMode: KernelProxyMode | undefined;
  /** The other kernel mode's rules were removed (after this one's first write). */
  private otherModeRemoved = false;
  private flushing: Promise<void> | undefined;
  private flushAgain = false;
  /** Both caches synced: nothing is written before (kube-proxy's isInitialized). */
  private synced = false;
  /** The table of an earlier run was removed, where this one does not program the kernel. */
  private tableDropped = false;
  private readonly stopping = new AbortController();
  private checker: Promise<void> | undefined;
  private staleTimer: unknown;
  /** Why start() fell back to userspace (the tool's refusal), for the mode's log line. */
  private unavailable: string | undefined;
  /** Endpoint change times (wall-clock ms, from the slices) not yet handed over, by Service key. */
  private readonly triggerTimes = new Map<string, number[]>();
  /**
   * When this proxy began tracking changes (wall-clock ms): earlier trigger times are not
   * counted (kube-proxy's EndpointsChangeTracker.trackerStartTime).
   */
  private readonly startedAt: number;

  constructor(private readonly cfg: KernelModeConfig) {
    this.startedAt = cfg.clock.now();
    const writer = { host: cfg.kernel.host, logger: cfg.logger, metrics: cfg.metrics };
    if (cfg.mode === 'nftables') this.nft = new NftablesProxier(writer);
    else if (cfg.mode === 'iptables') this.nft = new IptablesProxier(writer);
    this.kernelMode = cfg.mode === 'userspace' ? undefined : cfg.mode;
  }

  /** The kernel mode (undefined in userspace mode, and after start() fell back to it). */
  get mode(): KernelProxyMode | undefined {
    return this.nft ? this.kernelMode : undefined;
  }

  /**
   * Why a kernel mode asked for does not serve now: the tool's refusal at start(), the
   * kernel not being the proxy's (backend none), or the cluster CIDR not known yet;
   * undefined when it serves and in userspace mode. A refusal is known before the cluster
   * network setting is (the proxy serves in userspace whatever the setting says, and logs
   * it at once); the other reasons wait for the setting (undefined until it is known).
   */
  get fallbackReason(): string | undefined {
    if (this.kernelMode === undefined) return undefined;
    if (!this.nft) return this.unavailable ?? `${this.kernelMode} cannot be used here`;
    if (!this.decided()) return undefined;
    if (!this.cfg.kernel.enabled())
      return "the cluster network backend is none, so the kernel is not the proxy's to program";
    if (this.cfg.kernel.clusterCIDR?.() === undefined) return 'the cluster CIDR is not known';
    return undefined;
  }

  /** Checks that nft (iptables) can serve here (else falls back to userspace, logged) and starts the table checks. */
  async start(): Promise<void> {
    if (this.nft) {
      const why =
        this.kernelMode === 'iptables'
          ? await IptablesProxier.unavailable(this.cfg.kernel.host)
          : await NftablesProxier.unavailable(this.cfg.kernel.host);
      if (why !== undefined) {
        this.unavailable = `${this.kernelMode} cannot be used here: ${why.split('\n')[0]}`;
        this.cfg.logger.warn(`proxy: ${this.kernelMode} cannot be used here; serving Services in userspace`, {
          error: why,
        });
        this.nft = undefined;
      }
    }
    if (this.nft && this.cfg.checkPeriodMs > 0)
      this.checker = this.watchTable(this.nft, this.cfg.checkPeriodMs);
  }

  /** The caches are synced: the first (whole-table) write may go. */
  markSynced(): void {
    this.synced = true;
    this.schedule();
  }

  /** Ends the table checks and waits for a write under way; the rules stay in the kernel. */
  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.staleTimer !== undefined) this.cfg.clock.clearTimeout(this.staleTimer);
    await this.checker;
    await this.flushing;
  }

  /** A kernel mode, and the cluster network setting not known yet: serve nothing for now. */
  get waitingForSetting(): boolean {
    return this.nft !== undefined && !this.decided();
  }

  /** Whether Services go to the kernel now (a kernel mode, where the kernel is the proxy's). */
  get active(): boolean {
    return (
      this.nft !== undefined &&
      this.decided() &&
      this.cfg.kernel.enabled() &&
      this.cfg.kernel.clusterCIDR?.() !== undefined
    );
  }

  /** A write under way or due (for Proxy.waitForIdle). */
  get busy(): boolean {
    return this.flushing !== undefined || (this.active && this.nft!.pending);
  }

  /**
   * Records when the endpoint change an EndpointSlice reflects happened (`at`, wall-clock ms;
   * kernel modes only). A change from before this proxy was made is not recorded, as
   * kube-proxy ignores trigger times before its tracker's start: the slices an agent lists
   * after a restart carry the times of changes it programmed (or missed) long ago, and would
   * count the downtime as programming latency.
   */
  noteTrigger(serviceKey: string, at: number): void {
    if (!this.nft || !(at > this.startedAt)) return;
    const times = this.triggerTimes.get(serviceKey) ?? [];
    times.push(at);
    this.triggerTimes.set(serviceKey, times);
  }

  /** Hands `serviceKey`'s ports to the kernel (undefined: its rules go) and schedules the write. */
  serve(serviceKey: string, ports: KernelServicePort[] | undefined): void {
    const triggers = this.triggerTimes.get(serviceKey) ?? [];
    this.triggerTimes.delete(serviceKey);
    this.tableDropped = false;
    this.nft!.update(serviceKey, ports, triggers);
    this.schedule();
  }

  /** What the kernel serves for a Service now. */
  served(serviceKey: string): KernelServicePort[] {
    return this.nft?.served(serviceKey) ?? [];
  }

  /**
   * `serviceKey` is served in userspace: forget its change times, and remove the rules an
   * earlier run (or this one, before the cluster network became none) left in either kernel
   * mode, whose DNAT would send traffic past the listeners, to old endpoints. They go once.
   */
  async servedInUserspace(serviceKey: string): Promise<void> {
    this.triggerTimes.delete(serviceKey);
    if (this.tableDropped || !this.decided()) return;
    this.tableDropped = true;
    while (this.flushing) await this.flushing;
    await this.removeNftables();
    await removeIptablesRules(this.cfg.kernel.host, this.chainPrefix);
    this.nft?.forget();
  }

  private decided(): boolean {
    return this.cfg.kernel.decided?.() ?? true;
  }

  /** The name of this node's rules in the kernel mode served (nft table, or iptables chain prefix). */
  private get table(): string {
    return this.kernelMode === 'iptables' ? this.chainPrefix : this.nftTable;
  }

  private get nftTable(): string {
    return this.cfg.kernel.table ?? nftTableFor(this.cfg.nodeName, hostname());
  }

  private get chainPrefix(): string {
    return this.cfg.kernel.chainPrefix ?? iptablesPrefixFor(this.cfg.nodeName, hostname());
  }

  /** Deletes this node's nftables table and its canary (absent ones are skipped). */
  private async removeNftables(): Promise<void> {
    for (const table of [this.nftTable, canaryTableFor(this.nftTable)])
      await this.cfg.kernel.host('nft', ['delete', 'table', 'ip', table]);
  }

  /**
   * Once this mode's rules are written: removes what the other kernel mode left of this
   * node's (an agent restarted with another --proxy-mode), whose DNAT would otherwise go on
   * competing with this mode's, to old endpoints.
   */
  private async removeOtherMode(): Promise<void> {
    this.otherModeRemoved = true;
    if (this.kernelMode === 'iptables') await this.removeNftables();
    else {
      const removed = await removeIptablesRules(this.cfg.kernel.host, this.chainPrefix);
      if (removed > 0)
        this.cfg.logger.info('proxy: removed the chains of iptables mode', { chains: removed });
    }
    // Userspace mode's DNAT of externalTrafficPolicy Local NodePorts (local-nodeports.ts),
    // left by an earlier run in that mode, would go on sending them to the endpoints it
    // knew. Its table is the host's one, not per node: userspace mode writes it only where
    // the agent owns the host's network (a backend other than none), which is also the
    // only place a kernel mode gets here, and there is one agent per host.
    const r = await this.cfg.kernel.host('nft', ['delete', 'table', 'ip', LOCAL_NODEPORTS_TABLE]);
    if (r.code === 0)
      this.cfg.logger.info("proxy: removed userspace mode's table", { table: LOCAL_NODEPORTS_TABLE });
  }

  /**
   * Writes what the kernel mode's proxier holds, without waiting: changes that come while a
   * write is under way are written together right after it (so a burst of Service changes
   * costs a few `nft` runs, not one each). Nothing is written before the caches synced.
   */
  private schedule(): void {
    const nft = this.nft;
    if (!nft || !this.synced || this.stopping.signal.aborted) return;
    this.flushAgain = true;
    if (this.flushing) return;
    this.flushing = (async () => {
      while (this.flushAgain && !this.stopping.signal.aborted && this.active) {
        this.flushAgain = false;
        await nft.flush({
          table: this.table,
          clusterCIDR: this.cfg.kernel.clusterCIDR!()!,
          nodeIP: this.cfg.nodeIP,
        });
      }
      if (!this.otherModeRemoved && !nft.pending && !this.stopping.signal.aborted && this.active)
        await this.removeOtherMode();
      // Chains flushed away are deleted by a write a second later (nftables.ts).
      if (nft.hasStaleChains && this.staleTimer === undefined && !this.stopping.signal.aborted)
        this.staleTimer = this.cfg.clock.setTimeout(() => {
          this.staleTimer = undefined;
          this.schedule();
        }, STALE_RETRY_MS);
    })().finally(() => (this.flushing = undefined));
  }

  /** Every `periodMs`: writes the table again if something removed it, and deletes stale chains. */
  private async watchTable(nft: KernelProxier, periodMs: number): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      await this.cfg.clock.sleep(periodMs, signal);
      if (signal.aborted || !this.active) continue;
      if ((await nft.checkTable()) || nft.hasStaleChains) this.schedule();
    }
  }
}
