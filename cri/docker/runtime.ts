/**
 * The docker adapter: CRI (../api.ts) on the Docker Engine API, in the manner of the
 * kubelet's dockershim (pkg/kubelet/dockershim) and cri-dockerd. This file is the entry:
 * it connects, and hands each CRI call to the part that does it:
 *
 *   sandbox.ts    RunPodSandbox … ListPodSandbox: pause-image containers on the node's network
 *   container.ts  CreateContainer … ExecSync, ContainerStats
 *   streaming.ts  logs, exec, attach, port-forward
 *   image.ts      ImageService;  network.ts  NetworkService
 *   pod-interfaces.ts  the agent's network plugin, for sandboxes with NetworkMode none
 *   objects.ts    what they share: ownership by node, engine calls with error mapping
 *   engine.ts     the engine calls themselves (DockerEngine; dockerode in production)
 *
 * - Everything the adapter creates is labelled with CRI's metadata and the node name
 *   (labels.ts): listPodSandbox/listContainers rebuild the agent's view from Docker alone,
 *   and an adapter never lists or touches another node's containers — to it they do not
 *   exist (NotFound).
 * - Stop and remove are idempotent; Docker's 404 is NotFound; a socket error is
 *   Unavailable (errors.ts).
 */
import type { Duplex } from 'node:stream';
import Docker from './dockerode.js';
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
  RunPodSandboxOptions,
  AuthConfig,
  PullProgress,
  Runtime,
  RuntimeStatus,
  StreamOptions,
  StreamSession,
} from '../api.js';
import { DockerContainers } from './container.js';
import { dockerodeEngine, dockerSocketPath, type DockerEngine } from './engine.js';
import { DockerImages } from './image.js';
import { DockerNetworks } from './network.js';
import { DockerObjects } from './objects.js';
import type { DockerPodInterfaces } from './pod-interfaces.js';
import { DockerSandboxes } from './sandbox.js';
import { DockerStreaming } from './streaming.js';

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
  /**
   * The agent's network plugin (agent/network/pod-interfaces.ts): sandboxes it can wire
   * get NetworkMode none and their eth0 from it (pod-interfaces.ts). Unset: every sandbox
   * is on Docker's network.
   */
  podInterfaces?: DockerPodInterfaces;
}

/** Docker Engine adapter (see the file comment). */
export class DockerRuntime implements Runtime {
  private readonly objects: DockerObjects;
  private readonly sandboxes: DockerSandboxes;
  private readonly containers: DockerContainers;
  private readonly streaming: DockerStreaming;
  private readonly images: DockerImages;
  private readonly networks: DockerNetworks;

  private constructor(
    engine: DockerEngine,
    readonly nodeName: string,
    readonly pauseImage: string,
    execExitWaitMs: number,
    podInterfaces: DockerPodInterfaces | undefined,
  ) {
    this.objects = new DockerObjects(engine, nodeName);
    this.images = new DockerImages(this.objects);
    this.networks = new DockerNetworks(this.objects);
    this.sandboxes = new DockerSandboxes(this.objects, this.images, pauseImage, this.networks, podInterfaces);
    this.containers = new DockerContainers(this.objects, execExitWaitMs);
    this.streaming = new DockerStreaming(this.objects, execExitWaitMs);
  }

  /**
   * Connects to the engine and checks that it answers.
   * @throws Error when `nodeName` is empty; CriError Unavailable when docker does not answer.
   */
  static async connect(opts: DockerRuntimeOptions): Promise<DockerRuntime> {
    const docker = new Docker({ socketPath: dockerSocketPath(opts.socketPath) });
    return DockerRuntime.onEngine(dockerodeEngine(docker), opts);
  }

  /**
   * The adapter on `engine` (a fake one in unit tests), checked like connect(); `socketPath`
   * is not used.
   * @throws Error when `nodeName` is empty; CriError Unavailable when the engine does not answer.
   */
  static async onEngine(engine: DockerEngine, opts: DockerRuntimeOptions): Promise<DockerRuntime> {
    if (!opts.nodeName) throw new Error('DockerRuntime: nodeName is required');
    const rt = new DockerRuntime(
      engine,
      opts.nodeName,
      opts.pauseImage ?? DEFAULT_PAUSE_IMAGE,
      opts.execExitWaitMs ?? 5000,
      opts.podInterfaces,
    );
    await rt.objects.call('connect to docker', (e) => e.ping());
    return rt;
  }

  // ---- RuntimeService ----

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    const v = await this.objects.call('docker version', (e) => e.version());
    return { runtimeName: 'docker', runtimeVersion: v.Version, runtimeApiVersion: v.ApiVersion };
  }

  async status(): Promise<RuntimeStatus> {
    await this.objects.call('docker ping', (e) => e.ping());
    // The agent creates the node's network itself; the engine answering is all there is to report.
    return {
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: true, reason: '', message: '' },
      ],
    };
  }

  runPodSandbox(config: PodSandboxConfig, opts?: RunPodSandboxOptions): Promise<string> {
    return this.sandboxes.run(config, opts);
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
