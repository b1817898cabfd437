/**
 * Pure translations between CRI's shapes and Docker Engine API ones (API v1.41), in the
 * manner of dockershim's helpers (pkg/kubelet/dockershim/docker_container.go,
 * docker_sandbox.go, helpers.go): container state and exit reason, timestamps, resources
 * and security settings → HostConfig, port mappings → port bindings, stats → working set.
 */
import type {
  ContainerConfig,
  ContainerState,
  ContainerStats,
  DNSConfig,
  LinuxContainerResources,
  PodSandboxConfig,
  PortMapping,
} from '../api.js';

/** The part of `docker inspect`'s State the adapter reads. */
export interface DockerState {
  Status?: string;
  Running?: boolean;
  OOMKilled?: boolean;
  ExitCode?: number;
  Error?: string;
  StartedAt?: string;
  FinishedAt?: string;
}

/**
 * Nanoseconds since the epoch of a Docker timestamp (RFC 3339 with up to 9 fractional
 * digits, e.g. `2026-11-30T12:30:01.123456789Z`); 0n for Go's zero time
 * (`0001-01-01T00:00:00Z`), an empty or an unparsable string.
 */
export function parseDockerTime(s: string | undefined): bigint {
  if (!s) return 0n;
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return 0n;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms) || ms <= 0) return 0n;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** CRI state of a `docker ps` item's State (`created`, `running`, `exited`, ...). */
export function containerStateFromList(state: string): ContainerState {
  switch (state) {
    case 'running':
    case 'paused':
    case 'restarting':
      return 'CONTAINER_RUNNING';
    case 'exited':
    case 'dead':
      return 'CONTAINER_EXITED';
    case 'created':
      return 'CONTAINER_CREATED';
    default:
      return 'CONTAINER_UNKNOWN';
  }
}

/** CRI's view of a container's `docker inspect` State. */
export interface ContainerStateView {
  state: ContainerState;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  message: string;
}

/**
 * CRI state, times and exit reason from `docker inspect`'s State, as dockershim's
 * ContainerStatus: running → RUNNING; finished → EXITED with reason OOMKilled, Completed
 * (exit 0) or Error; never started but with an exit code (the process could not be run) →
 * EXITED with ContainerCannotRun, docker's error as the message, and startedAt = finishedAt
 * = `createdAt` (ns since the epoch; Docker records no times for a failed start, and the
 * kubelet's CrashLoopBackOff counts from finishedAt); else CREATED. startedAt is never
 * after finishedAt.
 */
export function containerStateFromInspect(s: DockerState, createdAt: bigint): ContainerStateView {
  const finishedAt = parseDockerTime(s.FinishedAt);
  // Docker records StartedAt once start() returns, which for a process that exits at once
  // can be after its FinishedAt; a container never finishes before it starts.
  let startedAt = parseDockerTime(s.StartedAt);
  if (finishedAt > 0n && startedAt > finishedAt) startedAt = finishedAt;
  const exitCode = s.ExitCode ?? 0;
  const view = { startedAt, finishedAt, exitCode, message: s.Error ?? '' };
  if (s.Running) return { ...view, state: 'CONTAINER_RUNNING', finishedAt: 0n, exitCode: 0, reason: '' };
  if (finishedAt > 0n) {
    const reason = s.OOMKilled ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error';
    return { ...view, state: 'CONTAINER_EXITED', reason };
  }
  if (exitCode !== 0) {
    return {
      ...view,
      state: 'CONTAINER_EXITED',
      reason: 'ContainerCannotRun',
      startedAt: createdAt,
      finishedAt: createdAt,
    };
  }
  return { ...view, state: 'CONTAINER_CREATED', reason: '' };
}

/** Docker's HostConfig resource fields. */
export interface DockerResources {
  CpuPeriod?: number;
  CpuQuota?: number;
  CpuShares?: number;
  Memory?: number;
  MemorySwap?: number;
}

/**
 * HostConfig resources from CRI's LinuxContainerResources (zero or absent fields are left
 * to docker's defaults). The memory limit also caps memory+swap, so a container over its
 * limit is OOM-killed rather than swapped (the kubelet runs without swap).
 */
export function resourcesToHostConfig(r: LinuxContainerResources | undefined): DockerResources {
  const out: DockerResources = {};
  if (!r) return out;
  if (r.cpuPeriod) out.CpuPeriod = r.cpuPeriod;
  if (r.cpuQuota) out.CpuQuota = r.cpuQuota;
  if (r.cpuShares) out.CpuShares = r.cpuShares;
  if (r.memoryLimitInBytes) {
    out.Memory = r.memoryLimitInBytes;
    out.MemorySwap = r.memoryLimitInBytes;
  }
  return out;
}

