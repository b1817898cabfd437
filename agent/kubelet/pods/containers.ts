/**
 * Starting and killing one container of a pod, with its hooks: kuberuntime_container.go's
 * startContainer and killContainer, called by the pod syncer (sync.ts).
 *
 * - startContainer: image per pull policy (ImageManager), runAsNonRoot check, environment
 *   and mounts, CreateContainer, StartContainer, then postStart. Failures the pod is told
 *   about are ContainerStartErrors with the kubelet's reasons (CreateContainerConfigError,
 *   CreateContainerError, RunContainerError, PostStartHookError, ErrImagePull, ...); a
 *   runtime that is down (CriError Unavailable) is thrown as is, to be retried.
 * - A failed postStart (event FailedPostStartHook) kills the container and fails the
 *   start with PostStartHookError.
 * - killContainer: records Killing, runs preStop if the container has one and is running,
 *   bounded by the grace period; its time is taken off the grace left for SIGTERM→SIGKILL
 *   (whole seconds, at least 2 s left, as minimumGracePeriodInSeconds); a failure records
 *   FailedPreStopHook and the stop goes on.
 */
import type { Logger } from '../../../api/log.js';
import type { Clock } from '../../../api/clock.js';
import type { EventRecorder } from '../../../api/client/events.js';
import type { RestClient } from '../../../api/client/rest.js';
import type { ObjectReference, Pod } from '../../../api/types.js';
import type { PodSandboxConfig, Runtime } from '../../../cri/index.js';
import { isCriError } from '../../../cri/index.js';
import { containerConfig, verifyRunAsNonRoot } from './config.js';
import { podHostnameAndDomain, type DnsConfigurer } from './dns.js';
import { makeEnvironmentVariables } from './env.js';
import { ensureHostsFile } from './etc-hosts.js';
import { ContainerStartError, isContainerStartError } from './errors.js';
import type { ImageManager } from './images.js';
import { runLifecycleHandler } from './lifecycle.js';
import type { Mounter } from './mount.js';
import type { ContainerRuntimeStatus } from './runtime-status.js';
import { specContainer, type KubeletContainer, type KubeletPod } from './types.js';
import { containerMounts, MountError, podDir, type PodVolumes } from './volumes.js';
import { errorMessage } from '../../../api/errors.js';

/** The least grace (seconds) left for SIGTERM after a preStop hook (minimumGracePeriodInSeconds). */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;

