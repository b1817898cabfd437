/**
 * The fake runtime: sandboxes, containers and images in memory, for unit tests of the
 * kubelet and for simulated (hollow) nodes, in the manner of the kubelet's
 * FakeRuntimeService (k8s.io/cri-api/pkg/apis/testing) and kwok's fake pods.
 *
 * It behaves as the docker adapter does wherever the conformance suite can see
 * (conformance.ts); where it cannot be real it says so:
 * - Containers "run" the tiny shell programs of process.ts: `sh -c 'exit 3'` exits 3 at
 *   once, `sleep 3600` sleeps on the injected clock, a server image (no command) runs
 *   until stopped. Exec runs the same way, or through a test's exec handler. A command
 *   under `/nonexistent/` is missing from the image: startContainer rejects
 *   InvalidArgument and the container is EXITED 127, ContainerCannotRun, as with docker.
 * - There is no network traffic: a sandbox gets the next free address of its pod
 *   network's subnet (ensurePodNetwork), or of `podCIDR` when it names none, and
 *   containers of one pod cannot talk over localhost (conformance capability
 *   `sharedLocalhost: false`).
 * - stopContainer ends a running program at once: exit code 143 (SIGTERM) when given a
 *   grace period, 137 (SIGKILL) with timeout 0; reason Error.
 * - Images come from `images` (present at start) and `registry` (pullable), or any
 *   reference with `pullAny`; sizes are made up.
 * - A program it does not model to an end runs until stopped, unless the
 *   `unmodelledProgram` hook gives it steps (hollow nodes end Job pods' containers so).
 *
 * - Streaming is what a program without I/O can give: containerLogs reads the program's
 *   output so far (no follow, no timestamps of its own: a line's time is the container's
 *   start), exec runs as execSync does and ignores stdin, attach and portForward reject
 *   FailedPrecondition (nothing to attach to, no network).
 *
 * Cheap enough for thousands of pods: no timers except for sleeping programs and pull
 * delays, no I/O. State lives in one FakeRuntimeState that `reopen()` shares, so a test can
 * restart "the agent" and find its containers again.
 *
 * One file of some 600 lines because it is the fake runtime's behaviour in one class, one
 * method per CRI call over the shared state; its state (state.ts), programs (process.ts)
 * and addresses (ipam.ts) are already files of their own.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, Readable, type Duplex } from 'node:stream';
import { realClock, type Clock } from '../../api/clock.js';
import type {
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerLogOptions,
  ContainerStats,
  ContainerStatus,
  ExecSyncResponse,
  Image,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodNetworkConfig,
  PodSandboxStatus,
  RunPodSandboxOptions,
  AuthConfig,
  PullProgress,
  Runtime,
  RuntimeConditionType,
  RuntimeStatus,
  StreamOptions,
  StreamSession,
} from '../api.js';
import { CriError } from '../errors.js';
import { familiarName, parseImageReference } from '../reference.js';
import { FakeIpam } from './ipam.js';
import { commandNotFound, fakeProgram, runFakeProgram } from './process.js';
import {
  FakeRuntimeState,
  type FakeContainer,
  type FakeExecHandler,
  type FakeImage,
  type FakeRuntimeOptions,
  type FakeSandbox,
} from './state.js';

export {
  FakeRuntimeState,
  type FakeExecHandler,
  type FakeProgramHook,
  type FakeRuntimeOptions,
} from './state.js';

const nsNow = (clock: Clock): bigint => BigInt(clock.now()) * 1_000_000n;
const newId = (): string => randomBytes(32).toString('hex');

function matchesLabels(labels: Record<string, string>, selector?: Record<string, string>): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The in-memory runtime (see the file comment for what it simulates). */
export class FakeRuntime implements Runtime {
  /** The state this instance works on; shared with the instances `reopen()` returns. */
  readonly state: FakeRuntimeState;
  private closed = false;

