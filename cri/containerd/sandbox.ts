/**
 * The containerd adapter's pod sandboxes (CRI's RunPodSandbox … ListPodSandbox), each one
 * RPC as in the kubelet's CRI remote client (k8s.io/cri-client, pkg/remote_runtime.go).
 * The sandbox is the runtime's pause container (containerd's `sandbox_image`) on the CNI
 * network its CRI plugin loaded (network.ts). What the adapter adds, as the kubelet does
 * around those calls: a sandbox without a logDirectory gets
 * `<podLogsDir>/<namespace>_<name>_<uid>` (made here before RunPodSandbox), and that
 * directory is removed with the pod's last sandbox. Stop and remove of what is gone succeed.
 */
import { mkdir, rm } from 'node:fs/promises';
import type { PodSandbox, PodSandboxConfig, PodSandboxFilter, PodSandboxStatus } from '../api.js';
import { CriError } from '../errors.js';
import type { Message } from './client.js';
import { sandboxFrom, sandboxMessage } from './convert.js';
import type { ContainerdNetworks } from './network.js';
import type { ContainerdObjects } from './objects.js';

/** The sandbox half of RuntimeService on one runtime connection. */
export class ContainerdSandboxes {
  constructor(
    private readonly o: ContainerdObjects,
    private readonly networks: ContainerdNetworks,
  ) {}

  /**
   * CRI's PodSandboxConfig message for `config` (also sent with CreateContainer).
   * @throws CriError NotFound when `config.network` is not a network ensurePodNetwork confirmed.
   */
  message(config: PodSandboxConfig): Message {
    if (config.network !== undefined && !this.networks.has(config.network)) {
      throw new CriError(
        'NotFound',
        `pod network ${JSON.stringify(config.network)}: not loaded by the runtime (the containerd adapter knows only the CNI network ensurePodNetwork confirmed)`,
      );
    }
    return sandboxMessage(
      config,
      this.o.ownLabels(config.labels),
      config.logDirectory ?? this.o.defaultLogDirectory(config.metadata),
    );
  }

  /** RunPodSandbox, after making the pod's log directory; the new sandbox's id. */
  async run(config: PodSandboxConfig): Promise<string> {
    const message = this.message(config);
    // The kubelet makes the pod's log directory; the runtime writes into it.
    await mkdir(String(message.logDirectory), { recursive: true, mode: 0o755 });
    const r = await this.o.runtimeCall(
      'RunPodSandbox',
      { config: message, runtimeHandler: '' },
      `run sandbox ${config.metadata.namespace}/${config.metadata.name}`,
    );
    return String(r.podSandboxId);
  }

  /** StopPodSandbox; a sandbox that is gone is stopped. */
  async stop(podSandboxId: string): Promise<void> {
    await this.o.ignoreNotFound(
      this.o.runtimeCall('StopPodSandbox', { podSandboxId }, `stop sandbox ${podSandboxId}`),
    );
  }

  /** RemovePodSandbox (gone is removed); then the pod's log directory when no sandbox of the pod is left. */
  async remove(podSandboxId: string): Promise<void> {
    const sandbox = await this.status(podSandboxId).catch(() => undefined);
    await this.o.ignoreNotFound(
      this.o.runtimeCall('RemovePodSandbox', { podSandboxId }, `remove sandbox ${podSandboxId}`),
    );
    // As the kubelet removes a pod's log directory with the pod: once its last sandbox is gone.
    if (sandbox) {
      const { uid } = sandbox.metadata;
      const others = await this.list().catch(() => undefined);
      if (others && !others.some((o) => o.metadata.uid === uid))
        await rm(this.o.defaultLogDirectory(sandbox.metadata), { recursive: true, force: true });
    }
  }

  /**
   * PodSandboxStatus with the pod's IP.
   * @throws CriError NotFound when the runtime has no such sandbox or it is another node's.
   */
  async status(podSandboxId: string): Promise<PodSandboxStatus> {
    const what = `sandbox ${podSandboxId}`;
    const r = await this.o.runtimeCall('PodSandboxStatus', { podSandboxId, verbose: false }, what);
    const s = r.status as Message | null;
    if (!s || !this.o.owns(s.labels)) throw new CriError('NotFound', `${what}: not found`);
    return { ...sandboxFrom(s), network: { ip: String(s.network?.ip ?? '') } };
  }

  /** ListPodSandbox of this node's sandboxes matching `filter`. */
  async list(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const f: Message = { labelSelector: this.o.selector(filter.labelSelector) };
    if (filter.id !== undefined) f.id = filter.id;
    if (filter.state !== undefined) f.state = { state: filter.state };
    const r = await this.o.runtimeCall('ListPodSandbox', { filter: f }, 'list sandboxes');
    return ((r.items as Message[] | undefined) ?? [])
      .filter((s) => this.o.owns(s.labels) && (filter.id === undefined || s.id === filter.id))
      .map((s) => sandboxFrom(s));
  }
}
