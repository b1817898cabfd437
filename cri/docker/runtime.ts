/**
 * The docker adapter: CRI (../api.ts) on the Docker Engine API through dockerode, in the
 * manner of the kubelet's dockershim (pkg/kubelet/dockershim) and cri-dockerd.
 *
 * - A sandbox is a container of the pause image on the node's bridge network (the
 *   network is created by the agent; the adapter only names it), with the pod's hostname
 *   and its hostPorts published on their hostIp. App containers join the sandbox's network
 *   and IPC namespaces, so the containers of one pod share localhost.
 * - Everything the adapter creates is labelled with CRI's metadata and the node name
 *   (labels.ts): listPodSandbox/listContainers rebuild the agent's view from Docker alone,
 *   and an adapter never lists or touches another node's containers — to it they do not
 *   exist (NotFound).
 * - Stop and remove are idempotent; Docker's 404 is NotFound; a socket error is
 *   Unavailable (errors.ts).
 * - Logs stay in Docker's json-file driver (ContainerStatus.logPath is its file).
 * - execSync cannot kill a process that outlives its timeout (Docker has no call for it,
 *   as under dockershim): the caller gets DeadlineExceeded and the process runs on.
 * - Streaming (logs, exec, attach) uses Docker's hijacked connections, demultiplexed with
 *   back-pressure (streams.ts); port-forward dials the sandbox's address on the node's
 *   bridge network from the host, which reaches the same network namespace as CRI's
 *   PortForward (dockershim entered it with nsenter + socat).
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { Duplex, PassThrough, pipeline, Writable, type Readable } from 'node:stream';
import Docker from 'dockerode';
import type {
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerLogOptions,
  ContainerStats,
  ContainerStatus,
  ExecSyncResponse,
  Image,
  PodNetworkConfig,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStatus,
  PullProgress,
  Runtime,
  RuntimeStatus,
  StreamOptions,
  StreamSession,
} from '../api.js';
import { CriError } from '../errors.js';
import { DockerDemux } from './streams.js';
import { familiarRepository, parseImageReference } from '../reference.js';
import {
  containerCreateOptions,
  containerStateFromInspect,
  containerStateFromList,
  imageUser,
  sandboxCreateOptions,
  statsFromDocker,
  type DockerStats,
} from './convert.js';
import { criCodeOf, dockerErrorInfo, toCriError } from './errors.js';
import { followPull } from './pull.js';
import {
  LABEL_NODE,
  LABEL_SANDBOX_ID,
  LABEL_TYPE,
  TYPE_CONTAINER,
  TYPE_SANDBOX,
  containerFromLabels,
  containerLabels,
  containerName,
  isOwned,
  sandboxFromLabels,
  sandboxLabels,
  sandboxName,
  type ObjectType,
} from './labels.js';

/** The pause image sandboxes run (built by scripts/build-images.sh). */
export const DEFAULT_PAUSE_IMAGE = 'k8ts/pause:1.0';

/** Configuration of DockerRuntime.connect. */
export interface DockerRuntimeOptions {
  /** The node whose containers this adapter owns (label `io.k8ts.node`). Required. */
  nodeName: string;
  /** Docker's socket (default: DOCKER_HOST when it is `unix://...`, else /var/run/docker.sock). */
  socketPath?: string;
  /** Image of sandbox containers (default `k8ts/pause:1.0`). */
  pauseImage?: string;
  /** How long execSync waits for docker to report an exec's exit code after its output ends, ms (default 5000). */
  execExitWaitMs?: number;
}

const nsNow = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** Rejects after `ms` with DeadlineExceeded; `cancel()` stops the timer. */
function deadline(ms: number, what: string): { promise: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new CriError('DeadlineExceeded', `${what}: timed out after ${ms / 1000}s`)),
      ms,
    );
  });
  promise.catch(() => undefined);
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Resolves when `stream` ends or closes; rejects on its error. */
function streamDone(stream: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', reject);
  });
}

/** Docker Engine adapter (see the file comment). */
export class DockerRuntime implements Runtime {
  private closed = false;

