/**
 * The cluster DNS of one node, inside its agent, as NodeLocal DNSCache runs on every node:
 * pods' queries go to an address of their own node (no hop to another host), are
 * answered from this agent's own watches of Services and EndpointSlices, and keep working
 * while the control process is down (the informers' caches stay, and names outside the
 * cluster go straight to the host's resolvers).
 *
 *   const dns = new ClusterDNS({ client, nodeName, logger, clusterDomain: 'cluster.local' });
 *   await dns.start();          // caches synced; serving once its address is known
 *   ...
 *   await dns.stop();           // sockets closed, its address and interface gone
 *
 * The address: `address` when given (tests: 127.0.0.x and port 0), else the first of
 * `clusterDNS` (the kubelet's --cluster-dns), else the clusterIP of Service
 * kube-system/kube-dns, followed as it changes. That address is made local to the node
 * on a dummy interface of the DNS's own (`kdns-<7 hex of the node name>`, as
 * NodeLocal DNSCache's `nodelocaldns` interface; on `lo` with a label where there is no
 * dummy driver: cluster-ip.ts), so that a pod's packet to it, routed to its gateway (this
 * host), is delivered to these sockets. kube-proxy does not program the Service: the
 * control process labels it `service.kubernetes.io/service-proxy-name: k8ts-dns`, which
 * kube-proxy's informers select away (proxy/proxy.ts), so neither mode touches the address
 * or the port. Without the right to add addresses, or with the port taken (another agent
 * on the same host already serves it), the agent logs it and tries again every 30 s. Every
 * 30 s it also puts the address back where someone removed it from the interface (or the
 * interface itself) under the running agent (ClusterIPAddresses.reassert, as the proxy's
 * ClusterIPs); the sockets bound to it serve again once it is back.
 *
 * The index (records.ts) is kept from the informers' events: a Service or slice event
 * recomputes that one Service's records from the caches, at once and in the handler — a
 * pure computation that cannot fail, so there is nothing to retry and no workqueue —
 * which puts a new Service's name in the index within one watch event.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../../api/log.js';
import { InformerFactory } from '../../api/client/factory.js';
import { deletedObject, type SharedInformer } from '../../api/client/informer.js';
import { resources } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import { metaNamespaceKey } from '../../api/client/store.js';
import type { EndpointSlice, Service } from '../../api/types.js';
import { ClusterIPAddresses, usableClusterIP, type IpCommand } from '../proxy/cluster-ip.js';
import { Forwarder } from './forwarder.js';
import { DnsMetrics } from './metrics.js';
import { ClusterRecords } from './records.js';
import { DEFAULT_RESOLV_CONF, readResolvConf, type Upstream } from './resolv-conf.js';
import { DnsServer, type DnsAddress } from './server.js';

/** The kubelet's default --cluster-domain. */
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
/** The Service whose clusterIP is the cluster DNS address (kubeadm's and k3s's name). */
export const DNS_SERVICE = { namespace: 'kube-system', name: 'kube-dns' } as const;
/** The label an EndpointSlice names its Service with. */
const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
const SLICES_BY_SERVICE = 'service';
const RETRY_MS = 30_000;

/**
 * The default interface holding the DNS address of node `nodeName`: `kdns-` and 7 hex digits
 * of the name's SHA-1 (12 characters, so that a `lo:` label stays within 15), one per node
 * as the proxy's (clusterIPInterfaceFor).
 */
export function dnsInterfaceFor(nodeName: string): string {
  return `kdns-${createHash('sha1').update(nodeName).digest('hex').slice(0, 7)}`;
}

/** Settings of a ClusterDNS. */
export interface ClusterDNSConfig {
  client: RestClient;
  nodeName: string;
  logger: Logger;
  /** The cluster domain (`--cluster-domain`); default cluster.local. */
  clusterDomain?: string;
  /** The kubelet's `--cluster-dns` addresses; the first is served. Empty: kube-system/kube-dns's clusterIP. */
  clusterDNS?: readonly string[];
  /**
   * Listen here instead, without adding any address (tests and the benchmark: 127.0.0.x and
   * port 0). The address must already be local.
   */
  address?: DnsAddress;
  /** The host's resolv.conf (`--resolv-conf`), read at start and when an upstream is needed and it changed; default /etc/resolv.conf. */
  resolvConf?: string;
  /** Upstreams given directly (tests); overrides resolvConf. */
  upstreams?: readonly Upstream[];
  /** The dummy interface for the address (at most 15 characters); default dnsInterfaceFor(nodeName). */
  interfaceName?: string;
  /** The `ip` command (tests); default iproute2's. */
  ip?: IpCommand;
  /** TTL of cluster records, seconds; default 5. */
  ttlSeconds?: number;
  /** Milliseconds between tries of an address that could not be served; default 30 000. */
  retryMs?: number;
  /** Milliseconds between checks that the address is still on its interface (put back when not); default 30 000. */
  addressCheckMs?: number;
  /** Milliseconds per upstream before the next; default 2000. */
  upstreamTimeoutMs?: number;
}

