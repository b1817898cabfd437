/**
 * The ClusterIP addresses of this node: every Service's clusterIP is added as a /32 to a
 * dummy interface the agent owns (clusterIPInterfaceFor: `k8ts-<hash of the node name>`),
 * as kube-proxy's IPVS mode holds them on `kube-ipvs0`. In userspace mode the proxy listens
 * on clusterIP:port like on any local address; in the kernel modes (nftables, iptables) the
 * rules DNAT the traffic and the address makes the host's own connections to a ClusterIP
 * routable on a host without a default route. Pods reach a ClusterIP through their default
 * gateway (the host end of their bridge) either way.
 *
 * Where the kernel has no dummy driver (some VMs and sandboxes), the addresses go on `lo`
 * instead, labelled `lo:<interface name>` so that they can be found and removed again;
 * the behaviour is the same. Without permission to change addresses (not root), ClusterIPs
 * are not served and NodePorts still are.
 *
 * Several agents on one host each own their interface (or label): the default name is
 * derived from the node name (clusterIPInterfaceFor), because start() adopts what its
 * interface or label holds and prunes what no Service claims, and a shared name would take
 * away another agent's addresses.
 * The same clusterIP may then be present twice, which Linux allows. An address present
 * elsewhere (another interface or label) is never removed by it.
 */
import { runProgram } from '../network/host-command.js';
import { createHash } from 'node:crypto';
import type { Logger } from '../../api/log.js';
import { canonicalIP } from '../../api/meta/ip.js';
import type { Service } from '../../api/types.js';

/** Runs `ip` with arguments; resolves with its exit code and stderr. */
export type IpCommand = (
  args: readonly string[],
) => Promise<{ code: number; stdout: string; stderr: string }>;

/** The real `ip` of iproute2. */
export const runIp: IpCommand = (args) => runProgram('ip', args, { timeoutMs: 10_000 });

/**
 * The default interface of node `nodeName`: `k8ts-` and 7 hex digits of the name's SHA-1
 * (12 characters, so that the `lo:` label of loopback mode stays within Linux's 15).
 * Distinct per node, stable across restarts of the same node's agent.
 */
export function clusterIPInterfaceFor(nodeName: string): string {
  return `k8ts-${createHash('sha1').update(nodeName).digest('hex').slice(0, 7)}`;
}

/** How the addresses are held. */
export type AddressMode = 'dummy' | 'loopback' | 'disabled';

/** Settings of ClusterIPAddresses. */
export interface ClusterIPAddressesConfig {
  /** The dummy interface's name (at most 15 characters), e.g. `k8ts-svc0`. */
  interfaceName: string;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Default: the real `ip`. */
  ip?: IpCommand;
}

/** Adds and removes ClusterIP addresses on the node (see the file comment). */
export class ClusterIPAddresses {
  private readonly cfg: Required<ClusterIPAddressesConfig>;
  private modeValue: AddressMode | undefined;
  private createdInterface = false;
  /** Addresses this manager added or adopted (and so will remove). */
  private readonly owned = new Set<string>();
  /** Adopted addresses no add() has claimed yet (pruneUnclaimed removes them). */
  private readonly unclaimed = new Set<string>();
  /** The change under way: add, remove, prune, reassert and stop run one at a time. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(cfg: ClusterIPAddressesConfig) {
    if (!cfg.interfaceName || cfg.interfaceName.length > 15 || /[\s/:]/.test(cfg.interfaceName)) {
      throw new Error(
        `ClusterIPAddresses: interfaceName ${JSON.stringify(cfg.interfaceName)} must be 1-15 characters without spaces, '/' or ':'`,
      );
    }
    this.cfg = { ip: runIp, ...cfg };
  }

  /** The mode chosen by start() (undefined before). */
  get mode(): AddressMode | undefined {
    return this.modeValue;
  }

