/**
 * The control process (`k8ts server`): opens the store, starts the API server and the
 * store compactor, and writes `DATA_DIR/kubeconfig.yaml` (pointing at the real port) and
 * `DATA_DIR/node-token`, then runs the controller manager and the scheduler as API clients
 * of that server, each under leader election (control/leader.ts). The local agent joins it
 * when it is built.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { RestClient, type RestClientConfig } from '../api/client/rest.js';
import type { KubeObject } from '../api/object.js';
import { caHash } from '../api/tls/certs.js';
import {
  BOOTSTRAP_TOKEN_SECRET_PREFIX,
  bootstrapTokenSecret,
  formatJoinToken,
  generateBootstrapToken,
  parseJoinToken,
  secretStrings,
} from '../api/auth/bootstrap-token.js';
import { ApiError } from './apiserver/status.js';
import { KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER } from '../api/auth/user.js';
import { componentCredential, ensureControlPKI, servingSANs, type ControlPKI } from './pki.js';
import { defaultIssuer } from './apiserver/auth/serviceaccount-token.js';
import { clusterServiceAccountKey } from './service-account-key.js';
import { clusterCA } from './cluster-ca.js';
import { ensureLocalPathStorageClass } from './local-storage.js';
import { createLogger, type LogLevel } from '../api/log.js';
import { ApiServer } from './apiserver/server.js';
import type { InProcessCredential } from './apiserver/in-process.js';
import type { Connect } from '../api/client/connect.js';
import type { Registry } from './apiserver/registry.js';
import { DEFAULT_CONTROLLERS_CONFIG, type ControllersConfig } from './controllers/context.js';
import {
  DEFAULT_VNI,
  DEFAULT_VXLAN_PORT,
  formatNetConf,
  NET_CONF_CONFIGMAP,
  NET_CONF_KEY,
  type Backend,
  type NetConf,
} from '../api/netconf.js';
import { ControllerManager } from './controllers/manager.js';
import { CONTROLLERS } from './controllers/registry.js';
import { Scheduler } from './scheduler/scheduler.js';
import { DEFAULT_LEADER_ELECTION, runWhileLeading, type LeaderElectionTimings } from './leader.js';
import { nameValidatorFor, strategyFor } from './apiserver/strategies/index.js';
import type { PodSecuritySettings } from './apiserver/admission/podsecurity/config.js';
import { DEFAULT_SERVICE_CLUSTER_IP_RANGE } from './apiserver/service-allocator/index.js';
import {
  DEFAULT_CLUSTER_DOMAIN,
  KUBE_DNS_SERVICE,
  KUBERNETES_SERVICE,
  KubernetesServiceController,
  defaultAdvertiseAddress,
  defaultClusterDNS,
  kubernetesServiceIP,
  kubernetesServiceSANs,
} from './kubernetesservice/index.js';
import { Compactor } from './storage/compactor.js';
import { openStore, type StoreConfig } from './storage/index.js';
import type { Store } from './storage/store.js';
import type { Clock } from '../api/clock.js';
import type { SqliteStore } from './storage/sqlite.js';

export type { LogLevel } from '../api/log.js';

/**
 * The connections of the controller manager's and the scheduler's clients to this process's
 * API server, besides their watches: a few, kept while idle for 30 s (the server keeps them
 * 60 s). Unbounded, a controller's burst of pod creates or deletes (500 at once) opened a
 * TLS connection per request, and closed them 4 s later.
 */
const IN_PROCESS_CONNECTIONS = { maxConnections: 16, idleTimeoutMs: 30_000 } as const;

