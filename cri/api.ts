/**
 * The runtime interface the agent drives, named after CRI v1 (k8s.io/cri-api
 * runtime/v1/api.proto): a RuntimeService for pod sandboxes and containers and an
 * ImageService for images. Adapters implement it — `docker` (dockerode), `fake` (memory,
 * for unit tests and simulated nodes) — and one conformance suite (conformance.ts) runs
 * unchanged against each. The agent never talks to a runtime any other way.
 *
 * Shapes follow CRI's messages with JavaScript types: timestamps are nanoseconds since the
 * epoch as `bigint` where CRI has int64 nanoseconds (createdAt, startedAt, finishedAt),
 * sizes are bytes, CPU shares/quota/period in CRI's units. Every object carries the
 * labels and annotations it was created with, so the runtime alone can rebuild the
 * agent's view after a restart (the kubelet's labels `io.kubernetes.pod.name`, ... go
 * in `labels`).
 *
 * Errors: methods reject with a CriError (errors.ts) whose `code` says what went wrong
 * (NotFound for an unknown id, ...). Removing what is already gone succeeds (CRI's
 * idempotent Remove and Stop calls).
 */
import type { Duplex } from 'node:stream';

/** CRI's PodSandboxState. */
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

/** CRI's ContainerState. */
export type ContainerState =
  'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

/** CRI's PodSandboxMetadata: who the sandbox belongs to. */
export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

/** CRI's ContainerMetadata. */
export interface ContainerMetadata {
  name: string;
  attempt: number;
}

/** CRI's PortMapping (hostPort published on the node). */
export interface PortMapping {
  protocol: 'TCP' | 'UDP' | 'SCTP';
  containerPort: number;
  hostPort: number;
  /** Host address to bind; '' = all. */
  hostIp: string;
}

/** What RunPodSandbox needs (CRI's PodSandboxConfig, trimmed to what k8ts uses). */
export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname: string;
  /** Directory for the pod's container logs on the host. */
  logDirectory?: string;
  portMappings: PortMapping[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /**
   * The pod network the sandbox joins (k8ts extension of CRI's DNS/network settings): a
   * name given to ensurePodNetwork. Unset: the runtime's default network (docker's
   * `bridge`; the fake adapter's `podCIDR`). An unknown name rejects NotFound.
   */
  network?: string;
  /**
   * The sandbox's resolv.conf (CRI's DNSConfig, dns_config), as the kubelet forms it from
   * the pod's dnsPolicy and dnsConfig (agent/kubelet/pods/dns.ts); the pod's containers
   * share it. Unset: the runtime's default (Docker's, containerd's copy of the host's).
   */
  dnsConfig?: DNSConfig;
  /** Linux settings: cgroup parent, sysctls, namespaces (CRI's LinuxPodSandboxConfig). */
  linux?: {
    cgroupParent?: string;
    sysctls?: Record<string, string>;
    /** CRI's LinuxSandboxSecurityContext (the part k8ts uses). */
    securityContext?: { namespaceOptions?: NamespaceOption };
  };
}

/**
 * CRI's DNSConfig: the lines of a sandbox's /etc/resolv.conf — `nameserver` per server
 * (IP addresses), one `search` line, one `options` line (`ndots:5`, `edns0`, ...).
 */
export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/**
 * CRI's NamespaceMode: POD — the pod's own, shared by its containers (the sandbox's);
 * CONTAINER — the container's own (PID only); NODE — the host's (hostNetwork, hostPID,
 * hostIPC).
 */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE';

/**
 * CRI's NamespaceOption: which network, PID and IPC namespaces a sandbox and its
 * containers use. Unset fields mean POD for network and IPC and CONTAINER for PID (CRI's
 * zero values are POD; the kubelet always sets PID).
 */
export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
}

/** CRI's Capability: Linux capability names without `CAP_` (`NET_ADMIN`), or `ALL`. */
export interface Capability {
  addCapabilities?: string[];
  dropCapabilities?: string[];
}

/** CRI's PodSandbox (ListPodSandbox item). */
export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  /** Nanoseconds since the epoch. */
  createdAt: bigint;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** CRI's PodSandboxStatus. */
