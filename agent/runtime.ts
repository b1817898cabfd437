/**
 * Opening the container runtime without waiting for it: the kubelet starts, registers its
 * Node and reports "container runtime is down" while the runtime cannot be reached, and
 * goes on once it answers. connectRuntime() returns at once a Runtime whose calls reject
 * with CriError Unavailable until cri/'s openRuntime() has succeeded (retried with
 * backoff, 1 s doubling to 30 s), and go to the opened adapter afterwards. The rejection's
 * message is the last failure's (containerd's names its socket), so the node's Ready
 * message says what is missing.
 */
import type { Logger } from '../api/log.js';
import { realClock, type Clock } from '../api/clock.js';
import {
  CriError,
  openRuntime,
  type DockerPodInterfaces,
  type Runtime,
  type RuntimeKind,
} from '../cri/index.js';

/** A runtime being opened in the background. */
export interface ConnectingRuntime {
  /** Usable at once; rejects with Unavailable until connected. */
  runtime: Runtime;
  /** Resolves once the adapter is open (or never, if stopped first). */
  connected: Promise<void>;
  /** Stops retrying and closes the adapter if it was opened. */
  close(): Promise<void>;
}

/** Where the runtime is, for the kinds that are reached over a socket. */
export interface RuntimeEndpoint {
  /** containerd's CRI endpoint (`--container-runtime-endpoint`; default `unix:///run/containerd/containerd.sock`). Docker's is DOCKER_HOST. */
  endpoint?: string;
  /** Where a CRI runtime writes the pods' log files (the kubelet's podLogsDir); Docker keeps its own. */
  podLogsDir?: string;
  /** Docker's: the network module's plugin for sandboxes with NetworkMode none (agent/network/pod-interfaces.ts). */
  podInterfaces?: DockerPodInterfaces;
}

/** Opens `kind` for `nodeName`, retrying in the background (see the file comment). */
export function connectRuntime(
  kind: RuntimeKind,
  nodeName: string,
  logger: Logger,
  clock: Clock = realClock,
  where: RuntimeEndpoint = {},
): ConnectingRuntime {
  let current: Runtime | undefined;
  let lastError = 'not connected yet';
  const stop = new AbortController();
  let markConnected: () => void = () => {};
  const connected = new Promise<void>((resolve) => (markConnected = resolve));
  const opening = (async () => {
    let delay = 1_000;
    while (!stop.signal.aborted) {
      try {
        current =
          kind === 'containerd'
            ? await openRuntime('containerd', {
                nodeName,
                ...(where.endpoint !== undefined ? { endpoint: where.endpoint } : {}),
                ...(where.podLogsDir !== undefined ? { podLogsDir: where.podLogsDir } : {}),
              })
            : kind === 'docker' && where.podInterfaces
              ? await openRuntime('docker', { nodeName, podInterfaces: where.podInterfaces })
              : await openRuntime(kind, { nodeName });
        logger.info('connected to the container runtime', {
          node: nodeName,
          runtime: kind,
          ...(where.endpoint !== undefined ? { endpoint: where.endpoint } : {}),
        });
        markConnected();
        return;
      } catch (err) {
        lastError = (err as Error).message;
        logger.warn('cannot reach the container runtime, will retry', {
          node: nodeName,
          runtime: kind,
          error: lastError,
          retryInMs: delay,
        });
      }
      await clock.sleep(delay, stop.signal);
      delay = Math.min(delay * 2, 30_000);
    }
  })();
  const runtime = new Proxy({} as Runtime, {
    get: (_target, prop) => {
      if (current) {
        const value = Reflect.get(current, prop) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
      }
      if (prop === 'then') return undefined; // not a thenable
      return () => Promise.reject(new CriError('Unavailable', lastError));
    },
  });
  return {
    runtime,
    connected,
    close: async () => {
      stop.abort();
      await opening;
      await current?.close();
    },
  };
}
