/**
 * The TCP fast path: dial a backend (skipping endpoints that refuse or do not answer in
 * time), then relay bytes between the two sockets until both directions are done.
 * Half-close is passed through: both sockets allow half-open, so a client's FIN becomes
 * a FIN to the backend while the answer still flows back (kube-proxy's userspace
 * proxier did the same with io.Copy and CloseWrite). Nagle is off on both sockets so
 * small request/response exchanges are not delayed.
 *
 * Written with plain callbacks and one `data` listener per direction instead of promises
 * and `pipe()`: every proxied connection pays for what runs here, and with short-lived
 * connections (one request each) that cost is most of the proxy's CPU (bench:proxy's
 * `Connection: close` run). Backpressure is the same as pipe()'s: a write that fills the
 * other socket's buffer pauses this one until the other drains.
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

/** What dialFirst reports once: the connected socket and its endpoint, or why none accepted. */
export type DialCallback = (err: DialError | undefined, socket?: net.Socket, endpoint?: Endpoint) => void;

/**
 * Connects to the first of `candidates` that accepts, in order; an endpoint that refuses
 * (ECONNREFUSED, a reset) or does not accept within `timeoutMs` is skipped.
 * `onSocket` sees every socket as it is created (the caller tracks them, so that a
 * shutdown can destroy a dial in progress; a socket destroyed before it connects counts
 * as a failed attempt). `done` is called once: with the connected socket (no-delay,
 * half-open allowed) and its endpoint, or with a DialError naming every attempt.
 */
export function dialFirst(
  candidates: readonly Endpoint[],
  timeoutMs: number,
  onSocket: (socket: net.Socket) => void,
  done: DialCallback,
): void {
  let attempts: { endpoint: Endpoint; error: string }[] | undefined;
  const tryNext = (i: number): void => {
    const endpoint = candidates[i];
    if (endpoint === undefined) {
      done(new DialError(attempts ?? []));
      return;
    }
    let socket: net.Socket;
    try {
      socket = net.connect({ host: endpoint.ip, port: endpoint.port, allowHalfOpen: true, noDelay: true });
    } catch (err) {
      // Refused before any socket exists (a port out of range): the next endpoint, on a
      // later tick so that a list of such endpoints cannot grow the stack.
      (attempts ??= []).push({ endpoint, error: (err as NodeJS.ErrnoException).code ?? String(err) });
      setImmediate(() => tryNext(i + 1));
      return;
    }
    onSocket(socket);
    let settled = false;
    const fail = (error: string): void => {
      if (settled) return;
      settled = true;
      socket.removeListener('connect', onConnect);
      socket.destroy();
      (attempts ??= []).push({ endpoint, error });
      tryNext(i + 1);
    };
    const onError = (err: NodeJS.ErrnoException): void => fail(err.code ?? err.message);
    const onTimeout = (): void => fail('ETIMEDOUT');
    const onClose = (): void => fail('closed');
    const onConnect = (): void => {
      settled = true;
      socket.setTimeout(0);
      socket.removeListener('error', onError);
      socket.removeListener('timeout', onTimeout);
      socket.removeListener('close', onClose);
      done(undefined, socket, endpoint);
    };
    socket.once('connect', onConnect);
    socket.once('error', onError);
    socket.once('close', onClose);
    socket.setTimeout(timeoutMs, onTimeout);
  };
  tryNext(0);
}

/**
 * Joins `client` and `backend` until both directions are done; calls `done` once, when
 * both sockets are closed, with the bytes moved each way (`bytesIn`: client → backend).
 * An error on either side (a reset) destroys both; a side that ends cleanly ends the
 * other once what is still buffered for it is written.
 */
export function splice(
  client: net.Socket,
  backend: net.Socket,
  done?: (bytes: { bytesIn: number; bytesOut: number }) => void,
): void {
  client.setNoDelay(true);
  let open = 2;
  const closed = (): void => {
    if (--open === 0) done?.({ bytesIn: client.bytesRead, bytesOut: client.bytesWritten });
  };
  relay(client, backend, closed);
  relay(backend, client, closed);
  if (client.isPaused()) client.resume();
}

/** One direction of splice: `from`'s bytes to `to`, its end to `to`'s end, its close to `closed`. */
function relay(from: net.Socket, to: net.Socket, closed: () => void): void {
  let waiting = false;
  const resume = (): void => {
    waiting = false;
    from.resume();
  };
  from.on('data', (chunk: Buffer) => {
    if (!to.write(chunk) && !waiting) {
      waiting = true;
      from.pause();
      to.once('drain', resume);
    }
  });
  from.on('end', () => {
    if (!to.destroyed) to.end();
  });
  // Errors close both; the listener also keeps them from being thrown.
  from.on('error', () => to.destroy());
  from.once('close', (hadError: boolean) => {
    if (hadError || to.writableFinished || to.writableLength === 0) to.destroy();
    else {
      // Let what is still buffered for the other side go out, then close it.
      to.end();
      to.once('finish', () => to.destroy());
    }
    closed();
  });
}
