/**
 * The containerd adapter's NetworkService. The pod network is the runtime's: its CRI
 * plugin puts each sandbox on the CNI network of its conf dir, a conflist written by
 * whoever configures the runtime (the agent's agent/network/cni.ts, from the node's
 * podCIDR). So ensure() only waits until the runtime reports it has loaded a network of
 * that name and subnet — containerd's verbose Status (its CRI plugin's status.go) carries
 * `cniconfig` and `lastCNILoadStatus` — and a sandbox may then name that network
 * (sandbox.ts; any other name is NotFound). remove() forgets the name.
 */
import type { PodNetworkConfig } from '../api.js';
import { CriError } from '../errors.js';
import { strMap } from './convert.js';
import type { ContainerdObjects } from './objects.js';

/** What a CRI runtime's verbose Status says of its CNI configuration. */
interface LoadedCni {
  /** `lastCNILoadStatus`: `OK`, or why the last load failed ('' when not reported). */
  status: string;
  /** The conf dir it reads ('' when not reported). */
  confDir: string;
  /** The networks loaded (loopback aside), with the subnets of their IPAM ranges. */
  networks: { name: string; subnets: string[] }[];
}

/** The subnets a CNI plugin's `ipam` names (host-local's `ranges` or its older `subnet`). */
function ipamSubnets(plugin: unknown): string[] {
  const ipam = (plugin as { ipam?: { subnet?: unknown; ranges?: unknown } } | null)?.ipam;
  const out: string[] = [];
  if (typeof ipam?.subnet === 'string') out.push(ipam.subnet);
  if (Array.isArray(ipam?.ranges)) {
    for (const set of ipam.ranges as unknown[]) {
      for (const r of Array.isArray(set) ? (set as { subnet?: unknown }[]) : []) {
        if (typeof r?.subnet === 'string') out.push(r.subnet);
      }
    }
  }
  return out;
}

/**
 * Reads containerd's verbose Status info: `lastCNILoadStatus`, and `cniconfig` (go-cni's
 * ConfigResult: `PluginConfDir`, `Networks[].Config.{Name, Source}`, Source the conflist).
 * Anything missing or malformed reads as nothing loaded.
 */
function loadedCniNetworks(info: unknown): LoadedCni {
  const map = strMap(info);
  const parse = (text: string | undefined): unknown => {
    try {
      return text === undefined ? undefined : (JSON.parse(text) as unknown);
    } catch {
      return undefined;
    }
  };
  const rawStatus = parse(map.lastCNILoadStatus) ?? map.lastCNILoadStatus ?? '';
  const cni = parse(map.cniconfig) as
    { PluginConfDir?: string; Networks?: { Config?: { Name?: string; Source?: string } }[] } | undefined;
  const networks: LoadedCni['networks'] = [];
  for (const n of cni?.Networks ?? []) {
    const name = n.Config?.Name;
    if (typeof name !== 'string' || name === 'cni-loopback') continue;
    const conf = parse(n.Config?.Source) as { plugins?: unknown[] } | undefined;
    networks.push({ name, subnets: (conf?.plugins ?? [conf]).flatMap(ipamSubnets) });
  }
  return { status: String(rawStatus), confDir: String(cni?.PluginConfDir ?? ''), networks };
}

/** NetworkService on one runtime connection: the CNI networks it has been seen to load. */
export class ContainerdNetworks {
  /** The CNI networks ensure() has seen the runtime load. */
  private readonly networks = new Set<string>();

  constructor(
    private readonly o: ContainerdObjects,
    /** How long ensure() waits for the runtime to load a network, ms. */
    private readonly networkWaitMs: number,
  ) {}

  /** True when ensure() confirmed the network `name` (and remove() has not forgotten it). */
  has(name: string): boolean {
    return this.networks.has(name);
  }

  /**
   * Resolves once the runtime has loaded the CNI network `config.name` with
   * `config.subnet` (host-local's range) from its conf dir, polling its verbose Status
   * every 200 ms for up to `networkWaitMs`; the conflist is written elsewhere (see the file
   * comment). The MTU and labels are the conflist writer's.
   * @throws CriError FailedPrecondition with the runtime's own words (its last CNI load
   *   status, the networks it has) when it has not loaded it in time; Unavailable when
   *   the runtime does not answer.
   */
  async ensure(config: PodNetworkConfig): Promise<void> {
    const what = `pod network ${config.name} (${config.subnet})`;
    const end = Date.now() + this.networkWaitMs;
    for (;;) {
      const r = await this.o.runtimeCall('Status', { verbose: true }, `runtime status for ${what}`);
      const loaded = loadedCniNetworks(r.info);
      if (
        loaded.status === 'OK' &&
        loaded.networks.some((n) => n.name === config.name && n.subnets.includes(config.subnet))
      ) {
        this.networks.add(config.name);
        return;
      }
      if (Date.now() >= end) {
        const have = loaded.networks.map((n) => `${n.name} (${n.subnets.join(', ') || 'no subnet'})`);
        throw new CriError(
          'FailedPrecondition',
          `${what}: the runtime has not loaded it from its CNI conf dir${loaded.confDir ? ` ${loaded.confDir}` : ''} (CNI load status: ${loaded.status || 'unknown'}; networks: ${have.join(', ') || 'none'})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Forgets the network `name`: sandboxes may no longer name it. */
  async remove(name: string): Promise<void> {
    this.networks.delete(name);
  }
}