/** `docker create`'s ExposedPorts and HostConfig.PortBindings. */
export interface DockerPorts {
  ExposedPorts: Record<string, Record<string, never>>;
  PortBindings: Record<string, { HostIp: string; HostPort: string }[]>;
}

/**
 * Port bindings of a sandbox's port mappings. Mappings without a hostPort publish nothing
 * (as dockershim: a containerPort alone is reachable on the pod IP already).
 */
export function portBindings(mappings: readonly PortMapping[]): DockerPorts {
  const out: DockerPorts = { ExposedPorts: {}, PortBindings: {} };
  for (const pm of mappings) {
    if (!pm.hostPort) continue;
    const key = `${pm.containerPort}/${pm.protocol.toLowerCase()}`;
    out.ExposedPorts[key] = {};
    (out.PortBindings[key] ??= []).push({ HostIp: pm.hostIp, HostPort: String(pm.hostPort) });
  }
  return out;
}

/**
 * The `docker create` body of a sandbox: the pause image on `network`, or, as dockershim's
 * modifySandboxNamespaceOptions, in the host's namespaces the sandbox's namespaceOptions
 * name NODE — network (NetworkMode `host`: no hostname of its own and no published ports,
 * which docker refuses or ignores there), PID (PidMode `host`) and IPC (IpcMode `host`).
 * With `ownInterface` the sandbox gets a network namespace of its own with only `lo`
 * (NetworkMode `none`, no published ports): the agent makes its eth0 (pod-interfaces.ts).
 */
export function sandboxCreateOptions(
  config: PodSandboxConfig,
  pauseImage: string,
  name: string,
  labels: Record<string, string>,
  ownInterface = false,
): Record<string, unknown> {
  const ns = config.linux?.securityContext?.namespaceOptions ?? {};
  const hostNetwork = ns.network === 'NODE';
  const ports = portBindings(hostNetwork || ownInterface ? [] : config.portMappings);
  const hostConfig: Record<string, unknown> = {
    NetworkMode: hostNetwork ? 'host' : ownInterface ? 'none' : config.network || 'bridge',
    PortBindings: ports.PortBindings,
    // App containers join this IPC namespace (IpcMode container:<id>), which docker allows
    // only from a `shareable` one.
    IpcMode: ns.ipc === 'NODE' ? 'host' : 'shareable',
    RestartPolicy: { Name: 'no' },
  };
  if (ns.pid === 'NODE') hostConfig.PidMode = 'host';
  if (config.linux?.cgroupParent) hostConfig.CgroupParent = config.linux.cgroupParent;
  if (config.linux?.sysctls && Object.keys(config.linux.sysctls).length > 0) {
    hostConfig.Sysctls = config.linux.sysctls;
  }
  const body: Record<string, unknown> = {
    name,
    Image: pauseImage,
    Labels: labels,
    ExposedPorts: ports.ExposedPorts,
    HostConfig: hostConfig,
  };
  if (!hostNetwork) body.Hostname = config.hostname;
  return body;
}

/**
 * The text of a sandbox's resolv.conf from CRI's DNSConfig (dockershim's rewriteResolvFile):
 * a `nameserver` line per server, one `search` line, one `options` line, each only when
 * there is something to list; '' for an empty config (Docker's file is then kept).
 */
