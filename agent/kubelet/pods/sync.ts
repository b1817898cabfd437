/**
 * The pod syncer: what the pod worker's state machine (worker.ts) calls to act on one pod
 * through the CRI runtime — the kubelet's SyncPod, SyncTerminatingPod and
 * SyncTerminatedPod with kuberuntime's SyncPod, KillPod and container GC
 * (pkg/kubelet/kubelet.go, pkg/kubelet/kuberuntime/kuberuntime_manager.go). One syncer per
 * pod UID: it keeps what the kubelet keeps per pod (the reasonCache of start failures,
 * the status last posted).
 *
 * - syncPod: read the runtime's view of the pod, computePodActions, kill what must go,
 *   create the sandbox if needed (Normal SandboxChanged, `Pod sandbox changed, it will be
 *   killed and re-created.`, when one existed), start containers (image per pull policy,
 *   CrashLoopBackOff: 10 s doubling to 300 s, reset after 10 minutes of running, for
 *   every start of a container that exited before, into a new sandbox too; the restart
 *   count from the pod's log files, logs.ts, when the runtime has no container of the
 *   name any more), prune
 *   dead containers (the newest dead one per container is kept for lastState), then post
 *   the status if it changed. As the kubelet, the status is posted even when an action
 *   failed (the pod then shows ContainerCreating or the failure's reason), and the
 *   failure is thrown afterwards, for the worker to retry.
 * - A new pod's start is overlapped where it can be: its volumes are set up while the
 *   sandbox starts, and its containers created then too on a runtime that tells the
 *   sandbox's id early (RunPodSandboxOptions.onCreated; Docker); the killPod of its first
 *   sync uses the status already read, and the status at the end is read by id
 *   (refreshPodRuntimeStatus): one list of the runtime per new pod.
 * - Init containers: a sync starts at most the one init container computePodActions
 *   names (same image, crash backoff and failure rules as app containers); app containers
 *   wait until the last one exited 0. Sidecar init containers (`restartPolicy: Always`)
 *   are not supported: they are skipped, with a Warning event SidecarContainersNotSupported.
 * - Starting and killing one container, with its hooks: containers.ts.
 * - syncTerminatingPod stops containers with SIGTERM and the pod's grace period
 *   (deletionGracePeriodSeconds, else terminationGracePeriodSeconds, else 30; at least 1),
 *   then the sandbox; a pod that simply finished (Succeeded/Failed) keeps its stopped
 *   containers, so its status and logs stay, until it is deleted.
 * - syncTerminatedPod removes containers, sandboxes and volumes, then deletes the pod
 *   object with grace 0 and a uid precondition.
 */
import { join } from 'node:path';
import type { Logger } from '../../../api/log.js';
import { errorMessage } from '../../../api/errors.js';
import type { Clock } from '../../../api/clock.js';
import { isConflict, isNotFound } from '../../../api/client/errors.js';
import type { EventRecorder } from '../../../api/client/events.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { Pod, PodStatus } from '../../../api/types.js';
import type { PodSandboxConfig, Runtime } from '../../../cri/index.js';
import { isCriError } from '../../../cri/index.js';
import type { ProbeManager } from '../prober/manager.js';
import type { ContainerView } from '../prober/worker.js';
import { computePodActions, type PodActions } from './actions.js';
import type { Backoff } from './backoff.js';
import { podSandboxConfig } from './config.js';
import type { DnsConfigurer } from './dns.js';
import {
  containerRef,
  createContainer,
  gracePeriodOf,
  killContainer,
  startCreatedContainer,
  type ContainerContext,
  type ContainerDeps,
  type StartContainerRequest,
} from './containers.js';
import { isContainerStartError } from './errors.js';
import type { ImageManager } from './images.js';
import { hashContainer } from './labels.js';
import { ensureContainerLogDir, podLogsDirectory, removePodLogs, restartCountFromLogDir } from './logs.js';
import type { Mounter } from './mount.js';
import {
  getPodRuntimeStatus,
  latestContainer,
  refreshPodRuntimeStatus,
  type PodRuntimeStatus,
} from './runtime-status.js';
import { generateAPIPodStatus, statusChanged, withOthersConditions, type StartFailure } from './status.js';
import { podDesc, specContainer, type KubeletContainer, type KubeletPod } from './types.js';
import type { TokenManager } from '../token/manager.js';
import {
  MountError,
  refreshVolumes,
  setUpVolumes,
  tearDownVolumes,
  type PodVolumes,
  type VolumeSetUpOptions,
} from './volumes.js';
import type { PodSyncContext, PodSyncer, SyncPodResult } from './worker.js';

