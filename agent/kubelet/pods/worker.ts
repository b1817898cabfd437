/**
 * The pod worker: one per pod UID, an explicit state machine (the kubelet's podWorkers,
 * pkg/kubelet/pod_workers.go, with kuberuntime's SyncPod and KillPod).
 *
 * Contract:
 *
 *   syncing ──(deletionTimestamp, pod removed from the API, or a terminal phase)──▶ terminating
 *   terminating ──(every container and the sandbox stopped)──▶ terminated
 *   terminated ──(deletionTimestamp or removed: containers, sandboxes and volumes removed,
 *                 then the pod object deleted with grace 0 and a uid precondition)──▶ done
 *
 * - Only one step runs at a time; update()/remove()/wake() mark the worker dirty and it
 *   steps again as soon as the current step ends (events are level-triggered: a missed or
 *   doubled wake-up does not matter, each step reads the runtime afresh).
 * - syncing: each step is a SyncPod: read the runtime's view of the pod, computePodActions,
 *   kill what must go, create the sandbox if needed, start containers (image per pull
 *   policy, CrashLoopBackOff: 10 s doubling to 300 s, reset after 10 minutes of running),
 *   prune dead containers (the newest dead one per container is kept for lastState),
 *   then post the status if it changed. A pod never goes back from terminating.
 * - Init containers: a step starts at most the one init container computePodActions names
 *   (same image, crash backoff and failure rules as app containers); app containers wait
 *   until the last one exited 0. Sidecar init containers (`restartPolicy: Always`) are not
 *   supported: they are skipped, with a Warning event SidecarContainersNotSupported.
 * - Hooks (kuberuntime startContainer / killContainer): postStart runs right after the
 *   start; when it fails (event FailedPostStartHook) the container is killed and the
 *   start fails with PostStartHookError. preStop runs before every stop of a container
 *   that has one, bounded by the grace period; its time is taken off the grace left for
 *   SIGTERM→SIGKILL (whole seconds, at least 2 s left, as the kubelet's
 *   minimumGracePeriodInSeconds); a failure records FailedPreStopHook and the stop goes on.
 * - terminating stops containers with SIGTERM and the pod's grace period
 *   (deletionGracePeriodSeconds, else terminationGracePeriodSeconds, else 30; at least 1),
 *   then the sandbox; a pod that simply finished (Succeeded/Failed) keeps its stopped
 *   containers, so its status and logs stay, until it is deleted.
 * - A failing step (runtime down, API error) is retried with backoff, 1 s doubling to
 *   30 s; the manager wakes every worker when the runtime answers again.
 * - stop() ends the loop without touching containers (a restarted agent adopts them).
 */
import type winston from 'winston';
import { sleep, type Clock } from '../../../api/clock.js';
import { isConflict, isNotFound } from '../../../api/client/errors.js';
import type { EventRecorder } from '../../../api/client/events.js';
import { resources } from '../../../api/client/resource.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { ObjectReference, Pod, PodStatus } from '../../../api/types.js';
import type { PodSandboxConfig, Runtime } from '../../../cri/api.js';
import { isCriError } from '../../../cri/errors.js';
import type { ProbeManager } from '../prober/manager.js';
import type { ContainerView } from '../prober/worker.js';
import { computePodActions, type PodActions } from './actions.js';
import type { Backoff } from './backoff.js';
import { containerConfig, podSandboxConfig, verifyRunAsNonRoot } from './config.js';
import { makeEnvironmentVariables } from './env.js';
import { ContainerStartError, isContainerStartError } from './errors.js';
import type { ImageManager } from './images.js';
import { hashContainer } from './labels.js';
import { runLifecycleHandler } from './lifecycle.js';
import {
  getPodRuntimeStatus,
  latestContainer,
  type ContainerRuntimeStatus,
  type PodRuntimeStatus,
} from './runtime-status.js';
import { generateAPIPodStatus, statusChanged, type StartFailure } from './status.js';
import { kubeletPod, podDesc, specContainer, type KubeletContainer, type KubeletPod } from './types.js';
import type { Mounter } from './mount.js';
import {
  containerMounts,
  MountError,
  podDir,
  setUpVolumes,
  tearDownVolumes,
  type PodVolumes,
} from './volumes.js';