/** The node's cluster DNS (see the file comment). */
export class ClusterDNS {
  readonly records: ClusterRecords;
  readonly forwarder: Forwarder;
  readonly server: DnsServer;
  readonly metrics: DnsMetrics;
  private readonly cfg: ClusterDNSConfig;
  private readonly informers: InformerFactory;
  private readonly services: SharedInformer<Service>;
  private readonly slices: SharedInformer<EndpointSlice>;
  private readonly addresses: ClusterIPAddresses | undefined;
  private upstreamList: readonly Upstream[] = [];
  private serving: string | undefined;
  /** The last bind failure warned about (`address error`), so that retries do not warn again. */
  private lastBindError: string | undefined;
  /** The address this DNS added to its interface. */
  private addedHost: string | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private binding: Promise<void> = Promise.resolve();
  private stopped = false;

  /** @throws Error for a missing client, nodeName or logger, or a malformed cluster domain. */
  constructor(cfg: ClusterDNSConfig) {
    if (!cfg.client || !cfg.nodeName || !cfg.logger)
      throw new Error('ClusterDNS: client, nodeName and logger are required');
    this.cfg = cfg;
    this.records = new ClusterRecords(cfg.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN);
    this.forwarder = new Forwarder({
      // Never itself: a host whose resolv.conf names the cluster DNS would loop.
      upstreams: () =>
        this.upstreamList.filter(
          (u) => !(u.host === this.server.address?.host && u.port === this.server.address?.port),
        ),
      ...(cfg.upstreamTimeoutMs !== undefined ? { timeoutMs: cfg.upstreamTimeoutMs } : {}),
    });
    this.metrics = new DnsMetrics(() => ({
      hits: this.forwarder.stats.hits,
      misses: this.forwarder.stats.misses,
      records: this.records.size,
    }));
    this.server = new DnsServer({
      records: this.records,
      forwarder: this.forwarder,
      logger: cfg.logger,
      metrics: this.metrics,
      ...(cfg.ttlSeconds !== undefined ? { ttlSeconds: cfg.ttlSeconds } : {}),
    });
    this.addresses = cfg.address
      ? undefined
      : new ClusterIPAddresses({
          interfaceName: cfg.interfaceName ?? dnsInterfaceFor(cfg.nodeName),
          logger: cfg.logger,
          ...(cfg.ip ? { ip: cfg.ip } : {}),
        });
    this.informers = new InformerFactory({
      client: cfg.client,
      onError: (err, during, informer) =>
        cfg.logger.warn('dns: informer error', { during, informer, error: err.message }),
    });
    // Every Service, the kube-dns one and other proxies' included: names do not depend on who proxies.
    this.services = this.informers.informerFor<Service>(resources.services);
    this.slices = this.informers.informerFor<EndpointSlice>(resources.endpointslices, {
      indexers: { [SLICES_BY_SERVICE]: sliceServiceKey },
    });
    const onService = (s: Service) => this.sync(metaNamespaceKey(s));
    this.services.addEventHandler({
      onAdd: onService,
      onUpdate: (_old, s) => onService(s),
      onDelete: (s) => onService(deletedObject(s)),
    });
    const onSlice = (s: EndpointSlice) => {
      for (const key of sliceServiceKey(s)) this.sync(key);
    };
    this.slices.addEventHandler({
      onAdd: onSlice,
      onUpdate: (old, s) => {
        onSlice(old);
        onSlice(s);
      },
      onDelete: (s) => onSlice(deletedObject(s)),
    });
  }

  /** The address served now (undefined while none is known or it cannot be bound). */
  get address(): DnsAddress | undefined {
    return this.server.address;
  }

  /** The upstream resolvers in use. */
  get upstreams(): readonly Upstream[] {
    return this.upstreamList;
  }

  /** Prometheus registry of the DNS metrics (metrics.ts). */
  get registry(): DnsMetrics['registry'] {
    return this.metrics.registry;
  }

  /**
   * Reads the upstreams, starts the informers and resolves once their caches are synced and
   * the first bind was tried (it is retried in the background when it failed).
   * @throws Error when the caches do not sync within `timeoutMs` (default 60 s).
   */
  async start(timeoutMs = 60_000): Promise<void> {
    this.loadUpstreams();
    this.informers.start();
    if (!(await this.informers.waitForCacheSync(timeoutMs)))
      throw new Error(`ClusterDNS: Service and EndpointSlice caches did not sync within ${timeoutMs} ms`);
    this.rebind();
    this.scheduleAddressCheck();
    await this.binding;
  }

