/**
 * The TCP fast path: dial a backend (skipping endpoints that refuse or do not answer in
 * time), then splice the two sockets together with `pipe()` both ways. Node's streams do
 * the copying and the backpressure (a slow reader pauses the other side's socket); no
 * JavaScript runs per byte. Nagle is off on both sockets so small request/response
 * exchanges are not delayed. Half-close is passed through: both sockets allow half-open,
 * so a client's FIN becomes a FIN to the backend while the answer still flows back
 * (kube-proxy's userspace proxier did the same with io.Copy and CloseWrite).
 */
import net from 'node:net';
import type { Endpoint } from './balancer.js';

/** Default time a backend gets to accept a connection before the next is tried, ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 1000;

/** Why dialing failed for every candidate. */
export class DialError extends Error {
  constructor(readonly attempts: { endpoint: Endpoint; error: string }[]) {
    super(
      attempts.length === 0
        ? 'no endpoints'
        : `every endpoint failed: ${attempts.map((a) => `${a.endpoint.ip}:${a.endpoint.port} ${a.error}`).join(', ')}`,
    );
  }
}

/**
 * Connects to the first of `candidates` that accepts, in order; an endpoint that refuses
 * (ECONNREFUSED, a reset) or does not accept within `timeoutMs` is skipped.
 * @returns the connected socket (no-delay, half-open allowed) and the endpoint that took it.
 * @throws DialError when all fail (or there are none); `signal` aborted: DialError too.
 */
export async function dialFirst(
  candidates: readonly Endpoint[],
  timeoutMs: number = DEFAULT_CONNECT_TIMEOUT_MS,
  signal?: AbortSignal,
): Promise<{ socket: net.Socket; endpoint: Endpoint }> {
  const attempts: { endpoint: Endpoint; error: string }[] = [];
  for (const endpoint of candidates) {
    if (signal?.aborted) break;
    try {
      const socket = await dial(endpoint, timeoutMs, signal);
      return { socket, endpoint };
    } catch (err) {
      attempts.push({ endpoint, error: (err as NodeJS.ErrnoException).code ?? String(err) });
    }
  }
  throw new DialError(attempts);
}

function dial(endpoint: Endpoint, timeoutMs: number, signal?: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: endpoint.ip,
      port: endpoint.port,
      allowHalfOpen: true,
      noDelay: true,
    });
    const fail = (err: Error): void => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const onError = (err: Error): void => fail(err);
    const onTimeout = (): void => fail(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' }));
    const onAbort = (): void => fail(Object.assign(new Error('aborted'), { code: 'ABORTED' }));
    const onConnect = (): void => {
      cleanup();
      socket.setTimeout(0);
      resolve(socket);
    };
    const cleanup = (): void => {
      socket.off('error', onError);
      socket.off('timeout', onTimeout);
      socket.off('connect', onConnect);
      signal?.removeEventListener('abort', onAbort);
    };
    socket.once('connect', onConnect);
    socket.once('error', onError);
    socket.setTimeout(timeoutMs, onTimeout);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Joins `client` and `backend` until both directions are done. Resolves when both sockets
 * are closed, with the bytes moved each way. An error on either side (a reset) destroys
 * both; a side that closes cleanly lets the other flush what it still has to write first.
 */
export function splice(
  client: net.Socket,
  backend: net.Socket,
): Promise<{ bytesIn: number; bytesOut: number }> {
  client.setNoDelay(true);
  backend.setNoDelay(true);
  client.pipe(backend);
  backend.pipe(client);
  const closed = (s: net.Socket): Promise<void> =>
    new Promise((resolve) => (s.closed ? resolve() : s.once('close', () => resolve())));
  const onClose = (other: net.Socket) => (hadError: boolean) => {
    if (hadError || other.writableFinished || other.writableLength === 0) other.destroy();
    else {
      other.end();
      other.once('finish', () => other.destroy());
    }
  };
  // Errors are handled by closing; the listeners also keep them from being thrown.
  client.on('error', () => backend.destroy());
  backend.on('error', () => client.destroy());
  client.once('close', onClose(backend));
  backend.once('close', onClose(client));
  if (client.isPaused()) client.resume();
  return Promise.all([closed(client), closed(backend)]).then(() => ({
    bytesIn: client.bytesRead,
    bytesOut: client.bytesWritten,
  }));
}
