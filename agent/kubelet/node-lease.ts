/**
 * The node's heartbeat Lease, as the kubelet's nodelease controller
 * (k8s.io/component-helpers/apimachinery/lease): `kube-node-lease/<nodeName>` held by the
 * node name, `leaseDurationSeconds` 40, `renewTime` set every renew interval (10 s, a
 * quarter of the duration). The node lifecycle controller treats a Lease not renewed
 * within its grace period as a lost node.
 *
 * Renewals come every renew interval plus up to 4 % of it at random (upstream's
 * `wait.JitterUntil(sync, renewInterval, 0.04, ...)`), so that the Leases of many nodes
 * drift apart instead of renewing in step.
 *
 * Each renewal updates the Lease this controller last wrote (no GET while things go
 * well); after a failure the next attempt reads it afresh, creating it when missing.
 * Failed attempts are retried with backoff (200 ms doubling to 7 s, the kubelet's
 * backoffEnsureLease), never longer apart than the renew interval. The Lease carries an
 * ownerReference to the Node, so it goes when the Node is deleted; when the Node cannot
 * be read yet the Lease is written without one and gets it on a later renewal.
 */
import type { Logger } from '../../api/log.js';
import { realClock, type Clock } from '../../api/clock.js';
import { isNotFound } from '../../api/client/errors.js';
import { resources } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import { formatMicroTime } from '../../api/leaderelection/lease.js';
import type { Lease, Node } from '../../api/types.js';

/** Where node Leases live. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's default --node-lease-duration-seconds. */
export const DEFAULT_NODE_LEASE_DURATION_SECONDS = 40;

/** Settings of a NodeLeaseController. */
export interface NodeLeaseConfig {
  client: RestClient;
  nodeName: string;
  logger: Logger;
  clock?: Clock;
  /** spec.leaseDurationSeconds; default 40. */
  leaseDurationSeconds?: number;
  /** Milliseconds between renewals; default a quarter of the duration (10 000). */
  renewIntervalMs?: number;
  /**
   * Each wait is renewIntervalMs × (1 + jitterFactor × random()); default 0.04, the
   * kubelet's. Waits after a failure (the backoff) get none.
   */
  jitterFactor?: number;
  /** Uniform in [0, 1); default Math.random. */
  random?: () => number;
}

/** Keeps `kube-node-lease/<nodeName>` renewed (see the file comment). */
export class NodeLeaseController {
  private readonly client: RestClient;
  private readonly nodeName: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly durationSeconds: number;
  private readonly renewIntervalMs: number;
  private readonly jitterFactor: number;
  private readonly random: () => number;
  /** The Lease as last written by us; undefined after a failure (then re-read). */
  private latest: Lease | undefined;

  /** @throws Error for an empty node name, a non-positive duration or interval, a negative jitter. */
  constructor(cfg: NodeLeaseConfig) {
    if (!cfg.nodeName) throw new Error('NodeLeaseController: nodeName is required');
    this.client = cfg.client;
    this.nodeName = cfg.nodeName;
    this.logger = cfg.logger;
    this.clock = cfg.clock ?? realClock;
    this.durationSeconds = cfg.leaseDurationSeconds ?? DEFAULT_NODE_LEASE_DURATION_SECONDS;
    this.renewIntervalMs = cfg.renewIntervalMs ?? (this.durationSeconds * 1000) / 4;
    this.jitterFactor = cfg.jitterFactor ?? 0.04;
    this.random = cfg.random ?? Math.random;
    if (!(this.durationSeconds > 0) || !(this.renewIntervalMs > 0))
      throw new Error('NodeLeaseController: leaseDurationSeconds and renewIntervalMs must be positive');
    if (!(this.jitterFactor >= 0)) throw new Error('NodeLeaseController: jitterFactor must not be negative');
  }

  /**
   * One renewal: update the Lease (creating it when missing) with renewTime = now.
   * @returns the Lease as stored.
   * @throws ApiStatusError or a connection error; the next call starts from a fresh read.
   */
  async sync(): Promise<Lease> {
    try {
      let base = this.latest;
      if (!base) {
        try {
          base = await this.client.get<Lease>(resources.leases, NODE_LEASE_NAMESPACE, this.nodeName);
        } catch (err) {
          if (!isNotFound(err)) throw err;
          this.latest = await this.client.create<Lease>(resources.leases, await this.newLease(undefined));
          return this.latest;
        }
      }
      this.latest = await this.client.update<Lease>(resources.leases, await this.newLease(base));
      return this.latest;
    } catch (err) {
      this.latest = undefined;
      throw err;
    }
  }

  /** `base` (or a new Lease) held by this node, renewed now, owned by the Node when it can be read. */
  private async newLease(base: Lease | undefined): Promise<Lease> {
    // A shallow copy: spec is replaced and metadata copied before it is changed, so `base`
    // (the Lease as last written) stays as it is without a deep copy of it every renewal.
    const lease: Lease = base
      ? { ...base }
      : {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.nodeName, namespace: NODE_LEASE_NAMESPACE },
        };
    lease.spec = {
      ...lease.spec,
      holderIdentity: this.nodeName,
      leaseDurationSeconds: this.durationSeconds,
      renewTime: formatMicroTime(this.clock.now()),
    };
    if (!lease.metadata.ownerReferences?.length) {
      try {
        const node = await this.client.get<Node>(resources.nodes, undefined, this.nodeName);
        lease.metadata = {
          ...lease.metadata,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.nodeName, uid: node.metadata.uid! }],
        };
      } catch (err) {
        this.logger.debug('node not readable yet; lease written without an owner', {
          node: this.nodeName,
          error: String(err),
        });
      }
    }
    return lease;
  }

  /** Renews every renew interval until `signal` aborts, retrying failures with backoff; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let backoffMs = 200;
    while (!signal.aborted) {
      let delay = this.renewIntervalMs * (1 + this.jitterFactor * this.random());
      try {
        await this.sync();
        backoffMs = 200;
      } catch (err) {
        if (signal.aborted) break;
        delay = Math.min(backoffMs, this.renewIntervalMs);
        backoffMs = Math.min(backoffMs * 2, 7_000);
        this.logger.warn('failed to renew node lease, will retry', {
          node: this.nodeName,
          error: String(err),
          retryInMs: delay,
        });
      }
      await this.clock.sleep(delay, signal);
    }
  }
}
