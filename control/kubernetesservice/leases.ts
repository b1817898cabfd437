/**
 * The endpoint leases of the `kubernetes` Service: one coordination.k8s.io Lease per live
 * API server in `kube-system`, named `apiserver-endpoint-<ip>-<port>`, labelled
 * `k8ts.io/endpoint-reconciler=kubernetes`, renewed at every reconcile (10 s) and valid
 * for `leaseDurationSeconds` (15 s). kube-apiserver's lease endpoint reconciler keeps the
 * same records as `/registry/masterleases/<ip>` keys with an etcd TTL; k8ts' store has no
 * TTLs, so the record is a Lease and "expired" is decided by the reader.
 *
 * Expiry is judged as client-go's leader election judges a lease, never by comparing the
 * remote renewTime with the local clock (hosts' clocks may disagree): a reader remembers
 * when it first saw each lease's current resourceVersion, and a lease whose
 * resourceVersion has not changed for its leaseDurationSeconds on the reader's clock is
 * expired. A reader deletes the expired leases it finds (with a resourceVersion
 * precondition, so a lease renewed meanwhile stays), so every reader agrees soon after.
 * A lease the reader has just begun watching counts as live for one lease period: a new
 * control process keeps a dead one listed at most that long.
 *
 * The key includes the port because several control processes may share one address
 * (tests and laptops run them on 127.0.0.1), where kube-apiserver's share one port.
 */
import { formatMicroTime } from '../../api/leaderelection/lease.js';
import { labelSelectorFromSet } from '../../api/meta/labels.js';
import type { KubeObject } from '../../api/object.js';
import type { Lease } from '../../api/types.js';
import type { Clock } from '../../api/clock.js';
import type { Registry } from '../apiserver/registry.js';
import { ApiError } from '../apiserver/status.js';

export const LEASE_NAMESPACE = 'kube-system';
export const LABEL_ENDPOINT_RECONCILER = 'k8ts.io/endpoint-reconciler';
export const ANNOTATION_ENDPOINT_ADDRESS = 'k8ts.io/endpoint-address';
export const ANNOTATION_ENDPOINT_PORT = 'k8ts.io/endpoint-port';

/** One API server's address, as the `kubernetes` Service's endpoint. */
export interface ApiEndpoint {
  /** IPv4 address (--advertise-address). */
  ip: string;
  /** The secure port. */
  port: number;
}

/** The Lease name of an endpoint. */
export function leaseNameOf(ep: ApiEndpoint): string {
  return `apiserver-endpoint-${ep.ip}-${ep.port}`;
}

export interface EndpointLeasesConfig {
  /** The registry of coordination.k8s.io/v1 leases. */
  leases: Pick<Registry, 'get' | 'create' | 'update' | 'delete' | 'list'>;
  /** Whose leases (the Service name); default `kubernetes`. */
  service?: string;
  /** Seconds a lease stays valid without renewal; default 15 (DefaultEndpointReconcilerTTL). */
  leaseDurationSeconds?: number;
  /** Who renews (written as holderIdentity). */
  identity: string;
  clock: Clock;
}

/** The leases of the live API servers (see the file comment). */
export class EndpointLeases {
  private readonly leases: EndpointLeasesConfig['leases'];
  private readonly service: string;
  private readonly durationMs: number;
  private readonly identity: string;
  private readonly clock: Clock;
  /** Lease name → the resourceVersion seen and when (clock ms) it was first seen. */
  private readonly observed = new Map<string, { resourceVersion: string; since: number }>();

  constructor(cfg: EndpointLeasesConfig) {
    if (!cfg.leases) throw new Error('EndpointLeases: leases registry is required');
    if (!cfg.identity) throw new Error('EndpointLeases: identity is required');
    this.leases = cfg.leases;
    this.service = cfg.service ?? 'kubernetes';
    const seconds = cfg.leaseDurationSeconds ?? 15;
    if (!(seconds >= 1)) throw new Error('EndpointLeases: leaseDurationSeconds must be at least 1');
    this.durationMs = seconds * 1000;
    this.identity = cfg.identity;
    this.clock = cfg.clock;
  }

