/**
 * The agent's end of the tunnel to the API server (wire contract: api/tunnel.ts). run()
 * keeps the control websocket open — reconnecting after 1 s, doubling to 30 s, with
 * ±20 % jitter, back to 1 s once a connection is up, as client-go's reflectors back off —
 * and answers each `dial` by opening a stream connection back to the server, which it
 * hands to `onStream` (the kubelet API server, kubelet/server/).
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Logger } from '../../api/log.js';
import WebSocket from 'ws';
import { realClock, type Clock } from '../../api/clock.js';
import { parseTunnelMessage, STREAM_UPGRADE, TUNNEL_CONNECT_PATH, TUNNEL_PATH } from '../../api/tunnel.js';

export interface TunnelClientConfig {
  /** The API server's URL (http: or https:). */
  server: string;
  /** Sent as `Authorization: Bearer` on the websocket and every stream (a server run with --insecure-http). */
  token?: string;
  /**
   * For an https: server: the cluster CA the server's certificate must chain to, and the
   * node's client certificate and key (kubelet/bootstrap.ts), presented on the websocket
   * and on every stream, so that only this node's identity opens this node's tunnel.
   */
  tls?: { ca: string; cert: string; key: string };
  nodeName: string;
  /** Receives each stream: a connected socket carrying HTTP/1.1 requests for the kubelet API. */
  onStream: (socket: Socket) => void;
  logger: Logger;
  clock?: Clock;
  /** First reconnect delay, ms; default 1000. */
  minBackoffMs?: number;
  /** Longest reconnect delay, ms; default 30 000. */
  maxBackoffMs?: number;
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
  /** Called with true when the control websocket opens, false when it closes. */
  onConnectionChange?: (connected: boolean) => void;
}

/** The reconnect delay after `failures` consecutive failures (1-based), with jitter `r` in [0, 1). */
export function tunnelBackoffMs(failures: number, r: number, minMs = 1000, maxMs = 30_000): number {
  const base = Math.min(maxMs, minMs * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (0.8 + 0.4 * r));
}

/** See the file comment. */
export class TunnelClient {
  private readonly cfg: TunnelClientConfig;
  private readonly url: URL;
  private ws: WebSocket | undefined;
  private readonly dials = new Set<ClientRequest>();
  private isConnected = false;

  constructor(cfg: TunnelClientConfig) {
    if (!cfg.server) throw new Error('TunnelClient: server is required');
    if (!cfg.nodeName) throw new Error('TunnelClient: nodeName is required');
    this.cfg = cfg;
    this.url = new URL(cfg.server);
  }

  /** Whether the control websocket is open now. */
  get connected(): boolean {
    return this.isConnected;
  }

  /**
   * Keeps the tunnel open until `signal` aborts; resolves then (never rejects). While it
   * runs it holds the process open: the clock's timers do not, and while the API server is
   * down nothing else may (an agent must outlive its server's restarts).
   */
  async run(signal: AbortSignal): Promise<void> {
    const hold = setInterval(() => undefined, 2 ** 30);
    const clock = this.cfg.clock ?? realClock;
    const random = this.cfg.random ?? Math.random;
    let failures = 0;
    const onAbort = () => {
      this.ws?.terminate();
      for (const d of this.dials) d.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const opened = await this.connectOnce();
        if (signal.aborted) break;
        failures = opened ? 1 : failures + 1;
        const delay = tunnelBackoffMs(failures, random(), this.cfg.minBackoffMs, this.cfg.maxBackoffMs);
        this.cfg.logger.info('agent tunnel reconnecting', { node: this.cfg.nodeName, inMs: delay });
        await clock.sleep(delay, signal);
      }
    } finally {
      clearInterval(hold);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** One connection's life: resolves when it closes, with whether it ever opened. */
  private connectOnce(): Promise<boolean> {
    const wsUrl = new URL(TUNNEL_PATH, this.url);
    wsUrl.protocol = this.url.protocol === 'https:' ? 'wss:' : 'ws:';
    wsUrl.searchParams.set('node', this.cfg.nodeName);
    return new Promise<boolean>((resolve) => {
      let opened = false;
      const ws = new WebSocket(wsUrl, {
        headers: this.authHeaders(),
        handshakeTimeout: 10_000,
        ...(this.cfg.tls ?? {}),
      });
      this.ws = ws;
      ws.on('open', () => {
        opened = true;
        this.isConnected = true;
        this.cfg.logger.info('agent tunnel connected', { node: this.cfg.nodeName, server: this.cfg.server });
        this.cfg.onConnectionChange?.(true);
      });
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        const m = parseTunnelMessage(data.toString());
        if (m?.type === 'dial') this.dialBack(m.id);
      });
      ws.on('unexpected-response', (_req, res) => {
        this.cfg.logger.warn('agent tunnel refused', {
          node: this.cfg.nodeName,
          code: res.statusCode,
        });
        res.resume();
        ws.terminate();
      });
      ws.on('error', (err) =>
        this.cfg.logger.debug('agent tunnel error', { node: this.cfg.nodeName, error: String(err) }),
      );
      ws.on('close', () => {
        if (opened) {
          this.isConnected = false;
          this.cfg.logger.info('agent tunnel closed', { node: this.cfg.nodeName });
          this.cfg.onConnectionChange?.(false);
        }
        if (this.ws === ws) this.ws = undefined;
        resolve(opened);
      });
    });
  }

  /** Opens stream `id` back to the server and hands the socket to onStream. */
  private dialBack(id: string): void {
    const path = `${TUNNEL_CONNECT_PATH}?node=${encodeURIComponent(this.cfg.nodeName)}&id=${id}`;
    const request = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(new URL(path, this.url), {
      method: 'GET',
      agent: false,
      headers: { ...this.authHeaders(), Connection: 'Upgrade', Upgrade: STREAM_UPGRADE },
      ...(this.cfg.tls ?? {}),
    });
    this.dials.add(req);
    const done = () => this.dials.delete(req);
    req.on('upgrade', (_res: IncomingMessage, socket: Socket, head: Buffer) => {
      done();
      if (head.length > 0) socket.unshift(head);
      socket.setKeepAlive(true, 30_000);
      this.cfg.onStream(socket);
    });
    req.on('response', (res: IncomingMessage) => {
      done();
      this.cfg.logger.warn('agent tunnel stream refused', { node: this.cfg.nodeName, code: res.statusCode });
      res.resume();
    });
    req.on('error', (err) => {
      done();
      this.cfg.logger.warn('agent tunnel stream failed', { node: this.cfg.nodeName, error: String(err) });
    });
    req.end();
  }

  private authHeaders(): Record<string, string> {
    return this.cfg.token ? { Authorization: `Bearer ${this.cfg.token}` } : {};
  }
}