  private constructor(
    private readonly docker: Docker,
    readonly nodeName: string,
    readonly pauseImage: string,
    private readonly execExitWaitMs: number,
  ) {}

  /**
   * Connects to the engine and checks that it answers.
   * @throws Error when `nodeName` is empty; CriError Unavailable when docker does not answer.
   */
  static async connect(opts: DockerRuntimeOptions): Promise<DockerRuntime> {
    if (!opts.nodeName) throw new Error('DockerRuntime: nodeName is required');
    const fromEnv = process.env.DOCKER_HOST?.startsWith('unix://')
      ? process.env.DOCKER_HOST.slice(7)
      : undefined;
    const docker = new Docker({ socketPath: opts.socketPath ?? fromEnv ?? '/var/run/docker.sock' });
    const rt = new DockerRuntime(
      docker,
      opts.nodeName,
      opts.pauseImage ?? DEFAULT_PAUSE_IMAGE,
      opts.execExitWaitMs ?? 5000,
    );
    await rt.call('connect to docker', () => docker.ping());
    return rt;
  }

  // ---- RuntimeService ----

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    const v = await this.call('docker version', () => this.docker.version());
    return { runtimeName: 'docker', runtimeVersion: v.Version, runtimeApiVersion: v.ApiVersion };
  }

  async status(): Promise<RuntimeStatus> {
    await this.call('docker ping', () => this.docker.ping());
    // The agent creates the node's network itself; the engine answering is all there is to report.
    return {
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: true, reason: '', message: '' },
      ],
    };
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    if (!(await this.imageStatus(this.pauseImage))) await this.pullImage(this.pauseImage);
    const labels = sandboxLabels(this.nodeName, config, nsNow());
    const body = sandboxCreateOptions(config, this.pauseImage, sandboxName(config.metadata), labels);
    const what = `run pod sandbox ${config.metadata.namespace}/${config.metadata.name}`;
    const c = await this.call(what, () => this.docker.createContainer(body as Docker.ContainerCreateOptions));
    try {
      await this.call(what, () => c.start());
    } catch (err) {
      await c.remove({ force: true }).catch(() => undefined);
      throw err;
    }
    return c.id;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    for (const c of await this.listOwned(TYPE_CONTAINER, { sandboxId: podSandboxId })) {
      if (c.State === 'running' || c.State === 'paused' || c.State === 'restarting') {
        await this.stopById(c.Id, 0);
      }
    }
    if (await this.inspectOwned(podSandboxId, TYPE_SANDBOX, true)) await this.stopById(podSandboxId, 0);
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    for (const c of await this.listOwned(TYPE_CONTAINER, { sandboxId: podSandboxId }))
      await this.removeById(c.Id);
    if (await this.inspectOwned(podSandboxId, TYPE_SANDBOX, true)) await this.removeById(podSandboxId);
  }

  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    return sandboxStatusOf(await this.inspectOwned(podSandboxId, TYPE_SANDBOX));
  }

  async listPodSandbox(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const items = await this.listOwned(TYPE_SANDBOX, filter.id === undefined ? {} : { id: filter.id });
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

  async createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    parseImageReference(config.image.image);
    const sandbox = await this.inspectOwned(podSandboxId, TYPE_SANDBOX);
    if (!sandbox.State.Running) {
      throw new CriError('FailedPrecondition', `pod sandbox ${podSandboxId} is not ready`);
    }
    const labels = containerLabels(this.nodeName, sandbox.Id, sandboxConfig, config, nsNow());
    const body = containerCreateOptions(
      sandbox.Id,
      config,
      sandboxConfig,
      containerName(sandboxConfig.metadata, config.metadata),
      labels,
    );
    const what = `create container ${config.metadata.name} in ${sandboxConfig.metadata.namespace}/${sandboxConfig.metadata.name}`;
    const c = await this.call(what, () => this.docker.createContainer(body as Docker.ContainerCreateOptions));
    return c.id;
  }

  async startContainer(containerId: string): Promise<void> {
    const info = await this.inspectOwned(containerId, TYPE_CONTAINER);
    const state = containerStateFromInspect(info.State, 0n).state;
    if (state !== 'CONTAINER_CREATED') {
      throw new CriError('FailedPrecondition', `container ${containerId} is ${state}, not created`);
    }
    const sandboxId = containerFromLabels(info.Config.Labels).podSandboxId;
    const sandbox = await this.inspectOwned(sandboxId, TYPE_SANDBOX, true);
    if (!sandbox?.State.Running) {
      throw new CriError(
        'FailedPrecondition',
        `pod sandbox ${sandboxId} of container ${containerId} is not ready`,
      );
    }
    await this.call(`start container ${containerId}`, () => this.docker.getContainer(info.Id).start());
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    if (await this.inspectOwned(containerId, TYPE_CONTAINER, true))
      await this.stopById(containerId, timeoutSeconds);
  }

  async removeContainer(containerId: string): Promise<void> {
    if (await this.inspectOwned(containerId, TYPE_CONTAINER, true)) await this.removeById(containerId);
  }

  async listContainers(filter: ContainerFilter = {}): Promise<Container[]> {
    const sel: { id?: string; sandboxId?: string } = {};
    if (filter.id !== undefined) sel.id = filter.id;
    if (filter.podSandboxId !== undefined) sel.sandboxId = filter.podSandboxId;
    const out: Container[] = [];
    for (const item of await this.listOwned(TYPE_CONTAINER, sel)) {
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

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    const info = await this.inspectOwned(containerId, TYPE_CONTAINER);
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
      logPath: info.LogPath ?? '',
    };
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    const info = await this.inspectOwned(containerId, TYPE_CONTAINER);
    if (!info.State.Running)
      throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    const what = `exec ${JSON.stringify(cmd)} in ${containerId}`;
    const container = this.docker.getContainer(info.Id);
    const exec = await this.call(what, () =>
      container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, AttachStdin: false }),
    );
    const timer = timeoutSeconds > 0 ? deadline(timeoutSeconds * 1000, what) : undefined;
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stream: Readable | undefined;
    try {
      const run = async (): Promise<void> => {
        stream = (await this.call(what, () => exec.start({ hijack: true, stdin: false }))) as Readable;
        const out = new PassThrough().on('data', (b: Buffer) => stdout.push(b));
        const err = new PassThrough().on('data', (b: Buffer) => stderr.push(b));
        this.docker.modem.demuxStream(stream, out, err);
        await streamDone(stream);
      };
      await (timer ? Promise.race([run(), timer.promise]) : run());
      // The output can end a moment before docker records the exit code.
      const end = Date.now() + this.execExitWaitMs;
      for (;;) {
        const st = await this.call(what, () => exec.inspect());
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

  async containerStats(containerId: string): Promise<ContainerStats> {
    const info = await this.inspectOwned(containerId, TYPE_CONTAINER);
    const s = await this.call(`stats of ${containerId}`, () =>
      this.docker.getContainer(info.Id).stats({ stream: false, 'one-shot': true }),
    );
    return statsFromDocker(info.Id, s as DockerStats, nsNow());
  }

  // ---- StreamingService ----

  async containerLogs(containerId: string, opts: ContainerLogOptions): Promise<NodeJS.ReadableStream> {
    const info = await this.inspectOwned(containerId, TYPE_CONTAINER);
    const what = `logs of ${containerId}`;
    const options: Record<string, unknown> = {
      follow: opts.follow ?? false,
      stdout: true,
      stderr: true,
      timestamps: opts.timestamps ?? false,
      tail: opts.tailLines !== undefined ? String(opts.tailLines) : 'all',
    };
    if (opts.sinceTime !== undefined && opts.sinceTime > 0n) {
      const s = opts.sinceTime / 1_000_000_000n;
      const ns = opts.sinceTime % 1_000_000_000n;
      options.since = `${s}.${ns.toString().padStart(9, '0')}`;
    }
    // dockerode's container.logs() buffers the whole log unless following: dial directly
    // so that the body is always a stream.
    const raw = await this.call(
      what,
      () =>
        new Promise<Readable>((resolve, reject) => {
          this.docker.modem.dial(
            {
              path: `/containers/${info.Id}/logs?`,
              method: 'GET',
              isStream: true,
              statusCodes: { 200: true, 404: 'no such container', 500: 'server error' },
              options,
            },
            (err: unknown, stream: unknown) => (err ? reject(err) : resolve(stream as Readable)),
          );
        }),
    );
    if (info.Config.Tty) return raw;
    const out = new PassThrough();
    pipeline(raw, new DockerDemux(out, out), () => out.end());
    out.on('close', () => raw.destroy());
    return out;
  }

  async exec(containerId: string, cmd: string[], opts: StreamOptions): Promise<StreamSession> {
    const info = await this.inspectOwned(containerId, TYPE_CONTAINER);
    if (!info.State.Running)
      throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    const what = `exec ${JSON.stringify(cmd)} in ${containerId}`;
    const exec = await this.call(what, () =>
      this.docker.getContainer(info.Id).exec({
        Cmd: cmd,
        AttachStdin: opts.stdin,
        AttachStdout: opts.stdout,
        AttachStderr: opts.stderr,
        Tty: opts.tty,
      }),
    );
    const stream = (await this.call(what, () =>
      exec.start({ hijack: true, stdin: opts.stdin, Tty: opts.tty }),
    )) as Duplex;
    const exitCode = (async (): Promise<number> => {
      await streamDone(stream).catch(() => undefined);
      const end = Date.now() + this.execExitWaitMs;
      for (;;) {
        const st = await this.call(what, () => exec.inspect());
        if (!st.Running && st.ExitCode !== null) return st.ExitCode;
        if (Date.now() > end) throw new CriError('Internal', `${what}: docker reported no exit code`);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    exitCode.catch(() => undefined);
    return this.session(stream, opts, exitCode, async (size) => {
      await this.call(`resize ${what}`, () => exec.resize({ h: size.height, w: size.width }));
    });
  }

  async attach(containerId: string, opts: StreamOptions): Promise<StreamSession> {
    const info = await this.inspectOwned(containerId, TYPE_CONTAINER);
    if (!info.State.Running)
      throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    const container = this.docker.getContainer(info.Id);
    const what = `attach to ${containerId}`;
    const stream = (await this.call(what, () =>
      container.attach({
        stream: true,
        hijack: true,
        stdin: opts.stdin,
        stdout: opts.stdout,
        stderr: opts.stderr,
      }),
    )) as Duplex;
    const exitCode = (async (): Promise<number> => {
      await streamDone(stream).catch(() => undefined);
      const st = await this.call(what, () => container.inspect());
      // The session ended (stdin closed, detached) while the container runs on: a clean
      // end, as the kubelet reports an attach that returns without error.
      return st.State.Running ? 0 : st.State.ExitCode;
    })();
    exitCode.catch(() => undefined);
    // A container without a TTY frames its output; with one it is raw (as Docker decides
    // by the container's own Tty setting, not the session's).
    return this.session(stream, { ...opts, tty: info.Config.Tty }, exitCode, async (size) => {
      await this.call(`resize ${what}`, () => container.resize({ h: size.height, w: size.width }));
    });
  }

  /**
   * A connection to `port` on localhost inside the pod's network namespace, as the
   * kubelet's port-forward does (so ports a container binds to 127.0.0.1 are reachable
   * too): `nsenter --net` into the sandbox's namespace runs a small relay (this Node.js
   * binary, PORT_FORWARD_RELAY) that connects there and pipes its stdin/stdout. Where
   * nsenter cannot run (not root, no util-linux) the pod IP is dialled from the host.
   * @throws CriError FailedPrecondition (sandbox not ready), Unavailable (nothing accepts).
   */
  async portForward(podSandboxId: string, port: number): Promise<Duplex> {
    const info = await this.inspectOwned(podSandboxId, TYPE_SANDBOX);
    const status = sandboxStatusOf(info);
    if (status.state !== 'SANDBOX_READY' || !status.network.ip || !info.State.Pid)
      throw new CriError('FailedPrecondition', `pod sandbox ${podSandboxId} is not ready`);
    const where = `port-forward to port ${port} of sandbox ${podSandboxId}`;
    try {
      return await relayInNetns(info.State.Pid, port, where);
    } catch (err) {
      if (!(err instanceof NsenterUnavailable)) throw err;
    }
    return new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: status.network.ip, port });
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        resolve(socket);
      });
      socket.once('error', (err) =>
        reject(
          new CriError('Unavailable', `${where} (${status.network.ip}): ${err.message}`, { cause: err }),
        ),
      );
    });
  }

  /** The StreamSession over a hijacked docker connection. */
  private session(
    stream: Duplex,
    opts: StreamOptions,
    exitCode: Promise<number>,
    resize: (size: { width: number; height: number }) => Promise<void>,
  ): StreamSession {
    const stdout = opts.stdout || opts.tty ? new PassThrough() : undefined;
    const stderr = opts.stderr && !opts.tty ? new PassThrough() : undefined;
    const sink = opts.tty ? stdout : new DockerDemux(stdout, stderr);
    if (sink) pipeline(stream, sink, () => undefined);
    else stream.resume();
    if (opts.tty) stream.on('end', () => stdout?.end());
    let stdin: Writable | undefined;
    if (opts.stdin) {
      stdin = new Writable({
        write: (chunk: Buffer, _enc, done) => {
          if (stream.write(chunk)) done();
          else stream.once('drain', () => done());
        },
        // Half-closes the hijacked connection: docker then closes the process's stdin.
        final: (done) => {
          stream.end();
          done();
        },
      });
      stdin.on('error', () => undefined);
    }
    return {
      ...(stdin ? { stdin } : {}),
      ...(stdout ? { stdout } : {}),
      ...(stderr ? { stderr } : {}),
      resize: (size) => (opts.tty ? resize(size) : Promise.resolve()),
      exitCode,
      close: () => stream.destroy(),
    };
  }

  // ---- ImageService ----

  async listImages(): Promise<Image[]> {
    const images = await this.call('list images', () => this.docker.listImages());
    return images.map((i) => ({
      id: i.Id,
      repoTags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>'),
      repoDigests: (i.RepoDigests ?? []).filter((d) => d !== '<none>@<none>'),
      size: i.Size,
    }));
  }

  async imageStatus(image: string): Promise<Image | undefined> {
    parseImageReference(image);
    try {
      const i = await this.call(`inspect image ${image}`, () => this.docker.getImage(image).inspect());
      return {
        id: i.Id,
        repoTags: i.RepoTags ?? [],
        repoDigests: i.RepoDigests ?? [],
        size: i.Size,
        ...imageUser(i.Config?.User),
      };
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return undefined;
      throw err;
    }
  }

  async pullImage(image: string, onProgress?: (p: PullProgress) => void): Promise<string> {
    const ref = parseImageReference(image);
    const what = `pull ${image}`;
    const asPullError = (err: unknown): CriError => {
      const e = toCriError(err, what);
      return e.code === 'Unavailable' ? e : new CriError('ImagePullFailed', e.message, { cause: err });
    };
    let stream: Readable;
    try {
      this.checkOpen();
      stream = (await this.docker.createImage({
        fromImage: familiarRepository(ref),
        tag: ref.digest ?? ref.tag ?? 'latest',
      })) as Readable;
    } catch (err) {
      throw asPullError(err);
    }
    await followPull(stream, what, onProgress);
    const pulled = await this.imageStatus(image);
    if (!pulled) {
      throw new CriError('ImagePullFailed', `${what}: docker reported success but has no such image`);
    }
    return pulled.id;
  }

  async removeImage(image: string): Promise<void> {
    parseImageReference(image);
    try {
      await this.call(`remove image ${image}`, () => this.docker.getImage(image).remove());
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return;
      throw err;
    }
  }

  // ---- NetworkService ----

  async ensurePodNetwork(config: PodNetworkConfig): Promise<void> {
    const what = `ensure network ${config.name} (${config.subnet})`;
    const existing = await this.inspectNetwork(config.name);
    const mtuOption = 'com.docker.network.driver.mtu';
    if (existing) {
      const subnets = (existing.IPAM?.Config ?? []).map((c) => c.Subnet);
      const inUse = Object.keys(existing.Containers ?? {}).length > 0;
      const mtuMatches =
        (existing.Options?.[mtuOption] ?? undefined) === (config.mtu ? String(config.mtu) : undefined);
      // A network in use keeps its MTU: pods keep running, and new ones get the new MTU
      // once the last old one has gone and the network is made again.
      if (subnets.includes(config.subnet) && (mtuMatches || inUse)) return;
      const ours = Object.entries(config.labels).every(([k, v]) => existing.Labels?.[k] === v);
      if (!ours || (inUse && !subnets.includes(config.subnet))) {
        throw new CriError(
          'FailedPrecondition',
          `${what}: it exists with subnet ${subnets.join(', ') || 'none'} and ${ours ? 'containers use it' : "is not this node's"}`,
        );
      }
      await this.removePodNetwork(config.name);
    }
    try {
      await this.call(what, () =>
        this.docker.createNetwork({
          Name: config.name,
          Driver: 'bridge',
          CheckDuplicate: true,
          IPAM: { Driver: 'default', Config: [{ Subnet: config.subnet }] },
          Labels: config.labels,
          ...(config.mtu ? { Options: { [mtuOption]: String(config.mtu) } } : {}),
        }),
      );
    } catch (err) {
      // Created meanwhile by another call: fine when it has the subnet asked for.
      const again =
        err instanceof CriError && err.code === 'AlreadyExists' && (await this.inspectNetwork(config.name));
      if (!again || !(again.IPAM?.Config ?? []).some((c) => c.Subnet === config.subnet)) throw err;
    }
  }

  async removePodNetwork(name: string): Promise<void> {
    try {
      await this.call(`remove network ${name}`, () => this.docker.getNetwork(name).remove());
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return;
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  // ---- internals ----

  private checkOpen(): void {
    if (this.closed) throw new CriError('Unavailable', 'docker runtime: connection closed');
  }

  private async inspectNetwork(name: string): Promise<Docker.NetworkInspectInfo | undefined> {
    try {
      return (await this.call(`inspect network ${name}`, () =>
        this.docker.getNetwork(name).inspect(),
      )) as Docker.NetworkInspectInfo;
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return undefined;
      throw err;
    }
  }

  /** Runs a docker call, turning what it throws into a CriError. */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    this.checkOpen();
    try {
      return await fn();
    } catch (err) {
      throw toCriError(err, what);
    }
  }

  /**
   * `docker inspect` of `id` when it is an object of `type` on this node. Anything else
   * (unknown, another node's, the other type) is NotFound — or undefined with `orUndefined`.
   */
  private async inspectOwned(id: string, type: ObjectType): Promise<Docker.ContainerInspectInfo>;
  private async inspectOwned(
    id: string,
    type: ObjectType,
    orUndefined: true,
  ): Promise<Docker.ContainerInspectInfo | undefined>;
  private async inspectOwned(
    id: string,
    type: ObjectType,
    orUndefined = false,
  ): Promise<Docker.ContainerInspectInfo | undefined> {
    const noun = type === TYPE_SANDBOX ? 'pod sandbox' : 'container';
    let info: Docker.ContainerInspectInfo | undefined;
    if (id !== '') {
      try {
        info = await this.call(`inspect ${noun} ${id}`, () => this.docker.getContainer(id).inspect());
      } catch (err) {
        if (!(err instanceof CriError && err.code === 'NotFound')) throw err;
      }
    }
    if (info && isOwned(info.Config.Labels, this.nodeName, type)) return info;
    if (orUndefined) return undefined;
    throw new CriError('NotFound', `${noun} ${JSON.stringify(id)} not found`);
  }

  /** `docker ps -a` of this node's objects of `type` (optionally one id or one sandbox's). */
  private listOwned(
    type: ObjectType,
    sel: { id?: string; sandboxId?: string },
  ): Promise<Docker.ContainerInfo[]> {
    const label = [`${LABEL_NODE}=${this.nodeName}`, `${LABEL_TYPE}=${type}`];
    if (sel.sandboxId !== undefined) label.push(`${LABEL_SANDBOX_ID}=${sel.sandboxId}`);
    const filters: Record<string, string[]> = { label };
    if (sel.id !== undefined) filters.id = [sel.id];
    return this.call(`list ${type}s`, () => this.docker.listContainers({ all: true, filters }));
  }

  private async stopById(id: string, timeoutSeconds: number): Promise<void> {
    try {
      await this.call(`stop ${id}`, () =>
        this.docker.getContainer(id).stop({ t: Math.max(0, timeoutSeconds) }),
      );
    } catch (err) {
      // 304: already stopped; 404: already gone.
      const status = dockerErrorInfo((err as CriError).cause).statusCode;
      if (status === 304 || status === 404) return;
      throw err;
    }
  }

  private async removeById(id: string): Promise<void> {
    try {
      await this.call(`remove ${id}`, () => this.docker.getContainer(id).remove({ force: true, v: true }));
    } catch (err) {
      const info = dockerErrorInfo((err as CriError).cause);
      if (info.statusCode === 404) return;
      if (criCodeOf(info) === 'FailedPrecondition' && /already in progress/.test(info.message)) return;
      throw err;
    }
  }
}