/** The node's pod network as the syncer needs it (agent/network/pod-network.ts's PodNetworkManager fits). */
export interface PodNetwork {
  readonly name: string;
  /** False while the network does not exist yet; sandboxes wait for it. Undefined: always ready. */
  readonly ready?: boolean;
  /** Why it is not ready. */
  readonly error?: string | undefined;
}

/** What every pod syncer of a node shares (built by the PodManager). */
export interface PodSyncerDeps {
  client: RestClient;
  /** Bound ServiceAccount tokens of projected volumes (the kubelet's token manager); unset: none can be mounted. */
  tokens?: TokenManager;
  runtime: Runtime;
  nodeName: string;
  nodeIP: string;
  podNetwork: PodNetwork;
  dataDir: string;
  recorder: Pick<EventRecorder, 'event'>;
  clock: Clock;
  logger: Logger;
  images: ImageManager;
  /** CrashLoopBackOff per container. */
  crashBackoff: Backoff;
  prober: ProbeManager;
  /** Bind mounts of subPaths, tmpfs of Secret volumes, and their unmounting. */
  mounter: Mounter;
  /** The runtime's name (containerID prefix, `docker`); rejects while it is down. */
  runtimeName(): Promise<string>;
  /** Node allocatable, for resourceFieldRef of unset limits. */
  nodeAllocatable?: () => Promise<Record<string, string>>;
  /** The node's DNS settings: each new sandbox's resolv.conf (dns.ts); unset: the runtime's default. */
  dns?: DnsConfigurer;
  /** See ContainerDeps.serviceEnv. */
  serviceEnv?: ContainerDeps['serviceEnv'];
  /**
   * Why the runtime is not healthy now (RuntimeReady false, not answering); undefined while
   * it is. A sync then changes nothing on it (the syncLoop skips pod synchronization).
   */
  runtimeError?: () => string | undefined;
  /** The kubelet's podLogsDir (logs.ts); unset: the runtime's default, no restart counts recovered. */
  podLogsDir?: string;
}

/** A container createPodContainer made, and what it was made from (for its start). */
interface CreatedContainer {
  id: string;
  req: StartContainerRequest;
}

/** Longest retry delay of failed steps, ms (a failed container start is retried in a third of it). */
const ERROR_BACKOFF_MAX_MS = 30_000;
/** How soon a pod whose image pull just failed is synced again (shows ImagePullBackOff), ms. */
const AFTER_PULL_FAILURE_MS = 1_000;

