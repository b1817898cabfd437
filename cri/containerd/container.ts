/**
 * The containerd adapter's containers (CRI's CreateContainer … ContainerStats), each one
 * RPC as in the kubelet's CRI remote client (k8s.io/cri-client, pkg/remote_runtime.go),
 * with what the runtime reports brought to the docker adapter's behaviour:
 *
 * - A start failure (containerd's reason `StartError`) is reported as dockershim did:
 *   reason ContainerCannotRun, started and finished when created.
 * - A container's sandbox id comes from the annotation `io.k8ts.sandbox-id` (convert.ts),
 *   or for one another client made, from ListContainers.
 * - A container's log file (`<name>/<attempt>.log` under its sandbox's logDirectory when
 *   it names no logPath) goes with it, when it lies under podLogsDir (the kubelet's
 *   removeContainerLog). Stop and remove of what is gone succeed.
 */
import { rm } from 'node:fs/promises';
import type {
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerStats,
  ContainerStatus,
  ExecSyncResponse,
  PodSandboxConfig,
} from '../api.js';
import { CriError } from '../errors.js';
import { parseImageReference } from '../reference.js';
import type { Message } from './client.js';
import { big, containerFrom, containerMessage, num } from './convert.js';
import type { ContainerdObjects } from './objects.js';
import type { ContainerdSandboxes } from './sandbox.js';

/** An execSync without a timeout: its RPC's deadline, ms. */
const NO_LIMIT_MS = 24 * 3600_000;

/** The container half of RuntimeService on one runtime connection. */
export class ContainerdContainers {
  constructor(
    private readonly o: ContainerdObjects,
    private readonly sandboxes: ContainerdSandboxes,
  ) {}

  /**
   * CreateContainer in sandbox `podSandboxId`; the new container's id.
   * @throws CriError InvalidArgument for a malformed image reference; NotFound when
   *   `sandboxConfig` names a network the runtime has not loaded (sandbox.ts).
   */
  async create(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    parseImageReference(config.image.image);
    const r = await this.o.runtimeCall(
      'CreateContainer',
      {
        podSandboxId,
        config: containerMessage(config, podSandboxId, this.o.ownLabels(config.labels)),
        sandboxConfig: this.sandboxes.message(sandboxConfig),
      },
      `create container ${config.metadata.name} in sandbox ${podSandboxId}`,
    );
    return String(r.containerId);
  }

  /** StartContainer. */
  async start(containerId: string): Promise<void> {
    await this.o.runtimeCall('StartContainer', { containerId }, `start container ${containerId}`);
  }

  /** StopContainer with a grace period of `timeoutSeconds` (the RPC gets 60 s more); gone is stopped. */
  async stop(containerId: string, timeoutSeconds: number): Promise<void> {
    await this.o.ignoreNotFound(
      this.o.runtimeCall(
        'StopContainer',
        { containerId, timeout: timeoutSeconds },
        `stop container ${containerId}`,
        (timeoutSeconds + 60) * 1000,
      ),
    );
  }

  /** RemoveContainer (gone is removed), then its log file when it lies under podLogsDir. */
  async remove(containerId: string): Promise<void> {
    const logPath = (await this.status(containerId).catch(() => undefined))?.logPath;
    await this.o.ignoreNotFound(
      this.o.runtimeCall('RemoveContainer', { containerId }, `remove container ${containerId}`),
    );
    // The log file goes with its container (the kubelet's removeContainerLog), when it is
    // one of ours: under podLogsDir.
    if (logPath && logPath.startsWith(`${this.o.podLogsDir}/`)) await rm(logPath, { force: true });
  }

