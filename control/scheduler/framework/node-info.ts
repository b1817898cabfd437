/**
 * NodeInfo and PodInfo (pkg/scheduler/framework/types.go): what the scheduler knows about
 * one node — its Node object, its allocatable resources, the pods bound or assumed on it,
 * the sums of their requests and the host ports they hold — kept up to date
 * incrementally by the cache so that a Filter is a handful of number comparisons.
 */
import { controllerOf } from '../../../api/podutil.js';
import type { Node, Pod, Taint } from '../../../api/types.js';
import { nodeAllocatable, podRequests, emptyResource } from './resource.js';
import type { Resource } from './resource.js';

/** One host port a pod's container asks for; `ip` '' and '0.0.0.0' both mean every address. */
export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

/** A pod with what the scheduler derives from it, computed once. */
export class PodInfo {
  readonly pod: Pod;
  /** The pod's uid, or namespace/name when it has none (tests). */
  readonly key: string;
  /** resource.PodRequests. */
  readonly requests: Resource;
  /** Requests with the scoring defaults for containers without cpu/memory requests. */
  readonly nonZeroMilliCPU: number;
  readonly nonZeroMemory: number;
  /** Every `hostPort` of its containers (init containers included, as Kubernetes). */
  readonly hostPorts: readonly HostPort[];
  /** See controllerKeyOf: what NodeInfo.podsOfController counts this pod under. */
  readonly controllerKey: string | undefined;

  constructor(pod: Pod) {
    this.pod = pod;
    this.key = podKey(pod);
    this.requests = podRequests(pod);
    const nz = podRequests(pod, true);
    this.nonZeroMilliCPU = nz.milliCPU;
    this.nonZeroMemory = nz.memory;
    this.hostPorts = hostPortsOf(pod);
    this.controllerKey = controllerKeyOf(pod);
  }

  /**
   * The same derived figures for another version of the pod: reused when the spec is the
   * same object or `sameSpec` says only non-resource fields differ (the assumed copy with
   * spec.nodeName set), else computed afresh.
   */
  withPod(pod: Pod, sameSpec = false): PodInfo {
    if (sameSpec || pod.spec === this.pod.spec) {
      const copy = Object.create(PodInfo.prototype) as { -readonly [K in keyof PodInfo]: PodInfo[K] };
      Object.assign(copy, this);
      copy.pod = pod;
      // Metadata, not spec: a pod turns terminating, or is orphaned, without a spec change.
      copy.controllerKey = controllerKeyOf(pod);
      return copy as PodInfo;
    }
    return new PodInfo(pod);
  }
}

