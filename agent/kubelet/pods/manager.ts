/**
 * The kubelet's pod side on one node: which pods run here and one PodWorker per pod UID
 * (the kubelet's pod manager, pod workers and PLEG, pkg/kubelet/kubelet.go syncLoop).
 *
 * - Pods come from an informer on `pods` with `fieldSelector=spec.nodeName=<node>` (or the
 *   `podSource` given: hollow nodes share one watch, agent/hollow/); each add/update goes
 *   to the pod's worker (created on first sight), a delete tells the worker the pod is gone.
 * - A relist of the runtime every `relistPeriodMs` (1 s, the generic PLEG's period) finds
 *   what changed — a container exited, was killed, was removed — and wakes the pods
 *   concerned. Everything the agent needs is on the runtime's objects (labels), so a
 *   restarted agent adopts running containers: its workers find them with the expected
 *   spec hash and leave them alone (same container ids, no restart).
 * - Sandboxes and containers labelled for this node whose pod has no worker (the pod was
 *   deleted while the agent was away) are stopped and removed once the informer has
 *   synced.
 * - While the runtime does not answer (dockerd restarting), relists are retried with
 *   backoff (1 s doubling to 30 s); when it answers again every worker is woken and
 *   resyncs (sandboxes that died are recreated, containers restarted).
 * - Every `statusReconcileMs` (10 s, the status manager's syncBatch period) each pod's
 *   status in the informer is compared with the one its syncer last posted, and written
 *   again where someone else changed a field the kubelet owns (sync.ts reconcileStatus).
 * - The runtime's health (the kubelet's runtimeState, updateRuntimeUp every 5 s): while
 *   its Status says RuntimeReady false, or it does not answer Status or the relist, no pod
 *   is synced — nothing is created on a runtime that is shutting down or not up yet (the
 *   syncLoop's "Skipping pod synchronization"); the workers retry with their backoff and
 *   are woken when it is healthy again.
 * - stop() ends the informer, the relist, the workers and the probers; containers keep
 *   running.
 *
 *   const pods = new PodManager({ client, runtime, nodeName, nodeIP, podNetwork, recorder,
 *     clock, logger, dataDir });
 *   await pods.start();   // resolves once the pod informer has synced
 *   ...
 *   await pods.stop();
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../api/log.js';
import { realClock, type Clock } from '../../../api/clock.js';
import type { EventRecorder } from '../../../api/client/events.js';
import { deletedObject, SharedInformer, type ResourceEventHandler } from '../../../api/client/informer.js';
import { isNotFound } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { Node, Pod, Service } from '../../../api/types.js';
import type { Runtime } from '../../../cri/index.js';
import { isCriError } from '../../../cri/index.js';
import { ProbeManager } from '../prober/manager.js';
import type { ProbeOutcome, ProbeTarget } from '../prober/probe.js';
import { Backoff } from './backoff.js';
import { DnsConfigurer } from './dns.js';
import { isServiceIPSet, serviceEnvVarMap } from './envvars.js';
import { ContainerStartError } from './errors.js';
import { ImageManager } from './images.js';
import { NODE_LABEL, POD_TERMINATION_GRACE_PERIOD_ANNOTATION, POD_UID_LABEL, podRefOf } from './labels.js';
import { isAppContainer } from './runtime-status.js';
import type { Probe } from './types.js';
import { hostMounter, type Mounter } from './mount.js';
import { tearDownVolumes } from './volumes.js';
import { RuntimePodSyncer, type PodNetwork, type PodSyncerDeps } from './sync.js';
import { restTokenRequester, TokenManager, type TokenRequester } from '../token/manager.js';
import { PodWorker, type PodWorkerState } from './worker.js';
import { errorMessage } from '../../../api/errors.js';

/** Settings of a PodManager. */
export interface PodManagerConfig {
  client: RestClient;
  runtime: Runtime;
  nodeName: string;
  /**
   * Asks for the bound tokens of projected serviceAccountToken volumes; default a
   * TokenRequest through `client` (the node's credential). Tests pass a fake.
   */
  requestToken?: TokenRequester;
  /** The node's InternalIP: status.hostIP, and where hostPorts are published. */
  nodeIP: string;
  /** The node's pod network (a PodNetworkManager, or just its name). */
  podNetwork: PodNetwork | string;
  recorder: Pick<EventRecorder, 'event'>;
  /** Default: the real clock. */
  clock?: Clock;
  logger: Logger;
  /** The agent's directory; pod volumes go under `<dataDir>/pods/<uid>`. */
  dataDir: string;
  /**
   * The kubelet's podLogsDir: `<podLogsDir>/<ns>_<name>_<uid>/<container>/<N>.log` (logs.ts);
   * default `<dataDir>/pod-logs`, where the agent's containerd adapter writes them.
   */
  podLogsDir?: string;
  /**
   * Where the node's pods come from; default an informer of its own on
   * `fieldSelector=spec.nodeName=<nodeName>` through `client`.
   */
  podSource?: PodSource;
  /** Milliseconds between relists of the runtime (default 1000). */
  relistPeriodMs?: number;
  /**
   * Milliseconds between checks of the API's pod statuses against the kubelet's own
   * (default 10 000, the status manager's syncPeriod).
   */
  statusReconcileMs?: number;
  /** Milliseconds between syncs of a pod nothing happens to (default 60 000). */
  resyncIntervalMs?: number;
  /** CrashLoopBackOff's first delay, ms (default 10 000). */
  crashLoopBackoffInitialMs?: number;
  /** CrashLoopBackOff's longest delay, ms (default 300 000). */
  crashLoopBackoffMaxMs?: number;
  /** The kernel's mounts (subPath binds, Secret tmpfs); default hostMounter (util-linux, needs root). */
  mounter?: Mounter;
  /** Replaces the real probers (tests of probe-driven behaviour). */
  runProbe?: (probe: Probe, target: ProbeTarget) => Promise<ProbeOutcome>;
  /**
   * The cluster's Services (the kubelet's serviceLister; started and stopped by the
   * caller): each container's Service variables (envvars.ts), and the cluster DNS when
   * `clusterDNS` is empty (the clusterIP of `kube-system/kube-dns`). Unset: neither, as a
   * kubelet without an API server.
   */
  services?: SharedInformer<Service>;
  /**
   * The pods' resolv.conf (dns.ts): `--cluster-dns` (empty: the kube-dns Service's clusterIP),
   * `--cluster-domain` (default cluster.local), `--resolv-conf` (default /etc/resolv.conf;
   * '' for none). Unset: sandboxes get the runtime's default resolv.conf.
   */
  dns?: { clusterDNS?: string[]; clusterDomain?: string; resolvConf?: string };
}

