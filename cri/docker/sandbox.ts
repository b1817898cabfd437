/**
 * The Docker adapter's pod sandboxes (CRI's RunPodSandbox … ListPodSandbox), as
 * dockershim's docker_sandbox.go: a sandbox is a container of the pause image on the
 * node's bridge network (the agent creates the network; the sandbox only names it), with
 * the pod's hostname and its hostPorts published on their hostIp. Stopping or removing a
 * sandbox stops or removes its app containers first; both are idempotent.
 *
 * The fast path (pod-interfaces.ts): when the agent's network plugin is enabled, the pod
 * has no hostPort (Docker publishes those, so such pods keep Docker's network) and the
 * network leaves the upper half of its subnet to the agent, the sandbox is created with
 * NetworkMode `none` and a pod IP reserved beforehand (label `io.k8ts.pod-ip`); once it
 * runs, the plugin gives it eth0 in the node's bridge, and `<ip>\t<hostname>` is added to
 * its /etc/hosts, as Docker writes it for a container on a network. A config with a
 * dnsConfig has the sandbox's resolv.conf rewritten with it, on every path (Docker's
 * network, none, host), as dockershim does. Anything failing on
 * the way removes the container and frees the address; stopping or removing the sandbox
 * frees it too (the veth pair goes with the sandbox's network namespace).
 *
 * Between its create and the end of run() the sandbox is `starting` (DockerObjects), and
 * RunPodSandboxOptions.onCreated has its id (and its pod IP on the fast path): the kubelet
 * creates the app containers meanwhile, which Docker allows (NetworkMode and IpcMode
 * `container:<id>` are resolved at the container's start), so their create overlaps the
 * sandbox's start and network set-up instead of following it.
 */
import { appendFile, writeFile } from 'node:fs/promises';
import type Docker from 'dockerode';
import type {
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStatus,
  RunPodSandboxOptions,
} from '../api.js';
import { CriError } from '../errors.js';
import { resolvConfText, sandboxCreateOptions } from './convert.js';
import type { DockerImages } from './image.js';
import {
  LABEL_POD_IP,
  TYPE_CONTAINER,
  TYPE_SANDBOX,
  sandboxFromLabels,
  sandboxLabels,
  sandboxName,
} from './labels.js';
import type { DockerNetworks } from './network.js';
import { matches, nsNow, sandboxStatusOf, type DockerObjects } from './objects.js';
import type { BridgeNetwork, DockerPodInterfaces } from './pod-interfaces.js';

/** The sandbox half of RuntimeService on one node's Docker objects. */
export class DockerSandboxes {
  /** sweepOnce()'s run per network. */
  private readonly swept = new Map<string, Promise<void>>();

  constructor(
    private readonly o: DockerObjects,
    private readonly images: DockerImages,
    /** The image sandboxes run, pulled when missing. */
    readonly pauseImage: string,
    private readonly networks: DockerNetworks,
    /** The agent's network plugin; without it every sandbox is on Docker's network. */
    private readonly interfaces?: DockerPodInterfaces,
  ) {}

  /**
   * Creates and starts the sandbox container (and, on the fast path, its interface; see
   * the file comment); a container that does not start is removed.
   * @returns the sandbox's id (Docker's container id).
   * @throws CriError from the engine; Internal when the plugin fails.
   */
  async run(config: PodSandboxConfig, opts: RunPodSandboxOptions = {}): Promise<string> {
    if (!(await this.images.status(this.pauseImage))) await this.images.pull(this.pauseImage);
    const name = sandboxName(config.metadata);
    const labels = sandboxLabels(this.o.nodeName, config, nsNow());
    const what = `run pod sandbox ${config.metadata.namespace}/${config.metadata.name}`;
    const net = await this.ownInterfaceNetwork(config);
    let ip: string | undefined;
    if (net) {
      await this.sweepOnce(net.name);
      ip = await this.plugin(what, () => this.interfaces!.allocate(net, name));
      labels[LABEL_POD_IP] = ip;
    }
    const body = sandboxCreateOptions(config, this.pauseImage, name, labels, net !== undefined);
    let id: string | undefined;
    try {
      id = await this.o.call(what, (e) => e.createContainer(body));
      const created = id;
      this.o.starting.add(created);
      opts.onCreated?.({ id: created, ...(ip ? { ip } : {}) });
      await this.o.call(what, (e) => e.startContainer(created));
      const dnsText = config.dnsConfig ? resolvConfText(config.dnsConfig) : '';
      // One inspect serves both: the started sandbox's pid and its files' paths.
      if ((net && ip) || dnsText !== '') {
        const info = await this.o.call(what, (e) => e.inspectContainer(created));
        if (net && ip) await this.attach(what, info, ip, net, config.hostname);
        if (dnsText !== '') await this.rewriteResolvConf(what, info, dnsText);
      }
    } catch (err) {
      if (id) this.o.starting.delete(id);
      if (id) await this.o.engine.removeContainer(id, { force: true }).catch(() => undefined);
      if (net && ip) {
        await this.interfaces!.release(net.name, ip, name).catch(() => undefined);
        this.networks.forget(net.name);
      }
      throw err;
    }
    this.o.starting.delete(id);
    return id;
  }