/** The grace period (seconds) to stop the pod's containers with (calculateEffectiveGracePeriod). */
export function gracePeriodOf(pod: Pod): number {
  const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
  return Math.max(1, grace);
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

/** What starting and killing containers needs of the node (a subset of the syncer's deps). */
export interface ContainerDeps {
  client: RestClient;
  runtime: Runtime;
  nodeName: string;
  nodeIP: string;
  dataDir: string;
  recorder: Pick<EventRecorder, 'event'>;
  clock: Clock;
  logger: Logger;
  images: ImageManager;
  mounter: Mounter;
  nodeAllocatable?: () => Promise<Record<string, string>>;
  /** The node's DNS settings (dns.ts): the cluster domain of the pod's FQDN in /etc/hosts. */
  dns?: DnsConfigurer;
  /**
   * The Service variables of a pod in `namespace` (envvars.ts), once the Services are
   * synced; unset: none (a kubelet that reads no Services).
   * @throws ContainerStartError CreateContainerConfigError when the Services cannot be read.
   */
  serviceEnv?: (
    namespace: string,
    enableServiceLinks: boolean,
    signal: AbortSignal,
  ) => Promise<Map<string, string>>;
}

/** The per-pod part of a container action. */
export interface ContainerContext {
  deps: ContainerDeps;
  /** The pod's UID (its directory under `<dataDir>/pods`). */
  uid: string;
  /** Fields every log line about the pod carries (`pod`, `uid`). */
  log: Record<string, string>;
  /** Aborts when the pod's worker stops: a running postStart hook is cut short. */
  signal: AbortSignal;
}

/** One container to start. */
export interface StartContainerRequest {
  pod: KubeletPod;
  container: KubeletContainer;
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
  /** The sandbox's IP ('' when unknown), for the environment and the hooks. */
  podIP: string;
  /** 0 for the first container of this name, else the previous one's count plus 1. */
  restartCount: number;
  /** The pod's volumes, set up (setUpVolumes). */
  volumes: PodVolumes;
}

/**
 * Pull, create and start one container, then run its postStart hook (kuberuntime's
 * startContainer): createContainer, then startCreatedContainer.
 * @throws ContainerStartError for a failure the pod's status reports (see the file comment);
 *   CriError Unavailable while the runtime is down; other errors as they come.
 */
export async function startContainer(ctx: ContainerContext, req: StartContainerRequest): Promise<void> {
  await startCreatedContainer(ctx, req, await createContainer(ctx, req));
}

/**
 * The first half of startContainer: the image per pull policy, the runAsNonRoot check, the
 * environment, mounts and /etc/hosts, and CreateContainer (event Created). The sandbox
 * need not run yet where the runtime allows it (RunPodSandboxOptions.onCreated).
 * @returns the new container's id.
 * @throws as startContainer.
 */
export async function createContainer(ctx: ContainerContext, req: StartContainerRequest): Promise<string> {
  const { runtime, recorder } = ctx.deps;
  const { pod, container, sandboxId, sandboxConfig, podIP, restartCount, volumes } = req;
  const ref = containerRef(pod, container.name);
  await ctx.deps.images.ensureImageExists(pod, container, ref);
  let cfg;
  try {
    const image = (await runtime.imageStatus(container.image ?? '')) ?? {};
    const refusal = verifyRunAsNonRoot(pod, container, image);
    if (refusal) throw new ContainerStartError('CreateContainerConfigError', refusal);
    const serviceEnv = await ctx.deps.serviceEnv?.(
      pod.metadata.namespace ?? 'default',
      pod.spec.enableServiceLinks ?? true,
      ctx.signal,
    );
    const envs = await makeEnvironmentVariables(pod, container, {
      client: ctx.deps.client,
      nodeName: ctx.deps.nodeName,
      hostIP: ctx.deps.nodeIP,
      podIP,
      ...(ctx.deps.nodeAllocatable ? { nodeAllocatable: ctx.deps.nodeAllocatable } : {}),
      ...(serviceEnv ? { serviceEnv } : {}),
    });
    const mounts = await containerMounts(container, volumes, {
      podDir: podDir(ctx.deps.dataDir, ctx.uid),
      envs,
      mounter: ctx.deps.mounter,
    });
    const names = podHostnameAndDomain(pod, ctx.deps.dns?.clusterDomain ?? 'cluster.local');
    const hosts = await ensureHostsFile(container, {
      podDir: podDir(ctx.deps.dataDir, ctx.uid),
      podIPs: [podIP],
      ...names,
      hostAliases: pod.spec.hostAliases ?? [],
      hostNetwork: pod.spec.hostNetwork ?? false,
    });
    if (hosts) mounts.push(hosts);
    cfg = containerConfig(pod, container, {
      restartCount,
      envs,
      mounts,
      nodeName: ctx.deps.nodeName,
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
    recorder.event(ref, 'Warning', 'Failed', `Error: ${errorMessage(err)}`);
    throw new ContainerStartError('CreateContainerError', errorMessage(err), { cause: err });
  }
  recorder.event(ref, 'Normal', 'Created', `Created container ${container.name}`);
  return id;
}

/**
 * The second half of startContainer: StartContainer of `id` (made by createContainer for
 * `req`; its sandbox ready), event Started, then the postStart hook.
 * @throws as startContainer.
 */
export async function startCreatedContainer(
  ctx: ContainerContext,
  req: StartContainerRequest,
  id: string,
): Promise<void> {
  const { runtime, recorder, logger } = ctx.deps;
  const { pod, container, podIP, restartCount } = req;
  const ref = containerRef(pod, container.name);
  try {
    await runtime.startContainer(id);
  } catch (err) {
    if (isCriError(err, 'Unavailable')) throw err;
    const message = `failed to start container "${id}": ${errorMessage(err)}`;
    recorder.event(ref, 'Warning', 'Failed', `Error: ${message}`);
    throw new ContainerStartError('RunContainerError', message, { cause: err });
  }
  recorder.event(ref, 'Normal', 'Started', `Started container ${container.name}`);
  logger.info('started container', {
    ...ctx.log,
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
        clock: ctx.deps.clock,
        podIP,
        signal: ctx.signal,
      });
    } catch (err) {
      if (isCriError(err, 'Unavailable')) throw err;
      logger.warn('postStart hook failed', {
        ...ctx.log,
        container: container.name,
        error: errorMessage(err),
      });
      // As the kubelet: the hook's message stays out of the event (it may hold secrets).
      recorder.event(ref, 'Warning', 'FailedPostStartHook', 'PostStartHook failed');
      await killContainer(ctx, {
        pod,
        container: { id, name: container.name, state: 'CONTAINER_RUNNING' },
        grace: gracePeriodOf(pod),
        message: 'FailedPostStartHook',
        podIP,
      });
      throw new ContainerStartError('PostStartHookError', errorMessage(err), { cause: err });
    }
  }
}

/** One container to kill. */
export interface KillContainerRequest {
  pod: KubeletPod;
  container: Pick<ContainerRuntimeStatus, 'id' | 'name' | 'state'>;
  /** Seconds for preStop and SIGTERM together before SIGKILL. */
  grace: number;
  /** The Killing event's message; none recorded when undefined. */
  message: string | undefined;
  /** The sandbox's IP, for an httpGet preStop hook. */
  podIP: string;
}

/**
 * killContainer (kuberuntime_container.go): records Killing with `message` (none when
 * undefined), runs the container's preStop hook if it has one, bounded by `grace`
 * seconds, and stops it with what is left of the grace (at least 2 s after a hook).
 * @throws what the runtime's StopContainer throws (a hook's failure is only recorded).
 */
export async function killContainer(ctx: ContainerContext, req: KillContainerRequest): Promise<void> {
  const { runtime, recorder, logger, clock } = ctx.deps;
  const { pod, container: c, grace, message, podIP } = req;
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
          ...ctx.log,
          container: c.name,
          overdue,
          error: errorMessage(err),
        });
        // A hook cut short by the stop is no hook failure (the kubelet has stopped waiting for it).
        if (!overdue) recorder.event(ref, 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
      },
    );
    await Promise.race([
      hook,
      clock.sleep(grace * 1000, timeout.signal).then(() => {
        if (timeout.signal.aborted) return;
        overdue = true;
        logger.info('preStop hook not completed in grace period', {
          ...ctx.log,
          container: c.name,
          grace,
        });
      }),
    ]);
    timeout.abort();
    const tookSeconds = Math.floor((clock.now() - start) / 1000);
    left = Math.max(MINIMUM_GRACE_PERIOD_SECONDS, grace - tookSeconds);
    logger.info('preStop hook done', {
      ...ctx.log,
      container: c.name,
      tookSeconds,
      gracePeriodLeft: left,
    });
  }
  await runtime.stopContainer(c.id, left);
}
