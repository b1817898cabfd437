/**
 * The API server: HTTP in front of one generic Registry per served resource, speaking
 * Kubernetes' REST protocol closely enough that kubectl and client libraries work
 * unchanged (paths, verbs, query parameters, content types, metav1.Status errors).
 *
 * Request flow, the chain written out in handlers/index.ts: authenticate
 * (handlers/filters.ts) → resolve the resource → authorize (filters.ts) → the verb's
 * handler in handlers/, one file per verb: admission → registry (strategy: defaults,
 * validation; admission's validate phase) → store. Lists and gets may answer as `Table`
 * for kubectl; watches stream newline-delimited JSON events from the resource's watch
 * cache.
 *
 * This file keeps what is not a verb: construction, serving, upgrades, non-resource paths,
 * bootstrap and metrics, and what the strategies' write hooks are given (the writer's
 * authority for RBAC escalation checks, the other registries for afterCreate).
 *
 * Why one file of about 740 lines: it is the one place the server is put together, as
 * kube-apiserver's GenericAPIServer with its installer; every verb is in handlers/, and
 * what it wires in (service account tokens, the OIDC documents, the storage codecs) lives in
 * modules of its own.
 */
import { fieldIndexFunc } from '../../api/client/indexer.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import client from 'prom-client';
import { logsAt, type Logger } from '../../api/log.js';
import { parseFieldSelector } from '../../api/meta/fields.js';
import type { KubeObject } from '../../api/object.js';
import type { KeyValue, Store } from '../storage/store.js';
import { Registry } from './registry.js';
import { ServiceAllocator } from './service-allocator/index.js';
import { requestURL, resolveResource, type ResourceRequest } from './request.js';
import {
  findResource,
  groupVersion,
  RESOURCES,
  storagePrefix,
  type ResourceInfo,
  type ResourceLookup,
} from './resources.js';
import { CustomResources, storageResourceInfo } from './apiextensions/custom-resources.js';
import { CRDController } from './apiextensions/controller.js';
import { watchCustomResourceDefinitions } from './apiextensions/serving.js';
import { ApiError, badRequest, requestHeaderFieldsTooLarge, toApiError } from './status.js';
import type { RelatedWrites, Strategy, WriteCheck } from './strategy.js';
import { WatchCache } from './watchcache/cache.js';
import { stripManagedFields } from '../../api/client/transform.js';
import { writeRawStatus } from './node-proxy.js';
import { ResourceMetricsApi } from './resource-metrics.js';
import { TunnelServer } from './tunnel.js';
import { warmOpenAPI } from './openapi/index.js';
import { loadFieldSchemas, ResponseWarnings } from './fieldvalidation/index.js';
import type { KeyPair } from '../../api/tls/certs.js';
import {
  authenticateToken,
  createAuthenticator,
  type Authenticator,
  type AuthenticatorOptions,
} from './auth/authn.js';
import { defaultIssuer, ServiceAccountTokens } from './auth/serviceaccount-token.js';
import { tokenReview } from './auth/token-review.js';
import { createToken } from './token-request.js';
import { evictPod } from './eviction.js';
import { privilegedGroupAuthorizer, unionAuthorizer, type Authorizer } from './auth/authz.js';
import { nodeAuthorizer } from './auth/node.js';
import { AdmissionChain, admissionPlugins, RequestAdmissionRecorder } from './admission/index.js';
import { SYSTEM_NAMESPACES } from './admission/namespacelifecycle.js';
import type { PodSecuritySettings } from './admission/podsecurity/config.js';
import { BOOTSTRAP_CLUSTER_ROLE_BINDINGS, BOOTSTRAP_CLUSTER_ROLES } from './auth/policy.js';
import { rbacAuthorizer, rulesFor, type RbacSource } from './auth/rbac.js';
import {
  selfSubjectAccessReview,
  selfSubjectReview,
  selfSubjectRulesReview,
  subjectAccessReview,
} from './auth/reviews.js';
import { nodeNameOf, type UserInfo } from '../../api/auth/user.js';
import {
  authenticateRequest,
  authorizeRequest,
  checkAccess,
  INSECURE_USER,
  type FilterConfig,
} from './handlers/filters.js';
import { newRequestScope, serveResource, type ServerServices } from './handlers/index.js';
import { serveNonResource } from './handlers/nonresource.js';
import { handleUpgrade } from './handlers/upgrade.js';
import { RequestMetrics } from './request-metrics.js';
import { writeStatus } from './handlers/response.js';
import {
  credentialIdentity,
  InProcessListener,
  refusedConnection,
  type InProcessCredential,
} from './in-process.js';
import type { Connect } from '../../api/client/connect.js';

export { writeJson, writeStatus } from './handlers/response.js';

/** What ApiServerConfig passes to `strategyFor` (the kube-apiserver flags strategies depend on). */
/** How long the server keeps an idle keep-alive connection (ms); more than a client's pool keeps one. */
export const SERVER_KEEP_ALIVE_TIMEOUT_MS = 60_000;

export type StrategySettings = Pick<
  ApiServerConfig,
  'defaultNotReadyTolerationSeconds' | 'defaultUnreachableTolerationSeconds'
>;