/**
 * The pods bound to one node, as the PodManager reads them: what it uses of a
 * SharedInformer. Handlers are told nothing before start(); after it, as a SharedInformer's
 * (the pods already bound first, as onAdd).
 */
export interface PodSource {
  addEventHandler(handler: ResourceEventHandler<Pod>): void;
  start(): void;
  /** Resolves true once the pods were read once; false when `signal` aborts first. */
  waitForSync(timeoutMs: number | undefined, signal: AbortSignal): Promise<boolean>;
  /** Ends the deliveries for good. */
  stop(): Promise<void>;
  /** The node's pods now. */
  list(): Pod[];
}

/** A PodSource over an informer of the node's own. */
function informerPodSource(informer: SharedInformer<Pod>): PodSource {
  return {
    addEventHandler: (handler) => void informer.addEventHandler(handler),
    start: () => informer.start(),
    waitForSync: (timeoutMs, signal) => informer.waitForSync(timeoutMs, signal),
    stop: () => informer.stop(),
    list: () => informer.lister().list(),
  };
}

/** The Service of the cluster DNS, whose clusterIP pods use when no --cluster-dns is given. */
export const KUBE_DNS_SERVICE = { namespace: 'kube-system', name: 'kube-dns' } as const;

/** How often the runtime's Status is read (the kubelet's updateRuntimeUp period), ms. */
const RUNTIME_STATUS_PERIOD_MS = 5_000;

