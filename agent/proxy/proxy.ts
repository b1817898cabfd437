/**
 * kube-proxy for one node (agent/proxy/ holds it; every agent starts one): watches
 * Services and EndpointSlices and relays TCP from each Service port's NodePort (and
 * ClusterIP) to the port's ready endpoints.
 *
 *   const proxy = new Proxy({ client, nodeName, nodeIP: '127.0.0.2', clusterIPInterface: 'k8ts-svc0', logger });
 *   await proxy.start();      // informers synced, listeners open
 *   ...                       // proxy.metrics() for /metrics
 *   await proxy.stop();       // listeners, connections, addresses and the interface gone
 *
 * Layout: the informers' handlers only enqueue a Service key (`namespace/name`; a slice
 * names its Service in the `kubernetes.io/service-name` label); reconcile(key) reads the
 * Service and its slices from the caches and brings that Service's ServicePortProxy
 * objects (service-port.ts: listeners + Balancer) and its ClusterIP address
 * (cluster-ip.ts) in line. Endpoint changes therefore reach the balancers within one
 * watch event and one reconcile, well under a second. In nftables mode (nftables.ts) and
 * iptables mode (iptables.ts) the same reconcile hands the Service's ports to the kernel
 * instead of to listeners, and every `syncPeriodMs` missing rules are noticed and written again. Every `syncPeriodMs` (kube-proxy's
 * syncPeriod, 30 s) all Services are reconciled again, which retries listeners that could
 * not be bound, and ClusterIP addresses removed from the interface behind the agent's back
 * are added again (checkAddresses).
 *
 * Listeners per TCP or UDP Service port (UDP: udp-port.ts, sessions as conntrack keeps them):
 * - NodePort / LoadBalancer with a nodePort: `nodeIP:nodePort`, or all addresses without
 *   a nodeIP (as kube-proxy's default --nodeport-addresses);
 * - a clusterIP (not headless): `clusterIP:port`, the address held by ClusterIPAddresses;
 * - LoadBalancer: `ingressIP:port` for an ingress IP equal to nodeIP (the servicelb
 *   controller reports the nodes' InternalIPs; with ipMode VIP traffic to them is the
 *   proxy's, as kube-proxy captures it).
 * SCTP ports are not served (logged once per Service port).
 */
import type { Logger } from '../../api/log.js';
import { realClock, type Clock } from '../../api/clock.js';
import { InformerFactory } from '../../api/client/factory.js';
import { deletedObject, type SharedInformer } from '../../api/client/informer.js';
import { resources } from '../../api/client/resource.js';
import type { RestClient } from '../../api/client/rest.js';
import { metaNamespaceKey, splitMetaNamespaceKey } from '../../api/client/store.js';
import type { EndpointSlice, Service, ServicePort } from '../../api/types.js';
import { RateLimitingQueue } from '../../api/workqueue/rateLimited.js';
import { runWorkers } from '../../api/workqueue/workers.js';
import { endpointKey } from './balancer.js';
import { ClusterIPAddresses, usableClusterIP, type AddressMode, type IpCommand } from './cluster-ip.js';
import { LocalNodePortRules, type LocalNodePort } from './local-nodeports.js';
import { DEFAULT_AFFINITY_SECONDS, endpointsForPort } from './endpoints.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './forwarder.js';
import { ProxyMetrics } from './metrics.js';
import type { ProxyMode } from './mode.js';
import { KernelMode, type KernelAccess } from './kernel-mode.js';
import { kernelServicePorts } from './kernel-ports.js';
import { ServicePortProxy, type BindFailure, type ListenAddress } from './service-port.js';
import { UdpServicePortProxy } from './udp-port.js';
import { errorMessage } from '../../api/errors.js';

/** When the change a slice reflects happened (the endpointslice controller sets it). */
const ANNOTATION_LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
export { PROXY_MODES, type ProxyMode } from './mode.js';

/** The label an EndpointSlice names its Service with. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** Services and slices kube-proxy leaves alone (another proxy's, or headless slices). */
const SERVICE_SELECTOR = '!service.kubernetes.io/service-proxy-name';
const SLICE_SELECTOR = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';
const SLICES_BY_SERVICE = 'service';

