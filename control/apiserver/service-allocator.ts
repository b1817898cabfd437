/**
 * ClusterIP and NodePort allocation for Services: the part of Kubernetes' service REST
 * (pkg/registry/core/service/storage/alloc.go, with ipallocator and portallocator) that
 * gives a Service its `spec.clusterIP(s)` from the service CIDR (kube-apiserver's
 * `--service-cluster-ip-range`, here default 10.43.0.0/16 as k3s) and its
 * `spec.ports[*].nodePort` (and `healthCheckNodePort`) from the NodePort range
 * (`--service-node-port-range`, default 30000-32767), and releases them again.
 *
 * Storage: one store key per allocated item, `/registry/ranges/serviceips/<ip>` and
 * `/registry/ranges/servicenodeports/<port>`, valued with the owning Service. Kubernetes
 * keeps one bitmap per range behind a compare-and-swap; one key per item gives the same
 * guarantee more simply: the store's create is atomic (KeyExists when taken), so two API
 * servers over one etcd never hand out the same address or port, and neither needs to
 * read-modify-write a shared value.
 *
 * Dynamic allocation follows ServiceIPStaticSubrange / ServiceNodePortStaticSubrange: the
 * lower band of a range (min(max(16, size/16), 256) addresses; min(max(16, size/32), 128)
 * ports) is kept for values clients ask for and only used when the upper band is full.
 *
 * IPv4 single-stack only: a cluster with an IPv6 or dual-stack service CIDR is refused at
 * construction, and Services asking for IPv6 or RequireDualStack are refused as Kubernetes
 * refuses them on a single-stack cluster.
 *
 * Repair (Kubernetes' ipallocator/portallocator repair controllers, see repair()): an
 * allocation left behind by a crash between a reservation and the Service write, or between
 * a delete and the release, is released once it has been seen unused by any Service in
 * three runs in a row; a Service whose address or port has no allocation key (data written
 * before the allocator, or restored) gets one recorded.
 */
import { invalid as invalidField, toStatusCauses, type FieldError } from '../../api/meta/validation.js';
import type { KubeObject } from '../../api/object.js';
import { isStorageError } from '../storage/errors.js';
import type { Store } from '../storage/store.js';
import type { FinishFunc, RegistryHooks } from './registry.js';
import { internalError, invalid, type ApiError } from './status.js';
import { errorMessage } from '../../api/errors.js';

/** k3s' default service CIDR. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.43.0.0/16';
/** kube-apiserver's default `--service-node-port-range`. */
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767';
/** Store prefixes of the allocations (one key per item). */
export const SERVICE_IPS_PREFIX = '/registry/ranges/serviceips/';
export const SERVICE_NODE_PORTS_PREFIX = '/registry/ranges/servicenodeports/';

/** How often a dynamic allocation retries after losing a race for a free item. */
const RACE_ATTEMPTS = 16;

/** Why an allocation failed, with Kubernetes' ipallocator/portallocator wording. */
export class AllocationError extends Error {
  constructor(
    readonly reason: 'Allocated' | 'NotInRange' | 'Full',
    message: string,
  ) {
    super(message);
  }
}

/** Who holds an allocated item (the value of its key). */
interface Owner {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * One range of items (addresses or ports), allocated one store key per item. Items are
 * addressed by offset 0..size-1 inside the range.
 */
class KeyRange {
  constructor(
    private readonly store: Store,
    private readonly prefix: string,
    /** Number of allocatable items. */
    readonly size: number,
    /** Items [0, staticBand) are given out dynamically only when the rest is full. */
    private readonly staticBand: number,
    private readonly itemAt: (offset: number) => string,
    private readonly offsetOf: (item: string) => number | undefined,
    private readonly notInRange: (item: string) => string,
    private readonly allocatedMessage: string,
    private readonly random: () => number,
  ) {}

  /** Whether `item` (an address or port as text) lies in this range. */
  contains(item: string): boolean {
    return this.offsetOf(item) !== undefined;
  }