/** Longest delay between relists while the runtime is down, ms. */
const RELIST_BACKOFF_MAX_MS = 30_000;

/** See the file comment. */
export class PodManager {
  private readonly cfg: PodManagerConfig;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly workers = new Map<string, PodWorker>();
  /** The syncer of each worker (its status manager part is reconciled from here). */
  private readonly syncers = new Map<string, RuntimePodSyncer>();
  private statusLoop: Promise<void> | undefined;
  private runtimeLoop: Promise<void> | undefined;
  /** Why the runtime is not healthy, from its last Status; undefined while it is. */
  private runtimeStatusError: string | undefined;
  /** Why the last relist failed; undefined after one that worked. */
  private relistError: string | undefined;
  /** UIDs whose worker is done; later informer updates of them (before the delete arrives) are ignored. */
  private readonly finished = new Set<string>();
  private readonly informer: PodSource;
  private readonly prober: ProbeManager;
  private readonly deps: PodSyncerDeps;
  private readonly resyncIntervalMs: number;
  private readonly abort = new AbortController();
  private readonly cleaning = new Set<string>();
  private fingerprints = new Map<string, string>();
  /** A relist has completed (its fingerprints are the runtime's objects as of its start). */
  private relisted = false;
  private synced = false;
  private relist: Promise<void> | undefined;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private runtimeNameCache: string | undefined;

  /** @throws Error for a missing nodeName, nodeIP or dataDir. */
  constructor(cfg: PodManagerConfig) {
    if (!cfg.nodeName) throw new Error('PodManager: nodeName is required');
    if (!cfg.nodeIP) throw new Error('PodManager: nodeIP is required');
    if (!cfg.dataDir) throw new Error('PodManager: dataDir is required');
    this.cfg = cfg;
    this.clock = cfg.clock ?? realClock;
    this.logger = cfg.logger;
    const podNetwork = typeof cfg.podNetwork === 'string' ? { name: cfg.podNetwork } : cfg.podNetwork;
    this.prober = new ProbeManager({
      clock: this.clock,
      recorder: cfg.recorder,
      logger: cfg.logger,
      exec: (id, cmd, timeout) => cfg.runtime.execSync(id, cmd, timeout),
      onChange: (uid) => this.workers.get(uid)?.wake(),
      ...(cfg.runProbe ? { runProbe: cfg.runProbe } : {}),
    });
    this.deps = {
      client: cfg.client,
      tokens: new TokenManager({
        request: cfg.requestToken ?? restTokenRequester(cfg.client),
        clock: this.clock,
      }),
      runtime: cfg.runtime,
      nodeName: cfg.nodeName,
      nodeIP: cfg.nodeIP,
      podNetwork,
      dataDir: cfg.dataDir,
      recorder: cfg.recorder,
      clock: this.clock,
      logger: cfg.logger,
      images: new ImageManager({
        images: cfg.runtime,
        recorder: cfg.recorder,
        clock: this.clock,
        logger: cfg.logger,
        getSecret: async (namespace, name) => {
          try {
            return await cfg.client.get(resources.secrets, namespace, name);
          } catch (err) {
            if (isNotFound(err)) return undefined;
            throw err;
          }
        },
      }),
      crashBackoff: new Backoff({
        clock: this.clock,
        initialMs: cfg.crashLoopBackoffInitialMs ?? 10_000,
        maxMs: cfg.crashLoopBackoffMaxMs ?? 300_000,
      }),
      prober: this.prober,
      mounter: cfg.mounter ?? hostMounter,
      runtimeName: () => this.runtimeName(),
      nodeAllocatable: async () => {
        const node = await cfg.client.get<Node>(resources.nodes, undefined, cfg.nodeName);
        return (node.status?.allocatable ?? {}) as Record<string, string>;
      },
      ...this.serviceDeps(cfg),
      runtimeError: () => this.relistError ?? this.runtimeStatusError,
      podLogsDir: cfg.podLogsDir ?? join(cfg.dataDir, 'pod-logs'),
    };
    this.resyncIntervalMs = cfg.resyncIntervalMs ?? 60_000;
    this.informer =
      cfg.podSource ??
      informerPodSource(
        SharedInformer.fromClient<Pod>(cfg.client, resources.pods, {
          fieldSelector: `spec.nodeName=${cfg.nodeName}`,
          onError: (err, during) =>
            this.logger.warn('pod informer error', { node: cfg.nodeName, during, error: err.message }),
        }),
      );
    this.informer.addEventHandler({
      onAdd: (pod) => this.podUpdated(pod),
      onUpdate: (_, pod) => this.podUpdated(pod),
      onDelete: (obj) => {
        const pod = deletedObject(obj);
        const uid = pod.metadata.uid ?? '';
        this.finished.delete(uid);
        this.workers.get(uid)?.remove();
      },
    });
  }