/** What one Service port serves (Proxy.snapshot()). */
export interface PortSnapshot {
  /** Who serves it: the proxy's own sockets, or nftables or iptables rules in the kernel. */
  mode: ProxyMode;
  /** Userspace mode: the listeners (`kind/host/port`); a kernel mode: none (but loopback NodePorts). */
  listening: string[];
  /** Endpoints of ClusterIP traffic (`ip:port`). */
  endpoints: string[];
  /** Endpoints of NodePort and load-balancer traffic. */
  externalEndpoints: string[];
}

/** Settings of a Proxy (one config object, as every agent component). */
export interface ProxyConfig {
  client: RestClient;
  /** This node's name (log lines and events). */
  nodeName: string;
  /**
   * This node's address (`--node-ip`): NodePorts listen on it only. Omitted: NodePorts
   * listen on all addresses.
   */
  nodeIP?: string;
  /** The dummy interface holding ClusterIPs (at most 15 characters), e.g. `k8ts-svc0`. */
  clusterIPInterface: string;
  logger: Logger;
  /** Default: the real clock. Session affinity expiry and the periodic resync use it. */
  clock?: Clock;
  /** Milliseconds an endpoint gets to accept a connection before the next is tried; default 1000. */
  connectTimeoutMs?: number;
  /** Milliseconds between full resyncs (bind retries); default 30 000, 0 = none. */
  syncPeriodMs?: number;
  /** Told about every listener that could not be opened (the agent records an event). */
  onBindError?: (service: Service, failure: BindFailure) => void;
  /** The `ip` command (tests); default iproute2's. */
  ip?: IpCommand;
  /**
   * Where the proxy may program the kernel (the agent: while the cluster network is a
   * backend other than none): externalTrafficPolicy Local NodePorts then DNAT in the
   * kernel and keep the client's address (local-nodeports.ts). Omitted: never.
   */
  kernel?: KernelAccess;
  /** Default nftables (see ProxyMode); without `kernel` always userspace. */
  mode?: ProxyMode;
}

/** What the proxy serves for one Service. */
interface ServiceState {
  ports: Map<string, ServicePortProxy | UdpServicePortProxy>;
  clusterIP: string | undefined;
  /** Bind failures already reported (key: listen key), so each is reported once. */
  reported: Set<string>;
}

export class Proxy {
  private readonly cfg: ProxyConfig & {
    clock: Clock;
    connectTimeoutMs: number;
    syncPeriodMs: number;
  };
  private readonly informers: InformerFactory;
  private readonly services: SharedInformer<Service>;
  private readonly slices: SharedInformer<EndpointSlice>;
  private readonly queue: RateLimitingQueue<string>;
  private readonly state = new Map<string, ServiceState>();
  /** Ports whose Service port went away, kept while their connections finish, so that stop() ends those too. */
  private readonly retired = new Set<ServicePortProxy | UdpServicePortProxy>();
  private readonly addresses: ClusterIPAddresses;
  private readonly metricsRegistry = new ProxyMetrics();
  private readonly unsupportedLogged = new Set<string>();
  /** externalTrafficPolicy Local NodePorts by Service key, and the kernel rules made of them. */
  private readonly localNodePorts = new Map<string, LocalNodePort[]>();
  private readonly localRules: LocalNodePortRules | undefined;
  /** The kernel modes, and the kernel's cleaning in userspace mode (undefined without ProxyConfig.kernel). */
  private readonly kernel: KernelMode | undefined;
  private workers: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  /** The last mode line logged (logMode). */
  private loggedMode: string | undefined;
  /** Ends the periodic address check (stop()). */
  private readonly stopping = new AbortController();
  private addressCheck: Promise<void> | undefined;

