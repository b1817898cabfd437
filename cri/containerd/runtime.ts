/**
 * The containerd adapter: CRI (../api.ts) on a real CRI v1 runtime over gRPC (client.ts),
 * containerd's CRI plugin first, any other CRI runtime (CRI-O) in principle. Where the
 * docker adapter plays dockershim, this one is the kubelet's remote runtime client: the
 * shapes of api.ts are CRI's messages already, so most methods are one RPC.
 *
 * - Sandboxes and networking are the runtime's: the pod sandbox is its pause container
 *   (containerd's `sandbox_image`) on the CNI network of its CRI plugin's conf dir. That
 *   conflist is written by whoever configures the runtime (the agent's
 *   agent/network/cni.ts, from the node's podCIDR); ensurePodNetwork only waits until the
 *   runtime reports it has loaded a network of that name and subnet (Status with
 *   `verbose`: its `cniconfig` and `lastCNILoadStatus`), and a sandbox may then name that
 *   network (any other name rejects NotFound). removePodNetwork forgets the name.
 * - With `nodeName`, everything the adapter creates carries the label `io.k8ts.node`, and
 *   the adapter lists and reports only those (another node sharing the runtime, or a test,
 *   does not exist to it), as the docker adapter does. The label is not shown to callers.
 * - The image a container was created with is kept as the caller spelled it (containerd
 *   reports the normalized `docker.io/...` name) in the annotation `io.k8ts.image`, and its
 *   sandbox's id in `io.k8ts.sandbox-id` (CRI's ContainerStatus has none), both hidden. Image tags and digests are shown in the familiar form (`k8ts/pause:1.0`).
 * - A start failure (containerd's reason `StartError`) is reported as dockershim did:
 *   reason ContainerCannotRun, started and finished when created.
 * - Stop and remove of what is gone succeed; a gRPC error is a CriError (client.ts).
 * - Logs are read from the CRI log file the runtime writes (`<RFC3339Nano> <stream> <P|F>
 *   <text>`). A sandbox without a logDirectory gets the kubelet's
 *   `<podLogsDir>/<namespace>_<name>_<uid>` (made here), and a container without a logPath
 *   `<name>/<attempt>.log`; the file goes with its container, the directory with the
 *   pod's last sandbox. Exec and attach go through the CRI
 *   streaming server the runtime's Exec/Attach/PortForward URL names (streams.ts,
 *   WebSocket). A refused port-forward shows as an error of the returned stream (the
 *   server reports it after the connection is made), not as a rejection.
 */
import { createReadStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Duplex } from 'node:stream';
import type {
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerLogOptions,
  ContainerState,
  ContainerStats,
  ContainerStatus,
  ExecSyncResponse,
  Image,
  NamespaceOption,
  PodNetworkConfig,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxState,
  PodSandboxStatus,
  PullProgress,
  Runtime,
  RuntimeCondition,
  RuntimeStatus,
  StreamOptions,
  StreamSession,
} from '../api.js';
import { CriError } from '../errors.js';
import { familiarName, parseImageReference } from '../reference.js';
import { CriClient, DEFAULT_CRI_ENDPOINT, type Message } from './client.js';
import { openPortForward, openStreamSession } from './streams.js';
import { errorMessage } from '../../api/errors.js';

/** The label naming the node that owns an object (as the docker adapter's). */
export const LABEL_NODE = 'io.k8ts.node';
/** The annotation keeping a container's image as asked for. */
export const ANNOTATION_IMAGE = 'io.k8ts.image';
/** The annotation naming a container's sandbox (CRI's ContainerStatus has no podSandboxId). */
export const ANNOTATION_SANDBOX_ID = 'io.k8ts.sandbox-id';