  /**
   * Starts watching this node's pods and the runtime; resolves once the pod informer has
   * synced (the workers of the pods already bound here are running by then).
   * @throws Error when called twice or after stop().
   */
  /** The DNS configurer and the Service variables of the syncer's deps (see PodManagerConfig). */
  private serviceDeps(cfg: PodManagerConfig): Pick<PodSyncerDeps, 'dns' | 'serviceEnv'> {
    const services = cfg.services;
    // getServiceEnvVarMap refuses until the Services were read once; waiting for that is
    // the same without a failed start in between.
    const synced = async (signal: AbortSignal): Promise<boolean> =>
      services !== undefined && (await services.waitForSync(undefined, signal));
    const out: Pick<PodSyncerDeps, 'dns' | 'serviceEnv'> = {};
    if (services) {
      out.serviceEnv = async (namespace, enableServiceLinks, signal) => {
        if (!(await synced(signal)))
          throw new ContainerStartError(
            'CreateContainerConfigError',
            'services have not yet been read at least once, cannot construct envvars',
          );
        return serviceEnvVarMap(services.lister().list(), namespace, enableServiceLinks);
      };
    }
    if (cfg.dns) {
      const flag = cfg.dns.clusterDNS ?? [];
      out.dns = new DnsConfigurer({
        clusterDNS: async () => {
          if (flag.length > 0) return flag;
          if (!(await synced(this.abort.signal))) return [];
          const svc = services!.lister().get(KUBE_DNS_SERVICE.namespace, KUBE_DNS_SERVICE.name);
          return svc && isServiceIPSet(svc) ? [svc.spec.clusterIP as string] : [];
        },
        ...(cfg.dns.clusterDomain !== undefined ? { clusterDomain: cfg.dns.clusterDomain } : {}),
        ...(cfg.dns.resolvConf !== undefined ? { resolvConf: cfg.dns.resolvConf } : {}),
        nodeIPs: [cfg.nodeIP],
        warn: (message) => cfg.logger.warn(message, { node: cfg.nodeName }),
      });
    }
    return out;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('PodManager: start() may be called once');
    this.state = 'running';
    // Owner-only, also when an older agent made it 0755: it holds the pods' Secrets (on
    // disk where tmpfs cannot be mounted) and their volumes.
    mkdirSync(join(this.cfg.dataDir, 'pods'), { recursive: true, mode: 0o700 });
    chmodSync(join(this.cfg.dataDir, 'pods'), 0o700);
    this.informer.start();
    await this.informer.waitForSync(undefined, this.abort.signal);
    if (this.abort.signal.aborted) return;
    this.synced = true;
    this.relist = this.relistLoop(this.abort.signal);
    this.statusLoop = this.statusReconcileLoop(this.abort.signal);
    this.runtimeLoop = this.runtimeStatusLoop(this.abort.signal);
    this.logger.info('pod manager started', { node: this.cfg.nodeName, pods: this.workers.size });
  }