export interface PodSandboxStatus extends PodSandbox {
  /** The pod's IP address on its network ('' when it has none). */
  network: { ip: string };
}

/** CRI's KeyValue for environment variables. */
export interface KeyValue {
  key: string;
  value: string;
}

/** CRI's Mount. */
export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
}

/** CRI's LinuxContainerResources (the subset k8ts sets). */
export interface LinuxContainerResources {
  /** CFS period, microseconds (0 = runtime default). */
  cpuPeriod?: number;
  /** CFS quota, microseconds per period (0 = unlimited). */
  cpuQuota?: number;
  /** CPU shares (relative weight; Kubernetes: requests in millicores × 1024 / 1000, min 2). */
  cpuShares?: number;
  /** Memory limit, bytes (0 = unlimited). */
  memoryLimitInBytes?: number;
}

/** CRI's ContainerConfig (what CreateContainer needs). */
export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: { image: string };
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Path of the container's log, relative to the sandbox's logDirectory. */
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: {
    resources?: LinuxContainerResources;
    /** CRI's LinuxContainerSecurityContext (the part k8ts uses). */
    securityContext?: {
      runAsUser?: number;
      runAsGroup?: number;
      readonlyRootfs?: boolean;
      /** Every capability, every device, no seccomp/AppArmor confinement. */
      privileged?: boolean;
      /** Capabilities added to and dropped from the runtime's default set. */
      capabilities?: Capability;
      /** no_new_privs: no process of the container gains privileges (setuid, file capabilities). */
      noNewPrivs?: boolean;
      /** The sandbox's namespaces as the container joins them (the same as the sandbox's). */
      namespaceOptions?: NamespaceOption;
    };
  };
}

/** CRI's Container (ListContainers item). */
export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  /** The image as asked for (e.g. `spring-server:1.0`). */
  image: string;
  /** The image's id (`sha256:...`). */
  imageRef: string;
  state: ContainerState;
  createdAt: bigint;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** CRI's ContainerStatus. */
export interface ContainerStatus extends Container {
  /** Nanoseconds since the epoch; 0n when not started / not finished. */
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  /** `Completed`, `Error`, `OOMKilled`, ... when exited. */
  reason: string;
  message: string;
  logPath: string;
}

/** CRI's ContainerStats (ContainerStats/ListContainerStats). */
export interface ContainerStats {
  id: string;
  /** Nanoseconds since the epoch when sampled. */
  timestamp: bigint;
  /** Cumulative CPU time, nanoseconds. */
  cpuUsageCoreNanoSeconds: bigint;
  /** Working set memory, bytes. */
  memoryWorkingSetBytes: number;
}

/** Filters of ListPodSandbox (CRI's PodSandboxFilter): all given fields must match. */
export interface PodSandboxFilter {
  id?: string;
  state?: PodSandboxState;
  labelSelector?: Record<string, string>;
}

/** Filters of ListContainers (CRI's ContainerFilter). */
export interface ContainerFilter {
  id?: string;
  podSandboxId?: string;
  state?: ContainerState;
  labelSelector?: Record<string, string>;
}

/** What ExecSync returns. */
export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/** CRI's RuntimeCondition types: the kubelet's node Ready condition needs both true. */
export type RuntimeConditionType = 'RuntimeReady' | 'NetworkReady';

/** CRI's RuntimeCondition. */
export interface RuntimeCondition {
  type: RuntimeConditionType;
  status: boolean;
  /** CamelCase reason when `status` is false ('' otherwise). */
  reason: string;
  message: string;
}

/** CRI's RuntimeStatus (Status RPC). */
export interface RuntimeStatus {
  conditions: RuntimeCondition[];
}

/**
 * What runPodSandbox may tell its caller on the way (not in CRI, whose RunPodSandbox says
 * nothing until the sandbox is ready). A runtime that cannot do better never calls it.
 */
