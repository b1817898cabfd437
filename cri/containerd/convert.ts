/**
 * The containerd adapter's conversions between CRI's protobuf messages (as @grpc/proto-loader
 * decodes cri-api's api.proto: int64 as string, wrappers as `{value}`) and cri/api.ts's
 * shapes, in both directions; pure. The kubelet's CRI remote client (k8s.io/cri-client,
 * pkg/remote_runtime.go) sends api.ts's messages as they are; what differs here:
 *
 * - Objects created carry the label `io.k8ts.node` (objects.ts, ownLabels); a container
 *   the annotation `io.k8ts.image` (its image as the caller spelled it: containerd reports
 *   the normalized `docker.io/...` name) and `io.k8ts.sandbox-id` (CRI's ContainerStatus
 *   has no podSandboxId). None of the three is shown to callers.
 * - Image tags and digests are shown in the familiar form (`k8ts/pause:1.0`).
 * - An unset pid namespace mode is CONTAINER (api.ts), where CRI's zero value is POD.
 */
import type {
  Container,
  ContainerConfig,
  ContainerState,
  Image,
  NamespaceOption,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxState,
} from '../api.js';
import { familiarName, parseImageReference } from '../reference.js';
import type { Message } from './client.js';

/** The label naming the node that owns an object (as the docker adapter's). */
export const LABEL_NODE = 'io.k8ts.node';
/** The annotation keeping a container's image as asked for. */
export const ANNOTATION_IMAGE = 'io.k8ts.image';
/** The annotation naming a container's sandbox (CRI's ContainerStatus has no podSandboxId). */
export const ANNOTATION_SANDBOX_ID = 'io.k8ts.sandbox-id';

/** An int64 field (bigint, number or decimal string) as a bigint; anything else 0n. */
export const big = (v: unknown): bigint => {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  return 0n;
};
/** An int64 field as a number (see big). */
export const num = (v: unknown): number => Number(big(v));
/** A map<string, string> field as a fresh object ({} when unset). */
export const strMap = (v: unknown): Record<string, string> => ({
  ...((v as Record<string, string> | null) ?? {}),
});

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
export function namespaceOptions(ns: NamespaceOption | undefined): Message {
  return { network: ns?.network ?? 'POD', pid: ns?.pid ?? 'CONTAINER', ipc: ns?.ipc ?? 'POD' };
}

/** A container's stated image, from its annotation or the runtime's normalized name. */
function imageOf(c: Message): string {
  const annotations = strMap(c.annotations);
  return annotations[ANNOTATION_IMAGE] ?? familiar(String(c.image?.image ?? ''));
}

/** CRI's Image message as api.ts's Image. */
export function imageFrom(i: Message): Image {
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

/**
 * CRI's PodSandboxConfig message for api.ts's `config`, with `labels` (the caller's and
 * the node's) and the absolute `logDirectory` the runtime writes under.
 */
export function sandboxMessage(
  config: PodSandboxConfig,
  labels: Record<string, string>,
  logDirectory: string,
): Message {
  const ns = namespaceOptions(config.linux?.securityContext?.namespaceOptions);
  const msg: Message = {
    metadata: { ...config.metadata },
    // runc refuses a hostname without the pod's own UTS namespace (hostNetwork).
    hostname: ns.network === 'NODE' ? '' : config.hostname,
    logDirectory,
    portMappings: config.portMappings.map((p) => ({
      protocol: p.protocol,
      containerPort: p.containerPort,
      hostPort: p.hostPort,
      hostIp: p.hostIp,
    })),
    labels,
    annotations: { ...config.annotations },
    linux: {
      cgroupParent: config.linux?.cgroupParent ?? '',
      sysctls: { ...config.linux?.sysctls },
      securityContext: { namespaceOptions: ns },
    },
  };
  // The CRI plugin writes the sandbox's resolv.conf from dns_config (unset: the host's).
  if (config.dnsConfig) msg.dnsConfig = { ...config.dnsConfig };
  return msg;
}

/**
 * CRI's ContainerConfig message for api.ts's `config` in sandbox `podSandboxId`, with
 * `labels` (the caller's and the node's) and the hidden annotations; an unset logPath is
 * the kubelet's `<name>/<attempt>.log` (relative to the sandbox's logDirectory).
 */
export function containerMessage(
  config: ContainerConfig,
  podSandboxId: string,
  labels: Record<string, string>,
): Message {
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
    // KeyValue.value is `bytes` in this cri-api (v0.37): proto-loader would take a string
    // for base64 and refuse (or garble) a value such as tcp://10.43.0.1:443.
    envs: (config.envs ?? []).map((e) => ({ key: e.key, value: Buffer.from(e.value, 'utf8') })),
    mounts: (config.mounts ?? []).map((m) => ({
      containerPath: m.containerPath,
      hostPath: m.hostPath,
      readonly: m.readonly,
    })),
    labels,
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

/** CRI's PodSandbox (or PodSandboxStatus) message as api.ts's PodSandbox, the node label hidden. */
export function sandboxFrom(s: Message): PodSandbox {
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

/**
 * CRI's Container (or ContainerStatus) message as api.ts's Container, the node label and
 * the adapter's annotations hidden; podSandboxId '' when neither the message nor the
 * annotation names it.
 */
export function containerFrom(c: Message): Container {
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