/** The key the cache and the queue use for a pod: its uid (namespace/name when it has none). */
export function podKey(pod: Pod): string {
  return pod.metadata.uid ?? `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/**
 * `<namespace>/<controller uid>` of a pod that has a controller ownerReference and is not
 * terminating (no deletionTimestamp); undefined otherwise. The pods PodTopologySpread's
 * default constraints select (plugins/podtopologyspread/constraints.ts) are those of one
 * key.
 */
export function controllerKeyOf(pod: Pod): string | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const uid = controllerOf(pod)?.uid;
  return uid ? `${pod.metadata.namespace ?? ''}/${uid}` : undefined;
}

/** Every hostPort the pod's containers (init containers included) ask for. */
export function hostPortsOf(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const list of [pod.spec.initContainers, pod.spec.containers]) {
    for (const c of list ?? []) {
      for (const p of c.ports ?? []) {
        if (!p.hostPort || p.hostPort <= 0) continue;
        out.push({ ip: normalizeIP(p.hostIP), protocol: p.protocol ?? 'TCP', port: p.hostPort });
      }
    }
  }
  return out;
}

const ANY_IP = '0.0.0.0';
function normalizeIP(ip: string | undefined): string {
  return ip === undefined || ip === '' ? ANY_IP : ip;
}

/**
 * The host ports in use on a node (framework.HostPortInfo): protocol/port → ip → how many
 * pods hold it. A wanted port conflicts with one in use on the same address or on
 * 0.0.0.0, and a wanted 0.0.0.0 conflicts with the port on any address.
 */
export class HostPortInfo {
  private readonly used = new Map<string, Map<string, number>>();

  get size(): number {
    return this.used.size;
  }

  add(p: HostPort, delta = 1): void {
    const k = `${p.protocol}/${p.port}`;
    let ips = this.used.get(k);
    if (!ips) this.used.set(k, (ips = new Map()));
    const n = (ips.get(p.ip) ?? 0) + delta;
    if (n > 0) ips.set(p.ip, n);
    else ips.delete(p.ip);
    if (ips.size === 0) this.used.delete(k);
  }

  /** True when `p` cannot be bound because another pod holds it (HostPortInfo.CheckConflict). */
  conflicts(p: HostPort): boolean {
    const ips = this.used.get(`${p.protocol}/${p.port}`);
    if (!ips) return false;
    if (p.ip === ANY_IP) return ips.size > 0;
    return ips.has(ANY_IP) || ips.has(p.ip);
  }
}

const NO_TAINTS: readonly Taint[] = Object.freeze([]);

/** What the scheduler knows about one node; mutated only by the cache. */
export class NodeInfo {
  readonly name: string;
  /** Undefined when the Node is gone but pods bound to it have not been removed yet. */
  node: Node | undefined;
  allocatable: Resource = emptyResource();
  /** Sum of the requests of the pods here (allowedPodNumber unused: see `pods.size`). */
  readonly requested: Resource = emptyResource();
  /** Sum of the non-zero requests (scoring figures). */
  nonZeroMilliCPU = 0;
  nonZeroMemory = 0;
  /** Pods bound or assumed here, by PodInfo.key. */
  readonly pods = new Map<string, PodInfo>();
  readonly usedPorts = new HostPortInfo();
  /**
   * How many of the pods here each controller has, by PodInfo.controllerKey: PodTopologySpread
   * scores every node for every pod by the pods of the pod's controller on it, which
   * counting pod by pod made work in proportion to all the pods of the cluster per pod.
   */
  private readonly byController = new Map<string, number>();
  /** Bumped on every change (for snapshots and tests). */
  generation = 0;

  constructor(name: string, node?: Node) {
    this.name = name;
    if (node) this.setNode(node);
  }

  /** The Node's labels (undefined without a Node). */
  labels: Readonly<Record<string, string>> | undefined;
  /** The Node's taints ([] without any). */
  taints: readonly Taint[] = NO_TAINTS;

  setNode(node: Node): void {
    this.node = node;
    this.labels = node.metadata.labels;
    this.taints = node.spec?.taints ?? NO_TAINTS;
    this.allocatable = nodeAllocatable(node);
    this.generation++;
  }

  addPod(pi: PodInfo): void {
    const old = this.pods.get(pi.key);
    if (old) this.account(old, -1);
    this.pods.set(pi.key, pi);
    this.account(pi, 1);
    this.generation++;
  }

  /** Removes the pod with `key`; false when it is not here. */
  removePod(key: string): boolean {
    const old = this.pods.get(key);
    if (!old) return false;
    this.pods.delete(key);
    this.account(old, -1);
    this.generation++;
    return true;
  }

  /** The pods here whose controllerKey is `key` (see controllerKeyOf). */
  podsOfController(key: string): number {
    return this.byController.get(key) ?? 0;
  }

  private account(pi: PodInfo, sign: 1 | -1): void {
    if (pi.controllerKey !== undefined) {
      const n = (this.byController.get(pi.controllerKey) ?? 0) + sign;
      if (n === 0) this.byController.delete(pi.controllerKey);
      else this.byController.set(pi.controllerKey, n);
    }
    const r = pi.requests;
    this.requested.milliCPU += sign * r.milliCPU;
    this.requested.memory += sign * r.memory;
    this.requested.ephemeralStorage += sign * r.ephemeralStorage;
    for (const [k, v] of r.scalar) {
      const n = (this.requested.scalar.get(k) ?? 0) + sign * v;
      if (n === 0) this.requested.scalar.delete(k);
      else this.requested.scalar.set(k, n);
    }
    this.nonZeroMilliCPU += sign * pi.nonZeroMilliCPU;
    this.nonZeroMemory += sign * pi.nonZeroMemory;
    for (const p of pi.hostPorts) this.usedPorts.add(p, sign);
  }
}