export function resolvConfText(dns: DNSConfig): string {
  const lines = dns.servers.map((s) => `nameserver ${s}`);
  if (dns.searches.length > 0) lines.push(`search ${dns.searches.join(' ')}`);
  if (dns.options.length > 0) lines.push(`options ${dns.options.join(' ')}`);
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/**
 * CRI's uid/username of an image from its config's `User` (dockershim's
 * getUserFromImageUser): `1000` or `1000:1000` → uid 1000; `nobody[:group]` → username;
 * '' → neither (the kubelet then takes the image to run as root).
 */
export function imageUser(user: string | undefined): { uid?: number; username?: string } {
  const name = (user ?? '').split(':')[0] ?? '';
  if (name === '') return {};
  return /^\d+$/.test(name) ? { uid: Number(name) } : { username: name };
}

/** Docker's `User`: `uid`, or `uid:gid` when a group is set too; undefined for the image's user. */
export function dockerUser(sc: { runAsUser?: number; runAsGroup?: number } | undefined): string | undefined {
  if (sc?.runAsUser === undefined) return undefined;
  return sc.runAsGroup === undefined ? String(sc.runAsUser) : `${sc.runAsUser}:${sc.runAsGroup}`;
}

/**
 * The `docker create` body of an app container of sandbox `sandboxId`: it joins the
 * sandbox's network namespace (the host's for a hostNetwork sandbox; UTSMode host then) and
 * IPC namespace (so the pod's containers share localhost), or the host's IPC where its
 * namespaceOptions say NODE, and the sandbox's PID namespace for pid POD
 * (shareProcessNamespace) or the host's for NODE (dockershim's
 * modifyContainerNamespaceOptions); capabilities → CapAdd/CapDrop; noNewPrivs → SecurityOpt
 * `no-new-privileges`; command → Entrypoint
 * and args → Cmd (Kubernetes' command/args over the image's ENTRYPOINT/CMD: a command
 * alone drops the image's CMD); mounts → Binds.
 */
export function containerCreateOptions(
  sandboxId: string,
  config: ContainerConfig,
  sandboxConfig: PodSandboxConfig,
  name: string,
  labels: Record<string, string>,
): Record<string, unknown> {
  const sc = config.linux?.securityContext;
  const ns = sc?.namespaceOptions ?? {};
  const sandboxNS = `container:${sandboxId}`;
  const hostConfig: Record<string, unknown> = {
    // Always the sandbox's network namespace, also for hostNetwork (the sandbox's is then the
    // host's), as dockershim's modifyHostOptionsForContainer: so Docker gives the container the
    // sandbox's resolv.conf, which holds the kubelet's (ClusterFirstWithHostNet, --resolv-conf),
    // where NetworkMode host would copy the host's /etc/resolv.conf. UTSMode host keeps the
    // host's hostname.
    NetworkMode: sandboxNS,
    ...(ns.network === 'NODE' ? { UTSMode: 'host' } : {}),
    IpcMode: ns.ipc === 'NODE' ? 'host' : sandboxNS,
    Binds: (config.mounts ?? []).map((m) => `${m.hostPath}:${m.containerPath}${m.readonly ? ':ro' : ''}`),
    ReadonlyRootfs: sc?.readonlyRootfs ?? false,
    Privileged: sc?.privileged ?? false,
    RestartPolicy: { Name: 'no' },
    ...resourcesToHostConfig(config.linux?.resources),
  };
  if (ns.pid === 'NODE') hostConfig.PidMode = 'host';
  else if (ns.pid === 'POD') hostConfig.PidMode = sandboxNS;
  if (sc?.noNewPrivs) hostConfig.SecurityOpt = ['no-new-privileges'];
  const caps = sc?.capabilities;
  if (caps?.addCapabilities?.length) hostConfig.CapAdd = caps.addCapabilities;
  if (caps?.dropCapabilities?.length) hostConfig.CapDrop = caps.dropCapabilities;
  if (sandboxConfig.linux?.cgroupParent) hostConfig.CgroupParent = sandboxConfig.linux.cgroupParent;
  const body: Record<string, unknown> = {
    name,
    Image: config.image.image,
    Env: (config.envs ?? []).map((e) => `${e.key}=${e.value}`),
    Labels: labels,
    Tty: config.tty ?? false,
    OpenStdin: config.stdin ?? false,
    StdinOnce: config.stdinOnce ?? false,
    HostConfig: hostConfig,
  };
  if (config.command && config.command.length > 0) body.Entrypoint = config.command;
  if (config.args && config.args.length > 0) body.Cmd = config.args;
  if (config.workingDir) body.WorkingDir = config.workingDir;
  const user = dockerUser(sc);
  if (user !== undefined) body.User = user;
  return body;
}

/** The part of Docker's one-shot stats the adapter reads (cgroup v1 or v2). */
export interface DockerStats {
  read?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; stats?: Record<string, number | undefined> };
}

/**
 * CRI stats from Docker's: cumulative CPU time (ns) and the working set — usage minus
 * inactive file pages (cgroup v1 `total_inactive_file`, v2 `inactive_file`; `cache` on
 * engines that report neither), as cAdvisor computes the kubelet's working set; never
 * below zero. `now` (ns) is the timestamp when Docker gives none.
 */
export function statsFromDocker(id: string, s: DockerStats, now: bigint): ContainerStats {
  const usage = s.memory_stats?.usage ?? 0;
  const st = s.memory_stats?.stats ?? {};
  const inactive = st.total_inactive_file ?? st.inactive_file ?? st.cache ?? 0;
  const read = parseDockerTime(s.read);
  return {
    id,
    timestamp: read > 0n ? read : now,
    cpuUsageCoreNanoSeconds: BigInt(Math.max(0, Math.trunc(s.cpu_stats?.cpu_usage?.total_usage ?? 0))),
    memoryWorkingSetBytes: Math.max(0, usage - inactive),
  };
}
