/**
 * The Docker adapter's NetworkService: the node's pod network as a Docker bridge network
 * with the agent's subnet, labels and MTU. An existing network with that subnet is kept
 * (also with another MTU while containers use it: pods keep running, and new ones get the
 * new MTU once the last old one has gone and the network is made again); one of this
 * node's with another subnet and no containers is made again; anything else is refused.
 *
 * Docker's IPAM hands out only the lower half of the subnet (`IPRange`, dockerIPRange in
 * pod-interfaces.ts): the upper half is the agent's, for sandboxes whose interface it
 * makes itself. An unused network of this node's without that IPRange is made again (as
 * for the MTU); one in use is kept, and its sandboxes all keep Docker's network.
 */
import type Docker from 'dockerode';
import type { PodNetworkConfig } from '../api.js';
import { CriError } from '../errors.js';
import type { DockerObjects } from './objects.js';
import { dockerIPRange, firstHost, podInterfaceRange, type BridgeNetwork } from './pod-interfaces.js';

const MTU_OPTION = 'com.docker.network.driver.mtu';
const BRIDGE_NAME_OPTION = 'com.docker.network.bridge.name';

/**
 * The bridge network as a pod interface joins it (see pod-interfaces.ts), from `docker
 * network inspect`; undefined when Docker may hand out the whole subnet (no IPRange of the
 * lower half) or the network is not a bridge.
 */
export function bridgeNetworkOf(info: Docker.NetworkInspectInfo): BridgeNetwork | undefined {
  if (info.Driver !== 'bridge') return undefined;
  for (const c of info.IPAM?.Config ?? []) {
    const range = c.Subnet ? podInterfaceRange(c.Subnet) : undefined;
    if (!c.Subnet || !range || c.IPRange !== dockerIPRange(c.Subnet)) continue;
    const mtu = Number(info.Options?.[MTU_OPTION] ?? '');
    return {
      name: info.Name,
      bridge: info.Options?.[BRIDGE_NAME_OPTION] || `br-${info.Id.slice(0, 12)}`,
      subnet: c.Subnet,
      // Docker's inspect names the gateway only when it was given; else it is the first host.
      gateway: c.Gateway || firstHost(c.Subnet),
      range,
      ...(mtu > 0 ? { mtu } : {}),
    };
  }
  return undefined;
}

/** NetworkService on one engine. */
export class DockerNetworks {
  /** bridge() answers by network name, dropped when ensure() or remove() changes it. */
  private readonly bridges = new Map<string, Promise<BridgeNetwork | undefined>>();

  constructor(private readonly o: DockerObjects) {}

  /**
   * The network `name` as a pod interface joins it (bridgeNetworkOf), inspected once and
   * then remembered; undefined when it gives no fast path or does not exist.
   */
  bridge(name: string): Promise<BridgeNetwork | undefined> {
    let known = this.bridges.get(name);
    if (!known) {
      known = this.inspect(name).then((info) => info && bridgeNetworkOf(info));
      known.catch(() => this.bridges.delete(name));
      this.bridges.set(name, known);
    }
    return known;
  }

  /** Forgets what bridge() knows of `name` (after a failed attach: it may have been made again). */
  forget(name: string): void {
    this.bridges.delete(name);
  }

  /**
   * Makes sure the network `config.name` exists as asked (see the file comment).
   * @throws CriError FailedPrecondition when it exists and is not this node's, or is in
   *   use with another subnet.
   */
  async ensure(config: PodNetworkConfig): Promise<void> {
    const what = `ensure network ${config.name} (${config.subnet})`;
    const existing = await this.inspect(config.name);
    const ipRange = dockerIPRange(config.subnet);
    if (existing) {
      const subnets = (existing.IPAM?.Config ?? []).map((c) => c.Subnet);
      const inUse = Object.keys(existing.Containers ?? {}).length > 0;
      const mtuMatches =
        (existing.Options?.[MTU_OPTION] ?? undefined) === (config.mtu ? String(config.mtu) : undefined);
      const ours = Object.entries(config.labels).every(([k, v]) => existing.Labels?.[k] === v);
      const rangeMatches = (existing.IPAM?.Config ?? []).some(
        (c) => c.Subnet === config.subnet && (c.IPRange ?? undefined) === ipRange,
      );
      if (subnets.includes(config.subnet) && (inUse || (mtuMatches && (rangeMatches || !ours)))) return;
      if (!ours || (inUse && !subnets.includes(config.subnet))) {
        throw new CriError(
          'FailedPrecondition',
          `${what}: it exists with subnet ${subnets.join(', ') || 'none'} and ${ours ? 'containers use it' : "is not this node's"}`,
        );
      }
      await this.remove(config.name);
    }
    this.bridges.delete(config.name);
    try {
      await this.o.call(what, (e) =>
        e.createNetwork({
          Name: config.name,
          Driver: 'bridge',
          CheckDuplicate: true,
          IPAM: {
            Driver: 'default',
            Config: [
              {
                Subnet: config.subnet,
                ...(ipRange ? { IPRange: ipRange, Gateway: firstHost(config.subnet) } : {}),
              },
            ],
          },
          Labels: config.labels,
          ...(config.mtu ? { Options: { [MTU_OPTION]: String(config.mtu) } } : {}),
        }),
      );
    } catch (err) {
      // Created meanwhile by another call: fine when it has the subnet asked for.
      const again =
        err instanceof CriError && err.code === 'AlreadyExists' && (await this.inspect(config.name));
      if (!again || !(again.IPAM?.Config ?? []).some((c) => c.Subnet === config.subnet)) throw err;
    }
  }

  /** Removes the network `name`; an absent one is done. */
  async remove(name: string): Promise<void> {
    this.bridges.delete(name);
    try {
      await this.o.call(`remove network ${name}`, (e) => e.removeNetwork(name));
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return;
      throw err;
    }
  }

  private async inspect(name: string): Promise<Docker.NetworkInspectInfo | undefined> {
    try {
      return await this.o.call(`inspect network ${name}`, (e) => e.inspectNetwork(name));
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return undefined;
      throw err;
    }
  }
}