  /**
   * In `addressCheckMs`: puts the address back if it was removed from under the agent
   * (one `ip` read; see ClusterIPAddresses.reassert), in turn with the binds, then again.
   */
  private scheduleAddressCheck(): void {
    const addresses = this.addresses;
    if (this.stopped || !addresses) return;
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => {
      this.binding = this.binding.then(async () => {
        if (!this.stopped) await addresses.reassert();
      });
      void this.binding.then(() => this.scheduleAddressCheck());
    }, this.cfg.addressCheckMs ?? RETRY_MS);
    this.checkTimer.unref();
  }

  /**
   * start(), then serves until `signal` aborts, then stop(). Never rejects: a start that
   * fails (the caches did not sync) is logged and tried again 30 s later.
   */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.stopped) {
      try {
        await this.start();
        break;
      } catch (err) {
        this.cfg.logger.warn('dns: cannot start; retrying in 30 s', { error: (err as Error).message });
        await new Promise<void>((r) => {
          const t = setTimeout(r, RETRY_MS);
          signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
        });
      }
    }
    if (!signal.aborted)
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    await this.stop();
  }

  /** Stops watching, closes the sockets, removes the address and the interface it made. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.checkTimer);
    await this.informers.shutdown();
    await this.binding;
    await this.server.close();
    await this.addresses?.stop();
  }

  /** Brings one Service's records in line with the caches. */
  private sync(key: string): void {
    const [ns, name] = key.split('/') as [string, string];
    const svc = this.services.lister().get(ns, name);
    this.records.setService(key, svc, svc ? this.slices.lister().byIndex(SLICES_BY_SERVICE, key) : []);
    if (ns === DNS_SERVICE.namespace && name === DNS_SERVICE.name) this.rebind();
  }

  /** The address to serve: the configured one, --cluster-dns, or kube-dns's clusterIP. */
  private wanted(): DnsAddress | undefined {
    if (this.cfg.address) return this.cfg.address;
    const first = this.cfg.clusterDNS?.[0];
    if (first) return { host: first, port: 53 };
    const svc = this.services.lister().get(DNS_SERVICE.namespace, DNS_SERVICE.name);
    const ip = svc ? usableClusterIP(svc) : undefined;
    return ip ? { host: ip, port: 53 } : undefined;
  }

  /** Serves the wanted address (one bind at a time, after the previous one). */
  private rebind(): void {
    if (this.stopped) return;
    this.binding = this.binding.then(() => this.bindNow());
  }

  private async bindNow(): Promise<void> {
    if (this.stopped) return;
    const want = this.wanted();
    const key = want ? `${want.host}:${want.port}` : undefined;
    if (key === this.serving && this.server.address) return;
    clearTimeout(this.retryTimer);
    if (this.server.address) {
      await this.server.close();
      this.cfg.logger.info('dns: stopped serving', { address: this.serving });
    }
    if (this.addedHost !== undefined && this.addedHost !== want?.host) {
      await this.addresses?.remove(this.addedHost);
      this.addedHost = undefined;
    }
    this.serving = key;
    if (!want) return;
    try {
      if (this.addresses) {
        // The interface is made when there is an address to hold, not before (a cluster
        // without kube-dns gets none).
        if (this.addresses.mode === undefined) await this.addresses.start();
        if (!(await this.addresses.add(want.host)))
          throw new Error(`cannot make ${want.host} an address of this node`);
        this.addedHost = want.host;
        // It serves one address: what an earlier run held besides it goes.
        await this.addresses.pruneUnclaimed();
      }
      const got = await this.server.listen(want);
      this.lastBindError = undefined;
      this.cfg.logger.info('dns: serving the cluster DNS', {
        address: `${got.host}:${got.port}`,
        zone: this.records.zone,
        upstreams: this.upstreamList.map((u) => `${u.host}:${u.port}`),
      });
    } catch (err) {
      // Warned once per address and error; the retries every 30 s after it log at debug
      // (a second agent on the host, or an agent that is not root, would warn forever).
      const error = (err as Error).message;
      const said = `${key} ${error}`;
      const log = said === this.lastBindError ? this.cfg.logger.debug : this.cfg.logger.warn;
      this.lastBindError = said;
      log.call(this.cfg.logger, 'dns: cannot serve the cluster DNS address; retrying every 30 s', {
        address: key,
        error,
      });
      this.retryTimer = setTimeout(() => {
        this.serving = undefined;
        this.rebind();
      }, this.cfg.retryMs ?? RETRY_MS);
      this.retryTimer.unref();
    }
  }

  private loadUpstreams(): void {
    if (this.cfg.upstreams) {
      this.upstreamList = this.cfg.upstreams;
      return;
    }
    const path = this.cfg.resolvConf ?? DEFAULT_RESOLV_CONF;
    try {
      this.upstreamList = readResolvConf(path);
    } catch (err) {
      this.cfg.logger.warn('dns: cannot read the resolv.conf; names outside the cluster get SERVFAIL', {
        path,
        error: (err as Error).message,
      });
    }
    if (this.upstreamList.length === 0)
      this.cfg.logger.warn('dns: no nameserver in the resolv.conf; names outside the cluster get SERVFAIL', {
        path,
      });
  }
}

function sliceServiceKey(s: EndpointSlice): string[] {
  const name = s.metadata.labels?.[LABEL_SERVICE_NAME];
  return name ? [`${s.metadata.namespace}/${name}`] : [];
}
