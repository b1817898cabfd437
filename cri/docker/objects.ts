/**
 * What every part of the Docker adapter shares: the engine, the node whose objects it
 * owns, and the calls that keep to them. An object is this adapter's only when its labels
 * name this node and the asked type (labels.ts, isOwned); anything else — unknown,
 * another node's, a sandbox asked for as a container — is NotFound, as if it did not
 * exist. Every engine call goes through `call()`, which refuses after close() and maps
 * what the engine throws to a CriError (errors.ts).
 */
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import type { PodSandboxStatus } from '../api.js';
import { CriError } from '../errors.js';
import type { DockerEngine } from './engine.js';
import { criCodeOf, dockerErrorInfo, toCriError } from './errors.js';
import { LABEL_CONTAINER_LOG_PATH, removeContainerLogSymlink } from './log-symlink.js';
import {
  LABEL_NODE,
  LABEL_POD_IP,
  LABEL_SANDBOX_ID,
  LABEL_TYPE,
  TYPE_SANDBOX,
  isOwned,
  sandboxFromLabels,
  type ObjectType,
} from './labels.js';

/** Now, in ns since the epoch (CRI's timestamps). */
export const nsNow = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** Rejects after `ms` with DeadlineExceeded; `cancel()` stops the timer. */
export function deadline(ms: number, what: string): { promise: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new CriError('DeadlineExceeded', `${what}: timed out after ${ms / 1000}s`)),
      ms,
    );
  });
  promise.catch(() => undefined);
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Resolves when `stream` ends or closes; rejects on its error. */
export function streamDone(stream: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', reject);
  });
}

/** True when every key of `selector` has its value in `labels` (CRI's label selector). */
export function matches(labels: Record<string, string>, selector?: Record<string, string>): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/**
 * The CRI PodSandboxStatus of an inspected sandbox container (its IP only while it runs):
 * the address of its label `io.k8ts.pod-ip` when the agent made its interface
 * (pod-interfaces.ts), else Docker's on the sandbox's network.
 */
export function sandboxStatusOf(info: Docker.ContainerInspectInfo): PodSandboxStatus {
  const view = sandboxFromLabels(info.Config.Labels);
  const networks = info.NetworkSettings.Networks ?? {};
  const own = info.Config.Labels[LABEL_POD_IP];
  const ip = !info.State.Running
    ? ''
    : (own ?? networks[view.network || 'bridge']?.IPAddress ?? info.NetworkSettings.IPAddress ?? '');
  return {
    id: info.Id,
    metadata: view.metadata,
    state: info.State.Running ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
    createdAt: view.createdAt,
    labels: view.labels,
    annotations: view.annotations,
    network: { ip },
  };
}

/** The engine, as one node's adapter may use it (see the file comment). */
export class DockerObjects {
  private closed = false;
  /**
   * Ids of the sandboxes this adapter has created and is starting (sandbox.ts, run):
   * containers may be created in them already (RunPodSandboxOptions.onCreated), not started.
   */
  readonly starting = new Set<string>();

  constructor(
    readonly engine: DockerEngine,
    readonly nodeName: string,
  ) {}

  /** Makes every later call fail Unavailable. */
  close(): void {
    this.closed = true;
  }

  /** @throws CriError Unavailable after close(). */
  checkOpen(): void {
    if (this.closed) throw new CriError('Unavailable', 'docker runtime: connection closed');
  }

  /** Runs an engine call, turning what it throws into a CriError. */
  async call<T>(what: string, fn: (engine: DockerEngine) => Promise<T>): Promise<T> {
    this.checkOpen();
    try {
      return await fn(this.engine);
    } catch (err) {
      throw toCriError(err, what);
    }
  }

  /**
   * `docker inspect` of `id` when it is an object of `type` on this node. Anything else
   * (unknown, another node's, the other type) is NotFound — or undefined with `orUndefined`.
   */
  async inspectOwned(id: string, type: ObjectType): Promise<Docker.ContainerInspectInfo>;
  async inspectOwned(
    id: string,
    type: ObjectType,
    orUndefined: true,
  ): Promise<Docker.ContainerInspectInfo | undefined>;
  async inspectOwned(
    id: string,
    type: ObjectType,
    orUndefined = false,
  ): Promise<Docker.ContainerInspectInfo | undefined> {
    const noun = type === TYPE_SANDBOX ? 'pod sandbox' : 'container';
    let info: Docker.ContainerInspectInfo | undefined;
    if (id !== '') {
      try {
        info = await this.call(`inspect ${noun} ${id}`, (e) => e.inspectContainer(id));
      } catch (err) {
        if (!(err instanceof CriError && err.code === 'NotFound')) throw err;
      }
    }
    if (info && isOwned(info.Config.Labels, this.nodeName, type)) return info;
    if (orUndefined) return undefined;
    throw new CriError('NotFound', `${noun} ${JSON.stringify(id)} not found`);
  }

  /** `docker ps -a` of this node's objects of `type` (optionally one id or one sandbox's). */
  listOwned(type: ObjectType, sel: { id?: string; sandboxId?: string }): Promise<Docker.ContainerInfo[]> {
    const label = [`${LABEL_NODE}=${this.nodeName}`, `${LABEL_TYPE}=${type}`];
    if (sel.sandboxId !== undefined) label.push(`${LABEL_SANDBOX_ID}=${sel.sandboxId}`);
    const filters: Record<string, string[]> = { label };
    if (sel.id !== undefined) filters.id = [sel.id];
    return this.call(`list ${type}s`, (e) => e.listContainers(filters));
  }

  /** Stops `id` within `timeoutSeconds`; already stopped or gone is done. */
  async stopById(id: string, timeoutSeconds: number): Promise<void> {
    try {
      await this.call(`stop ${id}`, (e) => e.stopContainer(id, Math.max(0, timeoutSeconds)));
    } catch (err) {
      // 304: already stopped; 404: already gone.
      const status = dockerErrorInfo((err as CriError).cause).statusCode;
      if (status === 304 || status === 404) return;
      throw err;
    }
  }

  /**
   * Removes app container `id` (docker labels `labels`) as CRI's RemoveContainer: its
   * kubelet log symlink first (log-symlink.ts), then the container, as removeById.
   */
  async removeContainer(id: string, labels: Record<string, string> | undefined): Promise<void> {
    await removeContainerLogSymlink(id, labels?.[LABEL_CONTAINER_LOG_PATH]);
    await this.removeById(id);
  }

  /** Removes `id` and its anonymous volumes, forcibly; gone, or already being removed, is done. */
  async removeById(id: string): Promise<void> {
    try {
      await this.call(`remove ${id}`, (e) => e.removeContainer(id, { force: true, v: true }));
    } catch (err) {
      const info = dockerErrorInfo((err as CriError).cause);
      if (info.statusCode === 404) return;
      if (criCodeOf(info) === 'FailedPrecondition' && /already in progress/.test(info.message)) return;
      throw err;
    }
  }
}
