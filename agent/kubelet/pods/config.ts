/**
 * The runtime configurations the kubelet derives from a pod: the sandbox's
 * (kuberuntime_sandbox.go generatePodSandboxConfig) and each container's
 * (kuberuntime_container.go generateContainerConfig, kuberuntime_container_linux.go for
 * resources and security). Pure: env, mounts and the image id are computed by the caller.
 */
import { containerLogPath, podLogsDirectory } from './logs.js';
import { parseQuantity } from '../../../api/meta/quantity.js';
import type {
  ContainerConfig,
  KeyValue,
  LinuxContainerResources,
  Mount,
  NamespaceOption,
  PodSandboxConfig,
  PortMapping,
} from '../../../cri/index.js';
import { containerAnnotations, containerLabels, sandboxLabels } from './labels.js';
import { kernelHostname, podHostnameAndDomain } from './dns.js';
import { expandVars } from './env.js';
import { podDesc, type KubeletContainer, type KubeletPod } from './types.js';

/** CFS period the kubelet uses, microseconds (quotaPeriod). */
export const CPU_PERIOD_US = 100_000;
/** Smallest CFS quota the kubelet sets, microseconds (minQuotaPeriod). */
const MIN_QUOTA_US = 1_000;
/** cgroup cpu.shares bounds (MinShares, MaxShares). */
const MIN_SHARES = 2;
const MAX_SHARES = 262_144;

/** Where the node puts a pod (the same for every container of the pod). */
export interface NodeContext {
  nodeName: string;
  /** The node IP, where hostPorts are published unless the port names its own hostIP. */
  nodeIP: string;
  /** The node's pod network the sandbox joins. */
  network: string;
  /** `--cluster-domain`, of the FQDN of a pod with setHostnameAsFQDN; default cluster.local. */
  clusterDomain?: string;
  /** The kubelet's podLogsDir: the sandbox's logDirectory is the pod's under it (logs.ts). */
  podLogsDir?: string;
}

/** The pod's hostPort mappings (containerPort with a hostPort), published on the node IP. */
export function portMappings(pod: KubeletPod, nodeIP: string): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      out.push({
        protocol: p.protocol ?? 'TCP',
        containerPort: p.containerPort,
        hostPort: p.hostPort,
        hostIp: p.hostIP || nodeIP,
      });
    }
  }
  return out;
}

/**
 * The namespaces of the pod's sandbox and containers (kuberuntime's namespacesForPod):
 * network and IPC the host's for hostNetwork / hostIPC, else the pod's; PID the host's for
 * hostPID, the pod's (the sandbox's) for shareProcessNamespace, else each container's own.
 */
export function namespacesForPod(pod: KubeletPod): Required<NamespaceOption> {
  return {
    network: pod.spec.hostNetwork ? 'NODE' : 'POD',
    ipc: pod.spec.hostIPC ? 'NODE' : 'POD',
    pid: pod.spec.hostPID ? 'NODE' : pod.spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
  };
}

function sandboxHostname(pod: KubeletPod, clusterDomain: string): string {
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  return kernelHostname(hostname, domain, pod.spec.setHostnameAsFQDN);
}

/**
 * The pod's sandbox configuration (attempt `attempt`): metadata, hostname (dns.ts:
 * spec.hostname or the pod name, at most 63 characters; with setHostnameAsFQDN and a
 * subdomain `<hostname>.<subdomain>.<ns>.svc.<zone>`), hostPort mappings, the kubelet's labels over
 * the pod's, the pod's annotations, its namespaces (namespacesForPod), and the node's pod
 * network — none for a hostNetwork pod, which has the node's.
 * @throws Error when setHostnameAsFQDN makes a hostname over 64 characters (kernelHostname).
 */
export function podSandboxConfig(pod: KubeletPod, attempt: number, node: NodeContext): PodSandboxConfig {
  const cfg: PodSandboxConfig = {
    metadata: {
      name: pod.metadata.name ?? '',
      namespace: pod.metadata.namespace ?? '',
      uid: pod.metadata.uid ?? '',
      attempt,
    },
    hostname: sandboxHostname(pod, node.clusterDomain ?? 'cluster.local'),
    portMappings: portMappings(pod, node.nodeIP),
    labels: sandboxLabels(pod, node.nodeName),
    annotations: { ...pod.metadata.annotations },
    linux: { securityContext: { namespaceOptions: namespacesForPod(pod) } },
  };
  if (!pod.spec.hostNetwork) cfg.network = node.network;
  if (node.podLogsDir) cfg.logDirectory = podLogsDirectory(node.podLogsDir, pod);
  return cfg;
}

/**
 * Linux resources from the container's requests and limits (kubelet's
 * generateLinuxContainerResources): limits.cpu (millicores) → CFS quota
 * `millicores × 100 000 / 1000` µs per 100 000 µs period (at least 1000 µs); limits.memory
 * → memoryLimitInBytes; requests.cpu → cpu.shares `millicores × 1024 / 1000` (2 when
 * unset, at most 262 144).
 */