  /**
   * @param opts images, registry, clock...; or an existing state to reopen.
   * @throws Error on a malformed `podCIDR`; CriError InvalidArgument on a malformed image reference.
   */
  constructor(opts: FakeRuntimeOptions | { state: FakeRuntimeState } = {}) {
    if ('state' in opts) {
      this.state = opts.state;
    } else {
      this.state = new FakeRuntimeState(
        opts.clock ?? realClock,
        opts.pullDelayMs ?? 0,
        opts.podCIDR ?? '10.88.0.0/16',
        opts.images ?? [],
        opts.registry ?? [],
      );
      this.state.pullAny = opts.pullAny ?? false;
      this.state.unmodelledProgram = opts.unmodelledProgram;
    }
  }

  /** A new connection to the same runtime, as an agent restart would make. */
  reopen(): FakeRuntime {
    return new FakeRuntime({ state: this.state });
  }

  // ---- test hooks ----

  /** Makes `ref` present (as if pulled). Returns the image id. */
  addImage(ref: string): string {
    return this.state.addImage(ref);
  }

  /** Makes pulls of `ref` fail ImagePullFailed with `message` (undefined: pulls work again). */
  setPullFailure(ref: string, message: string | undefined): void {
    const name = familiarName(parseImageReference(ref));
    if (message === undefined) this.state.pullFailures.delete(name);
    else this.state.pullFailures.set(name, message);
  }

  /** References pulled so far, in order. */
  get pulls(): readonly string[] {
    return this.state.pulls;
  }

  /** The AuthConfig of every pull attempt so far, in order (undefined: none). */
  get pullAuths(): readonly (AuthConfig | undefined)[] {
    return this.state.pullAuths;
  }

  /**
   * Makes pulls of `ref` need `username`/`password` (as `username`+`password` or docker's
   * `auth`), else fail ImagePullFailed "unauthorized"; undefined: pulls are open again.
   */
  requirePullCredentials(ref: string, username?: string, password?: string): void {
    const name = familiarName(parseImageReference(ref));
    if (username === undefined) this.state.pullCredentials.delete(name);
    else
      this.state.pullCredentials.set(name, Buffer.from(`${username}:${password ?? ''}`).toString('base64'));
  }

  /**
   * Ends a running container's program now with `exitCode` (as a crash or an OOM kill
   * would). Reason: `opts.reason`, else OOMKilled when `oomKilled`, else Completed for 0 and
   * Error otherwise.
   * @throws CriError NotFound for an unknown id; FailedPrecondition when it is not running.
   */
  exitContainer(
    id: string,
    exitCode: number,
    opts: { reason?: string; message?: string; oomKilled?: boolean } = {},
  ): void {
    const c = this.container(id);
    if (c.state !== 'CONTAINER_RUNNING') {
      throw new CriError('FailedPrecondition', `container ${id} is not running (${c.state})`);
    }
    this.finish(c, exitCode, opts.reason ?? (opts.oomKilled ? 'OOMKilled' : undefined), opts.message ?? '');
  }

  /** Answers execSync through `handler` first (undefined: the fake programs only). */
  setExecHandler(handler: FakeExecHandler | undefined): void {
    this.state.execHandler = handler;
  }

  /** What containerStats reports for `id` from now on. */
  setContainerStats(
    id: string,
    stats: { cpuUsageCoreNanoSeconds: bigint; memoryWorkingSetBytes: number },
  ): void {
    this.container(id).stats = { ...stats };
  }

  /** What the container's program wrote (stdout and stderr interleaved). */
  containerOutput(id: string): string {
    return this.container(id).output;
  }

  /**
   * The config sandbox `id` was run with (a copy: hostname, dnsConfig, ...), as a real
   * runtime would show it in the sandbox's /etc/hostname and /etc/resolv.conf; undefined
   * for an unknown id.
   */
  sandboxConfig(id: string): PodSandboxConfig | undefined {
    const s = this.state.sandboxes.get(id);
    return s ? structuredClone(s.config) : undefined;
  }

  /** The config container `id` was created with (a copy: envs, mounts, ...); throws NotFound for an unknown id. */
  containerConfig(id: string): ContainerConfig {
    return structuredClone(this.container(id).config);
  }

