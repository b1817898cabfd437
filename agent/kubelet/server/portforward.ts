/**
 * Port-forward as the kubelet serves it (pkg/kubelet/cri/streaming/portforward,
 * protocol `portforward.k8s.io`), over a SPDY/3.1 session (spdy.ts) that kubectl 1.31+
 * tunnels inside a websocket with subprotocol `SPDY/3.1+portforward.k8s.io` — each binary
 * message a slice of the SPDY byte stream (KEP-4006) — or, from older clients (and kubectl
 * with KUBECTL_PORT_FORWARD_WEBSOCKETS=false), directly on the connection after an
 * `Upgrade: SPDY/3.1` answered 101.
 *
 * Per forwarded connection the client opens two streams with the same `requestID`
 * header: `streamType: error` and `streamType: data`, both with `port`. Once both are
 * there, the pod's port is dialled (CRI PortForward); bytes flow as DATA frames on the
 * data stream, each side half-closing with FIN. When the connection ends the error stream
 * is closed — with a message on it first if the dial or the copy failed — which is what
 * kubectl waits for before it forgets the connection. Many connections, to several ports,
 * run side by side on one session.
 *
 * Back-pressure: a pod socket that cannot take more pauses the transport (the whole
 * session, as one TCP connection can only be paused as a whole); a transport with more
 * than MAX_BUFFERED bytes unsent pauses the pod sockets that feed it.
 */
import type { Duplex } from 'node:stream';
import type { Logger } from '../../../api/log.js';
import type { WebSocket } from 'ws';
import { RST_STATUS, SpdySession, type SpdyHeaders } from './spdy.js';

/** kubectl 1.31+'s websocket subprotocol: SPDY/3.1 frames inside binary messages. */
export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

/** Unsent websocket bytes above which pod sockets are paused. */
const MAX_BUFFERED = 1024 * 1024;
/** How long the second stream of a pair may take to arrive, ms (the kubelet's: 30 s). */
const PAIR_TIMEOUT_MS = 30_000;

/** The subprotocol to answer with, when offered. */
export function selectPortForwardProtocol(offered: Iterable<string>): string | undefined {
  for (const p of offered) if (p === PORT_FORWARD_TUNNEL_PROTOCOL) return p;
  return undefined;
}

/** Where the SPDY bytes travel: binary websocket messages, or the upgraded connection itself. */
export type PortForwardTransport = { kind: 'websocket'; ws: WebSocket } | { kind: 'socket'; socket: Duplex };

/** The few things the session needs of either transport. */
interface ByteTransport {
  send(bytes: Buffer): void;
  /** Bytes accepted by send() and not yet handed to the OS. */
  buffered(): number;
  open(): boolean;
  pause(): void;
  resume(): void;
  close(): void;
  onData(cb: (data: Buffer) => void): void;
  onClose(cb: () => void): void;
}

function byteTransport(t: PortForwardTransport): ByteTransport {
  if (t.kind === 'websocket') {
    const { ws } = t;
    return {
      send: (b) => ws.send(b, { binary: true }),
      buffered: () => ws.bufferedAmount,
      open: () => ws.readyState === ws.OPEN,
      pause: () => ws.pause(),
      resume: () => ws.resume(),
      close: () => ws.close(1000),
      onData: (cb) => ws.on('message', (d: Buffer) => cb(d)),
      onClose: (cb) => ws.on('close', cb),
    };
  }
  const { socket } = t;
  socket.on('error', () => socket.destroy());
  return {
    send: (b) => void socket.write(b),
    buffered: () => socket.writableLength,
    open: () => !socket.destroyed && socket.writable,
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    close: () => socket.end(),
    onData: (cb) => socket.on('data', cb),
    onClose: (cb) => socket.on('close', cb),
  };
}

interface Pair {
  port: number;
  errorId?: number;
  dataId?: number;
  socket?: Duplex;
  /** What the client sent before the pod's port was connected (at most its send window). */
  early: Buffer[];
  earlyFin: boolean;
  timer: NodeJS.Timeout;
}

/**
 * Serves one port-forward session until the client closes it.
 * `dial(port)` opens a connection to the pod's port (rejecting with a message for the user).
 */
