/**
 * The kubelet's typed view of the parts of a core/v1 PodSpec it acts on, beyond the thin
 * shared views in api/types.ts: env and envFrom, volumes and mounts, probes, security
 * context. Field names and meanings are Kubernetes' (k8s.io/api/core/v1/types.go); the
 * API server has already defaulted them, but the kubelet fills the defaults again where it
 * reads them (a pod written by an older server, a test fixture).
 */
import type { Container, Pod, PodSpec } from '../../../api/types.js';
import type { PodDNSConfig } from './dns.js';
import type { HostAlias } from './etc-hosts.js';

export interface ObjectFieldSelector {
  apiVersion?: string;
  /** `metadata.name`, `metadata.namespace`, `metadata.uid`, `metadata.labels['k']`, `spec.nodeName`, `status.podIP`, ... */
  fieldPath: string;
}

export interface ResourceFieldSelector {
  containerName?: string;
  /** `limits.cpu`, `requests.cpu`, `limits.memory`, `requests.memory`, `limits.ephemeral-storage`, ... */
  resource: string;
  /** Quantity the value is divided by (default 1; cpu rounds up). */
  divisor?: string;
}

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    resourceFieldRef?: ResourceFieldSelector;
    configMapKeyRef?: KeySelector;
    secretKeyRef?: KeySelector;
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  /** A path inside the volume to mount instead of its root. */
  subPath?: string;
  /** subPath with `$(VAR)` expanded from the container's environment (exclusive with subPath). */
  subPathExpr?: string;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  hostPath?: { path: string; type?: string };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[]; defaultMode?: number };
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
}

/** A file of a downwardAPI volume or projection: one pod field or container resource. */
export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  /** containerName is required in a volume. */
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

/** One source of a projected volume (exactly one field set). */
export interface VolumeProjection {
  configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  secret?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  serviceAccountToken?: {
    /** Default: the API server's own audiences. */
    audience?: string;
    /** Default 3600. */
    expirationSeconds?: number;
    path: string;
  };
}

/** A port of a probe handler: a number or the name of one of the container's ports. */
export type IntOrString = number | string;

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface ProbeHandler {
  exec?: { command?: string[] };
  httpGet?: {
    path?: string;
    port: IntOrString;
    host?: string;
    scheme?: 'HTTP' | 'HTTPS';
    httpHeaders?: HTTPHeader[];
  };
  tcpSocket?: { port: IntOrString; host?: string };
}

export interface Probe extends ProbeHandler {
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

/**
 * A container lifecycle hook handler (core/v1 LifecycleHandler): exactly one of exec,
 * httpGet, sleep (tcpSocket is deprecated and not run, as the kubelet).
 */
export interface LifecycleHandler {
  exec?: { command?: string[] };
  httpGet?: ProbeHandler['httpGet'];
  tcpSocket?: { port: IntOrString; host?: string };
  /** Sleep that many seconds (PodLifecycleSleepAction). */
  sleep?: { seconds: number };
}

/** core/v1 Lifecycle: hooks run right after a start and right before a stop. */
export interface Lifecycle {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
}

/** core/v1 Capabilities: names as the kernel's without `CAP_` (`NET_ADMIN`), or `ALL`. */
export interface Capabilities {
  add?: string[];
  drop?: string[];
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  capabilities?: Capabilities;
  /** The container must not run as uid 0 (checked against the image's user when runAsUser is unset). */
  runAsNonRoot?: boolean;
  /** false: no_new_privs (setuid binaries and file capabilities grant nothing). */
  allowPrivilegeEscalation?: boolean;
}

/** A container as the kubelet reads it. */
export interface KubeletContainer extends Container {
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: SecurityContext;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  lifecycle?: Lifecycle;
}

/** A pod spec as the kubelet reads it. */
export interface KubeletPodSpec extends PodSpec {
  containers: KubeletContainer[];
  initContainers?: KubeletContainer[];
  /** Secrets of the pod's namespace with the registry credentials for its images (pull-secrets.ts). */
  imagePullSecrets?: { name?: string }[];
  volumes?: Volume[];
  securityContext?: { runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean };
  /** The host's network namespace: the node's interfaces and ports; the pod IP is the node IP. */
  hostNetwork?: boolean;
  /** The host's PID namespace: every process of the node is visible (and signalable as root). */
  hostPID?: boolean;
  /** The host's IPC namespace. */
  hostIPC?: boolean;
  /** One PID namespace for the pod's containers (the sandbox's), instead of one each. */
  shareProcessNamespace?: boolean;
  serviceAccountName?: string;
  activeDeadlineSeconds?: number;
  /** How the pod's resolv.conf is formed (dns.ts); default ClusterFirst. */
  dnsPolicy?: 'ClusterFirst' | 'ClusterFirstWithHostNet' | 'Default' | 'None';
  /** Nameservers, searches and options over those of dnsPolicy (dns.ts). */
  dnsConfig?: PodDNSConfig;
  /** Extra /etc/hosts lines (etc-hosts.ts). */
  hostAliases?: HostAlias[];
  /** The kernel hostname is the FQDN `<hostname>.<subdomain>.<ns>.svc.<zone>`. */
  setHostnameAsFQDN?: boolean;
  /** false: only the `kubernetes` Service's variables, not the namespace's (envvars.ts); default true. */
  enableServiceLinks?: boolean;
}

/** A pod as the kubelet reads it. */
export interface KubeletPod extends Pod {
  spec: KubeletPodSpec;
}

/** The kubelet's view of `pod` (the same object, typed). */
export function kubeletPod(pod: Pod): KubeletPod {
  return pod as KubeletPod;
}

/**
 * The pod's regular init containers, in order: those run one at a time to completion
 * before the app containers. Sidecars (an init container with `restartPolicy: Always`)
 * are not supported by this kubelet and are left out.
 */
export function regularInitContainers(pod: KubeletPod): KubeletContainer[] {
  return (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy !== 'Always');
}

/** The spec container named `name`, app or init; undefined when there is none. */
export function specContainer(pod: KubeletPod, name: string): KubeletContainer | undefined {
  return (
    pod.spec.containers.find((c) => c.name === name) ?? pod.spec.initContainers?.find((c) => c.name === name)
  );
}

/** The three probe kinds, as the kubelet's prober names them. */
export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** `<name>_<namespace>(<uid>)`, the kubelet's format.Pod(), used in messages. */
export function podDesc(pod: Pod): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}
