/**
 * The agent process (`k8ts agent`, and the local agent of `k8ts server`): the kubelet half
 * of a node. startAgent() connects to the API server, registers the Node and then keeps,
 * side by side until stop():
 *
 * - the Node's status (kubelet/node-status.ts), every 10 s and at once on changes;
 * - the node Lease in kube-node-lease (kubelet/node-lease.ts), renewed every 10 s;
 * - the pod network (network/pod-network.ts), created once the Node has its spec.podCIDR
 *   and the cluster network setting is known: a bridge network of the runtime (Docker), or
 *   on a CRI runtime the CNI conflist of its conf dir (network/cni.ts);
 * - the pod network between hosts (network/cross-host.ts): the vxlan or host-gw backend the
 *   control process chose, routes to every other node's pods;
 * - a Node informer on this one Node, which feeds the pod CIDR to the network and re-posts
 *   the status when the node lifecycle controller marked the Node Unknown;
 * - the pods bound to the node (kubelet/pods/: PodManager), whose sandboxes join the pod
 *   network once it is ready;
 * - the local-path provisioner of this node (storage/provisioner.ts), unless
 *   `localStorage: false`: the directories and PersistentVolumes of the claims the
 *   scheduler placed here, under DATA_DIR/storage/;
 * - the tunnel to the API server (kubelet/tunnel.ts), through which the API server reaches
 *   this node's kubelet API (kubelet/server/: logs, exec, attach, port-forward, stats);
 *   the kubelet API listens on no port.
 *
 * The agent reaches the runtime only through cri/. stop() leaves containers running: a
 * restarted agent adopts them.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../api/log.js';
import { realClock, type Clock } from '../api/clock.js';
import { EventRecorder, SHUTDOWN_FLUSH_MS } from '../api/client/events.js';
import { SharedInformer } from '../api/client/informer.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { Connect } from '../api/client/connect.js';
import { createLogger } from '../api/log.js';
import type { Node, Service } from '../api/types.js';
import type { Runtime, RuntimeKind } from '../cri/index.js';
import { bootstrapNodeCredential, checkPlainHTTP } from './kubelet/bootstrap.js';
import { hostMachine, type MachineProbe } from './kubelet/machine.js';
import { CniPodNetwork } from './network/cni.js';
import { CrossHostNetwork } from './network/cross-host.js';
import { runHostCommand, type HostCommand } from './network/host-command.js';
import { PodNetworkManager } from './network/pod-network.js';
import { VethPodInterfaces } from './network/pod-interfaces.js';
import { NodeLeaseController } from './kubelet/node-lease.js';
import { KUBELET_VERSION, NodeStatusManager } from './kubelet/node-status.js';
import { PodManager } from './kubelet/pods/manager.js';
import { KubeletServer } from './kubelet/server/server.js';
import { StatsProvider } from './kubelet/server/stats.js';
import { TunnelClient } from './kubelet/tunnel.js';
import { clusterIPInterfaceFor } from './proxy/cluster-ip.js';
import { ProxyMetricsServer } from './proxy/metrics-server.js';
import { Proxy, type ProxyMode } from './proxy/proxy.js';
import { connectRuntime } from './runtime.js';
import { ClusterDNS, type ClusterDNSConfig } from './dns/cluster-dns.js';
import { hostMounter } from './kubelet/pods/mount.js';
import { LocalPathProvisioner } from './storage/provisioner.js';
import { LOCAL_PATH_PROVISIONER } from './storage/volume.js';

/** Settings of an agent (the `k8ts agent` flags, plus what tests inject). */
export interface AgentConfig {
  /** The API server's URL (`--server`). */
  server: string;
  /**
   * Other API servers of the same cluster (`--server` repeated or comma-separated): the
   * agent's client fails over to them in turn (RestClient's alternateServers), so its
   * informers, Lease, status and kube-proxy follow; and it keeps a tunnel to each (as
   * konnectivity agents connect to every server), so `kubectl logs/exec` work through any.
   */
  alternateServers?: readonly string[];
  /**
   * The join token (`--token` / `--token-file`): `K10<CA hash>::<id>.<secret>`. With an
   * https:// server it is used once to obtain the node's credential
   * (kubelet/bootstrap.ts), which later starts reuse; an http:// server (a control
   * process run with --insecure-http) checks no credential, and the token is not sent to it.
   */
  token?: string;
  /** The Node's name (`--node-name`; the CLI defaults it to the hostname). */
  nodeName: string;
  /** The node's InternalIP (`--node-ip`). */
  nodeIP: string;
  /**
   * The API server is in this process (`k8ts server`'s own agent): the agent's API client
   * opens its connections with what this gives for the node's credential (the control
   * process's inProcessConnector: no TLS, the same identity and authorization), instead of
   * TLS connections to `server`. The credential is still obtained from `server` with the
   * token, and the tunnel still connects there. Not with `alternateServers`.
   */
  inProcess?: (credential?: { cert: string; key: string }) => Promise<Connect>;
  /** The agent's own directory (`--data-dir`); created when missing. Its filesystem is the node's ephemeral-storage. */
  dataDir: string;
  /**
   * The container runtime: an adapter kind (`--runtime docker`), which the agent opens —
   * retrying in the background while it cannot be reached, the node NotReady meanwhile —
   * and closes on stop(); or an open Runtime (tests), closed on stop() only if `ownsRuntime`.
   */
  runtime: Runtime | RuntimeKind;
  /** Close a given Runtime on stop(). Default false. */
  ownsRuntime?: boolean;
  /** The CRI endpoint of `runtime: 'containerd'` (`--container-runtime-endpoint`); default containerd's socket. */
  runtimeEndpoint?: string;
  /**
   * The runtime's network is CNI (containerd): the agent writes the node's conflist into
   * `confDir` (`--cni-conf-dir`) from its podCIDR, with the plugins of `binDir`
   * (`--cni-bin-dir`), and keeps it current (network/cni.ts). Unset: the runtime makes the
   * pod network itself (ensurePodNetwork: Docker's bridge network).
   */
  cni?: { confDir: string; binDir: string };
  /**
   * kube-proxy's `--proxy-mode` (proxy/proxy.ts's ProxyMode). Default nftables: Service
   * rules in the kernel where the cluster network is the agent's (backend other than none);
   * iptables: the same with iptables chains.
   */
  proxyMode?: ProxyMode;
  /**
   * kube-proxy's `--metrics-bind-address`: where the proxy's /metrics (Prometheus text),
   * /healthz and /proxyMode are served over plain HTTP (proxy/metrics-server.ts); the CLI's
   * default is kube-proxy's, 127.0.0.1:10249. Unset: not served. An address that cannot be
   * bound (a second agent on the host) is logged and the agent goes on without it.
   */
  metricsBindAddress?: { host: string; port: number };
  /**
   * The cluster DNS server of this node (dns/cluster-dns.ts, NodeLocal DNSCache's place):
   * false turns it off (`--disable-cluster-dns`); otherwise it serves `dns.clusterDNS[0]`
   * (else kube-system/kube-dns's clusterIP) on port 53 for `dns.clusterDomain`, forwarding
   * other names to `dns.resolvConf`'s nameservers. Tests may give `address` (127.0.0.x,
   * port 0: no address is added) and `upstreams` instead.
   */
  clusterDNSServer?: false | Pick<ClusterDNSConfig, 'address' | 'upstreams'>;
  /**
   * The local-path provisioner (storage/provisioner.ts, k3s's `rancher.io/local-path`) for
   * this node; false turns it off (`--disable-local-storage`). Default on.
   */
  localStorage?: boolean;
  /** Default: JSON lines on stderr at info. */
  logger?: Logger;
  clock?: Clock;
  /** Where capacity and usage come from; default the host (systeminformation, statfs of dataDir). */
  machine?: MachineProbe;
  /** Milliseconds between node status computations; default 10 000. */
  nodeStatusUpdateFrequencyMs?: number;
  /** Milliseconds after which an unchanged status is posted anyway; default 60 000. */
  nodeStatusReportFrequencyMs?: number;
  /** The Lease's spec.leaseDurationSeconds; default 40. */
  nodeLeaseDurationSeconds?: number;
  /** Milliseconds between Lease renewals; default 10 000. */
  nodeLeaseRenewIntervalMs?: number;
  /** Milliseconds between checks that the pod network still exists; default 60 000. */
  podNetworkResyncMs?: number;
  /**
   * The address NodePorts listen on (kube-proxy's --nodeport-addresses); default all of
   * this host's addresses. The CLI sets it to --node-ip when that flag is given, so several
   * agents on one host (127.0.0.1, 127.0.0.2, ...) do not take each other's ports.
   */
  nodePortAddress?: string;
  /**
   * The dummy interface holding ClusterIP addresses (at most 15 characters); default one
   * per node name (clusterIPInterfaceFor), so that agents on one host keep apart.
   */
  clusterIPInterface?: string;
  /**
   * The programs that change the kernel's network state (`ip`, `bridge`, `iptables`);
   * default the real ones. Tests of nodes that share the machine's namespace run with
   * backend none, which changes nothing.
   */
  hostCommand?: HostCommand;
  /** Milliseconds between full runs of the network between hosts; default 30 000. */
  crossHostResyncMs?: number;
  /** Aborts startup (registration retries until the API server answers). */
  signal?: AbortSignal;
  /** First and longest reconnect delays of the tunnel, ms; default 1000 and 30 000. */
  tunnelBackoffMs?: { min: number; max: number };
  /**
   * The pods' DNS (kubelet/pods/dns.ts): `--cluster-dns` (default: the clusterIP of the
   * Service kube-system/kube-dns), `--cluster-domain` (default cluster.local),
   * `--resolv-conf` (default /etc/resolv.conf; '' for none).
   */
  dns?: { clusterDNS?: string[]; clusterDomain?: string; resolvConf?: string };
}