  /** @throws Error for a missing client, nodeName, logger or a bad interface name. */
  constructor(cfg: ProxyConfig) {
    if (!cfg.client) throw new Error('Proxy: client is required');
    if (!cfg.nodeName) throw new Error('Proxy: nodeName is required');
    if (!cfg.logger) throw new Error('Proxy: logger is required');
    this.cfg = {
      ...cfg,
      clock: cfg.clock ?? realClock,
      connectTimeoutMs: cfg.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      syncPeriodMs: cfg.syncPeriodMs ?? 30_000,
    };
    this.addresses = new ClusterIPAddresses({
      interfaceName: cfg.clusterIPInterface,
      logger: cfg.logger,
      ...(cfg.ip ? { ip: cfg.ip } : {}),
    });
    this.localRules = cfg.kernel
      ? new LocalNodePortRules(cfg.kernel.host, cfg.nodeIP, cfg.logger)
      : undefined;
    this.kernel = cfg.kernel
      ? new KernelMode({
          kernel: cfg.kernel,
          mode: cfg.mode ?? 'nftables',
          nodeName: cfg.nodeName,
          nodeIP: cfg.nodeIP,
          logger: cfg.logger,
          metrics: this.metricsRegistry,
          clock: this.cfg.clock,
          checkPeriodMs: this.cfg.syncPeriodMs,
        })
      : undefined;
    this.queue = new RateLimitingQueue<string>({ clock: this.cfg.clock });
    this.informers = new InformerFactory({
      client: cfg.client,
      onError: (err, during, informer) =>
        cfg.logger.warn('proxy: informer error', { during, informer, error: err.message }),
    });
    this.services = this.informers.informerFor<Service>(resources.services, {
      labelSelector: SERVICE_SELECTOR,
    });
    this.slices = this.informers.informerFor<EndpointSlice>(resources.endpointslices, {
      labelSelector: SLICE_SELECTOR,
      indexers: { [SLICES_BY_SERVICE]: sliceServiceKey },
    });
    const enqueueService = (s: Service): void => this.queue.add(metaNamespaceKey(s));
    this.services.addEventHandler(
      {
        onAdd: enqueueService,
        onUpdate: (_old, s) => enqueueService(s),
        onDelete: (s) => enqueueService(deletedObject(s)),
      },
      { resyncPeriodMs: this.cfg.syncPeriodMs },
    );
    const enqueueSlice = (s: EndpointSlice, old?: EndpointSlice): void => {
      const trigger = s.metadata.annotations?.[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
      const at = trigger !== undefined ? Date.parse(trigger) : NaN;
      const changed = trigger !== old?.metadata.annotations?.[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
      for (const key of sliceServiceKey(s)) {
        if (changed && Number.isFinite(at)) this.kernel?.noteTrigger(key, at);
        this.queue.add(key);
      }
    };
    this.slices.addEventHandler({
      onAdd: (s) => enqueueSlice(s),
      onUpdate: (old, s) => {
        enqueueSlice(old, old);
        enqueueSlice(s, old);
      },
      onDelete: (s) => {
        const gone = deletedObject(s);
        enqueueSlice(gone, gone);
      },
    });
  }

  /** Reconciles every Service again (the agent calls it when the cluster network setting changes, which may switch the mode). */
  resyncAll(): void {
    for (const s of this.services.lister().list()) this.queue.add(metaNamespaceKey(s));
    for (const key of this.state.keys()) this.queue.add(key);
  }

  /** How ClusterIP addresses are held (after start()). */
  get addressMode(): AddressMode | undefined {
    return this.addresses.mode;
  }

  /**
   * Sets up the ClusterIP addresses, starts the informers and resolves once their caches
   * are synced (the first reconciles are then under way).
   * @throws Error when the caches do not sync within `timeoutMs` (default 60 s).
   */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.workers) throw new Error('Proxy: already started');
    await this.kernel?.start();
    this.logMode();
    await this.addresses.start();
    this.informers.start();
    this.workers = runWorkers(this.queue, 1, (key) => this.reconcile(key), {
      onError: (err, key, requeues) =>
        this.cfg.logger.warn('proxy: sync failed; retrying', {
          service: key,
          requeues,
          error: errorMessage(err),
        }),
    });
    if (!(await this.informers.waitForCacheSync(timeoutMs))) {
      throw new Error(`Proxy: Service and EndpointSlice caches did not sync within ${timeoutMs} ms`);
    }
    this.kernel?.markSynced();
    if (this.cfg.syncPeriodMs > 0) this.addressCheck = this.checkAddresses(this.cfg.syncPeriodMs);
    // The ClusterIPs an earlier run left stay until every Service has been served once;
    // then those of Services deleted meanwhile go.
    void this.waitForIdle(timeoutMs).then(async (idle) => {
      if (idle && !this.stopped) await this.addresses.pruneUnclaimed();
    });
  }