export interface RunPodSandboxOptions {
  /**
   * Called at most once, when the sandbox exists and before it runs, by a runtime on which a
   * container can be created in a sandbox still starting (Docker: a container's NetworkMode
   * `container:<id>` may name a created container; the namespaces are joined at its start).
   * `ip` is the sandbox's address when it is fixed already (the agent's own interface,
   * reserved before the create), else undefined. From then on createContainer(id, …) is
   * allowed; startContainer still needs the sandbox ready, i.e. runPodSandbox resolved.
   * When runPodSandbox rejects, the sandbox is gone, and what the caller created in it
   * meanwhile is the caller's to remove. Must not throw.
   */
  onCreated?: (sandbox: { id: string; ip?: string }) => void;
}

/** CRI's RuntimeService. */
export interface RuntimeService {
  /** Runtime name and version (CRI's Version): e.g. `{runtimeName: 'docker', runtimeVersion: '20.10.24'}`. */
  version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }>;
  /**
   * The runtime's health (CRI's Status): RuntimeReady and NetworkReady. The kubelet reports
   * its node NotReady ("container runtime is down") while either is false. Rejects with
   * Unavailable when the runtime cannot be reached at all.
   */
  status(): Promise<RuntimeStatus>;
  /**
   * Creates and starts a sandbox (the pod's network namespace); resolves with its id.
   * `opts.onCreated` (RunPodSandboxOptions) lets the caller create its containers while the
   * sandbox starts, where the runtime allows it.
   */
  runPodSandbox(config: PodSandboxConfig, opts?: RunPodSandboxOptions): Promise<string>;
  /** Stops the sandbox and every container in it; idempotent. */
  stopPodSandbox(podSandboxId: string): Promise<void>;
  /** Removes the sandbox and its containers (force); idempotent. */
  removePodSandbox(podSandboxId: string): Promise<void>;
  podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus>;
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>;
  /** Creates (does not start) a container in the sandbox; resolves with its id. */
  createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  /** SIGTERM, then SIGKILL after `timeoutSeconds` (0 = kill at once); idempotent. */
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>;
  /** Removes a container (force); idempotent. */
  removeContainer(containerId: string): Promise<void>;
  listContainers(filter?: ContainerFilter): Promise<Container[]>;
  containerStatus(containerId: string): Promise<ContainerStatus>;
  /** Runs `cmd` in the container and waits (at most `timeoutSeconds`, 0 = no limit). */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse>;
  containerStats(containerId: string): Promise<ContainerStats>;
}

/** CRI's Image. */
export interface Image {
  /** `sha256:...`. */
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** Bytes. */
  size: number;
  /** The image's user (its config's `User`) when numeric (CRI's uid); unset when it names a user or none. */
  uid?: number;
  /** The image's user when it is a name (CRI's username). */
  username?: string;
}

/** Progress of PullImage, as the layers arrive (bytes). */
export interface PullProgress {
  status: string;
  current?: number;
  total?: number;
}

/**
 * CRI's AuthConfig: the credentials of one pull, as the kubelet takes them from a pod's
 * imagePullSecrets (agent/kubelet/pods/pull-secrets.ts). `auth` is base64 `user:password`
 * (the docker config's form); `serverAddress`, when set, is the registry they are for.
 */
export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

/** CRI's ImageService. */
export interface ImageService {
  listImages(): Promise<Image[]>;
  /** The image, or undefined when it is not present. */
  imageStatus(image: string): Promise<Image | undefined>;
  /**
   * Pulls, with the registry credentials `auth` when given (CRI's PullImageRequest.auth),
   * and resolves with the image's id; rejects with a CriError (ImagePullFailed, ...).
   */
  pullImage(image: string, onProgress?: (p: PullProgress) => void, auth?: AuthConfig): Promise<string>;
  removeImage(image: string): Promise<void>;
}

/**
 * The pod network of one node (the part CNI plays beside CRI): a bridge network whose
 * subnet is the node's `spec.podCIDR`, so sandboxes get addresses from it. Not in CRI;
 * k8ts keeps it here so the agent still reaches the runtime only through cri/.
 */
export interface PodNetworkConfig {
  /** Network name, unique per node (e.g. `k8ts-<nodeName>`). */
  name: string;
  /** The node's pod CIDR, e.g. `10.42.1.0/24`. */
  subnet: string;
  /** Labels to put on the network (the node name, so cleanup finds it). */
  labels: Record<string, string>;
  /**
   * The MTU of pod interfaces, bytes (the node's interface MTU, less the overlay's
   * encapsulation); unset: the runtime's default. An existing network with another MTU is
   * made again when no container uses it, and kept as it is otherwise.
   */
  mtu?: number;
}

