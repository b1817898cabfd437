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
 * The folder: this file (the registry hooks: allocate on create and update, release on
 * delete), range.ts (one range, one store key per item; the flags' parsing), spec.ts (the
 * Service fields read), repair.ts (the repair loop).
 *
 * Repair (Kubernetes' ipallocator/portallocator repair controllers, see repair()): an
 * allocation left behind by a crash between a reservation and the Service write, or between
 * a delete and the release, is released once it has been seen unused by any Service in
 * three runs in a row; a Service whose address or port has no allocation key (data written
 * before the allocator, or restored) gets one recorded.
 */
import { errorMessage } from '../../../api/errors.js';
import { invalid as invalidField, toStatusCauses, type FieldError } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { Store } from '../../storage/store.js';
import type { FinishFunc, RegistryHooks } from '../registry.js';
import { internalError, invalid, type ApiError } from '../status.js';
import {
  AllocationError,
  KeyRange,
  SERVICE_IPS_PREFIX,
  SERVICE_NODE_PORTS_PREFIX,
  ipv4ToNumber,
  numberToIPv4,
  ownerOf,
  parseIPv4CIDR,
  parsePortRange,
} from './range.js';
import { AllocationRepair } from './repair.js';
import type { RepairResult } from './repair.js';
import {
  hasNodePorts,
  ipKey,
  isHeadless,
  needsHealthCheck,
  nodePortsOf,
  shouldAllocateNodePorts,
  specOf,
  typeOf,
} from './spec.js';
import type { ServiceSpec } from './spec.js';

export {
  AllocationError,
  SERVICE_IPS_PREFIX,
  SERVICE_NODE_PORTS_PREFIX,
  ipv4ToNumber,
  numberToIPv4,
  parseIPv4CIDR,
  parsePortRange,
} from './range.js';
export type { IPv4CIDR } from './range.js';
export type { RepairResult } from './repair.js';
export { allocatedItems } from './spec.js';

/** k3s' default service CIDR. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.43.0.0/16';
/** kube-apiserver's default `--service-node-port-range`. */
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767';

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
  /**
   * ClusterIPs kept for one Service each, ip → `<namespace>/<name>` (the first address for
   * `default/kubernetes`, `--cluster-dns` for `kube-system/kube-dns`): never allocated
   * dynamically, and refused (422) to any other Service that asks for them.
   */
  reservedClusterIPs?: Readonly<Record<string, string>>;
}

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
  private readonly repairs: AllocationRepair;

  constructor(cfg: ServiceAllocatorConfig) {
    if (!cfg.store) throw new Error('ServiceAllocator: store is required');
    const random = cfg.random ?? Math.random;
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
      new Map(Object.entries(cfg.reservedClusterIPs ?? {})),
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
    this.repairs = new AllocationRepair({
      store: cfg.store,
      ips: this.ips,
      ports: this.ports,
      logger: this.logger,
    });
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
        for (const ip of oldIPs) op.releaseOnSuccess(() => this.ips.release(ipKey(ip), owner));
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
      for (const ip of spec.clusterIPs ?? []) if (ip) releases.push(this.ips.release(ipKey(ip), owner));
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
   * One run of the repair controllers over one consistent snapshot (see
   * AllocationRepair.repair in repair.ts): keys no Service used in `leakRuns` runs in a row
   * are released, items Services use without a key are recorded.
   * @returns what was released, recorded and reported, as `<ip>` / `<port>` strings.
   * @throws StorageError from the store reads (writes that lose a race are skipped).
   */
  repair(leakRuns = 3): Promise<RepairResult> {
    return this.repairs.repair(leakRuns);
  }

  /**
   * Runs repair() now and then every `intervalMs` (kube-apiserver: 3 minutes) until
   * stopRepair(); failures are logged and retried at the next interval.
   */
  startRepair(intervalMs: number): void {
    this.repairs.start(intervalMs);
  }

  /** Stops the repair loop; resolves when a run in progress has ended. */
  stopRepair(): Promise<void> {
    return this.repairs.stop();
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
      // The parsed address is reserved and named in errors; the Service keeps its text.
      const key = ipKey(requested);
      try {
        await this.ips.allocate(key, owner, op.dryRun);
      } catch (err) {
        if (!(err instanceof AllocationError)) throw err;
        throw this.invalid(obj, [
          invalidField(
            'spec.clusterIPs',
            spec.clusterIPs ?? [requested],
            `failed to allocate IP ${key}: ${err.message}`,
          ),
        ]);
      }
      ip = requested;
    }
    const reservedKey = ipKey(ip);
    op.reserved(() => this.ips.release(reservedKey, owner));
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