/** The worker's states (see the file comment). */
export type PodWorkerState = 'syncing' | 'terminating' | 'terminated';

/** The node's pod network as the worker needs it (agent/kubelet/network.ts's PodNetworkManager fits). */
export interface PodNetwork {
  readonly name: string;
  /** False while the network does not exist yet; sandboxes wait for it. Undefined: always ready. */
  readonly ready?: boolean;
  /** Why it is not ready. */
  readonly error?: string | undefined;
}

/** What every pod worker of a node shares (built by the PodManager). */
export interface PodWorkerDeps {
  client: RestClient;
  runtime: Runtime;
  nodeName: string;
  nodeIP: string;
  podNetwork: PodNetwork;
  dataDir: string;
  recorder: Pick<EventRecorder, 'event'>;
  clock: Clock;
  logger: winston.Logger;
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
  /** Called once the worker is done (pod cleaned up and gone). */
  onDone(uid: string): void;
  /** Milliseconds between syncs of a pod nothing happens to (kubelet: 60 s). */
  resyncIntervalMs: number;
}

/** First retry of a failed step, ms. */
const ERROR_BACKOFF_INITIAL_MS = 1_000;
/** Longest retry delay of failed steps, ms. */
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

/**
 * The event reference of a pod's container (fieldPath `spec.containers{name}`, or
 * `spec.initContainers{name}` for an init container).
 */
export function containerRef(pod: Pod, name: string): ObjectReference {
  const init = pod.spec.initContainers?.some((c) => c.name === name) ?? false;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: pod.metadata.namespace ?? '',
    name: pod.metadata.name ?? '',
    uid: pod.metadata.uid ?? '',
    fieldPath: `spec.${init ? 'initContainers' : 'containers'}{${name}}`,
  };
}

/** The crash backoff key of a container (the kubelet's getStableKey). */
export function crashBackoffKey(pod: Pod, container: KubeletContainer): string {
  return `${pod.metadata.uid}_${pod.metadata.name}_${pod.metadata.namespace}_${container.name}_${hashContainer(container)}`;
}

/** The least grace (seconds) left for SIGTERM after a preStop hook (minimumGracePeriodInSeconds). */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;

/** The grace period (seconds) to stop the pod's containers with (calculateEffectiveGracePeriod). */
export function gracePeriodOf(pod: Pod): number {
  const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
  return Math.max(1, grace);
}

/** One pod's worker (see the file comment). */
export class PodWorker {
  readonly uid: string;
  private st: PodWorkerState = 'syncing';
  private pod: KubeletPod;
  private removed = false;
  private dirty = true;
  private wakeUp: AbortController | undefined;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private errorDelayMs = 0;
  /** Last start failure per container (the kubelet's reasonCache). */
  private readonly failures = new Map<string, StartFailure>();
  /** The status we last posted, and the resourceVersion the API gave it. */
  private lastPosted: PodStatus | undefined;
  private lastPostedRV: string | undefined;
  private sidecarsReported = false;
  private tmpfsWarned = false;
  private readonly deps: PodWorkerDeps;

  constructor(deps: PodWorkerDeps, pod: Pod) {
    if (!pod.metadata.uid) throw new Error('PodWorker: the pod has no uid');
    this.deps = deps;
    this.uid = pod.metadata.uid;
    this.pod = kubeletPod(pod);
  }

  /** The worker's state. */
  get state(): PodWorkerState {
    return this.st;
  }