/** A running agent. */
export interface Agent {
  readonly nodeName: string;
  /** The Node as registered. */
  readonly node: Node;
  /** The agent's API client. */
  readonly client: RestClient;
  /** The node's pod network (its name, whether it is ready). */
  readonly podNetwork: PodNetworkManager;
  /** The tunnel to the API server (the first --server; whether it is connected now). */
  readonly tunnel: TunnelClient;
  /** One tunnel per API server (`server`, then each of `alternateServers`). */
  readonly tunnels: readonly TunnelClient[];
  /** Stops every loop and closes connections; containers keep running. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts an agent and resolves once its Node is registered (registration is retried
 * until the API server answers).
 * @throws Error for an incomplete config; the abort reason when `cfg.signal` aborts first.
 */
export async function startAgent(cfg: AgentConfig): Promise<Agent> {
  if (!cfg.server) throw new Error('startAgent: server is required');
  if (!cfg.nodeName) throw new Error('startAgent: nodeName is required');
  if (!cfg.nodeIP) throw new Error('startAgent: nodeIP is required');
  if (!cfg.dataDir) throw new Error('startAgent: dataDir is required');
  mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
  const { nodeName } = cfg;
  const logger = cfg.logger ?? createLogger('info');
  // Before anything else (the runtime, the warning below): an https server given as
  // http:// is a mistake to report at once.
  if (cfg.server.startsWith('http:')) await checkPlainHTTP(cfg.server);
  const clock = cfg.clock ?? realClock;
  const connecting =
    typeof cfg.runtime === 'string'
      ? connectRuntime(cfg.runtime, nodeName, logger, clock, {
          ...(cfg.runtimeEndpoint !== undefined ? { endpoint: cfg.runtimeEndpoint } : {}),
          // The node's state stays in its data dir (the kubelet's default is /var/log/pods).
          podLogsDir: join(cfg.dataDir, 'pod-logs'),
          // Docker sandboxes get their interface from the network module where the agent
          // owns the host's network (agent/network/pod-interfaces.ts).
          podInterfaces: new VethPodInterfaces({
            host: cfg.hostCommand ?? runHostCommand,
            ipamDir: join(cfg.dataDir, 'docker-ipam'),
            enabled: () => crossHost.conf !== undefined && crossHost.conf.backend !== 'none',
          }),
        })
      : undefined;
  const runtime = connecting?.runtime ?? (cfg.runtime as Runtime);
  const closeRuntime = async () => {
    if (connecting) await connecting.close();
    else if (cfg.ownsRuntime) await runtime.close();
  };
  if (cfg.server.startsWith('http:'))
    logger.warn(
      'the API server is plain HTTP (a server run with --insecure-http): nothing is authenticated or encrypted',
      {
        server: cfg.server,
      },
    );
  let credential;
  let connect: Connect | undefined;
  try {
    credential = cfg.server.startsWith('https:')
      ? await bootstrapNodeCredential({
          server: cfg.server,
          ...(cfg.alternateServers ? { alternateServers: cfg.alternateServers } : {}),
          ...(cfg.token ? { token: cfg.token } : {}),
          nodeName,
          dataDir: cfg.dataDir,
          logger,
          ...(cfg.signal ? { signal: cfg.signal } : {}),
        })
      : undefined;
    connect = await cfg.inProcess?.(credential && { cert: credential.cert, key: credential.key });
  } catch (err) {
    await closeRuntime();
    throw err;
  }
  const client = new RestClient({
    server: cfg.server,
    ...(cfg.alternateServers ? { alternateServers: cfg.alternateServers } : {}),
    ...(credential ? { ca: credential.ca, cert: credential.cert, key: credential.key } : {}),
    ...(connect ? { connect } : {}),
    userAgent: `kubelet/${KUBELET_VERSION} (${nodeName})`,
  });
  const recorderFor = (component: string): EventRecorder =>
    new EventRecorder({
      client,
      component,
      host: nodeName,
      clock,
      onError: (err, ev) => logger.debug('event dropped', { reason: ev.reason, error: String(err) }),
    });
  const recorder = recorderFor('kubelet');
  // kube-proxy reports with its own source, and its events do not queue behind the kubelet's.
  const proxyRecorder = recorderFor('kube-proxy');
  // The provisioner's events have the external provisioner's source, `<provisioner>_<identity>`.
  const storageRecorder = recorderFor(`${LOCAL_PATH_PROVISIONER}_${nodeName}`);
  const running = new AbortController();
  const onStartAbort = () => running.abort(cfg.signal?.reason);
  cfg.signal?.addEventListener('abort', onStartAbort, { once: true });
  // Aborted while starting (during the awaits above): the listener will never fire.
  if (cfg.signal?.aborted) onStartAbort();

  // The status manager and the network refer to each other (the network's readiness is
  // part of Ready; its becoming ready is a reason to post at once); the callback runs
  // only after both exist.
  const machine = cfg.machine ?? hostMachine(cfg.dataDir);
  const podNetwork = new PodNetworkManager({
    runtime: cfg.cni
      ? new CniPodNetwork({
          nodeName,
          confDir: cfg.cni.confDir,
          binDir: cfg.cni.binDir,
          ipamDataDir: join(cfg.dataDir, 'cni', 'networks'),
          runtime,
        })
      : runtime,
    nodeName,
    logger,
    clock,
    resyncMs: cfg.podNetworkResyncMs,
    awaitMTU: true,
    onReady: () => {
      crossHost.poke();
      status.poke();
      pods.resyncAll();
    },
  });
  const crossHost = new CrossHostNetwork({
    client,
    nodeName,
    nodeIP: cfg.nodeIP,
    logger,
    clock,
    ...(cfg.hostCommand ? { host: cfg.hostCommand } : {}),
    resyncMs: cfg.crossHostResyncMs,
    onConfigured: (_conf, mtu) => {
      podNetwork.setMTU(mtu);
      status.poke();
      // The backend decides whether kube-proxy's rules go in the kernel (proxyMode).
      proxy.resyncAll();
    },
    onPeerRefused: (r) =>
      recorder.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Warning', 'NoRouteToNode', r.reason),
  });
  const status = new NodeStatusManager({
    client,
    runtime,
    machine,
    nodeName,
    nodeIP: cfg.nodeIP,
    podNetworkError: () => podNetwork.error ?? crossHost.error,
    logger,
    recorder,
    clock,
    // Spread, not `updateFrequencyMs: cfg....`: NodeStatusManager lays cfg over its defaults.
    ...(cfg.nodeStatusUpdateFrequencyMs !== undefined
      ? { updateFrequencyMs: cfg.nodeStatusUpdateFrequencyMs }
      : {}),
    ...(cfg.nodeStatusReportFrequencyMs !== undefined
      ? { reportFrequencyMs: cfg.nodeStatusReportFrequencyMs }
      : {}),
  });
  // Post at once when the runtime comes up rather than at the next status update.
  void connecting?.connected.then(() => status.poke());
  const lease = new NodeLeaseController({
    client,
    nodeName,
    logger,
    clock,
    leaseDurationSeconds: cfg.nodeLeaseDurationSeconds,
    renewIntervalMs: cfg.nodeLeaseRenewIntervalMs,
  });

  // The cluster DNS: answers pods' queries from this agent's own watches (dns/).
  const clusterDNS =
    cfg.clusterDNSServer === false
      ? undefined
      : new ClusterDNS({
          client,
          nodeName,
          logger,
          ...(cfg.dns?.clusterDomain ? { clusterDomain: cfg.dns.clusterDomain } : {}),
          ...(cfg.dns?.clusterDNS ? { clusterDNS: cfg.dns.clusterDNS } : {}),
          // '' (no resolv.conf) leaves the DNS without upstreams, as the kubelet gives pods none.
          ...(cfg.dns?.resolvConf !== undefined
            ? cfg.dns.resolvConf === ''
              ? { upstreams: [] }
              : { resolvConf: cfg.dns.resolvConf }
            : {}),
          ...cfg.clusterDNSServer,
        });

  // kube-proxy: the agent's second half. It serves Services on this node from the API's
  // Services and EndpointSlices; a port it cannot bind is reported as an event on the Service.
  const proxy = new Proxy({
    client,
    nodeName,
    nodeIP: cfg.nodePortAddress,
    clusterIPInterface: cfg.clusterIPInterface ?? clusterIPInterfaceFor(nodeName),
    // The kernel is the agent's to program only where the cluster network is (not backend none).
    kernel: {
      host: cfg.hostCommand ?? runHostCommand,
      enabled: () => crossHost.conf !== undefined && crossHost.conf.backend !== 'none',
      decided: () => crossHost.conf !== undefined,
      clusterCIDR: () => crossHost.conf?.network || undefined,
    },
    mode: cfg.proxyMode ?? 'nftables',
    logger,
    clock,
    onBindError: (service, failure) =>
      proxyRecorder.event(
        service,
        'Warning',
        'FailedToBindPort',
        `kube-proxy on ${nodeName} cannot listen on ${failure.address.host ?? '*'}:${failure.address.port}: ${failure.error}`,
      ),
  });

  // The kubelet's serviceLister: Service variables of containers, and the kube-dns address.
  const services = SharedInformer.fromClient<Service>(client, resources.services, {
    onError: (err, during) =>
      logger.warn('service informer error', { node: nodeName, during, error: String(err) }),
  });
  const pods = new PodManager({
    client,
    runtime,
    nodeName,
    nodeIP: cfg.nodeIP,
    podNetwork,
    recorder,
    clock,
    logger,
    dataDir: cfg.dataDir,
    services,
    dns: cfg.dns ?? {},
  });

  let node: Node;
  try {
    recorder.event(
      { kind: 'Node', name: nodeName, uid: nodeName },
      'Normal',
      'Starting',
      'Starting kubelet.',
    );
    node = await status.register(running.signal);
  } catch (err) {
    cfg.signal?.removeEventListener('abort', onStartAbort);
    await recorder.flush(SHUTDOWN_FLUSH_MS);
    client.close();
    await closeRuntime();
    throw err;
  }
  cfg.signal?.removeEventListener('abort', onStartAbort);
  podNetwork.setPodCIDR(node.spec?.podCIDR);

  const nodes = SharedInformer.fromClient<Node>(client, resources.nodes, {
    fieldSelector: `metadata.name=${nodeName}`,
    onError: (err, during) =>
      logger.warn('node informer error', { node: nodeName, during, error: String(err) }),
  });
  const onNode = (n: Node) => {
    podNetwork.setPodCIDR(n.spec?.podCIDR);
    status.observeNode(n);
  };
  nodes.addEventHandler({ onAdd: onNode, onUpdate: (_, n) => onNode(n) });
  nodes.start();

  const kubeletServer = new KubeletServer({
    runtime,
    stats: new StatsProvider({ runtime, machine, nodeName, clock }),
    logger,
  });
  const tunnels = client.servers.map(
    (server) =>
      new TunnelClient({
        server,
        // The node's own credential; a server run with --insecure-http (http://) needs none and
        // gets none: the join token is never sent in clear text.
        ...(credential ? { tls: { ca: credential.ca, cert: credential.cert, key: credential.key } } : {}),
        nodeName,
        onStream: (socket) => kubeletServer.serveConnection(socket),
        logger,
        clock,
        ...(cfg.tunnelBackoffMs
          ? { minBackoffMs: cfg.tunnelBackoffMs.min, maxBackoffMs: cfg.tunnelBackoffMs.max }
          : {}),
      }),
  );
  const tunnel = tunnels[0]!;

  const provisioner =
    cfg.localStorage === false
      ? undefined
      : new LocalPathProvisioner({
          client,
          nodeName,
          dataDir: cfg.dataDir,
          recorder: storageRecorder,
          mounter: hostMounter,
          logger,
          clock,
        });
  provisioner?.start();

  const loops = [
    status.run(running.signal),
    lease.run(running.signal),
    podNetwork.run(running.signal),
    crossHost.run(running.signal),
    ...tunnels.map((t) => t.run(running.signal)),
  ];
  services.start();
  await pods.start();
  await proxy.start();
  const metricsServer = cfg.metricsBindAddress
    ? new ProxyMetricsServer({ ...cfg.metricsBindAddress, proxy, logger })
    : undefined;
  await metricsServer?.start();
  logger.info('agent started', {
    node: nodeName,
    servers: client.servers,
    nodeIP: cfg.nodeIP,
    dataDir: cfg.dataDir,
  });
  // Until stop() aborts `running` (Promise.all(loops) then waits for its sockets to close).
  if (clusterDNS) loops.push(clusterDNS.run(running.signal));

  let stopped: Promise<void> | undefined;
  return {
    nodeName,
    node,
    client,
    podNetwork,
    tunnel,
    tunnels,
    stop: () =>
      (stopped ??= (async () => {
        running.abort();
        kubeletServer.close();
        await metricsServer?.close();
        await proxy.stop();
        await provisioner?.stop();
        await pods.stop();
        await services.stop();
        await Promise.all(loops);
        await nodes.stop();
        await Promise.all([
          recorder.flush(SHUTDOWN_FLUSH_MS),
          proxyRecorder.flush(SHUTDOWN_FLUSH_MS),
          storageRecorder.flush(SHUTDOWN_FLUSH_MS),
        ]);
        client.close();
        await closeRuntime();
        logger.info('agent stopped', { node: nodeName });
      })()),
  };
}