/** Go's time.Duration formatting for whole seconds (`10s`, `1m20s`, `5m0s`). */
export function goDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60}s`;
  return `${Math.floor(m / 60)}h${m % 60}m${s % 60}s`;
}

/** The crash backoff key of a container (the kubelet's getStableKey). */
export function crashBackoffKey(pod: Pod, container: KubeletContainer): string {
  return `${pod.metadata.uid}_${pod.metadata.name}_${pod.metadata.namespace}_${container.name}_${hashContainer(container)}`;
}

/** How soon a failed refresh of a running pod's projected volumes is tried again, ms. */
const VOLUME_REFRESH_RETRY_MS = 10_000;

/** One pod's syncer over the CRI runtime (see the file comment). */
export class RuntimePodSyncer implements PodSyncer {
  private readonly deps: PodSyncerDeps;
  private readonly uid: string;
  /** Last start failure per container (the kubelet's reasonCache). */
  private readonly failures = new Map<string, StartFailure>();
  /** The status we last posted, and the resourceVersion the API gave it. */
  private lastPosted: PodStatus | undefined;
  private lastPostedRV: string | undefined;
  /** The status write in flight (postStatus chains them). */
  private posting: Promise<void> = Promise.resolve();
  /** The newest status queued by syncStatus whose write has not finished (see syncStatus). */
  private queued: PodStatus | undefined;
  private sidecarsReported = false;
  private tmpfsWarned = false;

  /** The first sync's runtime status is this (not listed); cleared once used. */
  private known: PodRuntimeStatus | undefined;

  /**
   * `opts.noRuntimeObjects`: the runtime holds nothing of the pod yet, as the PodManager's
   * relist (the PLEG) says of a pod it had not seen, so the first sync needs no list of its
   * own (the pod workers' first sync takes the PLEG cache's status, podCache.GetNewerThan,
   * which for a pod the runtime has nothing of is empty).
   * @throws Error when `uid` is empty.
   */
  constructor(deps: PodSyncerDeps, uid: string, opts: { noRuntimeObjects?: boolean } = {}) {
    if (!uid) throw new Error('RuntimePodSyncer: the pod has no uid');
    this.deps = deps;
    this.uid = uid;
    if (opts.noRuntimeObjects) this.known = { uid, sandboxes: [], containers: [] };
  }

  podUpdated(): void {
    // The status someone else wrote is put right by reconcileStatus (every 10 s), not here.
  }

  /**
   * The status manager's syncBatch for this pod (pkg/kubelet/status/status_manager.go,
   * needsReconcile): when `apiPod`, the pod as the API has it now, differs from the status
   * this syncer last posted in a field the kubelet owns — someone else wrote it (the node
   * lifecycle controller's Ready=False while the node recovered) — the kubelet's status is
   * written again, with the conditions others own kept. Nothing is written for an older
   * version than the one last posted, nor over a terminal phase another writer set.
   * @throws the API's error of the patch (NotFound is ignored).
   */
  async reconcileStatus(apiPod: Pod): Promise<void> {
    const mine = this.lastPosted;
    if (!mine || apiPod.metadata.uid !== this.uid) return;
    const rv = Number(apiPod.metadata.resourceVersion);
    const postedRV = Number(this.lastPostedRV);
    if (apiPod.metadata.resourceVersion === this.lastPostedRV || rv < postedRV) return;
    const apiPhase = apiPod.status?.phase;
    if ((apiPhase === 'Succeeded' || apiPhase === 'Failed') && apiPhase !== mine.phase) return;
    const desired = withOthersConditions(apiPod.status, mine);
    if (!statusChanged(apiPod.status, desired)) return;
    this.deps.logger.info("pod status differs from the kubelet's; writing it again", {
      ...this.logFields(apiPod),
    });
    // Written in turn after a sync's write in flight, and only if none came in between:
    // a newer status of ours must not be overwritten with this older one.
    await this.postStatus(apiPod, () => (this.lastPosted === mine ? desired : undefined));
  }

  /** What setUpVolumes and refreshVolumes need for tokens: the manager, the next sync at a refresh. */
  private tokenOptions(soon: (at: number) => void): Partial<VolumeSetUpOptions> {
    return {
      ...(this.deps.tokens ? { tokens: this.deps.tokens } : {}),
      ...(this.deps.nodeAllocatable ? { nodeAllocatable: this.deps.nodeAllocatable } : {}),
      onTokenRefreshAt: soon,
    };
  }

  /**
   * A running pod's projected and downwardAPI volumes rewritten (a token refreshed when
   * due). A failure does not stop the pod: a FailedMount event, and another try in 10 s.
   */
  private async refreshVolumes(pod: KubeletPod, soon: (at: number) => void): Promise<void> {
    if (!(pod.spec.volumes ?? []).some((v) => v.projected || v.downwardAPI)) return;
    try {
      await refreshVolumes(pod, {
        dataDir: this.deps.dataDir,
        client: this.deps.client,
        mounter: this.deps.mounter,
        ...this.tokenOptions(soon),
      });
    } catch (err) {
      this.deps.logger.warn('volume refresh failed', { ...this.logFields(pod), error: errorMessage(err) });
      if (err instanceof MountError) this.deps.recorder.event(pod, 'Warning', 'FailedMount', err.message);
      soon(this.deps.clock.now() + VOLUME_REFRESH_RETRY_MS);
    }
  }

  /** SyncPod (see the file comment). */
  async syncPod(pod: KubeletPod, sync: PodSyncContext): Promise<SyncPodResult> {
    const { runtime, clock, recorder, logger, podNetwork } = this.deps;
    let nextSyncAt: number | undefined;
    const soon = (at: number) => (nextSyncAt = Math.min(nextSyncAt ?? Infinity, at));
    const ctx = this.containerContext(pod, sync);
    let status = this.known ?? (await this.runtimeStatus(pod));
    this.known = undefined;
    const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
    if (sidecars.length > 0 && !this.sidecarsReported) {
      this.sidecarsReported = true;
      recorder.event(
        pod,
        'Warning',
        'SidecarContainersNotSupported',
        `init containers with restartPolicy Always (sidecars) are not supported by this kubelet and are not run: ${sidecars.map((c) => c.name).join(', ')}`,
      );
    }
    const actions = computePodActions(pod, status, {
      liveness: (name, id) => this.deps.prober.result(this.uid, name, 'liveness', id),
      startup: (name, id) =>
        pod.spec.containers.find((c) => c.name === name)?.startupProbe
          ? this.deps.prober.result(this.uid, name, 'startup', id)
          : 'Unknown',
    });
    this.logActions(pod, actions);
    // SyncPod writes the pod's status first, before any sandbox or image pull: a pod whose
    // image takes a minute shows ContainerCreating (Initialized, hostIP, startTime), not
    // Pending. The sync does not wait for it, as the status manager's SetPodStatus only
    // queues the write: postStatus serializes it before the sync's later writes. A failed
    // write does not hold the sync up; the one at the end tries again.
    void this.syncStatus(pod, status).catch((err: unknown) =>
      logger.warn('pod status write failed', { ...ctx.log, error: errorMessage(err) }),
    );

    let syncError: unknown;
    // What this sync creates (the status at its end is read by these ids and the known ones).
    const made = { sandboxes: [] as string[], containers: [] as string[] };
    // Containers created while their sandbox started (RunPodSandboxOptions.onCreated).
    const early = new Map<string, Promise<CreatedContainer>>();
    const podIP0 = status.sandboxes[0]?.ip ?? '';
    try {
      // Nothing is created (or killed) on a runtime that is shutting down or not ready.
      const runtimeError = this.deps.runtimeError?.();
      if (runtimeError) throw new Error(`skipping pod synchronization: ${runtimeError}`);
      // kuberuntime's SyncPod: a sandbox to make again, not a new pod's first one.
      if (actions.createSandbox && actions.sandboxId !== '') {
        recorder.event(
          pod,
          'Normal',
          'SandboxChanged',
          'Pod sandbox changed, it will be killed and re-created.',
        );
      }
      if (actions.killPod) {
        // On the status this sync read, as kuberuntime's SyncPod kills the running pod it
        // converted from it: a new pod's first sync (killPod, as there is no sandbox) then
        // asks the runtime nothing more.
        await this.killPod(
          pod,
          sync,
          gracePeriodOf(pod),
          actions.createSandbox ? 'Stopping container' : undefined,
          status,
        );
      } else {
        await Promise.all(
          actions.containersToKill.map(async (k) => {
            logger.info('killing container', {
              ...ctx.log,
              container: k.name,
              containerId: k.id,
              why: k.message,
            });
            const running = status.containers.find((c) => c.id === k.id);
            await killContainer(ctx, {
              pod,
              container: running ?? { id: k.id, name: k.name, state: 'CONTAINER_RUNNING' },
              grace: Math.max(1, pod.spec.terminationGracePeriodSeconds ?? 30),
              message: k.message,
              podIP: podIP0,
            });
          }),
        );
      }

      let sandboxId = actions.sandboxId;
      let podIP = status.sandboxes[0]?.ip ?? '';
      const node = {
        nodeName: this.deps.nodeName,
        nodeIP: this.deps.nodeIP,
        network: podNetwork.name,
        ...(this.deps.dns ? { clusterDomain: this.deps.dns.clusterDomain } : {}),
        ...(this.deps.podLogsDir ? { podLogsDir: this.deps.podLogsDir } : {}),
      };
      const sandboxConfig: PodSandboxConfig = podSandboxConfig(pod, actions.attempt, node);
      if (actions.createSandbox && this.deps.dns) {
        // GetPodDNS: formed for each new sandbox; its warnings go to the pod (or the node).
        const { config, events } = await this.deps.dns.podDNS(pod);
        for (const e of events) {
          const nodeRef = { kind: 'Node', name: this.deps.nodeName, uid: this.deps.nodeName };
          recorder.event(e.on === 'node' ? nodeRef : pod, 'Warning', e.reason, e.message);
        }
        sandboxConfig.dnsConfig = config;
      }
      const toStart = actions.initContainerToStart
        ? [actions.initContainerToStart, ...actions.containersToStart]
        : actions.containersToStart;
      // The pod's volumes, set up once in this sync: for a new sandbox while it starts.
      let volumesSetUp: Promise<PodVolumes> | undefined;
      const volumes = () => (volumesSetUp ??= this.setUpPodVolumes(pod, ctx, soon));
      if (actions.createSandbox) {
        if (podNetwork.ready === false && !pod.spec.hostNetwork) {
          const why = `network is not ready: ${podNetwork.error ?? 'the pod network does not exist yet'}`;
          recorder.event(pod, 'Warning', 'NetworkNotReady', why);
          throw new Error(why);
        }
        // A new pod (no container ever): its volumes are set up, and where the runtime lets
        // it its containers created, while the sandbox starts, off the critical path (none
        // of them is in back-off; each needs the pod IP for its environment and /etc/hosts).
        const overlap = toStart.length > 0 && status.containers.length === 0;
        if (overlap) volumes().catch(() => undefined);
        const onCreated = (created: { id: string; ip?: string }) => {
          const ip = pod.spec.hostNetwork ? this.deps.nodeIP : created.ip;
          if (!ip) return;
          for (const name of toStart) {
            const creating = this.createPodContainer(
              ctx,
              pod,
              name,
              created.id,
              sandboxConfig,
              ip,
              status,
              volumes,
            );
            creating.then((c) => made.containers.push(c.id)).catch(() => undefined);
            early.set(name, creating);
          }
        };
        try {
          sandboxId = await runtime.runPodSandbox(sandboxConfig, overlap ? { onCreated } : undefined);
          made.sandboxes.push(sandboxId);
        } catch (err) {
          await this.removeEarlyContainers(early, ctx.log);
          if (!isCriError(err, 'Unavailable')) {
            recorder.event(
              pod,
              'Warning',
              'FailedCreatePodSandBox',
              `Failed to create pod sandbox: ${errorMessage(err)}`,
            );
          }
          throw err;
        }
        podIP = pod.spec.hostNetwork
          ? this.deps.nodeIP
          : (await runtime.podSandboxStatus(sandboxId)).network.ip;
        logger.info('created pod sandbox', {
          ...ctx.log,
          sandboxId,
          attempt: actions.attempt,
          podIP,
          ...(early.size > 0 ? { containersCreatedMeanwhile: early.size } : {}),
        });
      }

      if (toStart.length > 0 && sandboxId) {
        await volumes();
        for (const name of toStart) {
          if (sync.signal.aborted || sync.isPodTerminationRequested()) break;
          const container = specContainer(pod, name)!;
          // doBackOff: every start, also into a new sandbox, waits out the back-off counted
          // from the newest exited container's finish (a dead pause container gave a pod
          // in back-off a restart at once).
          const exited = status.containers.find((c) => c.name === name && c.state === 'CONTAINER_EXITED');
          if (exited) {
            const key = crashBackoffKey(pod, container);
            const remaining = this.deps.crashBackoff.remainingSince(key, exited.finishedAt);
            if (remaining > 0) {
              const delay = goDuration(this.deps.crashBackoff.get(key));
              this.failures.set(name, {
                reason: 'CrashLoopBackOff',
                message: `back-off ${delay} restarting failed container=${name} pod=${podDesc(pod)}`,
              });
              recorder.event(
                containerRef(pod, name),
                'Warning',
                'BackOff',
                `Back-off restarting failed container ${name} in pod ${podDesc(pod)}`,
              );
              soon(clock.now() + remaining);
              continue;
            }
            this.deps.crashBackoff.next(key, exited.finishedAt);
          }
          try {
            let created = await early.get(name);
            if (!created) {
              created = await this.createPodContainer(
                ctx,
                pod,
                name,
                sandboxId,
                sandboxConfig,
                podIP,
                status,
                volumes,
              );
              made.containers.push(created.id);
            }
            await startCreatedContainer(ctx, created.req, created.id);
            this.failures.delete(name);
          } catch (err) {
            if (!isContainerStartError(err)) throw err;
            this.failures.set(name, { reason: err.reason, message: err.message });
            logger.warn('container start failed', {
              ...ctx.log,
              container: name,
              reason: err.reason,
              error: err.message,
              // What the pod is not told (a subPath's host paths, ...).
              ...(err.cause instanceof Error ? { cause: err.cause.message } : {}),
            });
            if (err.reason === 'ErrImagePull') soon(clock.now() + AFTER_PULL_FAILURE_MS);
            else if (err.reason === 'ImagePullBackOff') {
              const left = this.deps.images.backoff.remainingSinceUpdate(
                `${pod.metadata.uid}_${container.image}`,
              );
              soon(clock.now() + Math.max(AFTER_PULL_FAILURE_MS, left));
            } else soon(clock.now() + ERROR_BACKOFF_MAX_MS / 3);
          }
        }
      } else if (sandboxId && !actions.killPod) {
        await this.refreshVolumes(pod, soon);
      }
    } catch (err) {
      syncError = err;
    }
    if (
      actions.killPod ||
      actions.createSandbox ||
      actions.containersToKill.length + actions.containersToStart.length > 0 ||
      actions.initContainerToStart !== undefined
    ) {
      try {
        // Containers created while their sandbox started are all settled, save where the
        // sync stopped early (the next one lists them).
        await Promise.allSettled(early.values());
        status = await this.runtimeStatus(pod, { known: status, made });
      } catch (err) {
        throw syncError ?? err;
      }
    }

    await this.pruneDeadContainers(status);
    this.deps.prober.updatePod(pod, this.containerViews(pod, status));
    const posted = await this.syncStatus(pod, status);
    if (syncError) throw syncError;
    return { terminal: posted.phase === 'Succeeded' || posted.phase === 'Failed', nextSyncAt };
  }

  /** setUpVolumes for a sync of `pod`; a MountError is recorded as FailedMount and thrown. */
  private async setUpPodVolumes(
    pod: KubeletPod,
    ctx: ContainerContext,
    soon: (at: number) => void,
  ): Promise<PodVolumes> {
    try {
      return await setUpVolumes(pod, {
        dataDir: this.deps.dataDir,
        client: this.deps.client,
        mounter: this.deps.mounter,
        // A claim's PV must have node affinity to this node (claims.ts).
        nodeName: this.deps.nodeName,
        ...this.tokenOptions(soon),
        onTmpfsUnavailable: (volume, err) => {
          if (this.tmpfsWarned) return;
          this.tmpfsWarned = true;
          this.deps.logger.warn('secret volume written to disk: tmpfs cannot be mounted', {
            ...ctx.log,
            volume,
            error: err.message,
          });
        },
      });
    } catch (err) {
      if (err instanceof MountError) this.deps.recorder.event(pod, 'Warning', 'FailedMount', err.message);
      throw err;
    }
  }

  /**
   * Creates container `name` of `pod` in sandbox `sandboxId` (containers.ts createContainer),
   * its restart count from `status` (else from the pod's log files) and its log directory
   * made first.
   * @throws as createContainer; the volumes' error.
   */
  private async createPodContainer(
    ctx: ContainerContext,
    pod: KubeletPod,
    name: string,
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    podIP: string,
    status: PodRuntimeStatus,
    volumes: () => Promise<PodVolumes>,
  ): Promise<CreatedContainer> {
    const container = specContainer(pod, name)!;
    const last = latestContainer(status, name);
    // No container of this name in the runtime (removed behind the kubelet's back, the
    // runtime's state lost): the count goes on from the pod's log files.
    const podLogs = sandboxConfig.logDirectory;
    const restartCount = last
      ? last.restartCount + 1
      : podLogs
        ? await restartCountFromLogDir(join(podLogs, name))
        : 0;
    if (podLogs) await ensureContainerLogDir(podLogs, name);
    const req: StartContainerRequest = {
      pod,
      container,
      sandboxId,
      sandboxConfig,
      podIP,
      restartCount,
      volumes: await volumes(),
    };
    return { id: await createContainer(ctx, req), req };
  }

  /**
   * Removes the containers created in a sandbox that then failed to run (once their creates
   * settle); a failure is logged (the pod's cleanup removes what is left).
   */
  private async removeEarlyContainers(
    early: Map<string, Promise<CreatedContainer>>,
    log: Record<string, string>,
  ): Promise<void> {
    for (const made of early.values()) {
      const created = await made.catch(() => undefined);
      if (!created) continue;
      await this.deps.runtime.removeContainer(created.id).catch((err: unknown) =>
        this.deps.logger.warn('removing a container of a failed sandbox failed', {
          ...log,
          containerId: created.id,
          error: errorMessage(err),
        }),
      );
    }
  }

  /**
   * SyncTerminatingPod: stops every container with the pod's grace period, then the
   * sandboxes; stops probing; posts the final status unless the pod is gone from the API.
   */
  async syncTerminatingPod(pod: KubeletPod, sync: PodSyncContext): Promise<void> {
    await this.killPod(pod, sync, gracePeriodOf(pod), 'Stopping container');
    await this.deps.prober.removePod(this.uid);
    // Kubernetes ≥ 1.27: the stopped pod's status is terminal (Succeeded or Failed), also
    // for a deleted pod a finalizer keeps (status.ts, podIsTerminal).
    if (!sync.isPodRemoved()) await this.syncStatus(pod, await this.runtimeStatus(pod), true);
  }

  /**
   * SyncTerminatedPod: removes the pod's containers, sandboxes and volumes, then deletes
   * the pod object (grace 0, uid precondition) unless it is gone from the API already.
   */
  async syncTerminatedPod(pod: KubeletPod, sync: PodSyncContext): Promise<void> {
    await this.cleanUp(pod);
    if (!sync.isPodRemoved()) await this.deletePod(pod);
  }

  private logFields(pod: Pod): Record<string, string> {
    return { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, uid: this.uid };
  }

  private containerContext(pod: Pod, sync: PodSyncContext): ContainerContext {
    return { deps: this.deps, uid: this.uid, log: this.logFields(pod), signal: sync.signal };
  }

  /**
   * The runtime's view of the pod. A hostNetwork pod's IP is the node IP (the kubelet's
   * generateAPIPodStatus; CRI reports none for a sandbox in the node's network). `since`:
   * read anew by the ids of a status read before and of what was made since
   * (refreshPodRuntimeStatus), else listed.
   */
  private async runtimeStatus(
    pod: KubeletPod,
    since?: { known: PodRuntimeStatus; made: { sandboxes: string[]; containers: string[] } },
  ): Promise<PodRuntimeStatus> {
    const status = since
      ? await refreshPodRuntimeStatus(this.deps.runtime, since.known, since.made)
      : await getPodRuntimeStatus(this.deps.runtime, this.uid, this.deps.nodeName);
    if (!pod.spec.hostNetwork) return status;
    return {
      ...status,
      sandboxes: status.sandboxes.map((s) =>
        s.state === 'SANDBOX_READY' ? { ...s, ip: this.deps.nodeIP } : s,
      ),
    };
  }

  private logActions(pod: Pod, a: PodActions): void {
    if (
      !a.killPod &&
      !a.createSandbox &&
      a.containersToStart.length === 0 &&
      a.containersToKill.length === 0 &&
      a.initContainerToStart === undefined
    )
      return;
    this.deps.logger.debug('pod actions', {
      ...this.logFields(pod),
      killPod: a.killPod,
      createSandbox: a.createSandbox,
      attempt: a.attempt,
      start: a.containersToStart,
      startInit: a.initContainerToStart,
      kill: a.containersToKill.map((k) => k.name),
    });
  }

  /** What the prober needs to know about each container. */
  private containerViews(pod: KubeletPod, status: PodRuntimeStatus): Map<string, ContainerView> {
    const views = new Map<string, ContainerView>();
    const ip = status.sandboxes[0]?.ip ?? '';
    for (const c of pod.spec.containers) {
      const latest = latestContainer(status, c.name);
      if (!latest) continue;
      views.set(c.name, {
        containerId: latest.id,
        running: latest.state === 'CONTAINER_RUNNING',
        startedAt: latest.startedAt,
        podIP: ip,
      });
    }
    return views;
  }

  /**
   * Stops every running container (in parallel, SIGTERM then SIGKILL after `grace`
   * seconds) and then every ready sandbox of the pod. `event` (e.g. "Stopping container")
   * is recorded as Killing for each container stopped. `known`: the pod's runtime status
   * just read (else it is read here).
   */
  private async killPod(
    pod: KubeletPod,
    sync: PodSyncContext,
    grace: number,
    event: string | undefined,
    known?: PodRuntimeStatus,
  ): Promise<void> {
    const { runtime, logger } = this.deps;
    const ctx = this.containerContext(pod, sync);
    const status = known ?? (await this.runtimeStatus(pod));
    const podIP = status.sandboxes[0]?.ip ?? '';
    const running = status.containers.filter(
      (c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED',
    );
    await Promise.all(
      running.map(async (c) => {
        logger.info('stopping container', {
          ...ctx.log,
          container: c.name,
          containerId: c.id,
          gracePeriodSeconds: grace,
        });
        await killContainer(ctx, {
          pod,
          container: c,
          grace,
          message: event ? `${event} ${c.name}` : undefined,
          podIP,
        });
      }),
    );
    for (const s of status.sandboxes) {
      if (s.state === 'SANDBOX_READY') {
        await runtime.stopPodSandbox(s.id);
        logger.info('stopped pod sandbox', { ...ctx.log, sandboxId: s.id });
      }
    }
  }

  /** Removes the pod's containers, sandboxes and volumes (after killPod). */
  private async cleanUp(pod: KubeletPod): Promise<void> {
    const { runtime } = this.deps;
    const status = await this.runtimeStatus(pod);
    for (const c of status.containers) await runtime.removeContainer(c.id);
    for (const s of status.sandboxes) await runtime.removePodSandbox(s.id);
    await tearDownVolumes(this.deps.dataDir, this.uid, this.deps.mounter);
    if (this.deps.podLogsDir) await removePodLogs(podLogsDirectory(this.deps.podLogsDir, pod));
    this.deps.tokens?.deleteForPod(this.uid);
    this.deps.crashBackoff.resetPrefix(`${this.uid}_`);
    this.deps.images.backoff.resetPrefix(`${this.uid}_`);
  }

  /**
   * Keeps, per container name, the newest container and the newest dead one before it
   * (the kubelet's container GC with MaxPerPodContainer 1); removes sandboxes that are not
   * the newest, not ready, and hold no container any more.
   */
  private async pruneDeadContainers(status: PodRuntimeStatus): Promise<void> {
    const { runtime } = this.deps;
    const seen = new Map<string, number>();
    const removed = new Set<string>();
    for (const c of status.containers) {
      const n = (seen.get(c.name) ?? 0) + 1;
      seen.set(c.name, n);
      if (n > 2 && c.state === 'CONTAINER_EXITED') {
        await runtime.removeContainer(c.id);
        removed.add(c.id);
      }
    }
    const used = new Set(status.containers.filter((c) => !removed.has(c.id)).map((c) => c.podSandboxId));
    for (const s of status.sandboxes.slice(1)) {
      if (s.state !== 'SANDBOX_READY' && !used.has(s.id)) await runtime.removePodSandbox(s.id);
    }
  }

  /**
   * Generates the status (terminal: every container stopped for good) and patches
   * pods/<name>/status when it changed; returns it.
   */
  private async syncStatus(pod: KubeletPod, status: PodRuntimeStatus, terminal = false): Promise<PodStatus> {
    // What the kubelet last wrote, or has queued to write (with the conditions others own
    // now): a status someone else changed is compared with ours, and put right by
    // reconcileStatus; one queued and not yet written is not queued again.
    const mine = this.queued ?? this.lastPosted;
    const base = mine ? withOthersConditions(pod.status, mine) : pod.status;
    const next = generateAPIPodStatus({
      pod: { ...pod, status: { ...pod.status, ...base } },
      runtime: status,
      nodeIP: this.deps.nodeIP,
      runtimeName: await this.deps.runtimeName(),
      now: this.deps.clock.now(),
      failures: this.failures,
      ready: (c, id) => this.deps.prober.ready(this.uid, c, id),
      started: (c, id) => this.deps.prober.started(this.uid, c, id),
      podIsTerminal: terminal,
    });
    if (!statusChanged(base, next)) return next;
    await this.postStatus(pod, next);
    return next;
  }

  /**
   * PATCHes pods/<name>/status with `status` (or what the function gives when the write's
   * turn comes; undefined: nothing), one write at a time (a sync's and a reconcile's never
   * cross), and remembers it as the status last posted.
   */
  private postStatus(pod: Pod, status: PodStatus | (() => PodStatus | undefined)): Promise<void> {
    if (typeof status !== 'function') this.queued = status;
    const write = async () => {
      const next = typeof status === 'function' ? status() : status;
      if (!next) return;
      try {
        const updated = await this.deps.client.patch<Pod>(
          resources.pods,
          pod.metadata.namespace,
          pod.metadata.name ?? '',
          'merge',
          { status: { ...next, podIP: next.podIP ?? null, podIPs: next.podIPs ?? null } },
          { subresource: 'status' },
        );
        if (updated.metadata.uid !== this.uid) return;
        this.lastPosted = next;
        this.lastPostedRV = updated.metadata.resourceVersion;
        this.deps.logger.debug('pod status posted', { ...this.logFields(pod), phase: next.phase });
      } catch (err) {
        // The pod is gone: the informer will say so; nothing to post any more.
        if (!isNotFound(err)) throw err;
      } finally {
        // Written or failed: the next syncStatus compares with what was written.
        if (this.queued === next) this.queued = undefined;
      }
    };
    const done = this.posting.then(write, write);
    this.posting = done.catch(() => undefined);
    return done;
  }

  /** The final delete: grace 0 with a uid precondition, so a new pod of the same name is safe. */
  private async deletePod(pod: KubeletPod): Promise<void> {
    try {
      await this.deps.client.delete(resources.pods, pod.metadata.namespace, pod.metadata.name ?? '', {
        gracePeriodSeconds: 0,
        preconditions: { uid: this.uid },
      });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }
}
