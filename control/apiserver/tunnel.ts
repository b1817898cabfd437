/**
 * The API server's end of the agent tunnels (the wire contract is api/tunnel.ts): it
 * accepts each agent's control websocket and, when the API server needs a connection to a
 * node's kubelet, asks that agent to dial back and hands out the resulting socket — as
 * kube-apiserver's egress selector hands out connections through konnectivity.
 *
 * Who the agent is comes from `authenticate(req, node)` (the API server's
 * authenticateTunnel); a second control websocket for the same node replaces the first
 * (an agent that reconnected before the server noticed the old one die).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../api/log.js';
import { WebSocketServer, type WebSocket } from 'ws';
import { STREAM_UPGRADE, TUNNEL_CONNECT_PATH, TUNNEL_PATH } from '../../api/tunnel.js';
import { ApiError } from './status.js';

export interface TunnelServerConfig {
  /** True when `req` may act as node `node` (see ApiServer.authenticateTunnel). */
  authenticate: (req: IncomingMessage, node: string) => Promise<boolean>;
  logger: Logger;
  /** Milliseconds an agent has to dial back for a stream; default 10 000. */
  dialTimeoutMs?: number;
  /** Milliseconds between pings of each control websocket; default 20 000 (two missed: closed). */
  pingIntervalMs?: number;
}

interface PendingDial {
  node: string;
  resolve: (socket: Duplex) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** The accepted tunnels of all nodes (see the file comment). */
export class TunnelServer {
  private readonly cfg: TunnelServerConfig;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  private readonly sessions = new Map<string, { ws: WebSocket; alive: boolean }>();
  private readonly pending = new Map<string, PendingDial>();
  /** Streams handed out, destroyed by close(). */
  private readonly streams = new Set<Duplex>();
  private readonly pinger: NodeJS.Timeout;
  private closed = false;

  constructor(cfg: TunnelServerConfig) {
    this.cfg = cfg;
    this.pinger = setInterval(() => this.ping(), cfg.pingIntervalMs ?? 20_000);
    this.pinger.unref();
  }

  /** Whether an upgrade request's path is one of the tunnel's. */
  static handles(pathname: string): boolean {
    return pathname === TUNNEL_PATH || pathname === TUNNEL_CONNECT_PATH;
  }

  /** Names of the nodes whose agents are connected. */
  connectedNodes(): string[] {
    return [...this.sessions.keys()];
  }

  /**
   * Serves an HTTP upgrade to a tunnel path: the control websocket or a stream dialled
   * back. Refusals are written as plain HTTP answers (401, 400, 404) and close the socket.
   */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const node = url.searchParams.get('node') ?? '';
    if (this.closed) return refuse(socket, 503, 'the API server is shutting down');
    if (!node) return refuse(socket, 400, 'the node query parameter is required');
    let allowed = false;
    try {
      allowed = await this.cfg.authenticate(req, node);
    } catch {
      // A failed credential lookup refuses, as an unknown credential does.
    }
    if (!allowed) return refuse(socket, 401, `not authorized to open a tunnel for node ${node}`);
    if (this.closed) return refuse(socket, 503, 'the API server is shutting down');
    if (url.pathname === TUNNEL_PATH) {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(node, ws));
      return;
    }
    const id = url.searchParams.get('id') ?? '';
    const dial = this.pending.get(id);
    if (!dial || dial.node !== node || (req.headers.upgrade ?? '').toLowerCase() !== STREAM_UPGRADE)
      return refuse(socket, 404, 'no such tunnel stream');
    this.pending.delete(id);
    clearTimeout(dial.timer);
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${STREAM_UPGRADE}\r\nConnection: Upgrade\r\n\r\n`,
    );
    if (head.length > 0) socket.unshift(head);
    this.track(socket);
    dial.resolve(socket);
  }

  /**
   * A new connection to the kubelet API of `node`, through its agent.
   * @throws ApiError 503 when the node's agent has no tunnel open or does not dial back in time.
   */
  dial(node: string): Promise<Duplex> {
    const session = this.sessions.get(node);
    if (!session)
      return Promise.reject(
        new ApiError(503, 'ServiceUnavailable', `no tunnel to node "${node}": its agent is not connected`),
      );
    const id = randomBytes(16).toString('hex');
    return new Promise<Duplex>((resolve, reject) => {
      const timeoutMs = this.cfg.dialTimeoutMs ?? 10_000;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new ApiError(
            503,
            'ServiceUnavailable',
            `the agent of node "${node}" did not open a tunnel stream within ${timeoutMs / 1000}s`,
          ),
        );
      }, timeoutMs);
      this.pending.set(id, { node, resolve, reject, timer });
      session.ws.send(JSON.stringify({ type: 'dial', id }));
    });
  }

  /** Closes every tunnel and stream; later upgrades are refused. */
  close(): void {
    this.closed = true;
    clearInterval(this.pinger);
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new ApiError(503, 'ServiceUnavailable', 'the API server is shutting down'));
      this.pending.delete(id);
    }
    for (const { ws } of this.sessions.values()) ws.terminate();
    this.sessions.clear();
    for (const s of this.streams) s.destroy();
    this.streams.clear();
    this.wss.close();
  }

  private accept(node: string, ws: WebSocket): void {
    const previous = this.sessions.get(node);
    const session = { ws, alive: true };
    this.sessions.set(node, session);
    if (previous) previous.ws.terminate();
    this.cfg.logger.info('agent tunnel connected', { node });
    ws.on('pong', () => (session.alive = true));
    // The agent sends nothing but pongs; anything else is ignored.
    ws.on('error', (err) => this.cfg.logger.debug('agent tunnel error', { node, error: String(err) }));
    ws.on('close', () => {
      if (this.sessions.get(node) === session) {
        this.sessions.delete(node);
        this.cfg.logger.info('agent tunnel closed', { node });
      }
    });
  }

  private ping(): void {
    for (const session of this.sessions.values()) {
      if (!session.alive) {
        session.ws.terminate();
        continue;
      }
      session.alive = false;
      session.ws.ping();
    }
  }

  private track(socket: Duplex): void {
    this.streams.add(socket);
    socket.once('close', () => this.streams.delete(socket));
  }
}

function refuse(socket: Duplex, code: number, message: string): void {
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 503: 'Service Unavailable' }[
    code
  ];
  socket.end(
    `HTTP/1.1 ${code} ${reason ?? ''}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`,
  );
}