  /** Stops everything but the containers (see the file comment). Idempotent. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.abort.abort();
    await this.informer.stop();
    await this.relist;
    await this.statusLoop;
    await this.runtimeLoop;
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
    await this.prober.stop();
    this.logger.info('pod manager stopped', { node: this.cfg.nodeName });
  }

  /**
   * Makes every pod worker sync now — for the agent to call when something all pods wait
   * for has changed (the pod network became ready).
   */
  resyncAll(): void {
    for (const w of this.workers.values()) w.wake();
  }

  /** The state of the pod `uid`'s worker; undefined when it has none (never seen, or done). */
  workerState(uid: string): PodWorkerState | undefined {
    return this.workers.get(uid)?.state;
  }

  /** The runtime's name, read once (CRI Version). @throws CriError while the runtime is down. */
  private async runtimeName(): Promise<string> {
    this.runtimeNameCache ??= (await this.cfg.runtime.version()).runtimeName;
    return this.runtimeNameCache;
  }

  private podUpdated(pod: Pod): void {
    if (this.state === 'stopped') return;
    const uid = pod.metadata.uid;
    if (!uid || this.finished.has(uid)) return;
    let worker = this.workers.get(uid);
    if (!worker) {
      // A pod the last relist found nothing of (one begun after this manager started, so
      // it saw what an earlier agent left): only this new worker makes its objects.
      const syncer = new RuntimePodSyncer(this.deps, uid, {
        noRuntimeObjects: this.relisted && !this.fingerprints.has(uid),
      });
      this.syncers.set(uid, syncer);
      worker = new PodWorker({
        pod,
        syncer,
        clock: this.clock,
        logger: this.logger,
        resyncIntervalMs: this.resyncIntervalMs,
        onDone: (done) => {
          this.workers.delete(done);
          this.syncers.delete(done);
          this.finished.add(done);
        },
      });
      this.workers.set(uid, worker);
      this.logger.info('pod added', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, uid });
      worker.update(pod);
      worker.start();
      return;
    }
    worker.update(pod);
  }

  /** updateRuntimeUp: see the file comment. */
  private async runtimeStatusLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const before = this.runtimeStatusError;
      try {
        const status = await this.cfg.runtime.status();
        const ready = status.conditions.find((c) => c.type === 'RuntimeReady');
        this.runtimeStatusError =
          ready && !ready.status
            ? `container runtime not ready: RuntimeReady=false reason:${ready.reason} message:${ready.message}`
            : undefined;
      } catch (err) {
        this.runtimeStatusError = `container runtime is down: ${errorMessage(err)}`;
      }
      if (this.runtimeStatusError !== before) {
        if (this.runtimeStatusError) {
          this.logger.warn('skipping pod synchronization', {
            node: this.cfg.nodeName,
            error: this.runtimeStatusError,
          });
        } else {
          this.logger.info('container runtime is healthy again; resyncing every pod', {
            node: this.cfg.nodeName,
          });
          for (const w of this.workers.values()) w.wake();
        }
      }
      await this.clock.sleep(RUNTIME_STATUS_PERIOD_MS, signal);
    }
  }

  /** The status manager's syncBatch: see the file comment. */
  private async statusReconcileLoop(signal: AbortSignal): Promise<void> {
    const period = this.cfg.statusReconcileMs ?? 10_000;
    while (!signal.aborted) {
      await this.clock.sleep(period, signal);
      if (signal.aborted) return;
      const pods = new Map(this.informer.list().map((p) => [p.metadata.uid ?? '', p]));
      await Promise.all(
        [...this.syncers].map(async ([uid, syncer]) => {
          const pod = pods.get(uid);
          if (!pod || this.workers.get(uid)?.state !== 'syncing') return;
          await syncer.reconcileStatus(pod).catch((err: unknown) =>
            this.logger.warn('pod status write failed', {
              pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
              uid,
              error: errorMessage(err),
            }),
          );
        }),
      );
    }
  }

  /** The PLEG: see the file comment. */
  private async relistLoop(signal: AbortSignal): Promise<void> {
    const period = this.cfg.relistPeriodMs ?? 1000;
    let downDelay = 0;
    while (!signal.aborted) {
      try {
        await this.relistOnce();
        this.relistError = undefined;
        if (downDelay > 0) {
          this.logger.info('container runtime is back; resyncing every pod', { node: this.cfg.nodeName });
          for (const w of this.workers.values()) w.wake();
        }
        downDelay = 0;
      } catch (err) {
        this.relistError = `container runtime is down: ${errorMessage(err)}`;
        if (downDelay === 0) {
          this.logger.warn('container runtime relist failed', {
            node: this.cfg.nodeName,
            error: errorMessage(err),
          });
        }
        downDelay = Math.min(RELIST_BACKOFF_MAX_MS, Math.max(period, downDelay * 2));
      }
      await this.clock.sleep(downDelay > 0 ? downDelay : period, signal);
    }
  }

  private async relistOnce(): Promise<void> {
    const { runtime, nodeName } = this.cfg;
    const selector = { labelSelector: { [NODE_LABEL]: nodeName } };
    const [sandboxes, containers] = await Promise.all([
      runtime.listPodSandbox(selector),
      runtime.listContainers(selector),
    ]);
    const byPod = new Map<string, string[]>();
    const add = (labels: Record<string, string>, item: string) => {
      const uid = labels[POD_UID_LABEL];
      if (!uid) return;
      let items = byPod.get(uid);
      if (!items) byPod.set(uid, (items = []));
      items.push(item);
    };
    for (const s of sandboxes) add(s.labels, `s:${s.id}:${s.state}`);
    for (const c of containers) if (isAppContainer(c)) add(c.labels, `c:${c.id}:${c.state}`);
    const next = new Map<string, string>();
    for (const [uid, items] of byPod) next.set(uid, items.sort().join(','));
    for (const uid of new Set([...next.keys(), ...this.fingerprints.keys()])) {
      if (next.get(uid) !== this.fingerprints.get(uid)) this.workers.get(uid)?.wake();
    }
    this.fingerprints = next;
    this.relisted = true;
    if (!this.synced) return;
    for (const uid of next.keys()) {
      if (this.workers.has(uid) || this.cleaning.has(uid)) continue;
      const ref = [...sandboxes, ...containers].map((o) => podRefOf(o.labels)).find((r) => r?.uid === uid);
      this.cleaning.add(uid);
      void this.removeOrphan(uid, ref ? `${ref.namespace}/${ref.name}` : uid).finally(() =>
        this.cleaning.delete(uid),
      );
    }
  }

  /** Stops and removes the runtime objects of a pod that no longer exists. */
  private async removeOrphan(uid: string, name: string): Promise<void> {
    const { runtime, nodeName } = this.cfg;
    const selector = { labelSelector: { [POD_UID_LABEL]: uid, [NODE_LABEL]: nodeName } };
    try {
      this.logger.info('removing containers of a pod that no longer exists', { pod: name, uid });
      const containers = (await runtime.listContainers(selector)).filter(isAppContainer);
      await Promise.all(
        containers
          .filter((c) => c.state === 'CONTAINER_RUNNING')
          .map((c) =>
            runtime.stopContainer(
              c.id,
              Math.max(1, Number(c.annotations[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] ?? 30) || 1),
            ),
          ),
      );
      for (const c of containers) await runtime.removeContainer(c.id);
      for (const s of await runtime.listPodSandbox(selector)) {
        await runtime.stopPodSandbox(s.id);
        await runtime.removePodSandbox(s.id);
      }
      await tearDownVolumes(this.cfg.dataDir, uid, this.deps.mounter);
      this.deps.tokens?.deleteForPod(uid);
    } catch (err) {
      if (!isCriError(err, 'Unavailable')) {
        this.logger.warn('removing an orphaned pod failed; will retry', {
          pod: name,
          uid,
          error: errorMessage(err),
        });
      }
    }
  }
}