  /** While true every call rejects Unavailable, as when the daemon is down. */
  setUnavailable(down: boolean): void {
    this.state.unavailable = down;
  }

  /** Sets a condition that status() reports. */
  setRuntimeCondition(type: RuntimeConditionType, status: boolean, reason = '', message = ''): void {
    this.state.conditions[type] = { status, reason, message };
  }

  // ---- RuntimeService ----

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    this.check();
    return { runtimeName: 'fake', runtimeVersion: '0.1.0', runtimeApiVersion: 'v1' };
  }

  async status(): Promise<RuntimeStatus> {
    this.check();
    return {
      conditions: (['RuntimeReady', 'NetworkReady'] as const).map((type) => ({
        type,
        ...this.state.conditions[type],
      })),
    };
  }

  /** Ready at once; `_opts.onCreated` is never called (nothing to overlap). */
  async runPodSandbox(config: PodSandboxConfig, _opts?: RunPodSandboxOptions): Promise<string> {
    this.check();
    const ip = this.state.ipamFor(config.network).allocate();
    const id = newId();
    this.state.sandboxes.set(id, {
      id,
      config: structuredClone(config),
      state: 'SANDBOX_READY',
      createdAt: nsNow(this.state.clock),
      ip,
    });
    return id;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    this.check();
    const s = this.state.sandboxes.get(podSandboxId);
    if (!s) return;
    for (const c of this.state.containers.values()) {
      if (c.podSandboxId === podSandboxId && c.state === 'CONTAINER_RUNNING')
        this.finish(c, 137, 'Error', '');
    }
    if (s.state === 'SANDBOX_READY') {
      s.state = 'SANDBOX_NOTREADY';
      this.releaseIp(s);
    }
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    this.check();
    for (const c of [...this.state.containers.values()]) {
      if (c.podSandboxId === podSandboxId) this.remove(c);
    }
    const s = this.state.sandboxes.get(podSandboxId);
    if (!s) return;
    this.releaseIp(s);
    this.state.sandboxes.delete(podSandboxId);
  }

  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    this.check();
    const s = this.sandbox(podSandboxId);
    return { ...this.sandboxView(s), network: { ip: s.ip } };
  }

  async listPodSandbox(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    this.check();
    const out: PodSandbox[] = [];
    for (const s of this.state.sandboxes.values()) {
      if (filter.id !== undefined && s.id !== filter.id) continue;
      if (filter.state !== undefined && s.state !== filter.state) continue;
      if (!matchesLabels(s.config.labels, filter.labelSelector)) continue;
      out.push(this.sandboxView(s));
    }
    return out;
  }

  async createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    _sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    this.check();
    const s = this.sandbox(podSandboxId);
    if (s.state !== 'SANDBOX_READY') {
      throw new CriError('FailedPrecondition', `sandbox ${podSandboxId} is not ready`);
    }
    const image = this.state.findImage(config.image.image);
    if (!image) throw new CriError('NotFound', `image ${JSON.stringify(config.image.image)} is not present`);
    const id = newId();
    // As containerd: the log file `<logDirectory>/<logPath>` (empty here) when the sandbox
    // names a log directory; the kubelet reads restart counts from the names.
    const logDirectory = s.config.logDirectory;
    if (logDirectory && config.logPath) {
      mkdirSync(dirname(join(logDirectory, config.logPath)), { recursive: true });
      writeFileSync(join(logDirectory, config.logPath), '', { flag: 'a' });
    }
    this.state.containers.set(id, {
      id,
      podSandboxId,
      config: structuredClone(config),
      imageRef: image.id,
      state: 'CONTAINER_CREATED',
      createdAt: nsNow(this.state.clock),
      startedAt: 0n,
      finishedAt: 0n,
      exitCode: 0,
      reason: '',
      message: '',
      output: '',
      stats: { cpuUsageCoreNanoSeconds: 0n, memoryWorkingSetBytes: 0 },
    });
    return id;
  }

  async startContainer(containerId: string): Promise<void> {
    this.check();
    const c = this.container(containerId);
    if (c.state !== 'CONTAINER_CREATED') {
      throw new CriError('FailedPrecondition', `container ${containerId} is ${c.state}, not created`);
    }
    const sandbox = this.sandbox(c.podSandboxId);
    if (sandbox.state !== 'SANDBOX_READY') {
      throw new CriError(
        'FailedPrecondition',
        `sandbox ${c.podSandboxId} of container ${containerId} is not ready`,
      );
    }
    const argv = [...(c.config.command ?? []), ...(c.config.args ?? [])];
    const notFound = commandNotFound(argv);
    if (notFound !== undefined) {
      // As docker (exit code 127, its error kept) and dockershim (times = creation time).
      c.state = 'CONTAINER_EXITED';
      c.exitCode = 127;
      c.reason = 'ContainerCannotRun';
      c.message = notFound;
      c.startedAt = c.createdAt;
      c.finishedAt = c.createdAt;
      throw new CriError('InvalidArgument', `start container ${containerId}: ${notFound}`);
    }
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = nsNow(this.state.clock);
    const kill = new AbortController();
    c.kill = kill;
    let steps = fakeProgram(argv);
    if (this.state.unmodelledProgram && steps.some((s) => s.op === 'serve'))
      steps = this.state.unmodelledProgram(c.config, sandbox.config) ?? steps;
    void runFakeProgram(
      steps,
      (_stream, data) => {
        c.output += data;
      },
      this.state.clock,
      kill.signal,
    ).then((code) => {
      if (code !== undefined && c.kill === kill) this.finish(c, code, undefined, '');
    });
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    this.check();
    const c = this.state.containers.get(containerId);
    if (!c || c.state !== 'CONTAINER_RUNNING') return;
    this.finish(c, timeoutSeconds > 0 ? 143 : 137, 'Error', '');
  }

  async removeContainer(containerId: string): Promise<void> {
    this.check();
    const c = this.state.containers.get(containerId);
    if (c) this.remove(c);
  }

  async listContainers(filter: ContainerFilter = {}): Promise<Container[]> {
    this.check();
    const out: Container[] = [];
    for (const c of this.state.containers.values()) {
      if (filter.id !== undefined && c.id !== filter.id) continue;
      if (filter.podSandboxId !== undefined && c.podSandboxId !== filter.podSandboxId) continue;
      if (filter.state !== undefined && c.state !== filter.state) continue;
      if (!matchesLabels(c.config.labels, filter.labelSelector)) continue;
      out.push(this.containerView(c));
    }
    return out;
  }

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    this.check();
    const c = this.container(containerId);
    return {
      ...this.containerView(c),
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      exitCode: c.exitCode,
      reason: c.reason,
      message: c.message,
      logPath: '',
    };
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    this.check();
    const c = this.container(containerId);
    if (c.state !== 'CONTAINER_RUNNING') {
      throw new CriError('FailedPrecondition', `container ${containerId} is not running`);
    }
    const handled = await this.state.execHandler?.(containerId, cmd);
    if (handled) return handled;
    const stdout: string[] = [];
    const stderr: string[] = [];
    const kill = new AbortController();
    const steps = fakeProgram(cmd);
    if (timeoutSeconds <= 0 && steps.some((s) => s.op === 'serve')) {
      throw new CriError(
        'Internal',
        `fake runtime: ${JSON.stringify(cmd)} never ends and no timeout was given`,
      );
    }
    const deadline =
      timeoutSeconds > 0
        ? this.state.clock.sleep(timeoutSeconds * 1000, kill.signal).then(() => 'deadline' as const)
        : undefined;
    const run = runFakeProgram(
      steps,
      (s, d) => (s === 'stdout' ? stdout : stderr).push(d),
      this.state.clock,
      kill.signal,
    );
    const code = await (deadline ? Promise.race([run, deadline]) : run);
    kill.abort();
    if (code === 'deadline' || code === undefined) {
      throw new CriError(
        'DeadlineExceeded',
        `exec ${JSON.stringify(cmd)} timed out after ${timeoutSeconds}s`,
      );
    }
    return { stdout: Buffer.from(stdout.join('')), stderr: Buffer.from(stderr.join('')), exitCode: code };
  }

  async containerStats(containerId: string): Promise<ContainerStats> {
    this.check();
    const c = this.container(containerId);
    return { id: c.id, timestamp: nsNow(this.state.clock), ...c.stats };
  }

  // ---- StreamingService ----

  async containerLogs(containerId: string, opts: ContainerLogOptions): Promise<NodeJS.ReadableStream> {
    this.check();
    const c = this.container(containerId);
    if (opts.sinceTime !== undefined && opts.sinceTime > c.startedAt) return Readable.from([]);
    let lines = c.output.split(/(?<=\n)/).filter((l) => l !== '');
    if (opts.tailLines !== undefined) lines = opts.tailLines > 0 ? lines.slice(-opts.tailLines) : [];
    if (opts.timestamps) {
      const ts = new Date(Number(c.startedAt / 1_000_000n)).toISOString();
      lines = lines.map((l) => `${ts} ${l}`);
    }
    return Readable.from(lines.map((l) => Buffer.from(l)));
  }

  async exec(containerId: string, cmd: string[], opts: StreamOptions): Promise<StreamSession> {
    this.check();
    this.container(containerId);
    const result = this.execSync(containerId, cmd, 3600);
    const stdout = opts.stdout || opts.tty ? new PassThrough() : undefined;
    const stderr = opts.stderr && !opts.tty ? new PassThrough() : undefined;
    const exitCode = result.then(
      (r) => {
        stdout?.end(opts.tty ? Buffer.concat([r.stdout, r.stderr]) : r.stdout);
        stderr?.end(r.stderr);
        return r.exitCode;
      },
      (err: unknown) => {
        stdout?.end();
        stderr?.end();
        throw err;
      },
    );
    exitCode.catch(() => undefined);
    const stdin = opts.stdin ? new PassThrough().resume() : undefined;
    return {
      ...(stdin ? { stdin } : {}),
      ...(stdout ? { stdout } : {}),
      ...(stderr ? { stderr } : {}),
      resize: async () => undefined,
      exitCode,
      close: () => undefined,
    };
  }

  async attach(containerId: string, _opts: StreamOptions): Promise<StreamSession> {
    this.check();
    this.container(containerId);
    throw new CriError(
      'FailedPrecondition',
      `fake runtime: container ${containerId} has no streams to attach to`,
    );
  }

  async portForward(podSandboxId: string, port: number): Promise<Duplex> {
    this.check();
    throw new CriError(
      'FailedPrecondition',
      `fake runtime: sandbox ${podSandboxId} has no network to forward port ${port} into`,
    );
  }

  // ---- ImageService ----

  async listImages(): Promise<Image[]> {
    this.check();
    return [...this.state.images.values()].map((i) => this.imageView(i));
  }

  async imageStatus(image: string): Promise<Image | undefined> {
    this.check();
    const img = this.state.findImage(image);
    return img && this.imageView(img);
  }

  async pullImage(image: string, onProgress?: (p: PullProgress) => void, auth?: AuthConfig): Promise<string> {
    this.check();
    const name = familiarName(parseImageReference(image));
    this.state.pullAuths.push(auth && { ...auth });
    const failure = this.state.pullFailures.get(name);
    if (failure !== undefined) throw new CriError('ImagePullFailed', `pulling ${image}: ${failure}`);
    const needed = this.state.pullCredentials.get(name);
    const given =
      auth?.auth ??
      (auth?.username !== undefined
        ? Buffer.from(`${auth.username}:${auth.password ?? ''}`).toString('base64')
        : undefined);
    if (needed !== undefined && given !== needed) {
      throw new CriError('ImagePullFailed', `pulling ${image}: unauthorized: authentication required`);
    }
    if (!this.state.pullAny && !this.state.registry.has(name) && !this.state.findImage(name)) {
      throw new CriError(
        'ImagePullFailed',
        `pulling ${image}: repository does not exist or may require authorization`,
      );
    }
    onProgress?.({ status: `Pulling from ${name}` });
    if (this.state.pullDelayMs > 0) await this.state.clock.sleep(this.state.pullDelayMs);
    onProgress?.({ status: 'Download complete', current: 1, total: 1 });
    const id = this.state.addImage(name);
    this.state.pulls.push(name);
    onProgress?.({ status: `Status: Downloaded newer image for ${name}` });
    return id;
  }

  async removeImage(image: string): Promise<void> {
    this.check();
    const img = this.state.findImage(image);
    if (img) this.state.images.delete(img.id);
  }

  // ---- NetworkService ----

  async ensurePodNetwork(config: PodNetworkConfig): Promise<void> {
    this.check();
    const present = this.state.networks.get(config.name);
    if (present?.config.subnet === config.subnet) return;
    if (present && present.ipam.allocated > 0) {
      throw new CriError(
        'FailedPrecondition',
        `network ${config.name} has subnet ${present.config.subnet}, not ${config.subnet}, and sandboxes use it`,
      );
    }
    this.state.networks.set(config.name, {
      config: structuredClone(config),
      ipam: new FakeIpam(config.subnet),
    });
  }

  async removePodNetwork(name: string): Promise<void> {
    this.check();
    const present = this.state.networks.get(name);
    if (!present) return;
    if (present.ipam.allocated > 0) {
      throw new CriError('FailedPrecondition', `network ${name} has sandboxes attached`);
    }
    this.state.networks.delete(name);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  // ---- internals ----

  private check(): void {
    if (this.closed) throw new CriError('Unavailable', 'fake runtime: connection closed');
    if (this.state.unavailable) throw new CriError('Unavailable', 'fake runtime: the runtime is down');
  }

  private sandbox(id: string): FakeSandbox {
    const s = this.state.sandboxes.get(id);
    if (!s) throw new CriError('NotFound', `pod sandbox ${JSON.stringify(id)} not found`);
    return s;
  }

  private container(id: string): FakeContainer {
    const c = this.state.containers.get(id);
    if (!c) throw new CriError('NotFound', `container ${JSON.stringify(id)} not found`);
    return c;
  }

  private releaseIp(s: FakeSandbox): void {
    if (s.ip === '') return;
    (s.config.network ? this.state.networks.get(s.config.network)?.ipam : this.state.defaultIpam)?.release(
      s.ip,
    );
    s.ip = '';
  }

  private finish(c: FakeContainer, exitCode: number, reason: string | undefined, message: string): void {
    const kill = c.kill;
    c.kill = undefined;
    kill?.abort();
    c.state = 'CONTAINER_EXITED';
    c.finishedAt = nsNow(this.state.clock);
    c.exitCode = exitCode;
    c.reason = reason ?? (exitCode === 0 ? 'Completed' : 'Error');
    c.message = message;
  }

  private remove(c: FakeContainer): void {
    const kill = c.kill;
    c.kill = undefined;
    kill?.abort();
    this.state.containers.delete(c.id);
  }

  private sandboxView(s: FakeSandbox): PodSandbox {
    return {
      id: s.id,
      metadata: { ...s.config.metadata },
      state: s.state,
      createdAt: s.createdAt,
      labels: { ...s.config.labels },
      annotations: { ...s.config.annotations },
    };
  }

  private containerView(c: FakeContainer): Container {
    return {
      id: c.id,
      podSandboxId: c.podSandboxId,
      metadata: { ...c.config.metadata },
      image: c.config.image.image,
      imageRef: c.imageRef,
      state: c.state,
      createdAt: c.createdAt,
      labels: { ...c.config.labels },
      annotations: { ...c.config.annotations },
    };
  }

  private imageView(i: FakeImage): Image {
    return { id: i.id, repoTags: [...i.repoTags], repoDigests: [], size: i.size };
  }
}