export function servePortForward(
  t: PortForwardTransport,
  dial: (port: number) => Promise<Duplex>,
  logger: Logger,
): void {
  const ws = byteTransport(t);
  const sockets = new Set<Duplex>();
  const session = new SpdySession((bytes) => {
    ws.send(bytes);
    if (ws.buffered() > MAX_BUFFERED) {
      for (const s of sockets) s.pause();
      const check = setInterval(() => {
        if (!ws.open() || ws.buffered() <= MAX_BUFFERED / 2) {
          clearInterval(check);
          for (const s of sockets) s.resume();
        }
      }, 10);
    }
  });
  const pairs = new Map<string, Pair>();
  const byStream = new Map<number, { key: string; kind: 'error' | 'data' }>();

  ws.onData((data) => session.receive(data));
  ws.onClose(() => session.close('connection closed'));
  session.on('close', (reason) => {
    logger.debug('port-forward session closed', { reason });
    for (const s of sockets) s.destroy();
    for (const p of pairs.values()) clearTimeout(p.timer);
    pairs.clear();
    if (ws.open()) ws.close();
  });

  const finish = (key: string, message?: string) => {
    const p = pairs.get(key);
    if (!p) return;
    pairs.delete(key);
    clearTimeout(p.timer);
    if (p.errorId !== undefined) session.data(p.errorId, Buffer.from(message ?? ''), true);
    if (p.dataId !== undefined) byStream.delete(p.dataId);
    if (p.errorId !== undefined) byStream.delete(p.errorId);
  };

  const start = async (key: string, p: Pair) => {
    clearTimeout(p.timer);
    let socket: Duplex;
    try {
      socket = await dial(p.port);
    } catch (err) {
      session.data(p.dataId!, Buffer.alloc(0), true);
      finish(key, `error forwarding port ${p.port} to pod: ${(err as Error).message}`);
      return;
    }
    if (!pairs.has(key)) {
      socket.destroy();
      return;
    }
    p.socket = socket;
    sockets.add(socket);
    for (const b of p.early) socket.write(b, () => session.windowUpdate(p.dataId!, b.length));
    p.early = [];
    if (p.earlyFin) socket.end();
    let ended = false;
    socket.on('data', (d: Buffer) => session.data(p.dataId!, d));
    socket.on('end', () => {
      ended = true;
      session.data(p.dataId!, Buffer.alloc(0), true);
    });
    socket.on('error', (err) => {
      if (!ended) session.reset(p.dataId!, RST_STATUS.INTERNAL_ERROR);
      finish(key, `error forwarding port ${p.port}: ${err.message}`);
    });
    socket.on('close', () => {
      sockets.delete(socket);
      if (!ended) session.data(p.dataId!, Buffer.alloc(0), true);
      finish(key);
    });
  };

  session.on('stream', (id: number, headers: SpdyHeaders) => {
    session.reply(id);
    const kind = headers['streamtype'];
    const port = Number(headers['port']);
    const key = headers['requestid'] ?? String(id);
    if ((kind !== 'error' && kind !== 'data') || !Number.isInteger(port) || port < 1 || port > 65535) {
      session.reset(id, RST_STATUS.PROTOCOL_ERROR);
      return;
    }
    let p = pairs.get(key);
    if (!p) {
      p = {
        port,
        early: [],
        earlyFin: false,
        timer: setTimeout(() => {
          if (p!.dataId !== undefined) session.reset(p!.dataId, RST_STATUS.CANCEL);
          finish(key, 'timed out waiting for the second stream of the port-forward request');
        }, PAIR_TIMEOUT_MS),
      };
      pairs.set(key, p);
    }
    if (kind === 'error') p.errorId = id;
    else p.dataId = id;
    byStream.set(id, { key, kind });
    if (p.errorId !== undefined && p.dataId !== undefined) void start(key, p);
  });

  session.on('data', (id: number, data: Buffer) => {
    const s = byStream.get(id);
    if (!s || s.kind !== 'data') return;
    const p = pairs.get(s.key);
    const socket = p?.socket;
    if (!socket) {
      p?.early.push(data);
      return;
    }
    if (!socket.write(data, () => session.windowUpdate(id, data.length))) {
      ws.pause();
      socket.once('drain', () => ws.resume());
    }
  });

  session.on('fin', (id: number) => {
    const s = byStream.get(id);
    if (s?.kind !== 'data') return;
    const p = pairs.get(s.key);
    if (p?.socket) p.socket.end();
    else if (p) p.earlyFin = true;
  });

  session.on('rst', (id: number) => {
    const s = byStream.get(id);
    if (!s) return;
    pairs.get(s.key)?.socket?.destroy();
    finish(s.key);
  });
}