  /** Stops the sandbox's running app containers at once, then the sandbox (freeing its own pod IP). */
  async stop(podSandboxId: string): Promise<void> {
    for (const c of await this.o.listOwned(TYPE_CONTAINER, { sandboxId: podSandboxId })) {
      if (c.State === 'running' || c.State === 'paused' || c.State === 'restarting') {
        await this.o.stopById(c.Id, 0);
      }
    }
    const info = await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX, true);
    if (!info) return;
    await this.o.stopById(podSandboxId, 0);
    await this.releaseOf(info);
  }

  /**
   * Removes the sandbox's app containers (each as RemoveContainer: its log symlink too), then
   * the sandbox (freeing its own pod IP).
   */
  async remove(podSandboxId: string): Promise<void> {
    for (const c of await this.o.listOwned(TYPE_CONTAINER, { sandboxId: podSandboxId }))
      await this.o.removeContainer(c.Id, c.Labels);
    const info = await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX, true);
    if (!info) return;
    await this.o.removeById(podSandboxId);
    await this.releaseOf(info);
  }

  /** The network the sandbox's own interface joins, when it takes the fast path (file comment). */
  private async ownInterfaceNetwork(config: PodSandboxConfig): Promise<BridgeNetwork | undefined> {
    if (!this.interfaces?.enabled() || !config.network) return undefined;
    if (config.linux?.securityContext?.namespaceOptions?.network === 'NODE') return undefined;
    if (config.portMappings.some((pm) => pm.hostPort)) return undefined;
    return this.networks.bridge(config.network);
  }

  /**
   * The first allocation on `network` waits for one sweep (pod-interfaces.ts): no
   * allocation is in flight then, so every owner left is a sandbox container or a leak.
   */
  private sweepOnce(network: string): Promise<void> {
    let done = this.swept.get(network);
    if (!done) {
      done = (async () => {
        const items = await this.o.listOwned(TYPE_SANDBOX, {});
        const owners = new Set(items.flatMap((i) => (i.Names ?? []).map((n) => n.replace(/^\//, ''))));
        await this.plugin(`sweep pod IPs of ${network}`, () => this.interfaces!.sweep(network, owners));
      })();
      done.catch(() => this.swept.delete(network));
      this.swept.set(network, done);
    }
    return done;
  }

  /** Wires the started sandbox (`info`, inspected after its start): the plugin's eth0, then its /etc/hosts line. */
  private async attach(
    what: string,
    info: Docker.ContainerInspectInfo,
    ip: string,
    net: BridgeNetwork,
    hostname: string,
  ) {
    const pid = info.State.Pid;
    if (!info.State.Running || !pid) throw new CriError('Internal', `${what}: the sandbox exited at once`);
    await this.plugin(what, () => this.interfaces!.attach({ pid, sandboxId: info.Id, ip, net }));
    if (hostname && info.HostsPath) {
      await this.plugin(what, () => appendFile(info.HostsPath, `${ip}\t${hostname}\n`));
    }
  }

  /**
   * Replaces the resolv.conf Docker wrote for the started sandbox (`info`) with the pod's,
   * `text` (resolvConfText; dockershim's rewriteResolvFile): the kubelet's nameservers, not
   * Docker's embedded 127.0.0.11 or the host's. App containers joining the sandbox's network
   * (NetworkMode container:<id>) are given this same file by Docker.
   */
  private async rewriteResolvConf(
    what: string,
    info: Docker.ContainerInspectInfo,
    text: string,
  ): Promise<void> {
    if (!info.ResolvConfPath)
      throw new CriError('Internal', `${what}: docker gave the sandbox no resolv.conf`);
    await this.plugin(what, () => writeFile(info.ResolvConfPath, text, { mode: 0o644 }));
  }

  /** Frees the pod IP a sandbox of the fast path holds (label `io.k8ts.pod-ip`). */
  private async releaseOf(info: Docker.ContainerInspectInfo): Promise<void> {
    const ip = info.Config.Labels[LABEL_POD_IP];
    if (!ip || !this.interfaces) return;
    const network = sandboxFromLabels(info.Config.Labels).network;
    const owner = info.Name.replace(/^\//, '');
    await this.plugin(`free pod IP ${ip} of sandbox ${info.Id}`, () =>
      this.interfaces!.release(network, ip, owner),
    );
  }

  /** Runs a plugin step; what it throws becomes CriError Internal naming `what`. */
  private async plugin<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof CriError) throw err;
      throw new CriError('Internal', `${what}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** @throws CriError NotFound for anything not this node's sandbox. */
  async status(podSandboxId: string): Promise<PodSandboxStatus> {
    return sandboxStatusOf(await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX));
  }

  /** This node's sandboxes matching `filter`, rebuilt from their labels. */
  async list(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const items = await this.o.listOwned(TYPE_SANDBOX, { id: filter.id });
    const out: PodSandbox[] = [];
    for (const item of items) {
      const view = sandboxFromLabels(item.Labels);
      const sandbox: PodSandbox = {
        id: item.Id,
        metadata: view.metadata,
        state: item.State === 'running' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
        createdAt: view.createdAt,
        labels: view.labels,
        annotations: view.annotations,
      };
      if (filter.id !== undefined && sandbox.id !== filter.id) continue;
      if (filter.state !== undefined && sandbox.state !== filter.state) continue;
      if (!matches(sandbox.labels, filter.labelSelector)) continue;
      out.push(sandbox);
    }
    return out;
  }
}