export interface ControlConfig {
  dataDir: string;
  bindAddress: string;
  /** 0 = any free port. */
  port: number;
  datastore: 'sqlite' | 'etcd' | 'memory';
  etcdEndpoints: string[];
  logLevel: LogLevel;
  /** Seconds between store compactions (kube-apiserver's --etcd-compaction-interval); default 300. */
  compactionIntervalSeconds?: number;
  /** See ApiServerConfig.minRequestTimeoutSeconds. */
  minRequestTimeoutSeconds?: number;
  /** See ApiServerConfig.watchCacheSize. */
  watchCacheSize?: number;
  /** Settings of the controllers (kube-controller-manager's flags); defaults DEFAULT_CONTROLLERS_CONFIG. */
  controllers?: Partial<ControllersConfig>;
  /** Lease timings of the controller manager's and the scheduler's leader elections (default 15/10/2 s). */
  leaderElection?: LeaderElectionTimings;
  /** DefaultTolerationSeconds admission: seconds pods tolerate a not-ready / unreachable node (default 300). */
  defaultNotReadyTolerationSeconds?: number;
  defaultUnreachableTolerationSeconds?: number;
  /** Run without the controllers / the scheduler (k3s's flags of these names): the API server alone, e.g. to test it. */
  disableControllerManager?: boolean;
  disableScheduler?: boolean;
  /** See ApiServerConfig.serviceClusterIPRange / serviceNodePortRange. */
  serviceClusterIPRange?: string;
  serviceNodePortRange?: string;
  /**
   * The address other hosts and pods reach this API server at (`--advertise-address`): the
   * `kubernetes` Service's endpoint and a name of the serving certificate. Default
   * kubernetesservice/services.ts defaultAdvertiseAddress.
   */
  advertiseAddress?: string;
  /** The `kube-dns` Service's clusterIP (`--cluster-dns`); default the tenth address of the service range. */
  clusterDNS?: string;
  /** The cluster's DNS domain (`--cluster-domain`); default cluster.local. */
  clusterDomain?: string;
  /** Seconds between reconciles of the `kubernetes` Service's endpoints, and their lease (default 10 / 15, upstream's). */
  endpointReconciler?: { intervalSeconds: number; leaseDurationSeconds: number };
  /** Extra names and addresses of the serving certificate (`--tls-san`). */
  tlsSANs?: string[];
  /**
   * The cross-host pod network (`--flannel-backend`, k3s's flag): written to
   * `kube-system/kube-flannel-cfg` at every start, where the agents read it. Default vxlan.
   */
  flannelBackend?: Backend;
  /**
   * Serve plain HTTP without authentication or authorization (`--insecure-http`, for
   * development only). Default false: HTTPS, client certificates or tokens, Node + RBAC.
   */
  insecureHTTP?: boolean;
  /**
   * PodSecurity admission's defaults and exemptions (`--pod-security-default-level`,
   * `--pod-security-admission-config-file`); default: everything privileged, as upstream.
   */
  podSecurity?: PodSecuritySettings;
  /**
   * No `local-path` StorageClass (`--disable-local-storage`, k3s's `--disable
   * local-storage`): the control process does not create it at start (local-storage.ts).
   * Default false: it is created when missing, as the default class.
   */
  disableLocalStorage?: boolean;
  /**
   * Snapshots of the store (control/snapshot/; sqlite and etcd only): the socket
   * `DATA_DIR/snapshot.sock` that `k8ts snapshot save` asks, and unless `disabled` the
   * schedule (k3s's `--etcd-snapshot-*` flags). Defaults: every 12 h (`0 *\/12 * * *`,
   * host time), 5 kept, `DATA_DIR/snapshots`, node name the hostname.
   */
  snapshots?: {
    disabled?: boolean;
    schedule?: string;
    retention?: number;
    dir?: string;
    nodeName?: string;
    /** The time the schedule runs on and snapshots are named by (tests). Default realClock. */
    clock?: Clock;
  };
}

/** A running control process. */
export interface ControlProcess {
  /** The API server's URL, e.g. http://127.0.0.1:6443. */
  url: string;
  kubeconfigPath: string;
  /**
   * Connections to this process's API server without TLS for another component of this
   * process (`k8ts server`'s own agent), authenticated as `credential`'s certificate
   * (ApiServer.inProcessConnector); for RestClientConfig.connect.
   */
  inProcessConnector(credential?: InProcessCredential): Promise<Connect>;
  stop(): Promise<void>;
}

/**
 * Starts the control process.
 * @throws Error with a message naming the flag to fix (bad data dir, port in use, store unreachable).
 */