/** Configuration of ContainerdRuntime.connect. */
export interface ContainerdRuntimeOptions {
  /** The CRI endpoint (default `unix:///run/containerd/containerd.sock`). */
  endpoint?: string;
  /** The node whose objects this adapter owns (label `io.k8ts.node`); unset: all of the runtime's. */
  nodeName?: string;
  /** Deadline of an ordinary call, ms (default 120 000; pulls get 10 minutes). */
  timeoutMs?: number;
  /** How long ensurePodNetwork waits for the runtime to load a CNI network, ms (default 15 000). */
  networkWaitMs?: number;
  /**
   * Where the CRI log files go when a sandbox names no logDirectory (the kubelet's
   * podLogsDir, default `/var/log/pods`): `<podLogsDir>/<namespace>_<name>_<uid>/<container>/<attempt>.log`.
   */
  podLogsDir?: string;
}

/** The kubelet's default podLogsDir. */
export const DEFAULT_POD_LOGS_DIR = '/var/log/pods';

const PULL_TIMEOUT_MS = 10 * 60_000;
const NO_LIMIT_MS = 24 * 3600_000;

const big = (v: unknown): bigint => {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  return 0n;
};
const num = (v: unknown): number => Number(big(v));
const strMap = (v: unknown): Record<string, string> => ({ ...((v as Record<string, string> | null) ?? {}) });

function without(map: Record<string, string>, ...keys: string[]): Record<string, string> {
  const out = { ...map };
  for (const k of keys) delete out[k];
  return out;
}

/** The familiar form of a reference the runtime reports (`docker.io/k8ts/pause:1.0` → `k8ts/pause:1.0`). */
function familiar(ref: string): string {
  try {
    return familiarName(parseImageReference(ref));
  } catch {
    return ref;
  }
}

/** CRI's NamespaceOption for api.ts's (unset pid is CONTAINER here, POD in CRI's zero value). */
function namespaceOptions(ns: NamespaceOption | undefined): Message {
  return { network: ns?.network ?? 'POD', pid: ns?.pid ?? 'CONTAINER', ipc: ns?.ipc ?? 'POD' };
}

/** A container's stated image, from its annotation or the runtime's normalized name. */
function imageOf(c: Message): string {
  const annotations = strMap(c.annotations);
  return annotations[ANNOTATION_IMAGE] ?? familiar(String(c.image?.image ?? ''));
}

/** CRI's Image message as api.ts's Image. */
function imageFrom(i: Message): Image {
  const image: Image = {
    id: String(i.id),
    repoTags: ((i.repoTags as string[] | undefined) ?? []).map(familiar),
    repoDigests: ((i.repoDigests as string[] | undefined) ?? []).map(familiar),
    size: num(i.size),
  };
  if (i.uid !== null && i.uid !== undefined) image.uid = num(i.uid.value);
  else if (typeof i.username === 'string' && i.username !== '') image.username = i.username;
  return image;
}

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