  /** A newer version of the pod from the API. */
  update(pod: Pod): void {
    if (
      this.lastPosted &&
      pod.metadata.resourceVersion !== this.lastPostedRV &&
      statusChanged(pod.status, this.lastPosted)
    ) {
      // Someone else wrote the status (or an older version arrived late): compare with it again.
      this.lastPosted = undefined;
    }
    const before = this.pod;
    this.pod = kubeletPod(pod);
    // As the kubelet's pod config (podsDifferSemantically): a change of the status alone —
    // most often the one this worker just posted — is no reason to sync.
    if (before !== pod && !podsDifferSemantically(before, pod)) return;
    this.wake();
  }

  /** The pod is gone from the API. */
  remove(): void {
    this.removed = true;
    this.wake();
  }

  /** Asks for another step (a container changed, a probe result changed, the runtime is back). */
  wake(): void {
    this.dirty = true;
    this.wakeUp?.abort();
  }

  /** Starts the loop. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Ends the loop after the current step; containers are left as they are. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.wakeUp?.abort();
    await this.loop;
  }

  private get log() {
    return { pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, uid: this.uid };
  }

  private async run(): Promise<void> {
    const { clock, logger } = this.deps;
    while (!this.abort.signal.aborted) {
      this.dirty = false;
      let nextAt: number;
      try {
        const done = await this.step();
        this.errorDelayMs = 0;
        if (done === 'done') {
          this.deps.onDone(this.uid);
          return;
        }
        nextAt = done;
      } catch (err) {
        this.errorDelayMs = Math.min(
          ERROR_BACKOFF_MAX_MS,
          Math.max(ERROR_BACKOFF_INITIAL_MS, this.errorDelayMs * 2),
        );
        const level = isCriError(err, 'Unavailable') ? 'warn' : 'error';
        logger.log(level, 'pod sync failed, will retry', {
          ...this.log,
          state: this.st,
          retryInMs: this.errorDelayMs,
          error: err instanceof Error ? err.message : String(err),
        });
        nextAt = clock.now() + this.errorDelayMs;
      }
      if (this.dirty || this.abort.signal.aborted) continue;
      const wakeUp = new AbortController();
      this.wakeUp = wakeUp;
      if (this.dirty) continue;
      await sleep(
        clock,
        Math.max(0, nextAt - clock.now()),
        AbortSignal.any([wakeUp.signal, this.abort.signal]),
      );
      this.wakeUp = undefined;
    }
  }

  /** One step of the state machine; resolves with when to step again (ms since the epoch) or 'done'. */
  private async step(): Promise<number | 'done'> {
    const { clock, logger } = this.deps;
    const pod = this.pod;
    const phase = pod.status?.phase;
    if (this.st === 'syncing') {
      if (this.removed || pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') {
        this.st = 'terminating';
        logger.info('pod terminating', {
          ...this.log,
          why: this.removed ? 'removed' : pod.metadata.deletionTimestamp ? 'deleted' : `phase ${phase}`,
        });
      } else {
        const r = await this.syncPod(pod);
        if (!r.terminal) return r.nextAt;
        this.st = 'terminating';
        logger.info('pod terminating', { ...this.log, why: 'all containers finished' });
      }
    }
    if (this.st === 'terminating') {
      await this.killPod(pod, gracePeriodOf(pod), 'Stopping container');
      await this.deps.prober.removePod(this.uid);
      if (!this.removed) await this.syncStatus(pod, await this.runtimeStatus());
      this.st = 'terminated';
      logger.info('pod terminated', this.log);
    }
    if (this.removed || pod.metadata.deletionTimestamp) {
      await this.cleanUp();
      if (!this.removed) await this.deletePod(pod);
      logger.info('pod removed', this.log);
      return 'done';
    }
    return clock.now() + this.deps.resyncIntervalMs;
  }