export function linuxResources(container: KubeletContainer): LinuxContainerResources {
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  const out: LinuxContainerResources = {};
  const cpuRequest = requests.cpu ?? limits.cpu;
  const requestMilli = cpuRequest !== undefined ? Number(parseQuantity(cpuRequest).milliValue()) : 0;
  out.cpuShares = Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((requestMilli * 1024) / 1000)));
  if (limits.cpu !== undefined) {
    const milli = Number(parseQuantity(limits.cpu).milliValue());
    out.cpuPeriod = CPU_PERIOD_US;
    out.cpuQuota = Math.max(MIN_QUOTA_US, Math.floor((milli * CPU_PERIOD_US) / 1000));
  }
  if (limits.memory !== undefined) out.memoryLimitInBytes = Number(parseQuantity(limits.memory).value());
  return out;
}

/** What generateContainerConfig needs besides the pod and container. */
export interface ContainerConfigInput {
  restartCount: number;
  envs: KeyValue[];
  mounts: Mount[];
  nodeName: string;
}

/**
 * A container's runtime configuration: image, command and args (with `$(VAR)` expanded
 * from `envs`), workingDir, env, mounts, labels and annotations (restart count, spec hash),
 * resources, and the security context (kubelet's determineEffectiveSecurityContext: the
 * container's runAsUser/runAsGroup over the pod's, readOnlyRootFilesystem, privileged,
 * capabilities add/drop as given, no_new_privs for allowPrivilegeEscalation false, the
 * pod's namespaces).
 */
export function containerConfig(
  pod: KubeletPod,
  container: KubeletContainer,
  input: ContainerConfigInput,
): ContainerConfig {
  const envMap = new Map(input.envs.map((e) => [e.key, e.value]));
  const expand = (s: string) => expandVars(s, (n) => envMap.get(n));
  const sc = container.securityContext ?? {};
  const podSc = pod.spec.securityContext ?? {};
  const security: NonNullable<NonNullable<ContainerConfig['linux']>['securityContext']> = {};
  const runAsUser = sc.runAsUser ?? podSc.runAsUser;
  const runAsGroup = sc.runAsGroup ?? podSc.runAsGroup;
  if (runAsUser !== undefined) security.runAsUser = runAsUser;
  if (runAsGroup !== undefined) security.runAsGroup = runAsGroup;
  if (sc.readOnlyRootFilesystem) security.readonlyRootfs = true;
  if (sc.privileged) security.privileged = true;
  const add = sc.capabilities?.add ?? [];
  const drop = sc.capabilities?.drop ?? [];
  if (add.length > 0 || drop.length > 0) {
    security.capabilities = {};
    if (add.length > 0) security.capabilities.addCapabilities = [...add];
    if (drop.length > 0) security.capabilities.dropCapabilities = [...drop];
  }
  // AddNoNewPrivileges: only an explicit allowPrivilegeEscalation: false.
  if (sc.allowPrivilegeEscalation === false) security.noNewPrivs = true;
  security.namespaceOptions = namespacesForPod(pod);
  const cfg: ContainerConfig = {
    metadata: { name: container.name, attempt: input.restartCount },
    logPath: containerLogPath(container.name, input.restartCount),
    image: { image: container.image ?? '' },
    envs: input.envs,
    mounts: input.mounts,
    labels: containerLabels(pod, container.name, input.nodeName),
    annotations: containerAnnotations(pod, container, input.restartCount),
    linux: { resources: linuxResources(container), securityContext: security },
  };
  if (container.command) cfg.command = container.command.map(expand);
  if (container.args) cfg.args = container.args.map(expand);
  if (container.workingDir) cfg.workingDir = container.workingDir;
  if (container.stdin) cfg.stdin = true;
  if (container.stdinOnce) cfg.stdinOnce = true;
  if (container.tty) cfg.tty = true;
  return cfg;
}

/**
 * The kubelet's verifyRunAsNonRoot: with runAsNonRoot (the container's over the pod's),
 * runAsUser 0 is refused, and without a runAsUser so is an image whose user is uid 0 or
 * unset (root) or a name (which cannot be checked). Returns the refusal, the message of a
 * CreateContainerConfigError, or undefined when the container may run.
 */
export function verifyRunAsNonRoot(
  pod: KubeletPod,
  container: KubeletContainer,
  image: { uid?: number; username?: string },
): string | undefined {
  const sc = container.securityContext ?? {};
  const podSc = pod.spec.securityContext ?? {};
  if (!(sc.runAsNonRoot ?? podSc.runAsNonRoot)) return undefined;
  const who = `(pod: ${JSON.stringify(podDesc(pod))}, container: ${container.name})`;
  const runAsUser = sc.runAsUser ?? podSc.runAsUser;
  if (runAsUser !== undefined) {
    return runAsUser === 0 ? `container's runAsUser breaks non-root policy ${who}` : undefined;
  }
  // getImageUser: an image that names no user runs as root.
  const uid = image.uid ?? (image.username ? undefined : 0);
  if (uid === 0) return `container has runAsNonRoot and image will run as root ${who}`;
  if (uid === undefined)
    return `container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root ${who}`;
  return undefined;
}