export async function startControl(cfg: ControlConfig): Promise<ControlProcess> {
  mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
  // Owner-only, also for a data dir that already existed: it holds the store (every
  // Secret, the bootstrap tokens), the CA key and the kubeconfig.
  chmodSync(cfg.dataDir, 0o700);
  const logger = createLogger(cfg.logLevel);
  const storeCfg: StoreConfig =
    cfg.datastore === 'sqlite'
      ? { datastore: 'sqlite', dataDir: cfg.dataDir }
      : cfg.datastore === 'etcd'
        ? { datastore: 'etcd', endpoints: cfg.etcdEndpoints }
        : { datastore: 'memory' };
  const store: Store = await openStore(storeCfg);
  const compactor = new Compactor({
    store,
    ...(cfg.compactionIntervalSeconds ? { intervalMs: cfg.compactionIntervalSeconds * 1000 } : {}),
    onError: (err) => logger.warn('compaction failed', { error: String(err) }),
  });
  const serviceRange = cfg.serviceClusterIPRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE;
  const kubernetesIP = kubernetesServiceIP(serviceRange);
  const clusterDNS = cfg.clusterDNS ?? defaultClusterDNS(serviceRange);
  const advertiseAddress = cfg.advertiseAddress ?? (await defaultAdvertiseAddress(cfg.bindAddress));
  // In-cluster clients dial https://<kubernetes clusterIP> or kubernetes.default.svc and
  // verify the certificate against those names.
  const sans = [
    ...(cfg.tlsSANs ?? []),
    advertiseAddress,
    ...kubernetesServiceSANs(kubernetesIP, cfg.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN),
  ];
  const servingNames = servingSANs(cfg.bindAddress, sans);
  // One CA for all control processes of the cluster (cluster-ca.ts), so that a client of
  // one can fail over to another.
  const pki = cfg.insecureHTTP
    ? undefined
    : await clusterCA(store, await ensureControlPKI(cfg.dataDir, servingNames), cfg.dataDir, servingNames);
  const api = new ApiServer({
    store,
    ...(pki ? { security: { ca: pki.ca, serving: pki.serving } } : {}),
    // Service account tokens, signed with DATA_DIR/tls/service-account.key; the issuer is
    // k3s's, https://kubernetes.default.svc.<cluster domain>, and the JWKS is served at the
    // advertise address.
    ...(pki
      ? {
          serviceAccountTokens: {
            // One key for all control processes of the cluster (service-account-key.ts).
            key: await clusterServiceAccountKey(store, pki.serviceAccountKey, pki.dir),
            issuer: defaultIssuer(cfg.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN),
            externalAddress: advertiseAddress,
          },
        }
      : {}),
    strategyFor,
    nameValidatorFor,
    bindAddress: cfg.bindAddress,
    port: cfg.port,
    logger,
    ...(cfg.minRequestTimeoutSeconds ? { minRequestTimeoutSeconds: cfg.minRequestTimeoutSeconds } : {}),
    ...(cfg.watchCacheSize ? { watchCacheSize: cfg.watchCacheSize } : {}),
    ...(cfg.defaultNotReadyTolerationSeconds !== undefined
      ? { defaultNotReadyTolerationSeconds: cfg.defaultNotReadyTolerationSeconds }
      : {}),
    ...(cfg.defaultUnreachableTolerationSeconds !== undefined
      ? { defaultUnreachableTolerationSeconds: cfg.defaultUnreachableTolerationSeconds }
      : {}),
    ...(cfg.serviceClusterIPRange ? { serviceClusterIPRange: cfg.serviceClusterIPRange } : {}),
    ...(cfg.serviceNodePortRange ? { serviceNodePortRange: cfg.serviceNodePortRange } : {}),
    reservedClusterIPs: {
      [kubernetesIP]: `${KUBERNETES_SERVICE.namespace}/${KUBERNETES_SERVICE.name}`,
      [clusterDNS]: `${KUBE_DNS_SERVICE.namespace}/${KUBE_DNS_SERVICE.name}`,
    },
    ...(cfg.podSecurity ? { podSecurity: cfg.podSecurity } : {}),
  });
  let address: { address: string; port: number };
  try {
    address = await api.start();
  } catch (err) {
    await store.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new Error(`port ${cfg.port} on ${cfg.bindAddress} is already in use; choose another with --port`);
    if (code === 'EADDRNOTAVAIL')
      throw new Error(`--bind-address ${cfg.bindAddress} is not an address of this host`);
    throw err;
  }
  compactor.start();
  const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  const url = `${pki ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  const kubeconfigPath = join(cfg.dataDir, 'kubeconfig.yaml');
  writeFileSync(kubeconfigPath, kubeconfig(url, pki), { mode: 0o600 });
  chmodSync(kubeconfigPath, 0o600);
  try {
    const secrets = api.registry('', 'v1', 'secrets');
    const { replaced } = await ensureNodeToken(
      cfg.dataDir,
      pki?.ca.cert,
      (secret) => secrets.create('kube-system', secret),
      (name) =>
        secrets.get('kube-system', name).catch((err: unknown) => {
          if (err instanceof ApiError && err.code === 404) return undefined;
          throw err;
        }),
    );
    if (replaced) logger.warn(`wrote a new node token to ${join(cfg.dataDir, 'node-token')}: ${replaced}`);
    await publishNetConf(api.registry('', 'v1', 'configmaps'), {
      network: cfg.controllers?.clusterCIDR ?? DEFAULT_CONTROLLERS_CONFIG.clusterCIDR,
      backend: cfg.flannelBackend ?? 'vxlan',
      vni: DEFAULT_VNI,
      port: DEFAULT_VXLAN_PORT,
    });
    if (
      !cfg.disableLocalStorage &&
      (await ensureLocalPathStorageClass(api.registry('storage.k8s.io', 'v1', 'storageclasses')))
    )
      logger.info('created the default StorageClass local-path');
  } catch (err) {
    await api.stop();
    await store.close();
    throw err;
  }
  // The controllers and the scheduler are API clients of this server (hub and spoke), each
  // acting only while this process holds its Lease, so several control processes can share
  // a store. Each has its own identity: a client certificate kept in memory, which its
  // in-process connections carry (no TLS within the process; ApiServer.inProcessConnector).
  const connectionOf = async (user: string): Promise<RestClientConfig> => {
    if (!pki) return { server: url, connect: await api.inProcessConnector() };
    const cred = await componentCredential(pki.ca, user);
    return { server: url, connect: await api.inProcessConnector(cred) };
  };
  const controllerConnection = await connectionOf(KUBE_CONTROLLER_MANAGER);
  const schedulerConnection = await connectionOf(KUBE_SCHEDULER);
  // A client per leadership term, fenced by it (RestClient's fence): once the Lease is lost,
  // what the term's work still has in flight is cut and nothing more is sent, so it cannot
  // write beside the next leader's (kube-controller-manager and kube-scheduler exit then).
  const termClient = (connection: RestClientConfig, userAgent: string, term: AbortSignal) =>
    new RestClient({ ...connection, userAgent, fence: term, ...IN_PROCESS_CONNECTIONS });
  const leading = new AbortController();
  const identity = `${hostname()}_${randomUUID()}`;
  // Every control process (not only the leader) keeps the kubernetes Service and its own
  // endpoint in it; the first reconcile is done before the process says it is up.
  const kubernetesService = new KubernetesServiceController({
    registry: (group, version, resource) => api.registry(group, version, resource),
    endpoint: { ip: advertiseAddress, port: address.port },
    kubernetesClusterIP: kubernetesIP,
    clusterDNS,
    identity,
    logger,
    ...(cfg.endpointReconciler ?? {}),
  });
  await kubernetesService.start();
  const timings = cfg.leaderElection ?? DEFAULT_LEADER_ELECTION;
  // The in-process informers keep the watch cache's copy of each object when it is the
  // version they decoded (ApiServer.sharedObject), their own without managedFields when not.
  const informerTransform = api.informerTransform;
  const runControllers = async (term: AbortSignal) => {
    const client = termClient(controllerConnection, 'k8ts-control', term);
    try {
      await new ControllerManager({
        client,
        controllers: CONTROLLERS,
        logger,
        informerTransform,
        // The root CA publisher gives every namespace the CA that signs the serving certificate.
        config: { ...cfg.controllers, ...(pki ? { rootCACert: pki.ca.cert } : {}) },
      }).run(term);
    } finally {
      client.close();
    }
  };
  const workers: Promise<void>[] = [];
  if (!cfg.disableControllerManager) {
    workers.push(
      runWhileLeading({
        connection: controllerConnection,
        leaseName: 'kube-controller-manager',
        identity,
        timings,
        logger,
        signal: leading.signal,
        work: runControllers,
      }),
    );
  }
  if (!cfg.disableScheduler) {
    workers.push(
      runWhileLeading({
        connection: schedulerConnection,
        leaseName: 'kube-scheduler',
        identity,
        timings,
        logger,
        signal: leading.signal,
        // A fresh scheduler per term: its cache and queue are rebuilt from the API, never
        // carried over from a term in which another process may have bound pods.
        work: async (signal) => {
          const client = termClient(schedulerConnection, 'k8ts-scheduler', signal);
          try {
            await new Scheduler({ client, logger, informerTransform }).run(signal);
          } finally {
            client.close();
          }
        },
      }),
    );
  }
  const snapshots = await startSnapshots(cfg, store, logger);
  logger.info('control process started', { url, datastore: cfg.datastore, dataDir: cfg.dataDir, identity });
  return {
    url,
    kubeconfigPath,
    inProcessConnector: (credential) => api.inProcessConnector(credential),
    stop: async () => {
      leading.abort();
      await Promise.all(workers);
      await kubernetesService.stop();
      await api.stop();
      await snapshots?.stop();
      await compactor.stop();
      await store.close();
    },
  };
}

/**
 * The snapshot socket and schedule of this control process (control/snapshot/), over the
 * store it opened (sqlite) or its etcd endpoints; none for the memory datastore.
 * @returns stop(): ends the schedule and the socket, and waits for a snapshot under way.
 * @throws SnapshotError Invalid for a schedule or retention the flags did not check.
 */
async function startSnapshots(
  cfg: ControlConfig,
  store: Store,
  logger: ReturnType<typeof createLogger>,
): Promise<{ stop(): Promise<void> } | undefined> {
  if (cfg.datastore === 'memory') return undefined;
  const { Snapshotter } = await import('./snapshot/snapshotter.js');
  const { SnapshotScheduler } = await import('./snapshot/schedule.js');
  const { serveSnapshots, snapshotSocketPath } = await import('./snapshot/endpoint.js');
  const settings = cfg.snapshots ?? {};
  const snapshotter = new Snapshotter({
    source:
      cfg.datastore === 'sqlite'
        ? { datastore: 'sqlite', store: store as SqliteStore }
        : { datastore: 'etcd', endpoints: cfg.etcdEndpoints },
    dataDir: cfg.dataDir,
    ...(settings.dir !== undefined ? { snapshotDir: settings.dir } : {}),
    nodeName: settings.nodeName ?? hostname().toLowerCase(),
    ...(settings.clock ? { clock: settings.clock } : {}),
  });
  const scheduler = settings.disabled
    ? undefined
    : new SnapshotScheduler({
        snapshotter,
        ...(settings.schedule !== undefined ? { schedule: settings.schedule } : {}),
        ...(settings.retention !== undefined ? { retention: settings.retention } : {}),
        ...(settings.clock ? { clock: settings.clock } : {}),
        logger,
      });
  const endpoint = await serveSnapshots({ socketPath: snapshotSocketPath(cfg.dataDir), snapshotter, logger });
  scheduler?.start();
  logger.info('snapshots', {
    dir: snapshotter.snapshotDir,
    socket: endpoint ? snapshotSocketPath(cfg.dataDir) : undefined,
    next: scheduler ? scheduler.nextTime().toISOString() : 'disabled',
  });
  return {
    stop: async () => {
      await scheduler?.stop();
      await endpoint?.close();
      await snapshotter.idle();
    },
  };
}

/**
 * Writes the cluster network setting (`kube-system/kube-flannel-cfg`, api/netconf.ts) that
 * the agents read: created when missing, replaced when this start's flags say otherwise
 * (agents follow at their next resync), untouched when it already agrees.
 * @throws ApiError from the registry (e.g. the store is unavailable).
 */
export async function publishNetConf(configmaps: Registry, conf: NetConf): Promise<void> {
  const { namespace, name } = NET_CONF_CONFIGMAP;
  const data = { [NET_CONF_KEY]: formatNetConf(conf) };
  const existing = await configmaps.get(namespace, name).catch((err: unknown) => {
    if (err instanceof ApiError && err.code === 404) return undefined;
    throw err;
  });
  const body = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: 'flannel', 'k8s-app': 'flannel' } },
    data,
  };
  if (!existing) {
    await configmaps.create(namespace, body);
    return;
  }
  const current = (existing as { data?: Record<string, string> }).data?.[NET_CONF_KEY];
  if (current === data[NET_CONF_KEY]) return;
  await configmaps.update(namespace, name, {
    ...body,
    metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
  });
}

/**
 * The admin kubeconfig for `url`: the cluster CA and the admin client certificate
 * (CN=system:admin, O=system:masters), embedded as `-data` fields as k3s writes its
 * kubeconfig. With `--insecure-http` (no PKI): no credentials, and
 * `insecure-skip-tls-verify` because @kubernetes/client-node refuses an http:// server
 * otherwise (it has no effect on plain HTTP).
 */
export function kubeconfig(url: string, pki?: Pick<ControlPKI, 'ca' | 'admin'>, user = 'admin'): string {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'k8ts',
        cluster: pki
          ? { server: url, 'certificate-authority-data': b64(pki.ca.cert) }
          : { server: url, 'insecure-skip-tls-verify': true },
      },
    ],
    users: [
      {
        name: user,
        user: pki
          ? { 'client-certificate-data': b64(pki.admin.cert), 'client-key-data': b64(pki.admin.key) }
          : {},
      },
    ],
    contexts: [{ name: 'k8ts', context: { cluster: 'k8ts', user, namespace: 'default' } }],
    'current-context': 'k8ts',
    preferences: {},
  });
}

/**
 * Creates `DATA_DIR/node-token` (mode 0600) once: a join token `K10<CA hash>::<id>.<secret>`
 * whose bootstrap token is stored first (through `createSecret`) as the Secret
 * `kube-system/bootstrap-token-<id>`. An existing file is kept while its token can join:
 * it pins the current CA and (when `getSecret` is given) its bootstrap token is still
 * stored with that secret. Otherwise — an old-format token, a new CA, a token revoked
 * with `k8ts token delete` — a new token replaces it (the revoked one stays revoked).
 * Without a CA (`--insecure-http`) the token is a bare `<id>.<secret>` that nothing checks.
 * @returns the token, and why the file's token was replaced (undefined when it was kept
 *   or there was none).
 */
export async function ensureNodeToken(
  dataDir: string,
  caCert: string | undefined,
  createSecret: (secret: KubeObject) => Promise<unknown>,
  getSecret?: (name: string) => Promise<KubeObject | undefined>,
): Promise<{ token: string; replaced?: string }> {
  const path = join(dataDir, 'node-token');
  let replaced: string | undefined;
  if (existsSync(path)) {
    const existing = readFileSync(path, 'utf8').trim();
    // A token of a data dir from before TLS, or of a CA that was deleted and made anew,
    // could never join anyone; nor could a revoked one.
    if (!caCert) return { token: existing };
    if (!existing.startsWith(formatJoinToken(caHash(caCert), '')))
      replaced = 'it does not pin the cluster CA';
    else {
      const { id, secret } = parseJoinToken(existing);
      const stored = getSecret ? await getSecret(`${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`) : undefined;
      if (!getSecret || (stored && secretStrings(stored)['token-secret'] === secret))
        return { token: existing };
      replaced = `its bootstrap token ${id} was revoked`;
    }
  }
  const { id, secret, token } = generateBootstrapToken();
  if (caCert)
    await createSecret(
      bootstrapTokenSecret(id, secret, { description: 'the default node join token (DATA_DIR/node-token)' }),
    );
  const joinToken = caCert ? formatJoinToken(caHash(caCert), token) : token;
  writeFileSync(path, `${joinToken}\n`, { mode: 0o600 });
  return { token: joinToken, ...(replaced ? { replaced } : {}) };
}
