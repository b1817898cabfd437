/**
 * The containerd adapter: CRI (../api.ts) on a real CRI v1 runtime over gRPC (client.ts),
 * containerd's CRI plugin first, any other CRI runtime (CRI-O) in principle. Where the
 * docker adapter plays dockershim, this one is the kubelet's remote runtime client
 * (k8s.io/cri-client, pkg/remote_runtime.go and remote_image.go): the shapes of api.ts are
 * CRI's messages already, so most methods are one RPC. This file is the entry: it
 * connects, and hands each CRI call to the part that does it:
 *
 *   sandbox.ts    RunPodSandbox … ListPodSandbox, and the pod's log directory
 *   container.ts  CreateContainer … ExecSync, ContainerStats
 *   streaming.ts  logs (from the CRI log file, logs.ts), exec, attach, port-forward (streams.ts)
 *   image.ts      ImageService;  network.ts  NetworkService (waits for the runtime's CNI network)
 *   convert.ts    CRI's protobuf messages ↔ api.ts's shapes
 *   objects.ts    what they share: the RPCs, ownership by node, the pod log directories
 *
 * - Sandboxes and networking are the runtime's: the pod sandbox is its pause container
 *   (containerd's `sandbox_image`) on the CNI network of its CRI plugin's conf dir, which
 *   the agent writes (agent/network/cni.ts); ensurePodNetwork only waits until the runtime
 *   has loaded it (network.ts).
 * - With `nodeName`, everything the adapter creates carries the label `io.k8ts.node`, and
 *   the adapter lists and reports only those (another node sharing the runtime, or a test,
 *   does not exist to it), as the docker adapter does. The label is not shown to callers,
 *   nor the annotations `io.k8ts.image` and `io.k8ts.sandbox-id` (convert.ts).
 * - Stop and remove of what is gone succeed; a gRPC error is a CriError (client.ts).
 * - Logs: a sandbox without a logDirectory gets the kubelet's
 *   `<podLogsDir>/<namespace>_<name>_<uid>` (made here), and a container without a logPath
 *   `<name>/<attempt>.log`; the file goes with its container, the directory with the
 *   pod's last sandbox.
 */
import type { Duplex } from 'node:stream';
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
  AuthConfig,
  PullProgress,
  Runtime,
  RuntimeCondition,
  RuntimeStatus,
  StreamOptions,
  StreamSession,
} from '../api.js';
import { CriClient, DEFAULT_CRI_ENDPOINT, type Message } from './client.js';
import { ContainerdContainers } from './container.js';
import { ContainerdImages } from './image.js';
import { ContainerdNetworks } from './network.js';
import { ContainerdObjects } from './objects.js';
import { ContainerdSandboxes } from './sandbox.js';
import { ContainerdStreaming } from './streaming.js';

export { ANNOTATION_IMAGE, ANNOTATION_SANDBOX_ID, LABEL_NODE } from './convert.js';

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

/** containerd's CRI runtime adapter (see the file comment). */
export class ContainerdRuntime implements Runtime {
  private readonly objects: ContainerdObjects;
  private readonly networks: ContainerdNetworks;
  private readonly sandboxes: ContainerdSandboxes;
  private readonly containers: ContainerdContainers;
  private readonly streaming: ContainerdStreaming;
  private readonly images: ContainerdImages;

  private constructor(
    client: CriClient,
    readonly nodeName: string | undefined,
    networkWaitMs: number,
    podLogsDir: string,
  ) {
    this.objects = new ContainerdObjects(client, nodeName, podLogsDir);
    this.networks = new ContainerdNetworks(this.objects, networkWaitMs);
    this.sandboxes = new ContainerdSandboxes(this.objects, this.networks);
    this.containers = new ContainerdContainers(this.objects, this.sandboxes);
    this.streaming = new ContainerdStreaming(this.objects, this.sandboxes, this.containers);
    this.images = new ContainerdImages(this.objects);
  }

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
      await rt.objects.runtimeCall(
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
    const v = await this.objects.runtimeCall('Version', { version: 'v1' }, 'version');
    return {
      runtimeName: String(v.runtimeName),
      runtimeVersion: String(v.runtimeVersion),
      runtimeApiVersion: String(v.runtimeApiVersion),
    };
  }

  async status(): Promise<RuntimeStatus> {
    const r = await this.objects.runtimeCall('Status', { verbose: false }, 'runtime status');
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

  runPodSandbox(config: PodSandboxConfig): Promise<string> {
    return this.sandboxes.run(config);
  }
  stopPodSandbox(podSandboxId: string): Promise<void> {
    return this.sandboxes.stop(podSandboxId);
  }
  removePodSandbox(podSandboxId: string): Promise<void> {
    return this.sandboxes.remove(podSandboxId);
  }
  podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    return this.sandboxes.status(podSandboxId);
  }
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return this.sandboxes.list(filter);
  }

  createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    return this.containers.create(podSandboxId, config, sandboxConfig);
  }
  startContainer(containerId: string): Promise<void> {
    return this.containers.start(containerId);
  }
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    return this.containers.stop(containerId, timeoutSeconds);
  }
  removeContainer(containerId: string): Promise<void> {
    return this.containers.remove(containerId);
  }
  listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return this.containers.list(filter);
  }
  containerStatus(containerId: string): Promise<ContainerStatus> {
    return this.containers.status(containerId);
  }
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    return this.containers.execSync(containerId, cmd, timeoutSeconds);
  }
  containerStats(containerId: string): Promise<ContainerStats> {
    return this.containers.stats(containerId);
  }

  // ---- StreamingService ----

  containerLogs(containerId: string, opts: ContainerLogOptions): Promise<NodeJS.ReadableStream> {
    return this.streaming.logs(containerId, opts);
  }
  exec(containerId: string, cmd: string[], opts: StreamOptions): Promise<StreamSession> {
    return this.streaming.exec(containerId, cmd, opts);
  }
  attach(containerId: string, opts: StreamOptions): Promise<StreamSession> {
    return this.streaming.attach(containerId, opts);
  }
  portForward(podSandboxId: string, port: number): Promise<Duplex> {
    return this.streaming.portForward(podSandboxId, port);
  }

  // ---- ImageService ----

  listImages(): Promise<Image[]> {
    return this.images.list();
  }
  imageStatus(image: string): Promise<Image | undefined> {
    return this.images.status(image);
  }
  pullImage(image: string, onProgress?: (p: PullProgress) => void, auth?: AuthConfig): Promise<string> {
    return this.images.pull(image, onProgress, auth);
  }
  removeImage(image: string): Promise<void> {
    return this.images.remove(image);
  }

  // ---- NetworkService ----

  ensurePodNetwork(config: PodNetworkConfig): Promise<void> {
    return this.networks.ensure(config);
  }
  removePodNetwork(name: string): Promise<void> {
    return this.networks.remove(name);
  }

  async close(): Promise<void> {
    this.objects.close();
  }
}
