/**
 * The bootstrap controller of the `kubernetes` and `kube-dns` Services, run by every
 * control process (not under leader election: each live API server must keep its own
 * endpoint), as kube-apiserver's kubernetesservice controller with the lease endpoint
 * reconciler (pkg/controlplane/controller/kubernetesservice, pkg/controlplane/reconcilers/lease.go).
 *
 *   every interval (10 s, upstream's EndpointInterval):
 *     ensure default/kubernetes and kube-system/kube-dns exist (created when missing)
 *     renew this process's endpoint lease (leases.ts)   ← first, so that even when the
 *                                                          rest fails others list us
 *     list the unexpired leases → write Endpoints + EndpointSlice (endpoints.ts)
 *   stop(): delete this process's lease and write the endpoints without it, so that a
 *     clean shutdown leaves at once; a killed process leaves when its lease expires
 *     (15 s without renewal, as seen by a live one) and a live one next reconciles.
 *
 * Writes go through the API server's own registries, never around them (ARCHITECTURE.md,
 * "Two ideas"): the Services get their clusterIPs from the allocator, where both
 * addresses are reserved (services.ts).
 */
import { errorMessage } from '../../api/errors.js';
import { realClock, type Clock } from '../../api/clock.js';
import type { Registry } from '../apiserver/registry.js';
import { EndpointsWriter } from './endpoints.js';
import { EndpointLeases, type ApiEndpoint } from './leases.js';
import { ensureService, kubeDNSService, kubernetesService } from './services.js';

/** Upstream's default EndpointInterval and DefaultEndpointReconcilerTTL, in seconds. */
export const DEFAULT_ENDPOINT_INTERVAL_SECONDS = 10;
export const DEFAULT_ENDPOINT_LEASE_SECONDS = 15;

export interface KubernetesServiceControllerConfig {
  /** The API server's registries, by resource. */
  registry: (group: string, version: string, resource: string) => Registry;
  /** This API server's endpoint: --advertise-address and the secure port it listens on. */
  endpoint: ApiEndpoint;
  /** The `kubernetes` Service's clusterIP (the first address of the service range). */
  kubernetesClusterIP: string;
  /** The `kube-dns` Service's clusterIP (--cluster-dns). */
  clusterDNS: string;
  /** This process's identity (the Leases' holderIdentity). */
  identity: string;
  /** Default DEFAULT_ENDPOINT_INTERVAL_SECONDS. */
  intervalSeconds?: number;
  /** Default DEFAULT_ENDPOINT_LEASE_SECONDS; must exceed intervalSeconds. */
  leaseDurationSeconds?: number;
  clock?: Clock;
  logger: {
    warn(message: string, meta?: Record<string, unknown>): void;
    info(message: string, meta?: Record<string, unknown>): void;
  };
}

/** See the file comment. */
export class KubernetesServiceController {
  private readonly cfg: KubernetesServiceControllerConfig;
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly leases: EndpointLeases;
  private readonly writer: EndpointsWriter;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  /** Serializes reconcile() and stop(): one at a time, as upstream's reconcilingLock. */
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(cfg: KubernetesServiceControllerConfig) {
    if (!cfg.registry) throw new Error('KubernetesServiceController: registry is required');
    const interval = cfg.intervalSeconds ?? DEFAULT_ENDPOINT_INTERVAL_SECONDS;
    const lease = cfg.leaseDurationSeconds ?? DEFAULT_ENDPOINT_LEASE_SECONDS;
    if (!(interval > 0 && lease > interval))
      throw new Error('KubernetesServiceController: leaseDurationSeconds must exceed intervalSeconds > 0');
    this.cfg = cfg;
    this.clock = cfg.clock ?? realClock;
    this.intervalMs = interval * 1000;
    this.leases = new EndpointLeases({
      leases: cfg.registry('coordination.k8s.io', 'v1', 'leases'),
      leaseDurationSeconds: lease,
      identity: cfg.identity,
      clock: this.clock,
    });
    this.writer = new EndpointsWriter({
      endpoints: cfg.registry('', 'v1', 'endpoints'),
      endpointSlices: cfg.registry('discovery.k8s.io', 'v1', 'endpointslices'),
    });
  }

  /**
   * One reconcile (see the file comment); does nothing after stop().
   * @throws ApiError from the registries (the loop logs it and tries again next interval).
   */
  reconcile(): Promise<void> {
    return this.serialized(async () => {
      if (this.stopped) return;
      const services = this.cfg.registry('', 'v1', 'services');
      for (const svc of [
        kubernetesService(this.cfg.kubernetesClusterIP, this.cfg.endpoint.port),
        kubeDNSService(this.cfg.clusterDNS),
      ]) {
        const { service, created } = await ensureService(services, svc);
        const want = svc.spec.clusterIP;
        if (created) this.cfg.logger.info('created the Service', { service: key(svc), clusterIP: want });
        else if (service.spec.clusterIP !== want)
          this.cfg.logger.warn('the Service keeps its clusterIP, which differs from the flags', {
            service: key(svc),
            clusterIP: service.spec.clusterIP,
            flags: want,
          });
      }
      await this.leases.update(this.cfg.endpoint);
      await this.writer.sync(await this.leases.list());
    });
  }

  /**
   * Reconciles now and then every interval until stop(); failures are logged, never
   * thrown. Resolves once the first reconcile has ended (well or not).
   */
  start(): Promise<void> {
    if (this.loop) return Promise.resolve();
    let first!: () => void;
    const firstDone = new Promise<void>((resolve) => (first = resolve));
    this.loop = (async () => {
      while (!this.abort.signal.aborted) {
        try {
          await this.reconcile();
        } catch (err) {
          this.cfg.logger.warn('kubernetes service reconcile failed', { error: errorMessage(err) });
        }
        first();
        await this.clock.sleep(this.intervalMs, this.abort.signal);
      }
      first();
    })();
    return firstDone;
  }

  /**
   * Stops the loop, removes this process's lease and writes the endpoints without it
   * (RemoveEndpoints), waiting at most two intervals. Never throws: a failure is logged
   * (the lease then expires).
   */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    const removal = this.serialized(async () => {
      if (this.stopped) return;
      this.stopped = true;
      try {
        await this.leases.remove(this.cfg.endpoint);
        await this.writer.sync(await this.leases.list());
      } catch (err) {
        this.cfg.logger.warn('removing this API server from the kubernetes endpoints failed', {
          error: errorMessage(err),
        });
      }
    });
    // Never hold up a shutdown for an unreachable store (upstream waits 2 intervals too).
    const timeout = new AbortController();
    await Promise.race([removal, this.clock.sleep(2 * this.intervalMs, timeout.signal)]);
    timeout.abort();
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.running.then(fn, fn);
    this.running = next.catch(() => undefined);
    return next;
  }
}

function key(svc: { metadata: { namespace?: string; name?: string } }): string {
  return `${svc.metadata.namespace}/${svc.metadata.name}`;
}