  /** ListContainers of this node's containers matching `filter`. */
  async list(filter: ContainerFilter = {}): Promise<Container[]> {
    const f: Message = { labelSelector: this.o.selector(filter.labelSelector) };
    if (filter.id !== undefined) f.id = filter.id;
    if (filter.podSandboxId !== undefined) f.podSandboxId = filter.podSandboxId;
    if (filter.state !== undefined) f.state = { state: filter.state };
    const r = await this.o.runtimeCall('ListContainers', { filter: f }, 'list containers');
    return ((r.containers as Message[] | undefined) ?? [])
      .filter((c) => this.o.owns(c.labels) && (filter.id === undefined || c.id === filter.id))
      .map((c) => containerFrom(c));
  }

  /**
   * ContainerStatus, times in ns since the epoch (see the file comment for StartError).
   * @throws CriError NotFound when the runtime has no such container or it is another node's.
   */
  async status(containerId: string): Promise<ContainerStatus> {
    const what = `container ${containerId}`;
    const r = await this.o.runtimeCall('ContainerStatus', { containerId, verbose: false }, what);
    const s = r.status as Message | null;
    if (!s || !this.o.owns(s.labels)) throw new CriError('NotFound', `${what}: not found`);
    const base = containerFrom(s);
    if (base.podSandboxId === '') {
      // Not made by this adapter: the list has the sandbox's id.
      const listed = await this.o.runtimeCall('ListContainers', { filter: { id: containerId } }, what);
      const item = ((listed.containers as Message[] | undefined) ?? []).find((c) => c.id === containerId);
      base.podSandboxId = String(item?.podSandboxId ?? '');
    }
    let startedAt = big(s.startedAt);
    let finishedAt = big(s.finishedAt);
    let reason = String(s.reason ?? '');
    if (reason === 'StartError') {
      // As dockershim: a start failure is a finish when created (CrashLoopBackOff counts from it).
      reason = 'ContainerCannotRun';
      startedAt = base.createdAt;
      finishedAt = base.createdAt;
    } else if (finishedAt > 0n && startedAt > finishedAt) {
      // containerd stamps the start after the task's Start returns and the exit when the
      // shim saw it: a process that ends at once can have finished "before" it started.
      startedAt = finishedAt;
    }
    return {
      ...base,
      startedAt,
      finishedAt,
      exitCode: num(s.exitCode),
      reason,
      message: String(s.message ?? ''),
      logPath: String(s.logPath ?? ''),
    };
  }

  /** ExecSync of `cmd`, killed by the runtime after `timeoutSeconds` (0: no limit). */
  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    const r = await this.o.runtimeCall(
      'ExecSync',
      { containerId, cmd, timeout: timeoutSeconds },
      `exec ${JSON.stringify(cmd)} in container ${containerId}`,
      timeoutSeconds > 0 ? (timeoutSeconds + 10) * 1000 : NO_LIMIT_MS,
    );
    return {
      stdout: Buffer.from((r.stdout as Buffer | undefined) ?? []),
      stderr: Buffer.from((r.stderr as Buffer | undefined) ?? []),
      exitCode: num(r.exitCode),
    };
  }

  /**
   * ContainerStats: CPU in core-ns, memory working set in bytes, timestamp in ns (now
   * when the runtime gives none).
   * @throws CriError NotFound when the runtime has no stats of it or it is another node's.
   */
  async stats(containerId: string): Promise<ContainerStats> {
    const what = `stats of container ${containerId}`;
    const r = await this.o.runtimeCall('ContainerStats', { containerId }, what);
    const s = r.stats as Message | null;
    if (!s || !this.o.owns(s.attributes?.labels)) throw new CriError('NotFound', `${what}: not found`);
    const ts = big(s.cpu?.timestamp) || big(s.memory?.timestamp);
    return {
      id: String(s.attributes?.id ?? containerId),
      timestamp: ts > 0n ? ts : BigInt(Date.now()) * 1_000_000n,
      cpuUsageCoreNanoSeconds: big(s.cpu?.usageCoreNanoSeconds?.value),
      memoryWorkingSetBytes: num(s.memory?.workingSetBytes?.value),
    };
  }
}