/** Formats nanoseconds since the epoch as RFC 3339 with nanoseconds (the kubelet's timestamps). */
function rfc3339Nano(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = String(ns % 1_000_000_000n).padStart(9, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

/** Parses an RFC 3339 timestamp (up to nanoseconds) to nanoseconds since the epoch. */
function parseRfc3339Nano(ts: string): bigint | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return undefined;
  const secs = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(secs)) return undefined;
  return BigInt(secs) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** One line of a CRI log file: `<RFC3339Nano> <stream> <P|F> <text>`. */
interface LogLine {
  time: bigint;
  timestamp: string;
  partial: boolean;
  text: string;
}

function parseLogLine(line: string): LogLine | undefined {
  const m = /^(\S+) (stdout|stderr) ([PF]) (.*)$/s.exec(line);
  if (!m) return undefined;
  const time = parseRfc3339Nano(m[1] ?? '');
  if (time === undefined) return undefined;
  return { time, timestamp: rfc3339Nano(time), partial: m[3] === 'P', text: m[4] ?? '' };
}

/** containerd's CRI runtime adapter (see the file comment). */
export class ContainerdRuntime implements Runtime {
  private closed = false;
  /** The CNI networks ensurePodNetwork has seen the runtime load. */
  private readonly networks = new Set<string>();

  private constructor(
    private readonly client: CriClient,
    readonly nodeName: string | undefined,
    private readonly networkWaitMs: number,
    private readonly podLogsDir: string,
  ) {}

  /**
   * Connects and checks that the runtime answers CRI v1's Version.
   * @throws CriError Unavailable when nothing answers on the endpoint.
   */
  static async connect(opts: ContainerdRuntimeOptions = {}): Promise<ContainerdRuntime> {
    const client = new CriClient(opts.endpoint ?? DEFAULT_CRI_ENDPOINT, opts.timeoutMs);
    const rt = new ContainerdRuntime(
      client,
      opts.nodeName || undefined,
      opts.networkWaitMs ?? 15_000,
      opts.podLogsDir ?? DEFAULT_POD_LOGS_DIR,
    );
    try {
      await rt.runtimeCall(
        'Version',
        { version: 'v1' },
        'version',
        Math.min(opts.timeoutMs ?? 15_000, 15_000),
      );
    } catch (err) {
      client.close();
      throw err;
    }
    return rt;
  }

  // ---- RuntimeService ----

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    const v = await this.runtimeCall('Version', { version: 'v1' }, 'version');
    return {
      runtimeName: String(v.runtimeName),
      runtimeVersion: String(v.runtimeVersion),
      runtimeApiVersion: String(v.runtimeApiVersion),
    };
  }

  async status(): Promise<RuntimeStatus> {
    const r = await this.runtimeCall('Status', { verbose: false }, 'runtime status');
    const conditions: RuntimeCondition[] = [];
    for (const c of (r.status?.conditions as Message[] | undefined) ?? []) {
      if (c.type !== 'RuntimeReady' && c.type !== 'NetworkReady') continue;
      conditions.push({
        type: c.type,
        status: Boolean(c.status),
        reason: String(c.reason ?? ''),
        message: String(c.message ?? ''),
      });
    }
    return { conditions };
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const message = this.sandboxMessage(config);
    // The kubelet makes the pod's log directory; the runtime writes into it.
    await mkdir(String(message.logDirectory), { recursive: true, mode: 0o755 });
    const r = await this.runtimeCall(
      'RunPodSandbox',
      { config: message, runtimeHandler: '' },
      `run sandbox ${config.metadata.namespace}/${config.metadata.name}`,
    );
    return String(r.podSandboxId);
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    await this.ignoreNotFound(
      this.runtimeCall('StopPodSandbox', { podSandboxId }, `stop sandbox ${podSandboxId}`),
    );
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    const sandbox = await this.podSandboxStatus(podSandboxId).catch(() => undefined);
    await this.ignoreNotFound(
      this.runtimeCall('RemovePodSandbox', { podSandboxId }, `remove sandbox ${podSandboxId}`),
    );
    // As the kubelet removes a pod's log directory with the pod: once its last sandbox is gone.
    if (sandbox) {
      const { uid } = sandbox.metadata;
      const others = await this.listPodSandbox().catch(() => undefined);
      if (others && !others.some((o) => o.metadata.uid === uid))
        await rm(this.defaultLogDirectory(sandbox.metadata), { recursive: true, force: true });
    }
  }

  async podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    const what = `sandbox ${podSandboxId}`;
    const r = await this.runtimeCall('PodSandboxStatus', { podSandboxId, verbose: false }, what);
    const s = r.status as Message | null;
    if (!s || !this.owns(s.labels)) throw new CriError('NotFound', `${what}: not found`);
    return { ...this.sandboxFrom(s), network: { ip: String(s.network?.ip ?? '') } };
  }

  async listPodSandbox(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const f: Message = { labelSelector: this.selector(filter.labelSelector) };
    if (filter.id !== undefined) f.id = filter.id;
    if (filter.state !== undefined) f.state = { state: filter.state };
    const r = await this.runtimeCall('ListPodSandbox', { filter: f }, 'list sandboxes');
    return ((r.items as Message[] | undefined) ?? [])
      .filter((s) => this.owns(s.labels) && (filter.id === undefined || s.id === filter.id))
      .map((s) => this.sandboxFrom(s));
  }

  async createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    parseImageReference(config.image.image);
    const r = await this.runtimeCall(
      'CreateContainer',
      {
        podSandboxId,
        config: this.containerMessage(config, podSandboxId),
        sandboxConfig: this.sandboxMessage(sandboxConfig),
      },
      `create container ${config.metadata.name} in sandbox ${podSandboxId}`,
    );
    return String(r.containerId);
  }

  async startContainer(containerId: string): Promise<void> {
    await this.runtimeCall('StartContainer', { containerId }, `start container ${containerId}`);
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    await this.ignoreNotFound(
      this.runtimeCall(
        'StopContainer',
        { containerId, timeout: timeoutSeconds },
        `stop container ${containerId}`,
        (timeoutSeconds + 60) * 1000,
      ),
    );
  }

  async removeContainer(containerId: string): Promise<void> {
    const logPath = (await this.containerStatus(containerId).catch(() => undefined))?.logPath;
    await this.ignoreNotFound(
      this.runtimeCall('RemoveContainer', { containerId }, `remove container ${containerId}`),
    );
    // The log file goes with its container (the kubelet's removeContainerLog), when it is
    // one of ours: under podLogsDir.
    if (logPath && logPath.startsWith(`${this.podLogsDir}/`)) await rm(logPath, { force: true });
  }

  async listContainers(filter: ContainerFilter = {}): Promise<Container[]> {
    const f: Message = { labelSelector: this.selector(filter.labelSelector) };
    if (filter.id !== undefined) f.id = filter.id;
    if (filter.podSandboxId !== undefined) f.podSandboxId = filter.podSandboxId;
    if (filter.state !== undefined) f.state = { state: filter.state };
    const r = await this.runtimeCall('ListContainers', { filter: f }, 'list containers');
    return ((r.containers as Message[] | undefined) ?? [])
      .filter((c) => this.owns(c.labels) && (filter.id === undefined || c.id === filter.id))
      .map((c) => this.containerFrom(c));
  }

  async containerStatus(containerId: string): Promise<ContainerStatus> {
    const what = `container ${containerId}`;
    const r = await this.runtimeCall('ContainerStatus', { containerId, verbose: false }, what);
    const s = r.status as Message | null;
    if (!s || !this.owns(s.labels)) throw new CriError('NotFound', `${what}: not found`);
    const base = this.containerFrom(s);
    if (base.podSandboxId === '') {
      // Not made by this adapter: the list has the sandbox's id.
      const listed = await this.runtimeCall('ListContainers', { filter: { id: containerId } }, what);
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

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    const r = await this.runtimeCall(
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

  async containerStats(containerId: string): Promise<ContainerStats> {
    const what = `stats of container ${containerId}`;
    const r = await this.runtimeCall('ContainerStats', { containerId }, what);
    const s = r.stats as Message | null;
    if (!s || !this.owns(s.attributes?.labels)) throw new CriError('NotFound', `${what}: not found`);
    const ts = big(s.cpu?.timestamp) || big(s.memory?.timestamp);
    return {
      id: String(s.attributes?.id ?? containerId),
      timestamp: ts > 0n ? ts : BigInt(Date.now()) * 1_000_000n,
      cpuUsageCoreNanoSeconds: big(s.cpu?.usageCoreNanoSeconds?.value),
      memoryWorkingSetBytes: num(s.memory?.workingSetBytes?.value),
    };
  }

  // ---- StreamingService ----

  async containerLogs(containerId: string, opts: ContainerLogOptions): Promise<NodeJS.ReadableStream> {
    const st = await this.containerStatus(containerId);
    if (st.logPath === '') {
      throw new CriError(
        'NotFound',
        `logs of container ${containerId}: it has no log file (no logDirectory)`,
      );
    }
    const out = new PassThrough();
    void this.pumpLog(containerId, st.logPath, opts, out).catch((err: unknown) => out.destroy(err as Error));
    return out;
  }

  async exec(containerId: string, cmd: string[], opts: StreamOptions): Promise<StreamSession> {
    const what = `exec ${JSON.stringify(cmd)} in container ${containerId}`;
    await this.requireRunning(containerId);
    const r = await this.runtimeCall(
      'Exec',
      {
        containerId,
        cmd,
        tty: opts.tty,
        stdin: opts.stdin,
        stdout: opts.stdout,
        stderr: opts.stderr && !opts.tty,
      },
      what,
    );
    return openStreamSession(String(r.url), opts, what);
  }

  async attach(containerId: string, opts: StreamOptions): Promise<StreamSession> {
    const what = `attach to container ${containerId}`;
    await this.requireRunning(containerId);
    const r = await this.runtimeCall(
      'Attach',
      {
        containerId,
        tty: opts.tty,
        stdin: opts.stdin,
        stdout: opts.stdout,
        stderr: opts.stderr && !opts.tty,
      },
      what,
    );
    const session = await openStreamSession(String(r.url), opts, what);
    // The session ended (stdin closed, detached) while the container runs on: 0, as the
    // kubelet reports an attach that returns without error; else the container's exit code.
    const exitCode = session.exitCode
      .catch(() => 0)
      .then(async () => {
        // The runtime records the exit a moment after the output ends.
        for (let i = 0; ; i++) {
          const st = await this.containerStatus(containerId);
          if (st.state !== 'CONTAINER_RUNNING') return st.exitCode;
          if (i >= 20) return 0;
          await new Promise((r) => setTimeout(r, 50));
        }
      });
    exitCode.catch(() => undefined);
    return { ...session, exitCode };
  }

  async portForward(podSandboxId: string, port: number): Promise<Duplex> {
    const what = `port-forward to port ${port} of sandbox ${podSandboxId}`;
    const st = await this.podSandboxStatus(podSandboxId);
    if (st.state !== 'SANDBOX_READY')
      throw new CriError('FailedPrecondition', `pod sandbox ${podSandboxId} is not ready`);
    const r = await this.runtimeCall('PortForward', { podSandboxId, port: [port] }, what);
    return openPortForward(String(r.url), port, what);
  }

  // ---- ImageService ----

  async listImages(): Promise<Image[]> {
    const r = await this.imageCall('ListImages', {}, 'list images');
    return ((r.images as Message[] | undefined) ?? []).map(imageFrom);
  }

  async imageStatus(image: string): Promise<Image | undefined> {
    parseImageReference(image);
    const r = await this.imageCall('ImageStatus', { image: { image }, verbose: false }, `image ${image}`);
    return r.image ? imageFrom(r.image as Message) : undefined;
  }

  async pullImage(image: string, onProgress?: (p: PullProgress) => void): Promise<string> {
    parseImageReference(image);
    const what = `pull ${image}`;
    onProgress?.({ status: `Pulling ${image}` });
    let r: Message;
    try {
      r = await this.imageCall('PullImage', { image: { image } }, what, PULL_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof CriError && (err.code === 'Unavailable' || err.code === 'InvalidArgument'))
        throw err;
      throw new CriError('ImagePullFailed', errorMessage(err), { cause: err });
    }
    onProgress?.({ status: `Pulled ${image}` });
    const pulled = await this.imageStatus(image);
    return pulled?.id ?? String(r.imageRef);
  }

  async removeImage(image: string): Promise<void> {
    parseImageReference(image);
    await this.ignoreNotFound(this.imageCall('RemoveImage', { image: { image } }, `remove image ${image}`));
  }

  // ---- NetworkService ----

  /**
   * Resolves once the runtime has loaded the CNI network `config.name` with
   * `config.subnet` (host-local's range) from its conf dir, polling its verbose Status
   * every 200 ms for up to `networkWaitMs`; the conflist is written elsewhere (see the file
   * comment). The MTU and labels are the conflist writer's.
   * @throws CriError FailedPrecondition with the runtime's own words (its last CNI load
   *   status, the networks it has) when it has not loaded it in time; Unavailable when
   *   the runtime does not answer.
   */
  async ensurePodNetwork(config: PodNetworkConfig): Promise<void> {
    const what = `pod network ${config.name} (${config.subnet})`;
    const end = Date.now() + this.networkWaitMs;
    for (;;) {
      const r = await this.runtimeCall('Status', { verbose: true }, `runtime status for ${what}`);
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

  async removePodNetwork(name: string): Promise<void> {
    this.networks.delete(name);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }

  // ---- helpers ----

  private async requireRunning(containerId: string): Promise<void> {
    const st = await this.containerStatus(containerId);
    if (st.state !== 'CONTAINER_RUNNING')
      throw new CriError('FailedPrecondition', `container ${containerId} is not running (${st.state})`);
  }

  private checkOpen(what: string): void {
    if (this.closed) throw new CriError('Unavailable', `${what}: the runtime connection is closed`);
  }

  private runtimeCall(rpc: string, req: Message, what: string, timeoutMs?: number): Promise<Message> {
    this.checkOpen(what);
    return this.client.callRuntime(rpc, req, what, timeoutMs);
  }

  private imageCall(rpc: string, req: Message, what: string, timeoutMs?: number): Promise<Message> {
    this.checkOpen(what);
    return this.client.callImage(rpc, req, what, timeoutMs);
  }

  private async ignoreNotFound(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return;
      throw err;
    }
  }

  /** `<podLogsDir>/<namespace>_<name>_<uid>`, the kubelet's pod log directory. */
  private defaultLogDirectory(m: { namespace: string; name: string; uid: string }): string {
    return join(this.podLogsDir, `${m.namespace}_${m.name}_${m.uid}`);
  }

  /** True when an object with `labels` is this adapter's. */
  private owns(labels: unknown): boolean {
    return this.nodeName === undefined || strMap(labels)[LABEL_NODE] === this.nodeName;
  }

  private selector(sel: Record<string, string> | undefined): Record<string, string> {
    return this.nodeName === undefined ? { ...sel } : { ...sel, [LABEL_NODE]: this.nodeName };
  }

  private ownLabels(labels: Record<string, string>): Record<string, string> {
    return this.nodeName === undefined ? { ...labels } : { ...labels, [LABEL_NODE]: this.nodeName };
  }

  private sandboxMessage(config: PodSandboxConfig): Message {
    if (config.network !== undefined && !this.networks.has(config.network)) {
      throw new CriError(
        'NotFound',
        `pod network ${JSON.stringify(config.network)}: not loaded by the runtime (the containerd adapter knows only the CNI network ensurePodNetwork confirmed)`,
      );
    }
    const ns = namespaceOptions(config.linux?.securityContext?.namespaceOptions);
    const msg: Message = {
      metadata: { ...config.metadata },
      // runc refuses a hostname without the pod's own UTS namespace (hostNetwork).
      hostname: ns.network === 'NODE' ? '' : config.hostname,
      logDirectory: config.logDirectory ?? this.defaultLogDirectory(config.metadata),
      portMappings: config.portMappings.map((p) => ({
        protocol: p.protocol,
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        hostIp: p.hostIp,
      })),
      labels: this.ownLabels(config.labels),
      annotations: { ...config.annotations },
      linux: {
        cgroupParent: config.linux?.cgroupParent ?? '',
        sysctls: { ...config.linux?.sysctls },
        securityContext: { namespaceOptions: ns },
      },
    };
    return msg;
  }

  private containerMessage(config: ContainerConfig, podSandboxId: string): Message {
    const sc = config.linux?.securityContext;
    const res = config.linux?.resources;
    const security: Message = {
      readonlyRootfs: sc?.readonlyRootfs ?? false,
      privileged: sc?.privileged ?? false,
      noNewPrivs: sc?.noNewPrivs ?? false,
      namespaceOptions: namespaceOptions(sc?.namespaceOptions),
    };
    if (sc?.runAsUser !== undefined) security.runAsUser = { value: sc.runAsUser };
    if (sc?.runAsGroup !== undefined) security.runAsGroup = { value: sc.runAsGroup };
    if (sc?.capabilities) {
      security.capabilities = {
        addCapabilities: sc.capabilities.addCapabilities ?? [],
        dropCapabilities: sc.capabilities.dropCapabilities ?? [],
      };
    }
    return {
      metadata: { ...config.metadata },
      image: { image: config.image.image },
      command: config.command ?? [],
      args: config.args ?? [],
      workingDir: config.workingDir ?? '',
      envs: (config.envs ?? []).map((e) => ({ key: e.key, value: e.value })),
      mounts: (config.mounts ?? []).map((m) => ({
        containerPath: m.containerPath,
        hostPath: m.hostPath,
        readonly: m.readonly,
      })),
      labels: this.ownLabels(config.labels),
      annotations: {
        ...config.annotations,
        [ANNOTATION_IMAGE]: config.image.image,
        [ANNOTATION_SANDBOX_ID]: podSandboxId,
      },
      logPath: config.logPath ?? `${config.metadata.name}/${config.metadata.attempt}.log`,
      stdin: config.stdin ?? false,
      stdinOnce: config.stdinOnce ?? false,
      tty: config.tty ?? false,
      linux: {
        resources: {
          cpuPeriod: res?.cpuPeriod ?? 0,
          cpuQuota: res?.cpuQuota ?? 0,
          cpuShares: res?.cpuShares ?? 0,
          memoryLimitInBytes: res?.memoryLimitInBytes ?? 0,
        },
        securityContext: security,
      },
    };
  }

  private sandboxFrom(s: Message): PodSandbox {
    return {
      id: String(s.id),
      metadata: {
        name: String(s.metadata?.name ?? ''),
        uid: String(s.metadata?.uid ?? ''),
        namespace: String(s.metadata?.namespace ?? ''),
        attempt: num(s.metadata?.attempt),
      },
      state: String(s.state) as PodSandboxState,
      createdAt: big(s.createdAt),
      labels: without(strMap(s.labels), LABEL_NODE),
      annotations: strMap(s.annotations),
    };
  }

  private containerFrom(c: Message): Container {
    return {
      id: String(c.id),
      podSandboxId: String(c.podSandboxId || strMap(c.annotations)[ANNOTATION_SANDBOX_ID] || ''),
      metadata: { name: String(c.metadata?.name ?? ''), attempt: num(c.metadata?.attempt) },
      image: imageOf(c),
      imageRef: String(c.imageRef ?? ''),
      state: String(c.state) as ContainerState,
      createdAt: big(c.createdAt),
      labels: without(strMap(c.labels), LABEL_NODE),
      annotations: without(strMap(c.annotations), ANNOTATION_IMAGE, ANNOTATION_SANDBOX_ID),
    };
  }

  /**
   * Copies the CRI log file at `path` to `out` as the kubelet shows it: partial lines
   * joined, `sinceTime` and `tailLines` applied, timestamps prefixed when asked; with
   * `follow`, polls for more until the container stops or `out` is destroyed.
   */
  private async pumpLog(
    containerId: string,
    path: string,
    opts: ContainerLogOptions,
    out: PassThrough,
  ): Promise<void> {
    let offset = 0;
    let carry = '';
    let pending = '';
    const emit = (lines: string[]): void => {
      for (const l of lines) out.write(l);
    };
    const take = (chunk: string): string[] => {
      const done: string[] = [];
      const parts = (carry + chunk).split('\n');
      carry = parts.pop() ?? '';
      for (const raw of parts) {
        const line = parseLogLine(raw);
        if (!line) continue;
        if (opts.sinceTime !== undefined && line.time < opts.sinceTime) continue;
        if (pending === '' && opts.timestamps) pending = `${line.timestamp} `;
        pending += line.text;
        if (!line.partial) {
          done.push(`${pending}\n`);
          pending = '';
        }
      }
      return done;
    };
    const readMore = async (): Promise<string> => {
      const size = await stat(path).then(
        (s) => s.size,
        () => 0,
      );
      if (size < offset) offset = 0; // rotated
      if (size === offset) return '';
      const chunks: Buffer[] = [];
      for await (const c of createReadStream(path, { start: offset, end: size - 1 }))
        chunks.push(c as Buffer);
      offset = size;
      return Buffer.concat(chunks).toString('utf8');
    };
    let lines = take(await readMore());
    if (opts.tailLines !== undefined) lines = opts.tailLines > 0 ? lines.slice(-opts.tailLines) : [];
    emit(lines);
    while (opts.follow && !out.destroyed) {
      await new Promise((r) => setTimeout(r, 200));
      emit(take(await readMore()));
      const st = await this.containerStatus(containerId).catch(() => undefined);
      if (!st || st.state !== 'CONTAINER_RUNNING') {
        emit(take(await readMore()));
        break;
      }
    }
    out.end();
  }
}