export interface ApiServerConfig {
  store: Store;
  /** The strategy of each resource (strategies/index.ts `strategyFor`), given the settings below that strategies use. */
  strategyFor: (r: ResourceInfo, options?: StrategySettings) => Strategy;
  /** The object-name rule of each resource (strategies/index.ts `nameValidatorFor`). */
  nameValidatorFor?: (r: ResourceInfo) => (name: string, prefix: boolean) => string[];
  /** Address to listen on; default 127.0.0.1. */
  bindAddress?: string;
  /** Port; 0 = any free port (the chosen one is in `start()`'s result). */
  port?: number;
  logger: Logger;
  now?: () => Date;
  /**
   * Seconds; a watch without `timeoutSeconds` ends after a random time between this and
   * twice this (kube-apiserver's `--min-request-timeout`, default 1800), so clients
   * reconnect spread out.
   */
  minRequestTimeoutSeconds?: number;
  /** A fixed watch-cache history size per resource (events); default adaptive 100–102400. */
  watchCacheSize?: number;
  /** --default-not-ready-toleration-seconds (DefaultTolerationSeconds admission of Pods); default 300. */
  defaultNotReadyTolerationSeconds?: number;
  /** --default-unreachable-toleration-seconds (DefaultTolerationSeconds admission of Pods); default 300. */
  defaultUnreachableTolerationSeconds?: number;
  /** --service-cluster-ip-range: the IPv4 CIDR Services' clusterIPs come from; default 10.43.0.0/16. */
  serviceClusterIPRange?: string;
  /** --service-node-port-range: `<first>-<last>`; default 30000-32767. */
  serviceNodePortRange?: string;
  /** See ServiceAllocatorConfig.reservedClusterIPs (ip → `<namespace>/<name>`). */
  reservedClusterIPs?: Readonly<Record<string, string>>;
  /**
   * Milliseconds between runs of the ClusterIP / NodePort repair loop
   * (ServiceAllocator.repair; kube-apiserver runs it every 3 minutes); default 180 000, 0 = off.
   */
  serviceAllocationRepairIntervalMs?: number;
  /** Milliseconds an agent has to dial back a tunnel stream; default 10 000. */
  tunnelDialTimeoutMs?: number;
  /**
   * Secure serving: HTTPS with `serving` (client certificates requested and verified
   * against `ca`), authentication (auth/authn.ts), authorization (system:masters, Node,
   * RBAC), the bootstrap RBAC policy, `/cacerts` and the node credential exchange signed by
   * `ca`. Without it (in-process tests, `k8ts server --insecure-http`): plain HTTP and every
   * request is served as an admin, as kube-apiserver's old insecure port did.
   */
  security?: { ca: KeyPair; serving: KeyPair };
  /**
   * Service account tokens (the TokenRequest API, their authentication, TokenReview, the
   * OIDC discovery documents): `key` the RSA private key (PEM) that signs them, `issuer`
   * (--service-account-issuer; default `https://kubernetes.default.svc.cluster.local`),
   * `audiences` (--api-audiences; default [issuer]), `jwksURI` (--service-account-jwks-uri;
   * default `https://<externalAddress, else the bound address>:<port>/openid/v1/jwks`, as
   * kube-apiserver's external host). Without it, `serviceaccounts/token` answers 404 and no
   * such token authenticates.
   */
  serviceAccountTokens?: {
    key: string;
    issuer?: string;
    audiences?: string[];
    jwksURI?: string;
    externalAddress?: string;
  };
  /**
   * PodSecurity admission's defaults (the level of namespaces without
   * pod-security.kubernetes.io labels) and exemptions (admission/podsecurity/config.ts);
   * default: everything privileged, nothing exempt, as upstream.
   */
  podSecurity?: PodSecuritySettings;
}

/** The pods' watch-cache index by node ('' for unbound pods), as the cacher indexes pods by `spec.nodeName`. */
const POD_NODE_NAME_INDEX = 'spec.nodeName';
const POD_CACHE_INDEXERS = { [POD_NODE_NAME_INDEX]: fieldIndexFunc(POD_NODE_NAME_INDEX) };

export class ApiServer {
  private readonly cfg: ApiServerConfig;
  private readonly registries = new Map<ResourceInfo, Registry>();
  /** What a strategy's afterCreate may write (the server's own registries). */
  private readonly related: RelatedWrites;
  /** One watch cache per resource, started on its first watch. */
  private readonly watchCaches = new Map<ResourceInfo, { cache: WatchCache; started: Promise<void> }>();
  private readonly metrics = new client.Registry();
  private readonly requestMetrics: RequestMetrics;
  private server: Server | undefined;
  /** Where this process's own clients connect without TLS (inProcessConnector); set while serving. */
  private inProcess: InProcessListener | undefined;
  private readonly serviceAllocator: ServiceAllocator;
  /** The agents' tunnels, through which pods/log, exec, attach, portforward and metrics reach kubelets. */
  private readonly tunnels: TunnelServer;
  private readonly resourceMetrics: ResourceMetricsApi;
  /**
   * Who a request is from (undefined: anonymous); with `security` unset, everyone is an
   * admin. Usable by any handler of this server's requests (a websocket upgrade too).
   */
  readonly authenticate: Authenticator;
  /** Service account tokens, when configured (ApiServerConfig.serviceAccountTokens). */
  readonly serviceAccountTokens: ServiceAccountTokens | undefined;
  /** What bearer tokens are checked with (the request authenticator and TokenReview). */
  private readonly tokenAuthOptions: AuthenticatorOptions;
  /** The JWKS URI the OIDC discovery document names (set at start unless configured). */
  private jwksURI: string | undefined;
  /** The authorizer chain: system:masters, Node, RBAC. */
  readonly authorizer: Authorizer;
  /** The RBAC objects, as the RBAC authorizer and SelfSubjectRulesReview read them. */
  private readonly rbacSource: RbacSource;
  /** The admission plugins (admission/index.ts), run after authorization. */
  private readonly admission: AdmissionChain;
  /** What authentication and authorization (handlers/filters.ts) use. */
  private readonly filters: FilterConfig;
  /** What the verb handlers (handlers/) use of this server. */
  private readonly services: ServerServices;
  /** The resources CRDs define, served now (apiextensions/custom-resources.ts). */
  private readonly customResources: CustomResources;
  /** The naming, establishing and finalizer controllers of CRDs (apiextensions/controller.ts). */
  private readonly crdController: CRDController;
  /** Ends the CRD watch that feeds customResources and crdController. */
  private stopCRDWatch: (() => void) | undefined;
  /** Built-in resources first, then custom ones: what request routing resolves with. */
  readonly lookup: ResourceLookup = (group, version, resource) =>
    findResource(group, version, resource) ?? this.customResources.find(group, version, resource);