  /** The store key of `item`. */
  keyOf(item: string): string {
    return this.prefix + item;
  }

  /**
   * Reserves `item` for `owner` (a dry run only checks it is free).
   * @throws AllocationError NotInRange, Allocated.
   */
  async allocate(item: string, owner: Owner, dryRun: boolean): Promise<void> {
    if (this.offsetOf(item) === undefined) throw new AllocationError('NotInRange', this.notInRange(item));
    if (dryRun) {
      if (await this.store.get(this.prefix + item))
        throw new AllocationError('Allocated', this.allocatedMessage);
      return;
    }
    try {
      await this.store.create(this.prefix + item, JSON.stringify(owner));
    } catch (err) {
      if (isStorageError(err, 'KeyExists')) throw new AllocationError('Allocated', this.allocatedMessage);
      throw err;
    }
  }

  /**
   * Reserves a free item for `owner`: a random free one of the upper band, else of the
   * static band (a dry run picks one without reserving it).
   * @throws AllocationError Full.
   */
  async allocateNext(owner: Owner, dryRun: boolean): Promise<string> {
    const page = await this.store.list(this.prefix);
    const used = new Set<number>();
    for (const kv of page.items) {
      const offset = this.offsetOf(kv.key.slice(this.prefix.length));
      if (offset !== undefined) used.add(offset);
    }
    for (let attempt = 0; attempt < RACE_ATTEMPTS; attempt++) {
      const offset =
        this.pickFree(used, this.staticBand, this.size) ?? this.pickFree(used, 0, this.staticBand);
      if (offset === undefined) break;
      const item = this.itemAt(offset);
      if (dryRun) return item;
      try {
        await this.store.create(this.prefix + item, JSON.stringify(owner));
        return item;
      } catch (err) {
        // Another API server took it between our list and our create: try another.
        if (!isStorageError(err, 'KeyExists')) throw err;
        used.add(offset);
      }
    }
    throw new AllocationError('Full', 'range is full');
  }

  /**
   * Releases `item` if `owner` holds it (an item recorded for another Service, or not
   * allocated at all, is left alone).
   */
  async release(item: string, owner: Owner): Promise<void> {
    const kv = await this.store.get(this.prefix + item);
    if (!kv) return;
    let holder: Partial<Owner> = {};
    try {
      holder = JSON.parse(kv.value) as Partial<Owner>;
    } catch {
      // An unreadable record is released like an owned one.
    }
    if (holder.uid !== undefined && holder.uid !== owner.uid) return;
    try {
      await this.store.delete(kv.key, kv.modRevision);
    } catch (err) {
      if (!isStorageError(err, 'KeyNotFound') && !isStorageError(err, 'Conflict')) throw err;
    }
  }

  /** A random free offset in [from, to), scanning forward from a random start; undefined if none. */
  private pickFree(used: Set<number>, from: number, to: number): number | undefined {
    const n = to - from;
    if (n <= 0) return undefined;
    const start = Math.floor(this.random() * n);
    for (let i = 0; i < n; i++) {
      const offset = from + ((start + i) % n);
      if (!used.has(offset)) return offset;
    }
    return undefined;
  }
}

/** Settings of a ServiceAllocator (kube-apiserver flags). */
export interface ServiceAllocatorConfig {
  store: Store;
  /** `--service-cluster-ip-range`: an IPv4 CIDR; default 10.43.0.0/16. */
  serviceClusterIPRange?: string;
  /** `--service-node-port-range`: `<first>-<last>` (inclusive); default 30000-32767. */
  serviceNodePortRange?: string;
  /** Told about releases that failed (the item stays taken) and about repairs. */
  logger?: {
    warn(message: string, meta?: Record<string, unknown>): void;
    info?(message: string, meta?: Record<string, unknown>): void;
  };
  /** In [0, 1); default Math.random. */
  random?: () => number;
}

/** A parsed IPv4 CIDR: network address as an unsigned 32-bit number and prefix length. */
export interface IPv4CIDR {
  base: number;
  prefixLength: number;
  text: string;
}

/**
 * Parses an IPv4 CIDR (`10.43.0.0/16`); host bits are cleared, as Go's net.ParseCIDR.
 * @throws Error for anything else, and for prefixes longer than /30 (no usable addresses).
 */
export function parseIPv4CIDR(cidr: string): IPv4CIDR {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefixLength = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || !(prefixLength >= 1 && prefixLength <= 30)) {
    throw new Error(`service CIDR ${JSON.stringify(cidr)}: expected an IPv4 CIDR from /1 to /30`);
  }
  const addr = ipv4ToNumber(octets.join('.'))!;
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  const base = (addr & mask) >>> 0;
  return { base, prefixLength, text: `${numberToIPv4(base)}/${prefixLength}` };
}

