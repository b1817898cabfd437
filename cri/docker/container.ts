/**
 * The Docker adapter's containers (CRI's CreateContainer … ContainerStats), as
 * dockershim's docker_container.go: an app container joins its sandbox's network and IPC
 * namespaces (convert.ts, containerCreateOptions), so the containers of one pod share
 * localhost; its CRI view is rebuilt from its labels (labels.ts) and Docker's state.
 * Logs stay in Docker's json-file driver; the kubelet's log path (the sandbox's
 * logDirectory and the container's logPath) is a symlink to that file, made at every start
 * and removed with the container, as cri-dockerd does (log-symlink.ts), and is
 * ContainerStatus.logPath (Docker's own file for a container created without one).
 * execSync cannot kill a process that outlives its timeout (Docker has no call for it,
 * as under dockershim): the caller gets DeadlineExceeded and the process runs on.
 */
import { PassThrough, type Readable } from 'node:stream';
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
import {
  containerCreateOptions,
  containerStateFromInspect,
  containerStateFromList,
  statsFromDocker,
} from './convert.js';
import {
  TYPE_CONTAINER,
  TYPE_SANDBOX,
  containerFromLabels,
  containerLabels,
  containerName,
} from './labels.js';
import { createContainerLogSymlink, LABEL_CONTAINER_LOG_PATH } from './log-symlink.js';
import { deadline, matches, nsNow, streamDone, type DockerObjects } from './objects.js';

/** The container half of RuntimeService on one node's Docker objects. */
export class DockerContainers {
  constructor(
    private readonly o: DockerObjects,
    /** How long execSync waits for docker to report an exec's exit code after its output ends, ms. */
    private readonly execExitWaitMs: number,
  ) {}

  /**
   * Creates (does not start) a container in sandbox `podSandboxId`.
   * A sandbox this adapter is starting will do (RunPodSandboxOptions.onCreated, by the id
   * it gave): Docker joins its namespaces at the container's start.
   * @throws CriError InvalidArgument (image reference), NotFound (sandbox),
   *   FailedPrecondition (sandbox neither running nor being started).
   */
  async create(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    parseImageReference(config.image.image);
    // A sandbox being started is not inspected: Docker's inspect waits for the container's
    // lock, which its start holds to the end.
    let sandboxId = podSandboxId;
    if (!this.o.starting.has(podSandboxId)) {
      const sandbox = await this.o.inspectOwned(podSandboxId, TYPE_SANDBOX);
      if (!sandbox.State.Running) {
        throw new CriError('FailedPrecondition', `pod sandbox ${podSandboxId} is not ready`);
      }
      sandboxId = sandbox.Id;
    }
    const labels = containerLabels(this.o.nodeName, sandboxId, sandboxConfig, config, nsNow());
    const body = containerCreateOptions(
      sandboxId,
      config,
      sandboxConfig,
      containerName(sandboxConfig.metadata, config.metadata),
      labels,
    );
    const what = `create container ${config.metadata.name} in ${sandboxConfig.metadata.namespace}/${sandboxConfig.metadata.name}`;
    return this.o.call(what, (e) => e.createContainer(body));
  }