  /**
   * The runtime's view of the pod. A hostNetwork pod's IP is the node IP (the kubelet's
   * generateAPIPodStatus; CRI reports none for a sandbox in the node's network).
   */
  private async runtimeStatus(): Promise<PodRuntimeStatus> {
    const status = await getPodRuntimeStatus(this.deps.runtime, this.uid, this.deps.nodeName);
    if (!this.pod.spec.hostNetwork) return status;
    return {
      ...status,
      sandboxes: status.sandboxes.map((s) =>
        s.state === 'SANDBOX_READY' ? { ...s, ip: this.deps.nodeIP } : s,
      ),
    };
  }

  /** SyncPod (see the file comment); `terminal` when the pod reached Succeeded or Failed. */
  private async syncPod(pod: KubeletPod): Promise<{ terminal: boolean; nextAt: number }> {
    const { runtime, clock, recorder, logger, podNetwork } = this.deps;
    let nextAt = clock.now() + this.deps.resyncIntervalMs;
    const soon = (at: number) => (nextAt = Math.min(nextAt, at));
    let status = await this.runtimeStatus();
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
    this.logActions(actions);

    // As the kubelet, the status is posted even when an action failed (the pod then shows
    // ContainerCreating or the failure's reason), and the failure is retried afterwards.
    let syncError: unknown;
    const podIP0 = status.sandboxes[0]?.ip ?? '';
    try {
      if (actions.killPod) {
        await this.killPod(pod, gracePeriodOf(pod), actions.createSandbox ? 'Stopping container' : undefined);
      } else {
        await Promise.all(
          actions.containersToKill.map(async (k) => {
            logger.info('killing container', {
              ...this.log,
              container: k.name,
              containerId: k.id,
              why: k.message,
            });
            const running = status.containers.find((c) => c.id === k.id);
            await this.killContainer(
              pod,
              running ?? { id: k.id, name: k.name, state: 'CONTAINER_RUNNING' },
              Math.max(1, pod.spec.terminationGracePeriodSeconds ?? 30),
              k.message,
              podIP0,
            );
          }),
        );
      }

      let sandboxId = actions.sandboxId;
      let podIP = status.sandboxes[0]?.ip ?? '';
      const node = { nodeName: this.deps.nodeName, nodeIP: this.deps.nodeIP, network: podNetwork.name };
      const sandboxConfig: PodSandboxConfig = podSandboxConfig(pod, actions.attempt, node);
      if (actions.createSandbox) {
        if (podNetwork.ready === false && !pod.spec.hostNetwork) {
          const why = `network is not ready: ${podNetwork.error ?? 'the pod network does not exist yet'}`;
          recorder.event(pod, 'Warning', 'NetworkNotReady', why);
          throw new Error(why);
        }
        try {
          sandboxId = await runtime.runPodSandbox(sandboxConfig);
        } catch (err) {
          if (!isCriError(err, 'Unavailable')) {
            recorder.event(
              pod,
              'Warning',
              'FailedCreatePodSandBox',
              `Failed to create pod sandbox: ${errorText(err)}`,
            );
          }
          throw err;
        }
        podIP = pod.spec.hostNetwork
          ? this.deps.nodeIP
          : (await runtime.podSandboxStatus(sandboxId)).network.ip;
        logger.info('created pod sandbox', { ...this.log, sandboxId, attempt: actions.attempt, podIP });
      }

      const toStart = actions.initContainerToStart
        ? [actions.initContainerToStart, ...actions.containersToStart]
        : actions.containersToStart;
      if (toStart.length > 0 && sandboxId) {
        let volumes: PodVolumes;
        try {
          volumes = await setUpVolumes(pod, {
            dataDir: this.deps.dataDir,
            client: this.deps.client,
            mounter: this.deps.mounter,
            onTmpfsUnavailable: (volume, err) => {
              if (this.tmpfsWarned) return;
              this.tmpfsWarned = true;
              logger.warn('secret volume written to disk: tmpfs cannot be mounted', {
                ...this.log,
                volume,
                error: err.message,
              });
            },
          });
        } catch (err) {
          if (err instanceof MountError) recorder.event(pod, 'Warning', 'FailedMount', err.message);
          throw err;
        }
        for (const name of toStart) {
          if (this.abort.signal.aborted || this.pod.metadata.deletionTimestamp || this.removed) break;
          const container = specContainer(pod, name)!;
          const last = latestContainer(status, name);
          if (last && last.state === 'CONTAINER_EXITED' && !actions.createSandbox) {
            const key = crashBackoffKey(pod, container);
            const remaining = this.deps.crashBackoff.remainingSince(key, last.finishedAt);
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
            this.deps.crashBackoff.next(key, last.finishedAt);
          }
          const restartCount = last ? last.restartCount + 1 : 0;
          try {
            await this.startContainer(pod, container, sandboxId, sandboxConfig, podIP, restartCount, volumes);
            this.failures.delete(name);
          } catch (err) {
            if (!isContainerStartError(err)) throw err;
            this.failures.set(name, { reason: err.reason, message: err.message });
            logger.warn('container start failed', {
              ...this.log,
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
        status = await this.runtimeStatus();
      } catch (err) {
        throw syncError ?? err;
      }
    }

    await this.pruneDeadContainers(status);
    this.deps.prober.updatePod(pod, this.containerViews(status));
    const posted = await this.syncStatus(pod, status);
    if (syncError) throw syncError;
    return { terminal: posted.phase === 'Succeeded' || posted.phase === 'Failed', nextAt };
  }

  private logActions(a: PodActions): void {
    if (
      !a.killPod &&
      !a.createSandbox &&
      a.containersToStart.length === 0 &&
      a.containersToKill.length === 0 &&
      a.initContainerToStart === undefined
    )
      return;
    this.deps.logger.debug('pod actions', {
      ...this.log,
      killPod: a.killPod,
      createSandbox: a.createSandbox,
      attempt: a.attempt,
      start: a.containersToStart,
      startInit: a.initContainerToStart,
      kill: a.containersToKill.map((k) => k.name),
    });
  }

  /** What the prober needs to know about each container. */
  private containerViews(status: PodRuntimeStatus): Map<string, ContainerView> {
    const views = new Map<string, ContainerView>();
    const ip = status.sandboxes[0]?.ip ?? '';
    for (const c of this.pod.spec.containers) {
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

  /** Pull, create and start one container (kuberuntime's startContainer). */
  private async startContainer(
    pod: KubeletPod,
    container: KubeletContainer,
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    podIP: string,
    restartCount: number,
    volumes: PodVolumes,
  ): Promise<void> {
    const { runtime, recorder, logger } = this.deps;
    const ref = containerRef(pod, container.name);
    await this.deps.images.ensureImageExists(pod, container, ref);
    let cfg;
    try {
      const image = (await runtime.imageStatus(container.image ?? '')) ?? {};
      const refusal = verifyRunAsNonRoot(pod, container, image);
      if (refusal) throw new ContainerStartError('CreateContainerConfigError', refusal);
      const envs = await makeEnvironmentVariables(pod, container, {
        client: this.deps.client,
        nodeName: this.deps.nodeName,
        hostIP: this.deps.nodeIP,
        podIP,
        ...(this.deps.nodeAllocatable ? { nodeAllocatable: this.deps.nodeAllocatable } : {}),
      });
      cfg = containerConfig(pod, container, {
        restartCount,
        envs,
        mounts: await containerMounts(container, volumes, {
          podDir: podDir(this.deps.dataDir, this.uid),
          envs,
          mounter: this.deps.mounter,
        }),
        nodeName: this.deps.nodeName,
      });
    } catch (err) {
      if (!isContainerStartError(err) && !(err instanceof MountError)) throw err;
      recorder.event(ref, 'Warning', 'Failed', `Error: ${err.message}`);
      throw isContainerStartError(err)
        ? err
        : new ContainerStartError('CreateContainerConfigError', err.message);
    }
    let id: string;
    try {
      id = await runtime.createContainer(sandboxId, cfg, sandboxConfig);
    } catch (err) {
      if (isCriError(err, 'Unavailable')) throw err;
      recorder.event(ref, 'Warning', 'Failed', `Error: ${errorText(err)}`);
      throw new ContainerStartError('CreateContainerError', errorText(err), { cause: err });
    }
    recorder.event(ref, 'Normal', 'Created', `Created container ${container.name}`);
    try {
      await runtime.startContainer(id);
    } catch (err) {
      if (isCriError(err, 'Unavailable')) throw err;
      const message = `failed to start container "${id}": ${errorText(err)}`;
      recorder.event(ref, 'Warning', 'Failed', `Error: ${message}`);
      throw new ContainerStartError('RunContainerError', message, { cause: err });
    }
    recorder.event(ref, 'Normal', 'Started', `Started container ${container.name}`);
    logger.info('started container', {
      ...this.log,
      container: container.name,
      containerId: id,
      image: container.image,
      restartCount,
    });
    const postStart = container.lifecycle?.postStart;
    if (postStart) {
      try {
        await runLifecycleHandler(pod, container, id, postStart, {
          exec: (cid, cmd, t) => runtime.execSync(cid, cmd, t),
          clock: this.deps.clock,
          podIP,
          signal: this.abort.signal,
        });
      } catch (err) {
        if (isCriError(err, 'Unavailable')) throw err;
        logger.warn('postStart hook failed', {
          ...this.log,
          container: container.name,
          error: errorText(err),
        });
        // As the kubelet: the hook's message stays out of the event (it may hold secrets).
        recorder.event(ref, 'Warning', 'FailedPostStartHook', 'PostStartHook failed');
        await this.killContainer(
          pod,
          { id, name: container.name, state: 'CONTAINER_RUNNING' },
          gracePeriodOf(pod),
          'FailedPostStartHook',
          podIP,
        );
        throw new ContainerStartError('PostStartHookError', errorText(err), { cause: err });
      }
    }
  }

  /**
   * killContainer (kuberuntime_container.go): records Killing with `message` (none when
   * undefined), runs the container's preStop hook if it has one, bounded by `grace`
   * seconds, and stops it with what is left of the grace (at least 2 s after a hook).
   */
  private async killContainer(
    pod: KubeletPod,
    c: Pick<ContainerRuntimeStatus, 'id' | 'name' | 'state'>,
    grace: number,
    message: string | undefined,
    podIP: string,
  ): Promise<void> {
    const { runtime, recorder, logger, clock } = this.deps;
    const ref = containerRef(pod, c.name);
    if (message) recorder.event(ref, 'Normal', 'Killing', message);
    const spec = specContainer(pod, c.name);
    const preStop = spec?.lifecycle?.preStop;
    let left = grace;
    if (spec && preStop && grace > 0 && c.state === 'CONTAINER_RUNNING') {
      const start = clock.now();
      const timeout = new AbortController();
      let overdue = false;
      const hook = runLifecycleHandler(
        pod,
        spec,
        c.id,
        preStop,
        { exec: (cid, cmd, t) => runtime.execSync(cid, cmd, t), clock, podIP, signal: timeout.signal },
        grace + 1,
      ).then(
        () => undefined,
        (err: unknown) => {
          logger.warn('preStop hook failed', {
            ...this.log,
            container: c.name,
            overdue,
            error: errorText(err),
          });
          // A hook cut short by the stop is no hook failure (the kubelet has stopped waiting for it).
          if (!overdue) recorder.event(ref, 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
        },
      );
      await Promise.race([
        hook,
        sleep(clock, grace * 1000, timeout.signal).then(() => {
          if (timeout.signal.aborted) return;
          overdue = true;
          logger.info('preStop hook not completed in grace period', {
            ...this.log,
            container: c.name,
            grace,
          });
        }),
      ]);
      timeout.abort();
      const tookSeconds = Math.floor((clock.now() - start) / 1000);
      left = Math.max(MINIMUM_GRACE_PERIOD_SECONDS, grace - tookSeconds);
      logger.info('preStop hook done', {
        ...this.log,
        container: c.name,
        tookSeconds,
        gracePeriodLeft: left,
      });
    }
    await runtime.stopContainer(c.id, left);
  }

  /**
   * Stops every running container (in parallel, SIGTERM then SIGKILL after `grace`
   * seconds) and then every ready sandbox of the pod. `event` (e.g. "Stopping container")
   * is recorded as Killing for each container stopped.
   */
  private async killPod(pod: KubeletPod, grace: number, event: string | undefined): Promise<void> {
    const { runtime, logger } = this.deps;
    const status = await this.runtimeStatus();
    const podIP = status.sandboxes[0]?.ip ?? '';
    const running = status.containers.filter(
      (c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED',
    );
    await Promise.all(
      running.map(async (c) => {
        logger.info('stopping container', {
          ...this.log,
          container: c.name,
          containerId: c.id,
          gracePeriodSeconds: grace,
        });
        await this.killContainer(pod, c, grace, event ? `${event} ${c.name}` : undefined, podIP);
      }),
    );
    for (const s of status.sandboxes) {
      if (s.state === 'SANDBOX_READY') {
        await runtime.stopPodSandbox(s.id);
        logger.info('stopped pod sandbox', { ...this.log, sandboxId: s.id });
      }
    }
  }

  /** Removes the pod's containers, sandboxes and volumes (after killPod). */
  private async cleanUp(): Promise<void> {
    const { runtime } = this.deps;
    const status = await this.runtimeStatus();
    for (const c of status.containers) await runtime.removeContainer(c.id);
    for (const s of status.sandboxes) await runtime.removePodSandbox(s.id);
    await tearDownVolumes(this.deps.dataDir, this.uid, this.deps.mounter);
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

  /** Generates the status and patches pods/<name>/status when it changed; returns it. */
  private async syncStatus(pod: KubeletPod, status: PodRuntimeStatus): Promise<PodStatus> {
    const base = this.lastPosted ?? pod.status;
    const next = generateAPIPodStatus({
      pod: { ...pod, status: { ...pod.status, ...base } },
      runtime: status,
      nodeIP: this.deps.nodeIP,
      runtimeName: await this.deps.runtimeName(),
      now: this.deps.clock.now(),
      failures: this.failures,
      ready: (c, id) => this.deps.prober.ready(this.uid, c, id),
      started: (c, id) => this.deps.prober.started(this.uid, c, id),
    });
    if (!statusChanged(base, next)) return next;
    try {
      const updated = await this.deps.client.patch<Pod>(
        resources.pods,
        pod.metadata.namespace,
        pod.metadata.name ?? '',
        'merge',
        { status: { ...next, podIP: next.podIP ?? null, podIPs: next.podIPs ?? null } },
        { subresource: 'status' },
      );
      if (updated.metadata.uid !== this.uid) return next;
      this.lastPosted = next;
      this.lastPostedRV = updated.metadata.resourceVersion;
      this.deps.logger.debug('pod status posted', { ...this.log, phase: next.phase });
    } catch (err) {
      // The pod is gone: the informer will say so; nothing to post any more.
      if (!isNotFound(err)) throw err;
    }
    return next;
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

/** True when what the kubelet acts on differs: spec, labels, annotations, deletion. */
export function podsDifferSemantically(a: Pod, b: Pod): boolean {
  const view = (p: Pod) =>
    JSON.stringify([
      p.spec,
      p.metadata.labels,
      p.metadata.annotations,
      p.metadata.deletionTimestamp,
      p.metadata.deletionGracePeriodSeconds,
    ]);
  return view(a) !== view(b);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