  /**
   * Creates (or adopts) the dummy interface, falling back to `lo`. What a previous run of
   * this agent left on its interface (or label) is adopted, not flushed: those addresses
   * stay routable while the agent restarts, and `pruneUnclaimed()` removes the ones no
   * Service claims once the caller has added what it serves. Never throws: failures end in
   * mode `disabled`.
   */
  async start(): Promise<AddressMode> {
    const name = this.cfg.interfaceName;
    const ip = this.cfg.ip;
    const add = await ip(['link', 'add', name, 'type', 'dummy']);
    if (add.code === 0 || /exists/i.test(add.stderr)) {
      this.createdInterface = add.code === 0;
      const up = await ip(['link', 'set', name, 'up']);
      if (up.code === 0) {
        // An adopted interface is ours by name: what an earlier run left on it is ours too.
        if (!this.createdInterface) {
          const held = await ip(['-o', '-4', 'addr', 'show', 'dev', name]);
          if (held.code === 0) this.adopt(parseAddresses(held.stdout));
          else await ip(['addr', 'flush', 'dev', name]);
        }
        this.modeValue = 'dummy';
        this.cfg.logger.info('proxy: ClusterIPs on a dummy interface', { interface: name });
        return this.modeValue;
      }
    }
    // No dummy driver (or not allowed): try labelled addresses on lo.
    const probe = await ip(['-o', '-4', 'addr', 'show', 'dev', 'lo', 'label', this.label()]);
    if (probe.code === 0) {
      this.adopt(parseAddresses(probe.stdout));
      this.modeValue = 'loopback';
      this.cfg.logger.info('proxy: no dummy interface possible; ClusterIPs on lo', {
        interface: name,
        reason: add.stderr.trim(),
        label: this.label(),
      });
      return this.modeValue;
    }
    this.modeValue = 'disabled';
    this.cfg.logger.warn('proxy: cannot manage addresses; ClusterIPs are not served (NodePorts are)', {
      error: (add.stderr || probe.stderr).trim(),
    });
    return this.modeValue;
  }

  /**
   * Removes the addresses start() adopted from an earlier run that no add() has claimed
   * since (Services deleted while the agent was down). Call once the first full sync has
   * added every address served; later calls do nothing.
   */
  pruneUnclaimed(): Promise<void> {
    return this.exclusive(async () => {
      const stale = [...this.unclaimed];
      this.unclaimed.clear();
      for (const a of stale) await this.removeNow(a);
    });
  }

  /**
   * Runs `fn` after the change under way: a reassert()'s read must not race an add or a
   * remove (it would put back an address just removed).
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Takes over addresses an earlier run left: owned (so removable), not yet claimed. */
  private adopt(addresses: readonly string[]): void {
    for (const a of addresses) {
      this.owned.add(a);
      this.unclaimed.add(a);
    }
  }

  /**
   * Adds `address` (an IPv4 address) as a /32. Resolves true when the address is present
   * now (added, or already there), false when it could not be added (logged).
   */
  async add(address: string): Promise<boolean> {
    if (this.modeValue === undefined || this.modeValue === 'disabled') return false;
    this.unclaimed.delete(address);
    if (this.owned.has(address)) return true;
    return this.exclusive(async () => this.owned.has(address) || (await this.addNow(address)) !== 'failed');
  }

  /**
   * Runs `ip addr add` for `address`: `added` (now owned), `present` (the kernel has it
   * already, elsewhere on the device), `failed` (logged).
   */
  private async addNow(address: string): Promise<'added' | 'present' | 'failed'> {
    const args =
      this.modeValue === 'dummy'
        ? ['addr', 'add', `${address}/32`, 'dev', this.cfg.interfaceName]
        : ['addr', 'add', `${address}/32`, 'dev', 'lo', 'label', this.label()];
    const r = await this.cfg.ip(args);
    if (r.code === 0) {
      this.owned.add(address);
      return 'added';
    }
    if (/exists|already assigned/i.test(r.stderr)) return 'present';
    this.cfg.logger.warn('proxy: cannot add ClusterIP address', { address, error: r.stderr.trim() });
    return 'failed';
  }

  /**
   * Puts back the addresses added (claimed) that are no longer on the host: someone ran
   * `ip addr del`, or deleted the dummy interface, under a running agent. One read
   * (`ip -br -4 addr show dev <interface>`, or of lo's label) and an `ip addr add` per
   * missing address, so it is cheap enough for every periodic resync, as kube-proxy's IPVS
   * mode binds its addresses to kube-ipvs0 again on each sync. A missing dummy interface is
   * made again first (and then removed by stop()). Resolves with the addresses put back;
   * never throws (a failed add is logged, and tried again by the next call).
   */
  reassert(): Promise<string[]> {
    return this.exclusive(() => this.reassertNow());
  }