/** Creates and removes pod networks. */
export interface NetworkService {
  /**
   * Creates the network if missing; resolves when it exists with this subnet. A network of
   * that name with another subnet is replaced when no container uses it, else rejects
   * with FailedPrecondition.
   */
  ensurePodNetwork(config: PodNetworkConfig): Promise<void>;
  /** Removes the network; idempotent. */
  removePodNetwork(name: string): Promise<void>;
}

/** A runtime: the services, the pod network, and a way to close connections. */
export interface Runtime extends RuntimeService, StreamingService, ImageService, NetworkService {
  close(): Promise<void>;
}

// ---- Streaming (CRI's Exec/Attach/PortForward and the kubelet's log reading) ----

/**
 * What to read of a container's log (the kubelet's `ContainerLogsOptions`, from
 * `GET /containerLogs`): stdout and stderr interleaved, as written.
 */
export interface ContainerLogOptions {
  /** Keep streaming what the container writes until the returned stream is destroyed. */
  follow?: boolean;
  /** Only the last N lines (before following). */
  tailLines?: number;
  /** Only lines written at or after this time, nanoseconds since the epoch. */
  sinceTime?: bigint;
  /** Prefix each line with its RFC 3339 (nanosecond) timestamp and a space, as the kubelet does. */
  timestamps?: boolean;
}

/** Terminal size for a TTY session (CRI's TerminalSize / remotecommand's resize channel). */
export interface TerminalSize {
  width: number;
  height: number;
}

/** Which streams an exec or attach session carries (CRI's ExecRequest/AttachRequest flags). */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  /** A terminal: stdout and stderr arrive as one stream (`stdout`), and resize() applies. */
  tty: boolean;
}

/**
 * A running exec or attach session (what CRI's streaming server serves for the kubelet).
 * Streams are byte streams with back-pressure; ending `stdin` closes the process's stdin.
 */
export interface StreamSession {
  /** Present when `stdin` was asked for. */
  stdin?: NodeJS.WritableStream;
  /** Present when `stdout` was asked for (with `tty`, the terminal's output). */
  stdout?: NodeJS.ReadableStream;
  /** Present when `stderr` was asked for and `tty` was not. */
  stderr?: NodeJS.ReadableStream;
  /** Resizes the terminal (no-op without `tty`). */
  resize(size: TerminalSize): Promise<void>;
  /**
   * Resolves with the exit code once the process has ended and its output has been read
   * (attach: the container's exit code when it ended, 0 when the session ended while the
   * container runs on).
   */
  exitCode: Promise<number>;
  /** Ends the session (the process runs on where the runtime cannot kill it). */
  close(): void;
}

/**
 * The streaming half of CRI's RuntimeService (Exec, Attach, PortForward) plus the log
 * reading the kubelet does beside CRI. Kept apart from RuntimeService so that adapters
 * and tests that only run pods need not provide it.
 */
export interface StreamingService {
  /**
   * The container's log as a byte stream (see ContainerLogOptions); it ends at the log's
   * end unless `follow`, then when the container stops or the stream is destroyed.
   * @throws CriError NotFound for an unknown container.
   */
  containerLogs(containerId: string, opts: ContainerLogOptions): Promise<NodeJS.ReadableStream>;
  /**
   * Starts `cmd` in a running container with the given streams (CRI's Exec).
   * @throws CriError NotFound, or FailedPrecondition when the container is not running.
   */
  exec(containerId: string, cmd: string[], opts: StreamOptions): Promise<StreamSession>;
  /**
   * Attaches to a running container's main process (CRI's Attach).
   * @throws CriError NotFound, or FailedPrecondition when the container is not running.
   */
  attach(containerId: string, opts: StreamOptions): Promise<StreamSession>;
  /**
   * A byte stream to `port` on localhost inside the sandbox's network namespace (CRI's PortForward).
   * @throws CriError NotFound, FailedPrecondition (sandbox not ready), Unavailable (refused).
   */
  portForward(podSandboxId: string, port: number): Promise<Duplex>;
}
