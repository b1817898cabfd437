/**
 * The Docker adapter's NetworkService: the node's pod network as a Docker bridge network
 * with the agent's subnet, labels and MTU. An existing network with that subnet is kept
 * (also with another MTU while containers use it: pods keep running, and new ones get the
 * new MTU once the last old one has gone and the network is made again); one of this
 * node's with another subnet and no containers is made again; anything else is refused.
 */
import type Docker from 'dockerode';
import type { PodNetworkConfig } from '../api.js';
import { CriError } from '../errors.js';
import type { DockerObjects } from './objects.js';

const MTU_OPTION = 'com.docker.network.driver.mtu';

/** NetworkService on one engine. */
export class DockerNetworks {
  constructor(private readonly o: DockerObjects) {}

  /**
   * Makes sure the network `config.name` exists as asked (see the file comment).
   * @throws CriError FailedPrecondition when it exists and is not this node's, or is in
   *   use with another subnet.
   */
  async ensure(config: PodNetworkConfig): Promise<void> {
    const what = `ensure network ${config.name} (${config.subnet})`;
    const existing = await this.inspect(config.name);
    if (existing) {
      const subnets = (existing.IPAM?.Config ?? []).map((c) => c.Subnet);
      const inUse = Object.keys(existing.Containers ?? {}).length > 0;
      const mtuMatches =
        (existing.Options?.[MTU_OPTION] ?? undefined) === (config.mtu ? String(config.mtu) : undefined);
      if (subnets.includes(config.subnet) && (mtuMatches || inUse)) return;
      const ours = Object.entries(config.labels).every(([k, v]) => existing.Labels?.[k] === v);
      if (!ours || (inUse && !subnets.includes(config.subnet))) {
        throw new CriError(
          'FailedPrecondition',
          `${what}: it exists with subnet ${subnets.join(', ') || 'none'} and ${ours ? 'containers use it' : "is not this node's"}`,
        );
      }
      await this.remove(config.name);
    }
    try {
      await this.o.call(what, (e) =>
        e.createNetwork({
          Name: config.name,
          Driver: 'bridge',
          CheckDuplicate: true,
          IPAM: { Driver: 'default', Config: [{ Subnet: config.subnet }] },
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