  constructor(cfg: ApiServerConfig) {
    if (!cfg.store) throw new Error('ApiServer: store is required');
    if (!cfg.logger) throw new Error('ApiServer: logger is required');
    this.cfg = cfg;
    const serviceAllocator = (this.serviceAllocator = new ServiceAllocator({
      store: cfg.store,
      logger: cfg.logger,
      ...(cfg.serviceClusterIPRange ? { serviceClusterIPRange: cfg.serviceClusterIPRange } : {}),
      ...(cfg.serviceNodePortRange ? { serviceNodePortRange: cfg.serviceNodePortRange } : {}),
      ...(cfg.reservedClusterIPs ? { reservedClusterIPs: cfg.reservedClusterIPs } : {}),
    }));
    // What a strategy's afterCreate writes (a Namespace's default ServiceAccount), through
    // the registries, as the API server's own writes.
    const related: RelatedWrites = {
      create: (group, version, resource, namespace, body) =>
        this.registry(group, version, resource).create(namespace, body),
    };
    this.related = related;
    for (const r of RESOURCES) {
      this.registries.set(
        r,
        this.newRegistry(r, r.group === '' && r.resource === 'services' ? serviceAllocator : undefined),
      );
    }
    this.customResources = new CustomResources({
      onChange: (added, removed) => this.servedCustomResourcesChanged(added, removed),
    });
    this.crdController = new CRDController({
      crds: this.registry('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'),
      storageRegistry: (crd) => {
        const info = storageResourceInfo(crd);
        return info ? this.newRegistry(info, undefined) : undefined;
      },
      logger: cfg.logger,
      ...(cfg.now ? { now: cfg.now } : {}),
    });
    this.requestMetrics = new RequestMetrics(this.metrics);
    client.collectDefaultMetrics({ register: this.metrics });
    const getOrUndefined = async (r: Registry, ns: string | undefined, name: string) => {
      try {
        return await r.get(ns, name);
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) return undefined;
        throw err;
      }
    };
    const secrets = this.registry('', 'v1', 'secrets');
    const pods = this.registry('', 'v1', 'pods');
    const rbac = (resource: string) => this.registry('rbac.authorization.k8s.io', 'v1', resource);
    this.rbacSource = {
      clusterRoleBindings: async () => (await rbac('clusterrolebindings').list(undefined, {})).items,
      roleBindings: async (ns) => (await rbac('rolebindings').list(ns, {})).items,
      clusterRole: (name) => getOrUndefined(rbac('clusterroles'), undefined, name),
      role: (ns, name) => getOrUndefined(rbac('roles'), ns, name),
    };
    // The authorizer's first look is the watch caches, as upstream's RBAC authorizer reads
    // informers: a list of every ClusterRoleBinding from the store decoded them all on each
    // request that no earlier authorizer allowed. The store while a cache is not ready.
    const RBAC_GROUP = 'rbac.authorization.k8s.io';
    const cachedRbac: RbacSource = {
      clusterRoleBindings: async () =>
        (await this.listFromCache(RBAC_GROUP, 'clusterrolebindings', undefined)) ??
        this.rbacSource.clusterRoleBindings(),
      roleBindings: async (ns) =>
        (await this.listFromCache(RBAC_GROUP, 'rolebindings', ns)) ?? this.rbacSource.roleBindings(ns),
      clusterRole: (name) => this.objectFromCache('clusterroles', undefined, name, RBAC_GROUP),
      role: (ns, name) => this.objectFromCache('roles', ns, name, RBAC_GROUP),
    };
    const sat = cfg.serviceAccountTokens;
    // A service account token is checked against the current objects it is bound to,
    // read from the watch caches as upstream reads its informers.
    this.serviceAccountTokens = sat
      ? new ServiceAccountTokens({
          key: sat.key,
          issuer: sat.issuer ?? defaultIssuer(),
          ...(sat.audiences ? { audiences: sat.audiences } : {}),
          getter: {
            serviceAccount: (ns, name) => this.objectFromCache('serviceaccounts', ns, name),
            pod: (ns, name) => this.objectFromCache('pods', ns, name),
            secret: (ns, name) => this.objectFromCache('secrets', ns, name),
            node: (name) => this.objectFromCache('nodes', undefined, name),
          },
          ...(cfg.now ? { now: cfg.now } : {}),
        })
      : undefined;
    this.jwksURI = sat?.jwksURI;
    this.tokenAuthOptions = {
      getSecret: (name) => getOrUndefined(secrets, 'kube-system', name),
      ...(this.serviceAccountTokens ? { serviceAccountTokens: this.serviceAccountTokens } : {}),
      ...(cfg.now ? { now: cfg.now } : {}),
    };
    this.authenticate = cfg.security
      ? createAuthenticator(this.tokenAuthOptions)
      : () => Promise.resolve(INSECURE_USER);
    this.authorizer = unionAuthorizer(
      privilegedGroupAuthorizer,
      nodeAuthorizer({
        getPod: (ns, name) => getOrUndefined(pods, ns, name),
        // From the pods' watch cache, as upstream's graph is fed by informers (a pod the
        // kubelet learnt of through this server's watch is in it; a moment's lag is a
        // refusal the kubelet retries): a list from the store decodes every pod of the
        // namespace on each check, a TokenRequest and a kube-root-ca.crt read per pod
        // started, which took the server down at 5,000 pods in bench:scale. The store
        // while the cache is not ready.
        podsOnNode: async (node, ns) => {
          const cache = await this.watchCache(findResource('', 'v1', 'pods')!);
          if (cache.ready) {
            // The node's pods from the cache's spec.nodeName index: a filtered list scanned
            // (and, while pods come and go, sorted) every pod of the cache on each check,
            // 5 % of the control process at 200 nodes and 2,000 pods in bench:scale.
            return cache
              .byIndex(POD_NODE_NAME_INDEX, node)
              .filter((p) => (p.metadata?.namespace ?? '') === ns);
          }
          return (await pods.list(ns, { fieldSelector: parseFieldSelector(`spec.nodeName=${node}`) })).items;
        },
        // A node deletes only its own local-path volumes (auth/node.ts).
        getPersistentVolume: (name) =>
          getOrUndefined(this.registry('', 'v1', 'persistentvolumes'), undefined, name),
      }),
      rbacAuthorizer(cachedRbac, this.rbacSource),
    );
    this.filters = {
      secure: cfg.security !== undefined,
      authenticate: this.authenticate,
      authorizer: this.authorizer,
    };
    this.admission = new AdmissionChain(
      admissionPlugins({
        getNamespace: (name) => this.namespaceFromCache(name),
        listPods: async (namespace) => (await pods.list(namespace, {})).items,
        // NodeRestriction's check of a node's TokenRequest.
        getPod: (namespace, name) => getOrUndefined(pods, namespace, name),
        getServiceAccount: (namespace, name) =>
          getOrUndefined(this.registry('', 'v1', 'serviceaccounts'), namespace, name),
        mountServiceAccountToken: cfg.serviceAccountTokens !== undefined,
        ...(cfg.podSecurity ? { podSecurity: cfg.podSecurity } : {}),
        // From the store, not a cache: a claim created just after its class finds it.
        listStorageClasses: async () =>
          (await this.registry('storage.k8s.io', 'v1', 'storageclasses').list(undefined, {})).items,
        getStorageClass: (name) =>
          getOrUndefined(this.registry('storage.k8s.io', 'v1', 'storageclasses'), undefined, name),
      }),
    );
    this.tunnels = new TunnelServer({
      authenticate: (req, node) => this.authenticateTunnel(req, node),
      logger: cfg.logger,
      ...(cfg.tunnelDialTimeoutMs !== undefined ? { dialTimeoutMs: cfg.tunnelDialTimeoutMs } : {}),
    });
    this.resourceMetrics = new ResourceMetricsApi({
      nodes: this.registry('', 'v1', 'nodes'),
      pods: this.registry('', 'v1', 'pods'),
      tunnels: this.tunnels,
      ...(cfg.now ? { now: cfg.now } : {}),
    });
    this.services = {
      admission: this.admission,
      tunnels: this.tunnels,
      now: cfg.now,
      minRequestTimeoutSeconds: cfg.minRequestTimeoutSeconds ?? 1800,
      watchCache: (r) => this.watchCache(r),
      escalationCheck: (rr, user, source) => this.escalationCheck(rr, user, source),
      review: (r, body, user) => this.review(r, body, user),
      tokenRequest: (ns, name, body) => this.tokenRequest(ns, name, body),
      evict: (ns, name, body, dryRun) =>
        evictPod(
          {
            pods,
            podDisruptionBudgets: this.registry('policy', 'v1', 'poddisruptionbudgets'),
            now: () => pods.now(),
          },
          ns,
          name,
          body,
          dryRun,
        ),
    };
  }

  /**
   * Who may open the tunnel of node `node` and dial its streams: that node's own
   * credential only — the user `system:node:<node>` in group `system:nodes`, as the Node
   * authorizer identifies kubelets — so no one else can receive the API server's logs,
   * exec and port-forward streams for that node. Without `security` (--insecure-http,
   * in-process tests) every request is an admin and any agent may open any tunnel.
   */
  async authenticateTunnel(req: IncomingMessage, node: string): Promise<boolean> {
    if (!node) return false;
    if (!this.cfg.security) return true;
    const user = await this.authenticate(req);
    return user !== undefined && nodeNameOf(user) === node;
  }

  /**
   * Connections to this server for this process's own components (the controller manager,
   * the scheduler, their leader elections, `k8ts server`'s agent), without TLS
   * (in-process.ts): RestClientConfig.connect and configuredFetch's take the result. Each
   * connection is the user of `credential`, a client certificate checked against the
   * client CA as the TLS handshake checks one (none for a certificate the CA did not sign
   * or outside its validity when the connection is made), and its requests go through the
   * same authentication, authorization and admission as over TLS; a bearer token they
   * carry is read as over TLS. Without `security` every request is an admin, as on the
   * listener. Before start() and after stop(), a connection fails with ECONNREFUSED.
   * @throws TypeError when `credential`'s key is not its certificate's.
   */
  async inProcessConnector(credential?: InProcessCredential): Promise<Connect> {
    const sec = this.cfg.security;
    const identity = sec && credential ? await credentialIdentity(credential, sec.ca.cert) : undefined;
    const now = this.cfg.now ?? (() => new Date());
    return () => {
      const t = now().getTime();
      const valid = identity && t >= identity.notBeforeMs && t <= identity.user.notAfterMs;
      if (this.inProcess) return this.inProcess.connect(valid ? identity.user : undefined);
      return refusedConnection();
    };
  }

  /** Names of the nodes whose agents have their tunnel open now. */
  tunnelNodes(): string[] {
    return this.tunnels.connectedNodes();
  }

  /** A Registry of `r` with the strategy the config gives it. */
  private newRegistry(r: ResourceInfo, hooks: ServiceAllocator | undefined): Registry {
    const cfg = this.cfg;
    return new Registry({
      store: cfg.store,
      resource: r,
      strategy: cfg.strategyFor(r, {
        ...(cfg.defaultNotReadyTolerationSeconds !== undefined
          ? { defaultNotReadyTolerationSeconds: cfg.defaultNotReadyTolerationSeconds }
          : {}),
        ...(cfg.defaultUnreachableTolerationSeconds !== undefined
          ? { defaultUnreachableTolerationSeconds: cfg.defaultUnreachableTolerationSeconds }
          : {}),
      }),
      ...(cfg.nameValidatorFor ? { validateName: cfg.nameValidatorFor(r) } : {}),
      ...(cfg.now ? { now: cfg.now } : {}),
      ...(hooks ? { hooks } : {}),
      related: this.related,
    });
  }

  /**
   * What the CRDs serve changed: the dropped resources' registries and watch caches go (their
   * watchers end, and clients watch again), the new ones' are made, each cache started at
   * once for the reason start() gives.
   */
  private servedCustomResourcesChanged(
    added: readonly ResourceInfo[],
    removed: readonly ResourceInfo[],
  ): void {
    for (const r of removed) {
      this.registries.delete(r);
      const entry = this.watchCaches.get(r);
      if (entry) {
        entry.cache.stop();
        this.watchCaches.delete(r);
      }
    }
    for (const r of added) {
      this.registries.set(r, this.newRegistry(r, undefined));
      void this.watchCache(r).catch((err: unknown) =>
        this.cfg.logger.warn('watch cache', { resource: r.resource, error: String(err) }),
      );
    }
  }

  /** Custom resources served now, and the generation of that set (discovery and OpenAPI cache by it). */
  servedCustomResources(): { resources: readonly ResourceInfo[]; generation: number } {
    return { resources: this.customResources.served(), generation: this.customResources.generation };
  }

  /**
   * The watch cache's copy of `obj` (an object of `ref` that a client of this process
   * decoded from this server's answer), when the cache holds that very version: the same
   * key, resourceVersion, uid, apiVersion and kind. Undefined otherwise (no cache of that
   * resource yet, a newer or older version, another server's object). The copy is shared
   * and deeply frozen: a write to it throws.
   *
   * Why: the controller manager and the scheduler of this process are API clients with
   * informers of their own, and each kept its own decoded copy of every pod and node
   * beside the cache's (at 2,000 pods some 9 KB per pod each). Their informers
   * keep this one instead (informer transform; control/main.ts). They still list and watch
   * over HTTP like any client (on in-process connections, inProcessConnector); only the
   * memory is shared.
   */
  sharedObject(
    ref: { group: string; version: string; resource: string },
    obj: KubeObject,
  ): KubeObject | undefined {
    const m = obj.metadata;
    if (!m?.name || !m.resourceVersion) return undefined;
    const info = this.lookup(ref.group, ref.version, ref.resource);
    const cache = info && this.watchCaches.get(info)?.cache;
    const cached = cache?.currentAt(
      m.namespace ? { namespace: m.namespace, name: m.name } : { name: m.name },
      m.resourceVersion,
    );
    if (
      !cached ||
      cached.metadata?.uid !== m.uid ||
      cached.apiVersion !== obj.apiVersion ||
      cached.kind !== obj.kind
    )
      return undefined;
    return cached;
  }

  /**
   * The informer transform for this process's own clients (the controller manager, the
   * scheduler): the cache's copy (sharedObject), else the client's own without
   * managedFields (stripManagedFields).
   */
  readonly informerTransform = <T extends KubeObject>(
    obj: T,
    ref: { group: string; version: string; resource: string },
  ): T => (this.sharedObject(ref, obj) as T | undefined) ?? stripManagedFields(obj);

  /** The registry of a resource (for bootstrapping and tests). */
  registry(group: string, version: string, resource: string): Registry {
    const info = this.lookup(group, version, resource);
    if (!info) throw new Error(`no resource ${group}/${version}/${resource}`);
    return this.registries.get(info)!;
  }

  /**
   * Creates the system namespaces (and their default ServiceAccounts) when missing, then
   * listens. Resolves with the bound address.
   */
  async start(): Promise<{ address: string; port: number }> {
    await this.bootstrap();
    // Built once up front (about 0.3 s) so the first kubectl does not wait for it.
    await warmOpenAPI();
    await loadFieldSchemas();
    // Every watch cache starts now, as kube-apiserver's cachers do: a cache started lazily by
    // the first watch would begin at a revision newer than the list the watcher's client just
    // made, and answer that client's watch with 410 (a relist and a second of backoff).
    await Promise.all(
      [...this.registries.keys()].filter((r) => r.verbs.includes('watch')).map((r) => this.watchCache(r)),
    );
    // The CRDs stored so far are served before the first request; later ones as they come.
    const crds = await this.watchCache(
      findResource('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!,
    );
    this.stopCRDWatch = watchCustomResourceDefinitions(crds, {
      onCRD: (crd, deleted) => {
        this.customResources.apply(crd, deleted);
        this.crdController.enqueue(crd.metadata?.name ?? '');
      },
      onRelist: (names) => this.customResources.retainOnly(names),
    });
    this.crdController.start();
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res);
    const sec = this.cfg.security;
    // Client certificates are asked for, not required: a request without one may still
    // carry a bearer token, or be anonymous (401 unless public).
    const server: Server = sec
      ? createHttpsServer(
          {
            cert: sec.serving.cert,
            key: sec.serving.key,
            ca: sec.ca.cert,
            requestCert: true,
            rejectUnauthorized: false,
            maxHeaderSize: MAX_HEADER_BYTES,
          },
          handler,
        )
      : createServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler);
    server.on('clientError', answerClientError);
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      void handleUpgrade(
        {
          filters: this.filters,
          tunnels: this.tunnels,
          pods: this.registry('', 'v1', 'pods'),
          logger: this.cfg.logger,
        },
        req,
        socket,
        head,
      );
    server.on('upgrade', onUpgrade);
    this.server = server;
    this.inProcess = new InProcessListener({
      handler,
      onUpgrade,
      onClientError: answerClientError,
      maxHeaderSize: MAX_HEADER_BYTES,
      keepAliveTimeoutMs: SERVER_KEEP_ALIVE_TIMEOUT_MS,
    });
    // Idle keep-alive connections live longer here than in our clients' pools
    // (api/client/rest.ts closes its idle sockets first), so a client never sends a request
    // on a socket the server is closing at that instant ("socket hang up"). Node's 5 s
    // default made that race likely for any client idle for about 5 s.
    server.keepAliveTimeout = SERVER_KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = SERVER_KEEP_ALIVE_TIMEOUT_MS + 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.cfg.port ?? 0, this.cfg.bindAddress ?? '127.0.0.1', () => resolve());
    });
    this.serviceAllocator.startRepair(this.cfg.serviceAllocationRepairIntervalMs ?? 180_000);
    const addr = server.address() as AddressInfo;
    if (this.serviceAccountTokens && this.jwksURI === undefined) {
      const bound = addr.address === '0.0.0.0' || addr.address === '::' ? '127.0.0.1' : addr.address;
      const host = this.cfg.serviceAccountTokens?.externalAddress ?? bound;
      this.jwksURI = `https://${host.includes(':') ? `[${host}]` : host}:${addr.port}/openid/v1/jwks`;
    }
    return { address: addr.address, port: addr.port };
  }

  /** Stops listening and ends open connections (watches included). */
  async stop(): Promise<void> {
    await this.serviceAllocator.stopRepair();
    this.stopCRDWatch?.();
    this.stopCRDWatch = undefined;
    await this.crdController.stop();
    for (const { cache } of this.watchCaches.values()) cache.stop();
    this.watchCaches.clear();
    this.tunnels.close();
    this.inProcess?.close();
    this.inProcess = undefined;
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async bootstrap(): Promise<void> {
    const namespaces = this.registry('', 'v1', 'namespaces');
    for (const name of SYSTEM_NAMESPACES) {
      try {
        await namespaces.get(undefined, name);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
        await namespaces.create(undefined, { metadata: { name } });
      }
    }
    // The bootstrap RBAC policy: missing objects are created, existing ones left alone.
    for (const [resource, objects] of [
      ['clusterroles', BOOTSTRAP_CLUSTER_ROLES],
      ['clusterrolebindings', BOOTSTRAP_CLUSTER_ROLE_BINDINGS],
    ] as const) {
      const registry = this.registry('rbac.authorization.k8s.io', 'v1', resource);
      for (const obj of objects) {
        try {
          await registry.create(undefined, structuredClone(obj));
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 409)) throw err;
        }
      }
    }
  }

  /**
   * Escalation prevention of a write (the resource's Strategy.checkEscalation: Roles,
   * ClusterRoles and their bindings, auth/escalation.ts), with what the strategy may ask
   * about the writer: the authorizer's answer, their RBAC rules, the roles they bind.
   * `source` is the object whose roleRef a binding write grants: the body of a create or
   * update, the stored object for a patch (roleRef cannot change).
   * @returns the check of the object about to be written (and the stored one, for an
   *   update), which throws 403 Forbidden naming the rules the user does not hold;
   *   undefined when there is nothing to check (no security, a subresource, a kind without
   *   the hook, or the user may `escalate` / `bind`).
   * @throws ApiError 404 when a binding's role does not exist, as Kubernetes' rule resolver.
   */
  private async escalationCheck(
    rr: ResourceRequest,
    user: UserInfo,
    source: KubeObject | undefined,
  ): Promise<WriteCheck | undefined> {
    if (!this.cfg.security || rr.subresource !== undefined) return undefined;
    const group = rr.resource.group;
    const namespace = rr.resource.namespaced ? rr.namespace : undefined;
    return this.registries.get(rr.resource)!.checkEscalation(
      {
        user,
        group,
        resource: rr.resource.resource,
        namespace,
        name: rr.name,
        may: async (verb, resource, name) =>
          (
            await this.authorizer.authorize({
              user,
              verb,
              resourceRequest: true,
              group,
              resource,
              ...(namespace !== undefined ? { namespace } : {}),
              name,
            })
          ).decision === 'allow',
        rules: () => rulesFor(this.rbacSource, user, namespace),
        role: async (kind, name) =>
          kind === 'Role'
            ? namespace !== undefined
              ? await this.rbacSource.role(namespace, name)
              : undefined
            : await this.rbacSource.clusterRole(name),
      },
      source,
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    let url = UNPARSED_URL;
    let verb = (req.method ?? 'GET').toLowerCase();
    let resource = '';
    // One warning recorder per request, as kube-apiserver's: field validation, the kind's
    // strategy and admission all write through it (handlers/index.ts scope.warn).
    const warnings = new ResponseWarnings(res);
    const admission = new RequestAdmissionRecorder((message) => warnings.add(message));
    try {
      url = requestURL(req);
      // 1. Authenticate. Who is asking comes first: an anonymous request learns nothing,
      // not even a 404.
      const user = await authenticateRequest(this.filters, req, url);
      const rr = ResourceMetricsApi.handles(url.pathname)
        ? undefined
        : resolveResource(req.method ?? 'GET', url.pathname, url.searchParams, this.lookup);
      if (ResourceMetricsApi.handles(url.pathname)) {
        resource = 'metrics.k8s.io';
        const info = ResourceMetricsApi.requestInfo(url);
        if (info) {
          await checkAccess(this.filters, {
            user,
            verb: info.verb,
            resourceRequest: true,
            group: 'metrics.k8s.io',
            version: 'v1beta1',
            resource: info.resource,
            ...(info.namespace !== undefined ? { namespace: info.namespace } : {}),
            ...(info.name !== undefined ? { name: info.name } : {}),
          });
        }
        await this.resourceMetrics.serve(req, res, url);
      } else if (rr) {
        verb = rr.verb;
        resource = rr.subresource ? `${rr.resource.resource}/${rr.subresource}` : rr.resource.resource;
        // 2. Authorize; then 3. admission and 4. the registry, in the verb's handler.
        await authorizeRequest(this.filters, req, url, rr, user);
        await serveResource(
          newRequestScope({
            server: this.services,
            rr,
            registry: this.registries.get(rr.resource)!,
            req,
            res,
            url,
            user,
            recorder: admission,
          }),
        );
      } else {
        await authorizeRequest(this.filters, req, url, undefined, user);
        await serveNonResource(
          {
            security: this.cfg.security,
            nodes: this.registry('', 'v1', 'nodes'),
            metrics: this.metrics,
            customResources: this.customResources.served(),
            ...(this.serviceAccountTokens
              ? { serviceAccountIssuer: { tokens: this.serviceAccountTokens, jwksURI: this.jwksURI ?? '' } }
              : {}),
          },
          req,
          res,
          url,
        );
      }
    } catch (err) {
      const apiErr = toApiError(err);
      if (apiErr.code >= 500)
        this.cfg.logger.error('request failed', { path: url.pathname, error: String(err) });
      // A body refused half-way (413) is still arriving: the connection ends after the answer.
      if (apiErr.code === 413 && !res.headersSent) res.setHeader('Connection', 'close');
      if (!res.headersSent) writeStatus(res, apiErr.toStatus(), req.headers.accept);
      else res.end();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const metrics = this.requestMetrics.of(verb, resource, res.statusCode);
      metrics.count.inc();
      // A watch's duration is the stream's life, not a latency.
      if (verb !== 'watch') metrics.latency.observe(seconds);
      // One JSON line per request; never the body or the Authorization header. (Building a
      // line a silent logger drops costs as much as a small request's own work.)
      const logger = this.cfg.logger;
      if (logsAt(logger, 'info')) {
        logger.info('request', {
          verb,
          path: url.pathname,
          code: res.statusCode,
          latencyMs: Math.round(seconds * 1e6) / 1e3,
          // What kube-apiserver's audit event carries as annotations (PodSecurity's).
          ...(admission.annotations.size > 0
            ? { auditAnnotations: Object.fromEntries(admission.annotations) }
            : {}),
        });
      }
    }
  }

  /** Answers a SelfSubjectAccessReview, SubjectAccessReview or SelfSubjectReview. */
  private async review(r: ResourceInfo, body: KubeObject, user: UserInfo): Promise<KubeObject> {
    const typed = { ...body, apiVersion: groupVersion(r), kind: r.kind };
    if (r.resource === 'selfsubjectreviews') return selfSubjectReview(typed, user);
    if (r.resource === 'tokenreviews')
      return tokenReview(typed, (token, audiences) =>
        authenticateToken(this.tokenAuthOptions, token, audiences),
      );
    if (r.resource === 'subjectaccessreviews') return subjectAccessReview(typed, this.authorizer);
    if (r.resource === 'selfsubjectrulesreviews')
      return selfSubjectRulesReview(typed, user, (u, ns) => rulesFor(this.rbacSource, u, ns));
    return selfSubjectAccessReview(typed, user, this.authorizer);
  }

  /**
   * Answers a TokenRequest (token-request.ts) for ServiceAccount `namespace`/`name`.
   * @throws ApiError 404 when the server issues no service account tokens; as createToken.
   */
  private async tokenRequest(namespace: string, name: string, body: KubeObject): Promise<KubeObject> {
    const tokens = this.serviceAccountTokens;
    if (!tokens) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const core = (resource: string) => this.registry('', 'v1', resource);
    return createToken(
      {
        tokens,
        getServiceAccount: (ns, n) => core('serviceaccounts').get(ns, n),
        getPod: (ns, n) => core('pods').get(ns, n),
        getSecret: (ns, n) => core('secrets').get(ns, n),
        getNode: (n) => this.objectFromCache('nodes', undefined, n),
        now: () => this.cfg.now?.() ?? new Date(),
      },
      namespace,
      name,
      body,
    );
  }

  /**
   * The objects of `resource` (group `group`, v1) in `namespace` (all when undefined) from
   * its watch cache; undefined while the cache is not ready (read the store then).
   */
  private async listFromCache(
    group: string,
    resource: string,
    namespace: string | undefined,
  ): Promise<KubeObject[] | undefined> {
    const cache = await this.watchCache(findResource(group, 'v1', resource)!);
    if (!cache.ready) return undefined;
    return cache.list(namespace ? { namespace } : {}).items;
  }

  /**
   * A v1 object of `group` (default core) from its watch cache (shared: do not mutate),
   * else from the store (a cache not ready yet, an object it has not seen yet); undefined
   * when there is none. What service account tokens and the RBAC authorizer are checked
   * against, on every request.
   */
  private async objectFromCache(
    resource: string,
    namespace: string | undefined,
    name: string,
    group = '',
  ): Promise<KubeObject | undefined> {
    const info = findResource(group, 'v1', resource)!;
    const cache = await this.watchCache(info);
    const cached = cache.ready ? cache.get({ ...(namespace ? { namespace } : {}), name }) : undefined;
    if (cached) return cached;
    try {
      return await this.registries.get(info)!.get(namespace, name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  private async watchCache(r: ResourceInfo): Promise<WatchCache> {
    let entry = this.watchCaches.get(r);
    if (!entry) {
      // A resource served in another version than it is stored in (autoscaling/v1 HPAs).
      const codec = this.registries.get(r)?.codec;
      const cache = new WatchCache({
        store: this.cfg.store,
        prefix: storagePrefix(r),
        typeMeta: { apiVersion: groupVersion(r), kind: r.kind },
        ...(codec ? { decode: (kv: KeyValue) => codec.fromStorage(JSON.parse(kv.value) as KubeObject) } : {}),
        ...(this.cfg.watchCacheSize ? { capacity: this.cfg.watchCacheSize } : {}),
        onError: (err) => this.cfg.logger.warn('watch cache', { resource: r.resource, error: String(err) }),
        ...(r.group === '' && r.resource === 'pods' ? { indexers: POD_CACHE_INDEXERS } : {}),
        // Events are many (several per pod, kept an hour) and read by few: kept as JSON.
        // kube-apiserver keeps no watch cache of them at all (kubernetes#96052).
        ...(r.resource === 'events' && (r.group === '' || r.group === 'events.k8s.io')
          ? { keepDecoded: false }
          : {}),
      });
      entry = { cache, started: cache.start() };
      this.watchCaches.set(r, entry);
    }
    await entry.started;
    return entry.cache;
  }

  /**
   * The namespace `name`, or undefined when there is none: from the namespaces' watch
   * cache, as admission plugins read their informer; a namespace the cache has not seen
   * yet (just created) is looked up in the store.
   */
  private async namespaceFromCache(name: string): Promise<KubeObject | undefined> {
    const cache = await this.watchCache(findResource('', 'v1', 'namespaces')!);
    const cached = cache.ready ? cache.get({ name }) : undefined;
    if (cached) return cached;
    try {
      return await this.registry('', 'v1', 'namespaces').get(undefined, name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }
}

/** Node's limit on a request line and its headers (bytes): `maxHeaderSize`, 16 KiB by default. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Answers a request Node's HTTP parser refused before any handler saw it (the server's
 * 'clientError'), with a metav1.Status where Node would write a bare status line, then
 * closes the connection: a request line and headers over MAX_HEADER_BYTES (a long URL
 * too) → 431, as Go's net/http answers in kube-apiserver; a request that took too long
 * to arrive → 408; anything else that does not parse → 400.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const answer =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? requestHeaderFieldsTooLarge(MAX_HEADER_BYTES)
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError(408, 'Timeout', 'the request did not arrive in time')
        : badRequest(`the request could not be parsed as HTTP/1.1 (${err.code ?? err.message})`);
  writeRawStatus(socket, answer);
}

/** The URL of a request whose target could not be parsed, for its log line. */
const UNPARSED_URL = new URL('http://apiserver/');