/** Parses a port range `30000-32767` (or one port `30000`). @throws Error when malformed. */
export function parsePortRange(range: string): { first: number; last: number } {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(range.trim());
  const first = m ? Number(m[1]) : NaN;
  const last = m ? Number(m[2] ?? m[1]) : NaN;
  if (!m || first < 1 || last > 65535 || last < first) {
    throw new Error(`node port range ${JSON.stringify(range)}: expected <first>-<last> within 1-65535`);
  }
  return { first, last };
}

/** The unsigned 32-bit value of a dotted-quad IPv4 address, or undefined. */
export function ipv4ToNumber(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const o = m.slice(1).map(Number);
  if (o.some((x) => x > 255) || m.slice(1).some((x) => x.length > 1 && x.startsWith('0'))) return undefined;
  return ((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) >>> 0;
}

/** Dotted-quad form of an unsigned 32-bit value. */
export function numberToIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

type Obj = Record<string, unknown>;
interface PortSpec {
  port?: number;
  nodePort?: number;
  protocol?: string;
}
interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: PortSpec[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
}

const specOf = (obj: KubeObject): ServiceSpec => ((obj as Obj).spec ??= {}) as ServiceSpec;
const typeOf = (s: ServiceSpec): string => s.type ?? 'ClusterIP';
const isHeadless = (s: ServiceSpec): boolean => s.clusterIPs?.[0] === 'None' || s.clusterIP === 'None';
const hasNodePorts = (s: ServiceSpec): boolean => typeOf(s) === 'NodePort' || typeOf(s) === 'LoadBalancer';
/** shouldAllocateNodePorts: NodePort, or LoadBalancer unless allocateLoadBalancerNodePorts is false. */
const shouldAllocateNodePorts = (s: ServiceSpec): boolean =>
  typeOf(s) === 'NodePort' || (typeOf(s) === 'LoadBalancer' && s.allocateLoadBalancerNodePorts !== false);
/** apiservice.NeedsHealthCheck: a LoadBalancer with externalTrafficPolicy Local. */
const needsHealthCheck = (s: ServiceSpec): boolean =>
  typeOf(s) === 'LoadBalancer' && s.externalTrafficPolicy === 'Local';
const nodePortsOf = (s: ServiceSpec): number[] =>
  (s.ports ?? []).map((p) => p.nodePort ?? 0).filter((n) => n > 0);

/** Reservations made by one request: undone if the write fails, kept if it succeeds. */
class Operation {
  private readonly allocated: (() => Promise<void>)[] = [];
  private readonly deferred: (() => Promise<void>)[] = [];
  constructor(
    readonly dryRun: boolean,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Records a reservation to undo on failure. */
  reserved(undo: () => Promise<void>): void {
    if (!this.dryRun) this.allocated.push(undo);
  }

  /** Records a release to do only once the write succeeded. */
  releaseOnSuccess(release: () => Promise<void>): void {
    if (!this.dryRun) this.deferred.push(release);
  }

  /** The FinishFunc of the registry hooks. */
  readonly finish: FinishFunc = async (success) => {
    for (const fn of success ? this.deferred : this.allocated) {
      try {
        await fn();
      } catch (err) {
        this.onError(err);
      }
    }
    this.allocated.length = 0;
    this.deferred.length = 0;
  };
}

/**
 * The Service allocation hooks of the registry (see the file comment). Construct once per
 * API server and pass as the `hooks` of the services registry.
 * @throws Error from the constructor for a malformed or non-IPv4 range.
 */
export class ServiceAllocator implements RegistryHooks {
  readonly serviceClusterIPRange: string;
  readonly serviceNodePortRange: string;
  private readonly ips: KeyRange;
  private readonly ports: KeyRange;
  private readonly logger: NonNullable<ServiceAllocatorConfig['logger']>;
  private readonly store: Store;
  /** Allocation keys seen unused in the last repair runs: key → its modRevision and the run count. */
  private readonly leaks = new Map<string, { modRevision: number; runs: number }>();
  private repairTimer: NodeJS.Timeout | undefined;
  private repairing: Promise<unknown> | undefined;

  constructor(cfg: ServiceAllocatorConfig) {
    if (!cfg.store) throw new Error('ServiceAllocator: store is required');
    const random = cfg.random ?? Math.random;
    this.store = cfg.store;
    this.logger = cfg.logger ?? { warn() {} };
    const cidr = parseIPv4CIDR(cfg.serviceClusterIPRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE);
    this.serviceClusterIPRange = cidr.text;
    // Usable: all but the network and broadcast addresses; offset 0 is the first host.
    const ipCount = 2 ** (32 - cidr.prefixLength) - 2;
    this.ips = new KeyRange(
      cfg.store,
      SERVICE_IPS_PREFIX,
      ipCount,
      Math.min(Math.max(16, Math.floor(ipCount / 16)), 256, ipCount),
      (offset) => numberToIPv4(cidr.base + 1 + offset),
      (ip) => {
        const n = ipv4ToNumber(ip);
        if (n === undefined) return undefined;
        const offset = n - cidr.base - 1;
        return offset >= 0 && offset < ipCount ? offset : undefined;
      },
      (ip) => `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${cidr.text}`,
      'provided IP is already allocated',
      random,
    );
    const { first, last } = parsePortRange(cfg.serviceNodePortRange ?? DEFAULT_SERVICE_NODE_PORT_RANGE);
    this.serviceNodePortRange = `${first}-${last}`;
    const portCount = last - first + 1;
    this.ports = new KeyRange(
      cfg.store,
      SERVICE_NODE_PORTS_PREFIX,
      portCount,
      Math.min(Math.max(16, Math.floor(portCount / 32)), 128, portCount),
      (offset) => String(first + offset),
      (port) => {
        const n = /^\d+$/.test(port) ? Number(port) : NaN;
        return n >= first && n <= last ? n - first : undefined;
      },
      () => `provided port is not in the valid range. The range of valid ports is ${first}-${last}`,
      'provided port is already allocated',
      random,
    );
  }

  /** BeginCreate: allocClusterIPs, initNodePorts and the health check nodePort. */
  async beginCreate(obj: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc> {
    const op = this.operation(opts.dryRun);
    try {
      const spec = specOf(obj);
      this.checkFamilies(obj, spec);
      if (typeOf(spec) !== 'ExternalName' && !isHeadless(spec)) await this.allocClusterIP(obj, spec, op);
      if (hasNodePorts(spec)) await this.initNodePorts(obj, spec, op);
      if (needsHealthCheck(spec)) await this.allocHealthCheckNodePort(obj, spec, op);
    } catch (err) {
      await op.finish(false);
      throw err;
    }
    return op.finish;
  }

  /**
   * BeginUpdate (allocateUpdate): a clusterIP for a Service leaving ExternalName (or one
   * stored without any), the clusterIP released when it becomes ExternalName; nodePorts
   * allocated for new ports and for a change to NodePort/LoadBalancer and released for
   * removed ports or a change away; the health check nodePort with its need. Releases
   * happen only once the update is stored.
   */
  async beginUpdate(obj: KubeObject, old: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc> {
    const op = this.operation(opts.dryRun);
    try {
      const spec = specOf(obj);
      const oldSpec = specOf(structuredClone(old));
      const owner = ownerOf(obj);
      const oldIPs = (oldSpec.clusterIPs ?? []).filter((ip) => ip !== '' && ip !== 'None');
      if (typeOf(spec) !== 'ExternalName' && !isHeadless(spec) && oldIPs.length === 0) {
        this.checkFamilies(obj, spec);
        await this.allocClusterIP(obj, spec, op);
      } else if (typeOf(spec) === 'ExternalName' && typeOf(oldSpec) !== 'ExternalName') {
        for (const ip of oldIPs) op.releaseOnSuccess(() => this.ips.release(ip, owner));
      }
      await this.updateNodePorts(obj, spec, oldSpec, op);
      if (!needsHealthCheck(oldSpec) && needsHealthCheck(spec)) {
        await this.allocHealthCheckNodePort(obj, spec, op);
      } else if (needsHealthCheck(oldSpec) && !needsHealthCheck(spec) && oldSpec.healthCheckNodePort) {
        const port = oldSpec.healthCheckNodePort;
        op.releaseOnSuccess(() => this.ports.release(String(port), owner));
      }
    } catch (err) {
      await op.finish(false);
      throw err;
    }
    return op.finish;
  }

  /** AfterDelete (releaseAllocatedResources): the clusterIP, nodePorts and health check nodePort. */
  async afterDelete(obj: KubeObject): Promise<void> {
    const spec = specOf(structuredClone(obj));
    const owner = ownerOf(obj);
    const releases: Promise<void>[] = [];
    if (typeOf(spec) !== 'ExternalName' && !isHeadless(spec)) {
      for (const ip of spec.clusterIPs ?? []) if (ip) releases.push(this.ips.release(ip, owner));
    }
    for (const port of nodePortsOf(spec)) releases.push(this.ports.release(String(port), owner));
    if (needsHealthCheck(spec) && spec.healthCheckNodePort) {
      releases.push(this.ports.release(String(spec.healthCheckNodePort), owner));
    }
    for (const r of await Promise.allSettled(releases)) {
      if (r.status === 'rejected') this.onReleaseError(r.reason, obj);
    }
  }

  /**
   * One run of the repair controllers (kube-apiserver's ipallocator/controller Repair and
   * portallocator/controller Repair, every 3 minutes there), over one consistent snapshot:
   * the Services and both allocation prefixes are read at the same store revision.
   * - An allocation key no Service uses is released after it has been seen so, unchanged,
   *   in `leakRuns` runs in a row (Kubernetes' numRepairsBeforeLeakCleanup, 3), so that a
   *   reservation whose Service write is still in flight is never taken back. The delete
   *   is guarded by the key's revision.
   * - A Service's address or port without a key gets one (recorded for that Service); one
   *   outside the configured range, or also used by another Service, is only reported.
   * - A key recorded for another owner than the Service using the item is re-recorded.
   * @returns what was released, recorded and reported, as `<ip>` / `<port>` strings.
   * @throws StorageError from the store reads (writes that lose a race are skipped).
   */
  async repair(leakRuns = 3): Promise<RepairResult> {
    const services = await this.store.list('/registry/services/');
    const at = { revision: services.revision };
    const [ipKeys, portKeys] = await Promise.all([
      this.store.list(SERVICE_IPS_PREFIX, at),
      this.store.list(SERVICE_NODE_PORTS_PREFIX, at),
    ]);
    const result: RepairResult = { released: [], recorded: [], outOfRange: [], duplicates: [] };
    // Every item some Service uses: store key → its item, range and owner.
    const wanted = new Map<string, { item: string; range: KeyRange; owner: Owner }>();
    for (const kv of services.items) {
      let svc: KubeObject;
      try {
        svc = JSON.parse(kv.value) as KubeObject;
      } catch {
        continue;
      }
      const owner = ownerOf(svc);
      const { ips, ports } = allocatedItems(svc);
      const uses = [
        ...ips.map((item) => ({ item, range: this.ips })),
        ...ports.map((item) => ({ item, range: this.ports })),
      ];
      for (const { item, range } of uses) {
        if (!range.contains(item)) {
          result.outOfRange.push(item);
          this.logger.warn('service allocator repair: a Service uses an item outside the range', {
            service: `${owner.namespace}/${owner.name}`,
            item,
          });
          continue;
        }
        const key = range.keyOf(item);
        const other = wanted.get(key);
        if (other && other.owner.uid !== owner.uid) {
          result.duplicates.push(item);
          this.logger.warn('service allocator repair: an item is used by two Services', {
            item,
            services: [`${other.owner.namespace}/${other.owner.name}`, `${owner.namespace}/${owner.name}`],
          });
          continue;
        }
        wanted.set(key, { item, range, owner });
      }
    }
    const seen = new Set<string>();
    for (const kv of [...ipKeys.items, ...portKeys.items]) {
      seen.add(kv.key);
      const use = wanted.get(kv.key);
      if (use) {
        this.leaks.delete(kv.key);
        if (holderOf(kv.value).uid !== use.owner.uid) {
          await ignoreRaces(this.store.update(kv.key, JSON.stringify(use.owner), kv.modRevision));
        }
        continue;
      }
      const before = this.leaks.get(kv.key);
      const runs = before && before.modRevision === kv.modRevision ? before.runs + 1 : 1;
      if (runs < leakRuns) {
        this.leaks.set(kv.key, { modRevision: kv.modRevision, runs });
        continue;
      }
      this.leaks.delete(kv.key);
      if (await ignoreRaces(this.store.delete(kv.key, kv.modRevision))) {
        const item = kv.key.slice(kv.key.lastIndexOf('/') + 1);
        result.released.push(item);
        this.logger.info?.('service allocator repair: released an item no Service uses', {
          item,
          heldBy: kv.value,
        });
      }
    }
    // Forget candidates whose key is gone.
    for (const key of this.leaks.keys()) if (!seen.has(key)) this.leaks.delete(key);
    for (const [key, use] of wanted) {
      if (seen.has(key)) continue;
      if (await ignoreRaces(this.store.create(key, JSON.stringify(use.owner)))) {
        result.recorded.push(use.item);
        this.logger.warn('service allocator repair: recorded an item a Service used without allocation', {
          service: `${use.owner.namespace}/${use.owner.name}`,
          item: use.item,
        });
      }
    }
    return result;
  }

  /**
   * Runs repair() now and then every `intervalMs` (kube-apiserver: 3 minutes) until
   * stopRepair(); failures are logged and retried at the next interval.
   */
  startRepair(intervalMs: number): void {
    if (this.repairTimer || intervalMs <= 0) return;
    const tick = () => {
      this.repairing = this.repair()
        .catch((err: unknown) =>
          this.logger.warn('service allocator repair failed', {
            error: errorMessage(err),
          }),
        )
        .finally(() => {
          this.repairing = undefined;
        });
    };
    this.repairTimer = setInterval(tick, intervalMs);
    this.repairTimer.unref();
    tick();
  }

  /** Stops the repair loop; resolves when a run in progress has ended. */
  async stopRepair(): Promise<void> {
    clearInterval(this.repairTimer);
    this.repairTimer = undefined;
    await this.repairing;
  }

  private operation(dryRun: boolean): Operation {
    return new Operation(dryRun, (err) => this.onReleaseError(err));
  }

  private onReleaseError(err: unknown, obj?: KubeObject): void {
    this.logger.warn('service allocator: release failed; the item stays allocated', {
      ...(obj ? { service: `${obj.metadata?.namespace}/${obj.metadata?.name}` } : {}),
      error: errorMessage(err),
    });
  }

  /** The single-stack IPv4 rules of initIPFamilyFields. */
  private checkFamilies(obj: KubeObject, spec: ServiceSpec): void {
    if (typeOf(spec) === 'ExternalName') return;
    const errs: FieldError[] = [];
    if (spec.ipFamilyPolicy === 'RequireDualStack') {
      errs.push(
        invalidField(
          'spec.ipFamilyPolicy',
          spec.ipFamilyPolicy,
          'this cluster is not configured for dual-stack services',
        ),
      );
    }
    (spec.ipFamilies ?? []).forEach((family, i) => {
      if (family !== 'IPv4' && !isHeadless(spec))
        errs.push(invalidField(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
    });
    if (errs.length > 0) throw this.invalid(obj, errs);
  }

  /** allocClusterIPs: the requested clusterIP, else a free one; sets clusterIP and clusterIPs. */
  private async allocClusterIP(obj: KubeObject, spec: ServiceSpec, op: Operation): Promise<void> {
    const owner = ownerOf(obj);
    const requested = spec.clusterIPs?.[0] ?? spec.clusterIP ?? '';
    let ip: string;
    if (requested === '') {
      try {
        ip = await this.ips.allocateNext(owner, op.dryRun);
      } catch (err) {
        if (err instanceof AllocationError)
          throw internalError(`failed to allocate a serviceIP: ${err.message}`);
        throw err;
      }
    } else {
      try {
        await this.ips.allocate(requested, owner, op.dryRun);
      } catch (err) {
        if (!(err instanceof AllocationError)) throw err;
        throw this.invalid(obj, [
          invalidField(
            'spec.clusterIPs',
            spec.clusterIPs ?? [requested],
            `failed to allocate IP ${requested}: ${err.message}`,
          ),
        ]);
      }
      ip = requested;
    }
    op.reserved(() => this.ips.release(ip, owner));
    spec.clusterIP = ip;
    spec.clusterIPs = [ip];
    spec.ipFamilies = ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }

  /**
   * initNodePorts: every port gets its requested nodePort or a free one; ports sharing a
   * port number (TCP and UDP of 53) share one nodePort, as Kubernetes does.
   */
  private async initNodePorts(obj: KubeObject, spec: ServiceSpec, op: Operation): Promise<void> {
    const byPort = new Map<number, number>();
    const ports = spec.ports ?? [];
    for (const [i, p] of ports.entries()) {
      if (!p.nodePort && !shouldAllocateNodePorts(spec)) continue;
      const shared = byPort.get(p.port ?? 0);
      if (shared === undefined) {
        const requested = ports.find((q) => q.port === p.port && q.nodePort)?.nodePort;
        const nodePort = requested
          ? await this.allocateNodePort(obj, requested, `spec.ports[${i}].nodePort`, op)
          : await this.allocateNextNodePort(obj, op);
        p.nodePort = nodePort;
        byPort.set(p.port ?? 0, nodePort);
      } else if (!p.nodePort) {
        p.nodePort = shared;
      } else if (p.nodePort !== shared) {
        await this.allocateNodePort(obj, p.nodePort, `spec.ports[${i}].nodePort`, op);
      }
    }
  }

  /** updateNodePorts, and the release of all nodePorts when the type no longer has them. */
  private async updateNodePorts(
    obj: KubeObject,
    spec: ServiceSpec,
    oldSpec: ServiceSpec,
    op: Operation,
  ): Promise<void> {
    const owner = ownerOf(obj);
    const oldPorts = nodePortsOf(oldSpec);
    if (!hasNodePorts(spec)) {
      for (const port of oldPorts) op.releaseOnSuccess(() => this.ports.release(String(port), owner));
      return;
    }
    const taken = new Set<number>();
    for (const [i, p] of (spec.ports ?? []).entries()) {
      if (!p.nodePort && !shouldAllocateNodePorts(spec)) continue;
      if (p.nodePort) {
        if (!oldPorts.includes(p.nodePort) && !taken.has(p.nodePort)) {
          await this.allocateNodePort(obj, p.nodePort, `spec.ports[${i}].nodePort`, op);
          taken.add(p.nodePort);
        }
      } else {
        p.nodePort = await this.allocateNextNodePort(obj, op);
      }
    }
    const kept = new Set(nodePortsOf(spec));
    for (const port of oldPorts) {
      if (!kept.has(port)) op.releaseOnSuccess(() => this.ports.release(String(port), owner));
    }
  }

  private async allocHealthCheckNodePort(obj: KubeObject, spec: ServiceSpec, op: Operation): Promise<void> {
    const owner = ownerOf(obj);
    const requested = spec.healthCheckNodePort ?? 0;
    try {
      if (requested) {
        await this.ports.allocate(String(requested), owner, op.dryRun);
        op.reserved(() => this.ports.release(String(requested), owner));
      } else {
        const port = await this.ports.allocateNext(owner, op.dryRun);
        op.reserved(() => this.ports.release(port, owner));
        spec.healthCheckNodePort = Number(port);
      }
    } catch (err) {
      if (!(err instanceof AllocationError)) throw err;
      throw internalError(
        requested
          ? `failed to allocate requested HealthCheck NodePort ${requested}: ${err.message}`
          : `failed to allocate a HealthCheck NodePort: ${err.message}`,
      );
    }
  }

  private async allocateNodePort(
    obj: KubeObject,
    port: number,
    field: string,
    op: Operation,
  ): Promise<number> {
    const owner = ownerOf(obj);
    try {
      await this.ports.allocate(String(port), owner, op.dryRun);
    } catch (err) {
      if (!(err instanceof AllocationError)) throw err;
      throw this.invalid(obj, [invalidField(field, port, err.message)]);
    }
    op.reserved(() => this.ports.release(String(port), owner));
    return port;
  }

  private async allocateNextNodePort(obj: KubeObject, op: Operation): Promise<number> {
    const owner = ownerOf(obj);
    let port: string;
    try {
      port = await this.ports.allocateNext(owner, op.dryRun);
    } catch (err) {
      if (err instanceof AllocationError)
        throw internalError(`failed to allocate a nodePort: ${err.message}`);
      throw err;
    }
    op.reserved(() => this.ports.release(port, owner));
    return Number(port);
  }

  private invalid(obj: KubeObject, errs: FieldError[]): ApiError {
    return invalid(
      'Service',
      { group: '', resource: 'services', name: obj.metadata?.name ?? '' },
      toStatusCauses(errs),
    );
  }
}

/** What one repair() run did (items as text: addresses and ports). */
export interface RepairResult {
  /** Keys no Service used in enough runs in a row, deleted. */
  released: string[];
  /** Items Services used without a key, now recorded. */
  recorded: string[];
  /** Items Services use outside the configured ranges (reported only). */
  outOfRange: string[];
  /** Items used by more than one Service (reported only). */
  duplicates: string[];
}

/** The addresses and ports a stored Service holds allocations for (as releaseAllocatedResources reads them). */
export function allocatedItems(obj: KubeObject): { ips: string[]; ports: string[] } {
  const spec = specOf(structuredClone(obj));
  const ips =
    typeOf(spec) !== 'ExternalName' && !isHeadless(spec) ? (spec.clusterIPs ?? []).filter((ip) => ip) : [];
  const ports = new Set(nodePortsOf(spec).map(String));
  if (needsHealthCheck(spec) && spec.healthCheckNodePort) ports.add(String(spec.healthCheckNodePort));
  return { ips, ports: [...ports] };
}

function holderOf(value: string): Partial<Owner> {
  try {
    return JSON.parse(value) as Partial<Owner>;
  } catch {
    return {};
  }
}

/** Resolves true when `write` succeeded, false when it lost a race (the key changed, appeared or went). */
async function ignoreRaces(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (
      isStorageError(err, 'KeyExists') ||
      isStorageError(err, 'KeyNotFound') ||
      isStorageError(err, 'Conflict')
    )
      return false;
    throw err;
  }
}

function ownerOf(obj: KubeObject): Owner {
  return {
    namespace: obj.metadata?.namespace ?? '',
    name: obj.metadata?.name ?? '',
    uid: obj.metadata?.uid ?? '',
  };
}