  /**
   * Creates or renews the lease of `ep` (UpdateLease): a new renewTime, so its
   * resourceVersion changes and every reader sees it live.
   * @throws ApiError from the registry.
   */
  async update(ep: ApiEndpoint): Promise<void> {
    const name = leaseNameOf(ep);
    const now = formatMicroTime(this.clock.now());
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: LEASE_NAMESPACE,
        labels: { [LABEL_ENDPOINT_RECONCILER]: this.service },
        annotations: { [ANNOTATION_ENDPOINT_ADDRESS]: ep.ip, [ANNOTATION_ENDPOINT_PORT]: String(ep.port) },
      },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.durationMs / 1000,
        acquireTime: now,
        renewTime: now,
      },
    };
    for (;;) {
      let current: Lease | undefined;
      try {
        current = (await this.leases.get(LEASE_NAMESPACE, name)) as Lease;
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
      try {
        if (!current) {
          await this.leases.create(LEASE_NAMESPACE, lease as KubeObject);
        } else {
          const acquireTime =
            current.spec?.holderIdentity === this.identity ? current.spec.acquireTime : undefined;
          await this.leases.update(LEASE_NAMESPACE, name, {
            ...lease,
            metadata: { ...lease.metadata, resourceVersion: current.metadata.resourceVersion },
            spec: { ...lease.spec, ...(acquireTime ? { acquireTime } : {}) },
          } as KubeObject);
        }
        return;
      } catch (err) {
        // Lost a race with another writer of this lease (a restarted process): read again.
        if (!(err instanceof ApiError && (err.code === 409 || err.code === 404))) throw err;
      }
    }
  }

  /**
   * Deletes the lease of `ep` (RemoveLease), as a process that stops does; a missing one
   * is no error.
   * @throws ApiError from the registry.
   */
  async remove(ep: ApiEndpoint): Promise<void> {
    try {
      await this.leases.delete(LEASE_NAMESPACE, leaseNameOf(ep));
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }

  /**
   * The endpoints of the unexpired leases (ListLeases), sorted by address then port;
   * expired leases are deleted on the way.
   * @throws ApiError from the registry's list (a failed delete of an expired one is not thrown).
   */
  async list(): Promise<ApiEndpoint[]> {
    const list = await this.leases.list(LEASE_NAMESPACE, {
      labelSelector: labelSelectorFromSet({ [LABEL_ENDPOINT_RECONCILER]: this.service }),
    });
    const now = this.clock.now();
    const live: ApiEndpoint[] = [];
    const seen = new Set<string>();
    for (const item of list.items as Lease[]) {
      const name = item.metadata.name!;
      const rv = item.metadata.resourceVersion ?? '';
      seen.add(name);
      let obs = this.observed.get(name);
      if (!obs || obs.resourceVersion !== rv) {
        obs = { resourceVersion: rv, since: now };
        this.observed.set(name, obs);
      }
      const durationMs = (item.spec?.leaseDurationSeconds ?? this.durationMs / 1000) * 1000;
      if (now - obs.since >= durationMs) {
        await this.leases
          .delete(LEASE_NAMESPACE, name, { preconditions: { resourceVersion: rv } })
          .catch(() => undefined);
        this.observed.delete(name);
        continue;
      }
      const ep = endpointOf(item);
      if (ep) live.push(ep);
    }
    for (const name of this.observed.keys()) if (!seen.has(name)) this.observed.delete(name);
    return live.sort((a, b) => compareIPv4(a.ip, b.ip) || a.port - b.port);
  }
}

/** The endpoint a lease records, or undefined for a malformed one (skipped). */
function endpointOf(lease: Lease): ApiEndpoint | undefined {
  const a = lease.metadata.annotations ?? {};
  const ip = a[ANNOTATION_ENDPOINT_ADDRESS];
  const port = Number(a[ANNOTATION_ENDPOINT_PORT]);
  if (!ip || !/^\d{1,3}(\.\d{1,3}){3}$/.test(ip) || !Number.isInteger(port) || port < 1 || port > 65535)
    return undefined;
  return { ip, port };
}

/** Orders dotted-quad addresses numerically. */
export function compareIPv4(a: string, b: string): number {
  const n = (ip: string) => ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  return n(a) - n(b);
}