  private async reassertNow(): Promise<string[]> {
    if (this.modeValue !== 'dummy' && this.modeValue !== 'loopback') return [];
    const wanted = [...this.owned].filter((a) => !this.unclaimed.has(a));
    if (wanted.length === 0) return [];
    const name = this.cfg.interfaceName;
    const read =
      this.modeValue === 'dummy'
        ? await this.cfg.ip(['-br', '-4', 'addr', 'show', 'dev', name])
        : await this.cfg.ip(['-br', '-4', 'addr', 'show', 'dev', 'lo', 'label', this.label()]);
    let present: Set<string>;
    if (read.code === 0) present = new Set(parseBriefAddresses(read.stdout));
    else if (this.modeValue === 'dummy' && /does not exist|cannot find/i.test(read.stderr)) {
      const made = await this.cfg.ip(['link', 'add', name, 'type', 'dummy']);
      if (made.code === 0) this.createdInterface = true;
      const up = await this.cfg.ip(['link', 'set', name, 'up']);
      if (up.code !== 0) {
        this.cfg.logger.warn('proxy: cannot make the ClusterIP interface again', {
          interface: name,
          error: (made.stderr || up.stderr).trim(),
        });
        return [];
      }
      present = new Set();
    } else return [];
    const back: string[] = [];
    for (const a of wanted) {
      // Removed meanwhile (remove() forgets at once), or present: nothing to do.
      if (present.has(a) || !this.owned.has(a)) continue;
      // Still owned whatever the add says: a failed one is tried again at the next resync.
      if ((await this.addNow(a)) === 'added') back.push(a);
    }
    if (back.length > 0)
      this.cfg.logger.info('proxy: ClusterIP addresses were removed from under the agent; added again', {
        interface: this.modeValue === 'dummy' ? name : this.label(),
        addresses: back,
      });
    return back;
  }

  /** Removes `address` if this manager added it. */
  async remove(address: string): Promise<void> {
    this.unclaimed.delete(address);
    if (!this.owned.has(address)) return;
    // Forgotten at once (a reassert() under way skips it), deleted in turn.
    this.owned.delete(address);
    await this.exclusive(() => this.deleteNow(address));
  }

  /** Removes `address` if owned, inside exclusive(). */
  private async removeNow(address: string): Promise<void> {
    this.unclaimed.delete(address);
    if (this.owned.delete(address)) await this.deleteNow(address);
  }

  /** Runs `ip addr del` for `address`. */
  private async deleteNow(address: string): Promise<void> {
    const dev = this.modeValue === 'dummy' ? this.cfg.interfaceName : 'lo';
    const r = await this.cfg.ip(['addr', 'del', `${address}/32`, 'dev', dev]);
    if (r.code !== 0 && !/cannot assign|not found|no such/i.test(r.stderr)) {
      this.cfg.logger.warn('proxy: cannot remove ClusterIP address', { address, error: r.stderr.trim() });
    }
  }

  /** The addresses added and not yet removed. */
  addresses(): string[] {
    return [...this.owned];
  }

  /**
   * Forgets the addresses added, leaving them and the interface on the host (a stopping
   * kernel-mode proxy: its rules need them; --cleanup removes them).
   */
  leave(): void {
    this.owned.clear();
    this.unclaimed.clear();
    this.createdInterface = false;
  }

  /** Removes every address added, and the dummy interface if start() created it. */
  stop(): Promise<void> {
    return this.exclusive(async () => {
      for (const a of [...this.owned]) await this.removeNow(a);
      if (this.createdInterface) {
        await this.cfg.ip(['link', 'del', this.cfg.interfaceName]);
        this.createdInterface = false;
      }
    });
  }

  /** The label of addresses on lo: `lo:` + the interface name (an address label is at most 15 characters). */
  private label(): string {
    return `lo:${this.cfg.interfaceName}`.slice(0, 15);
  }
}

/**
 * The IPv4 addresses in `ip -br -4 addr show` output: `<dev> <state> 10.43.0.1/32 ...`, or
 * with a label filter only the addresses (`10.43.0.1/32 `).
 */
export function parseBriefAddresses(output: string): string[] {
  return [...output.matchAll(/(?:^|\s)(\d+\.\d+\.\d+\.\d+)\/\d+/g)].map((m) => m[1]!);
}

/** The IPv4 addresses in `ip -o -4 addr show` output. */
export function parseAddresses(output: string): string[] {
  return [...output.matchAll(/\binet (\d+\.\d+\.\d+\.\d+)\//g)].map((m) => m[1]!);
}

/**
 * The Service's IPv4 clusterIP, if it has one (not headless, not ExternalName, not IPv6), in
 * canonical form: Kubernetes 1.32 stores an address as written, leading zeros included
 * (`10.43.000.50`), and kube-proxy reads it with ParseIPSloppy, as here (`10.43.0.50`).
 */
export function usableClusterIP(svc: Service): string | undefined {
  const ip = svc.spec.clusterIPs?.[0] ?? svc.spec.clusterIP;
  if (!ip || ip === 'None' || !/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return undefined;
  return canonicalIP(ip);
}