  /** Waits until every queued Service is reconciled (tests, and the agent's readiness). */
  async waitForIdle(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.queue.len() === 0 && !this.busy && !this.kernel?.busy) return true;
      await new Promise((r) => setTimeout(r, 10));
    }
    return false;
  }

  /** Prometheus text of the proxy's metrics (see metrics.ts). */
  metrics(): Promise<string> {
    return this.metricsRegistry.registry.metrics();
  }

  /** The content type of metrics() (Prometheus text exposition 0.0.4). */
  get contentType(): string {
    return this.metricsRegistry.registry.contentType;
  }

  /**
   * The mode Services are served in now: the kernel mode where it serves, else userspace
   * (while the cluster network setting is not known yet, the kernel mode asked for).
   */
  get mode(): ProxyMode {
    if (this.kernel?.active || this.kernel?.waitingForSetting) return this.kernel.mode!;
    return 'userspace';
  }

  /**
   * Logs the mode in effect once it is known, and again when it changes (the cluster network
   * switched to or from backend none): `kube-proxy mode nftables`, or
   * `kube-proxy mode userspace (fallback: <why>)` where a kernel mode was asked for.
   */
  private logMode(): void {
    if (this.kernel?.waitingForSetting) return;
    const asked = this.cfg.mode ?? 'nftables';
    const mode = this.mode;
    let line = `kube-proxy mode ${mode}`;
    if (mode === 'userspace' && asked !== 'userspace')
      line += ` (fallback: ${this.kernel?.fallbackReason ?? 'the proxy is given no access to the kernel'})`;
    if (line === this.loggedMode) return;
    this.loggedMode = line;
    this.cfg.logger.info(line, { node: this.cfg.nodeName, asked });
  }

  /** The prom-client registry, for an agent that merges registries. */
  get registry(): ProxyMetrics['registry'] {
    return this.metricsRegistry.registry;
  }

  /**
   * What is served now, by Service key: the listeners (`kind/host/port`) and endpoints
   * (`ip:port`) of each port. For tests and debugging.
   */
  snapshot(): Record<string, Record<string, PortSnapshot>> {
    const out: Record<string, Record<string, PortSnapshot>> = {};
    for (const [key, st] of this.state) {
      out[key] = {};
      for (const p of this.kernel?.served(key) ?? []) {
        out[key][p.id.split('/').pop()!] = {
          mode: this.kernel!.mode!,
          listening: [],
          endpoints: p.internal.map(endpointKey),
          externalEndpoints: p.external.map(endpointKey),
        };
      }
      for (const [port, p] of st.ports) {
        const kernel = out[key][port];
        if (kernel) {
          kernel.listening = p.listening();
          continue;
        }
        out[key][port] = {
          mode: 'userspace',
          listening: p.listening(),
          endpoints: p.balancers.internal.list().map(endpointKey),
          externalEndpoints: p.balancers.external.list().map(endpointKey),
        };
      }
    }
    return out;
  }

  /**
   * Stops watching, closes every listener and relayed connection; removes the ClusterIP
   * addresses and the dummy interface it created in userspace mode. In a kernel mode they
   * stay with the rules (the host's own connections to a ClusterIP are routed by them while
   * the agent restarts); `k8ts agent --cleanup` removes both. Idempotent.
   */
  stop(): Promise<void> {
    return (this.stopped ??= (async () => {
      const keepAddresses = this.kernel?.active ?? false;
      this.stopping.abort();
      await this.addressCheck;
      this.queue.shutDown();
      await this.informers.shutdown();
      await this.kernel?.stop();
      await this.workers;
      for (const [key, st] of this.state) {
        for (const p of st.ports.values()) await p.close(true);
        this.metricsRegistry.forgetService(key);
      }
      for (const p of this.retired) await p.close(true);
      this.retired.clear();
      this.state.clear();
      if (keepAddresses) this.addresses.leave();
      else await this.addresses.stop();
    })());
  }

  private busy = false;

  /**
   * Every `periodMs` (the sync period): puts back the ClusterIP addresses someone removed
   * from the interface under the running agent (ClusterIPAddresses.reassert: one `ip` read,
   * an add per missing address), as kube-proxy's IPVS mode binds its addresses to kube-ipvs0
   * again on each sync. Without it a removed address stayed gone until its Service changed.
   */
  private async checkAddresses(periodMs: number): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      await this.cfg.clock.sleep(periodMs, signal);
      if (signal.aborted) return;
      await this.addresses.reassert();
    }
  }

  /** Writes the externalTrafficPolicy Local rules of every Service (when the kernel may be programmed). */
  private async syncLocalRules(): Promise<void> {
    if (!this.localRules) return;
    const enabled = this.cfg.kernel!.enabled();
    await this.localRules.sync(enabled ? [...this.localNodePorts.values()].flat() : []);
  }

  /** Hands a Service's ports to the kernel: its userspace listeners and ClusterIP address go. */
  private async reconcileKernel(
    key: string,
    svc: Service | undefined,
    wanted: Map<string, ServicePort>,
    st: ServiceState,
  ): Promise<void> {
    // NodePorts on 127.0.0.1 stay the proxy's sockets (loopbackNodePorts); the rest goes.
    const type = svc?.spec.type ?? 'ClusterIP';
    const loopback = new Map(
      [...wanted].filter(([, sp]) => sp.nodePort && (type === 'NodePort' || type === 'LoadBalancer')),
    );
    await this.retirePorts(
      key,
      st,
      (portKey, p) =>
        loopback.has(portKey) &&
        p instanceof UdpServicePortProxy === (loopback.get(portKey)!.protocol === 'UDP'),
    );
    // The ClusterIP stays a local address, as kube-proxy's IPVS mode keeps its addresses on
    // kube-ipvs0: the host's own connections are routed (to the address; the DNAT in
    // nat-output then sends them on) even on a host without a default route, and a Service
    // without endpoints is refused by filter-input instead of unreachable.
    const clusterIP = await this.releaseOldClusterIP(st, svc, wanted);
    if (this.localNodePorts.delete(key)) await this.syncLocalRules();
    if (!svc || wanted.size === 0) {
      this.kernel!.serve(key, undefined);
      this.state.delete(key);
      this.metricsRegistry.forgetService(key);
      return;
    }
    this.state.set(key, st);
    if (clusterIP !== undefined && (await this.addresses.add(clusterIP))) st.clusterIP = clusterIP;
    const slices = this.slices.lister().byIndex(SLICES_BY_SERVICE, key);
    const { ports, endpointCount } = kernelServicePorts(key, svc, wanted, slices, this.cfg.nodeName);
    this.metricsRegistry.endpoints.set({ service: key }, endpointCount);
    // NodePorts on 127.0.0.1: the kernel would DNAT them only with route_localnet, which
    // lets other hosts reach the node's loopback (CVE-2020-8558), and kube-proxy's nftables
    // mode does not serve them; the node's own clients still expect them, so the proxy's
    // sockets relay them, on loopback only.
    for (const kp of ports) {
      const portKey = kp.id.split('/').pop()!;
      const sp = loopback.get(portKey);
      if (!sp) continue;
      const p = this.userspacePort(key, st, portKey, kp.protocol === 'UDP');
      p.setEndpoints(kp.internal, kp.affinitySeconds, kp.external);
      const failures = await p.setListenAddresses([
        { kind: 'NodePort', host: '127.0.0.1', port: sp.nodePort! },
      ]);
      this.report(svc, st, p.listening(), failures);
    }
    this.kernel!.serve(key, ports);
  }

  /** The proxy's own relay of a Service port (made when missing). */
  private userspacePort(
    key: string,
    st: ServiceState,
    portKey: string,
    udp: boolean,
  ): ServicePortProxy | UdpServicePortProxy {
    let p = st.ports.get(portKey);
    if (p) return p;
    const common = {
      service: key,
      portName: portKey,
      clock: this.cfg.clock,
      metrics: this.metricsRegistry,
      logger: this.cfg.logger,
    };
    p = udp
      ? new UdpServicePortProxy(common)
      : new ServicePortProxy({ ...common, connectTimeoutMs: this.cfg.connectTimeoutMs });
    st.ports.set(portKey, p);
    return p;
  }

  /** Retires the Service's userspace ports that `keep` refuses, with their connection metrics. */
  private async retirePorts(
    key: string,
    st: ServiceState,
    keep: (portKey: string, p: ServicePortProxy | UdpServicePortProxy) => boolean,
  ): Promise<void> {
    for (const [portKey, p] of st.ports) {
      if (keep(portKey, p)) continue;
      st.ports.delete(portKey);
      await this.retire(p);
      this.metricsRegistry.connections.remove({ service: key, port: portKey });
      this.metricsRegistry.connectionErrors.remove({ service: key, port: portKey });
    }
  }

  /**
   * The clusterIP the Service should hold as a local address now (none when it is gone or
   * serves no port), after removing the address of one it no longer has.
   */
  private async releaseOldClusterIP(
    st: ServiceState,
    svc: Service | undefined,
    wanted: Map<string, ServicePort>,
  ): Promise<string | undefined> {
    const clusterIP = svc && wanted.size > 0 ? usableClusterIP(svc) : undefined;
    if (st.clusterIP !== undefined && st.clusterIP !== clusterIP) {
      await this.addresses.remove(st.clusterIP);
      st.clusterIP = undefined;
    }
    return clusterIP;
  }

  /** Closes a port that went away; its open connections may finish (stop() ends them). */
  private async retire(p: ServicePortProxy | UdpServicePortProxy): Promise<void> {
    await p.close(false);
    for (const r of this.retired) if (r.openConnections() === 0) this.retired.delete(r);
    if (p.openConnections() > 0) this.retired.add(p);
  }

  /** Brings what is served for one Service in line with its Service and EndpointSlices. */
  private async reconcile(key: string): Promise<void> {
    this.busy = true;
    const end = this.metricsRegistry.syncDuration.startTimer();
    try {
      if (this.stopped) return;
      const { namespace, name } = splitMetaNamespaceKey(key);
      const svc = this.services.lister().get(namespace, name);
      const st = this.state.get(key) ?? { ports: new Map(), clusterIP: undefined, reported: new Set() };
      const wanted = svc ? this.desiredPorts(svc) : new Map<string, ServicePort>();
      // A kernel mode before the cluster network setting is known: nothing yet (the agent
      // reconciles everything again once it is, resyncAll()).
      if (this.kernel?.waitingForSetting) return;
      this.logMode();
      if (this.kernel?.active) return await this.reconcileKernel(key, svc, wanted, st);
      // Userspace from here on: no table of ours may be left in the kernel.
      await this.kernel?.servedInUserspace(key);
      // Ports that went away: listeners close, open connections may finish.
      await this.retirePorts(key, st, (portKey) => wanted.has(portKey));
      const clusterIP = await this.releaseOldClusterIP(st, svc, wanted);
      if (!svc || wanted.size === 0) {
        if (this.localNodePorts.delete(key)) await this.syncLocalRules();
        this.state.delete(key);
        this.metricsRegistry.forgetService(key);
        return;
      }
      this.state.set(key, st);
      const haveClusterIP = clusterIP !== undefined && (await this.addresses.add(clusterIP));
      if (haveClusterIP) st.clusterIP = clusterIP;
      const slices = this.slices.lister().byIndex(SLICES_BY_SERVICE, key);
      const affinity =
        svc.spec.sessionAffinity === 'ClientIP'
          ? (svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS)
          : 0;
      let endpointCount = 0;
      const localPorts: LocalNodePort[] = [];
      for (const [portKey, sp] of wanted) {
        const udp = sp.protocol === 'UDP';
        let p = st.ports.get(portKey);
        if (p && p instanceof UdpServicePortProxy !== udp) {
          // The port changed protocol: its listeners are of the other kind.
          st.ports.delete(portKey);
          await this.retire(p);
          p = undefined;
        }
        p ??= this.userspacePort(key, st, portKey, udp);
        const portName = sp.name ?? '';
        const protocol = sp.protocol ?? 'TCP';
        const all = endpointsForPort(slices, portName, protocol).endpoints;
        const local = () => endpointsForPort(slices, portName, protocol, this.cfg.nodeName).endpoints;
        const internal = svc.spec.internalTrafficPolicy === 'Local' ? local() : all;
        const external = svc.spec.externalTrafficPolicy === 'Local' ? local() : all;
        endpointCount = Math.max(endpointCount, all.length);
        p.setEndpoints(internal, affinity, external);
        if (svc.spec.externalTrafficPolicy === 'Local' && sp.nodePort && svc.spec.type !== 'ClusterIP')
          localPorts.push({
            protocol: protocol === 'UDP' ? 'UDP' : 'TCP',
            nodePort: sp.nodePort,
            endpoints: external,
          });
        const failures = await p.setListenAddresses(
          this.listenAddresses(svc, sp, haveClusterIP ? clusterIP : undefined),
        );
        this.report(svc, st, p.listening(), failures);
      }
      this.metricsRegistry.endpoints.set({ service: key }, endpointCount);
      if (localPorts.length > 0) this.localNodePorts.set(key, localPorts);
      else this.localNodePorts.delete(key);
      await this.syncLocalRules();
    } finally {
      end();
      this.busy = false;
    }
  }

  /** The TCP and UDP ports of a Service that this proxy serves, by port key (name, or number when unnamed). */
  private desiredPorts(svc: Service): Map<string, ServicePort> {
    const out = new Map<string, ServicePort>();
    if (svc.spec.type === 'ExternalName') return out;
    const key = metaNamespaceKey(svc);
    for (const p of svc.spec.ports ?? []) {
      const portKey = p.name || String(p.port);
      if ((p.protocol ?? 'TCP') !== 'TCP' && p.protocol !== 'UDP') {
        const k = `${key}/${portKey}/${p.protocol}`;
        if (!this.unsupportedLogged.has(k)) {
          this.unsupportedLogged.add(k);
          this.cfg.logger.info('proxy: only TCP and UDP are proxied; port skipped', {
            service: key,
            port: portKey,
            protocol: p.protocol,
          });
        }
        continue;
      }
      out.set(portKey, p);
    }
    return out;
  }

  private listenAddresses(svc: Service, p: ServicePort, clusterIP: string | undefined): ListenAddress[] {
    const out: ListenAddress[] = [];
    const type = svc.spec.type ?? 'ClusterIP';
    if ((type === 'NodePort' || type === 'LoadBalancer') && p.nodePort) {
      out.push({ kind: 'NodePort', host: this.cfg.nodeIP, port: p.nodePort });
    }
    if (clusterIP !== undefined) out.push({ kind: 'ClusterIP', host: clusterIP, port: p.port });
    if (type === 'LoadBalancer' && this.cfg.nodeIP) {
      const ingress = svc.status?.loadBalancer?.ingress ?? [];
      if (ingress.some((i) => i.ip === this.cfg.nodeIP) && p.port !== p.nodePort) {
        out.push({ kind: 'LoadBalancer', host: this.cfg.nodeIP, port: p.port });
      }
    }
    return out;
  }

  /** Logs and reports each bind failure once (until that listener works). */
  private report(svc: Service, st: ServiceState, listening: string[], failures: BindFailure[]): void {
    for (const l of listening) st.reported.delete(l);
    for (const f of failures) {
      const k = `${f.address.kind}/${f.address.host ?? '*'}/${f.address.port}`;
      if (st.reported.has(k)) continue;
      st.reported.add(k);
      this.cfg.logger.warn('proxy: cannot listen; will retry', {
        service: metaNamespaceKey(svc),
        kind: f.address.kind,
        address: `${f.address.host ?? '*'}:${f.address.port}`,
        error: f.error,
        node: this.cfg.nodeName,
      });
      try {
        this.cfg.onBindError?.(svc, f);
      } catch {
        // The reporter's failure is not the proxy's.
      }
    }
  }
}

/** The Service key a slice belongs to (index function; none without the label). */
function sliceServiceKey(s: EndpointSlice): string[] {
  const name = s.metadata.labels?.[LABEL_SERVICE_NAME];
  return name ? [`${s.metadata.namespace}/${name}`] : [];
}