  /**
   * Starts the container, then links its kubelet log path to Docker's log, also when the
   * start failed (cri-dockerd's StartContainer; log-symlink.ts).
   * @throws CriError FailedPrecondition unless the container is created and its sandbox
   *   runs; the engine's error of the start; Internal when the link cannot be made.
   */
  async start(containerId: string): Promise<void> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER);
    const state = containerStateFromInspect(info.State, 0n).state;
    if (state !== 'CONTAINER_CREATED') {
      throw new CriError('FailedPrecondition', `container ${containerId} is ${state}, not created`);
    }
    const sandboxId = containerFromLabels(info.Config.Labels).podSandboxId;
    const sandbox = await this.o.inspectOwned(sandboxId, TYPE_SANDBOX, true);
    if (!sandbox?.State.Running) {
      throw new CriError(
        'FailedPrecondition',
        `pod sandbox ${sandboxId} of container ${containerId} is not ready`,
      );
    }
    let startError: unknown;
    try {
      await this.o.call(`start container ${containerId}`, (e) => e.startContainer(info.Id));
    } catch (err) {
      startError = err;
    }
    const path = info.Config.Labels[LABEL_CONTAINER_LOG_PATH];
    if (path) {
      // Docker names its log file at the first start (inspect before it has none).
      const started = await this.o.call(`inspect container ${containerId}`, (e) =>
        e.inspectContainer(info.Id),
      );
      await createContainerLogSymlink(info.Id, path, started.LogPath);
    }
    if (startError) throw startError;
  }

  /** Stops within `timeoutSeconds` (then SIGKILL); unknown or stopped is done. */
  async stop(containerId: string, timeoutSeconds: number): Promise<void> {
    if (await this.o.inspectOwned(containerId, TYPE_CONTAINER, true))
      await this.o.stopById(containerId, timeoutSeconds);
  }

  /** Removes, running or not, with its log symlink (log-symlink.ts); unknown is done. */
  async remove(containerId: string): Promise<void> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER, true);
    if (info) await this.o.removeContainer(info.Id, info.Config.Labels);
  }

  /** This node's containers matching `filter`, rebuilt from their labels. */
  async list(filter: ContainerFilter = {}): Promise<Container[]> {
    const sel = { id: filter.id, sandboxId: filter.podSandboxId };
    const out: Container[] = [];
    for (const item of await this.o.listOwned(TYPE_CONTAINER, sel)) {
      const view = containerFromLabels(item.Labels);
      const c: Container = {
        id: item.Id,
        podSandboxId: view.podSandboxId,
        metadata: view.metadata,
        image: view.image,
        imageRef: item.ImageID,
        state: containerStateFromList(item.State),
        createdAt: view.createdAt,
        labels: view.labels,
        annotations: view.annotations,
      };
      if (filter.id !== undefined && c.id !== filter.id) continue;
      if (filter.state !== undefined && c.state !== filter.state) continue;
      if (!matches(c.labels, filter.labelSelector)) continue;
      out.push(c);
    }
    return out;
  }

  /** @throws CriError NotFound for anything not this node's container. */
  async status(containerId: string): Promise<ContainerStatus> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER);
    const view = containerFromLabels(info.Config.Labels);
    return {
      id: info.Id,
      podSandboxId: view.podSandboxId,
      metadata: view.metadata,
      image: view.image,
      imageRef: info.Image,
      createdAt: view.createdAt,
      labels: view.labels,
      annotations: view.annotations,
      ...containerStateFromInspect(info.State, view.createdAt),
      logPath: info.Config.Labels[LABEL_CONTAINER_LOG_PATH] ?? info.LogPath ?? '',
    };
  }

  /**
   * Runs `cmd` in the container and collects its output and exit code.
   * @throws CriError FailedPrecondition (not running), DeadlineExceeded (after
   *   `timeoutSeconds`, when > 0), Internal (docker recorded no exit code).
   */
  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER);
    if (!info.State.Running)
      throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    const what = `exec ${JSON.stringify(cmd)} in ${containerId}`;
    const execId = await this.o.call(what, (e) =>
      e.createExec(info.Id, { Cmd: cmd, AttachStdout: true, AttachStderr: true, AttachStdin: false }),
    );
    const timer = timeoutSeconds > 0 ? deadline(timeoutSeconds * 1000, what) : undefined;
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stream: Readable | undefined;
    try {
      const run = async (): Promise<void> => {
        stream = await this.o.call(what, (e) => e.startExec(execId, { stdin: false }));
        const out = new PassThrough().on('data', (b: Buffer) => stdout.push(b));
        const err = new PassThrough().on('data', (b: Buffer) => stderr.push(b));
        this.o.engine.demuxStream(stream, out, err);
        await streamDone(stream);
      };
      await (timer ? Promise.race([run(), timer.promise]) : run());
      // The output can end a moment before docker records the exit code.
      const end = Date.now() + this.execExitWaitMs;
      for (;;) {
        const st = await this.o.call(what, (e) => e.inspectExec(execId));
        if (!st.Running && st.ExitCode !== null) {
          return { stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), exitCode: st.ExitCode };
        }
        if (Date.now() > end) throw new CriError('Internal', `${what}: docker reported no exit code`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      timer?.cancel();
      stream?.destroy();
    }
  }

  /** CPU time and working set now (Docker's one-shot stats; convert.ts, statsFromDocker). */
  async stats(containerId: string): Promise<ContainerStats> {
    const info = await this.o.inspectOwned(containerId, TYPE_CONTAINER);
    const s = await this.o.call(`stats of ${containerId}`, (e) => e.containerStats(info.Id));
    return statsFromDocker(info.Id, s, nsNow());
  }
}