function matches(labels: Record<string, string>, selector?: Record<string, string>): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The CRI PodSandboxStatus of an inspected sandbox container (its IP only while it runs). */
function sandboxStatusOf(info: Docker.ContainerInspectInfo): PodSandboxStatus {
  const view = sandboxFromLabels(info.Config.Labels);
  const networks = info.NetworkSettings.Networks ?? {};
  const ip = info.State.Running
    ? (networks[view.network || 'bridge']?.IPAddress ?? info.NetworkSettings.IPAddress ?? '')
    : '';
  return {
    id: info.Id,
    metadata: view.metadata,
    state: info.State.Running ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
    createdAt: view.createdAt,
    labels: view.labels,
    annotations: view.annotations,
    network: { ip },
  };
}

/**
 * The relay run inside a pod's network namespace: connects to 127.0.0.1:<argv port>, says
 * "connected" (or the error) on stderr, then pipes stdin to the connection and the
 * connection to stdout, half-closes included.
 */
const PORT_FORWARD_RELAY = `
const net = require('node:net');
const s = net.connect({ host: '127.0.0.1', port: Number(process.argv[1]) });
let up = false;
s.on('connect', () => {
  up = true;
  process.stderr.write('connected\\n');
  process.stdin.pipe(s);
  s.pipe(process.stdout);
});
s.on('error', (e) => {
  if (!up) {
    process.stderr.write(e.message + '\\n');
    process.exit(1);
  }
});
s.on('close', () => process.stdout.end());
process.stdout.on('finish', () => process.exit(0));
`;

/** nsenter could not be started (missing, or not permitted): dial from the host instead. */
class NsenterUnavailable extends Error {}

/** Runs PORT_FORWARD_RELAY in the network namespace of process `pid`; resolves once it is connected. */
function relayInNetns(pid: number, port: number, where: string): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'nsenter',
      ['-t', String(pid), '-n', '--', process.execPath, '-e', PORT_FORWARD_RELAY, String(port)],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let said = '';
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      child.kill();
      reject(err);
    };
    child.once('error', (err: NodeJS.ErrnoException) => fail(new NsenterUnavailable(err.message)));
    child.once('exit', (code) => {
      const message = said.trim();
      if (/^nsenter:/m.test(message)) fail(new NsenterUnavailable(message));
      else fail(new CriError('Unavailable', `${where}: ${message || `relay exited with ${code}`}`));
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      said += chunk;
      if (settled || !said.startsWith('connected\n')) return;
      settled = true;
      const duplex = Duplex.from({ readable: child.stdout, writable: child.stdin });
      duplex.once('close', () => child.kill());
      resolve(duplex);
    });
  });
}
