/**
 * The kubelet API of one node (the kubelet's `pkg/kubelet/server`), served over the agent
 * tunnel only: an ordinary http.Server that listens on no port and is given each tunnel
 * stream as a connection, so only the API server can reach it.
 *
 *   GET  /containerLogs/{namespace}/{pod}/{container}?follow&tailLines&sinceSeconds
 *        &sinceTime&timestamps&previous&limitBytes[&podUID]
 *   GET|POST /exec/{namespace}/{pod}/{container}?command=...&stdin&stdout&stderr&tty[&podUID]
 *        (websocket v5/v4.channel.k8s.io, or SPDY/3.1 v4.channel.k8s.io)
 *   GET|POST /attach/{namespace}/{pod}/{container}?stdin&stdout&stderr&tty[&podUID]
 *   GET|POST /portForward/{namespace}/{pod}[?podUID]  (websocket SPDY/3.1+portforward.k8s.io,
 *        or a plain SPDY/3.1 upgrade; see portforward.ts)
 *   GET  /stats/summary   (api/stats.ts)
 *   GET  /healthz
 *
 * exec and attach: websockets (v5/v4.channel.k8s.io), or a plain SPDY/3.1 upgrade with
 * v4.channel.k8s.io (remotecommand-spdy.ts), what kubectl before 1.30 speaks.
 *
 * Containers are found through the runtime by the kubelet's labels (pods/labels.ts): the
 * newest container of that name in that pod, or with `previous` the newest before it that
 * has exited — the one the kubelet's container GC keeps. Errors answer as metav1.Status.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Transform, type Duplex } from 'node:stream';
import type { Logger } from '../../../api/log.js';
import { WebSocketServer } from 'ws';
import type { Container, Runtime, StreamOptions } from '../../../cri/index.js';
import { isCriError } from '../../../cri/index.js';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from '../pods/labels.js';
import { PORT_FORWARD_TUNNEL_PROTOCOL, servePortForward, selectPortForwardProtocol } from './portforward.js';
import { serveChannelsOverSpdy, SPDY_CHANNEL_PROTOCOL } from './remotecommand-spdy.js';
import { selectChannelProtocol, serveChannels } from './remotecommand.js';
import type { StatsProvider } from './stats.js';

export interface KubeletServerConfig {
  runtime: Runtime;
  stats: StatsProvider;
  logger: Logger;
}

/** An error answered as a metav1.Status. */
export class KubeletApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** See the file comment. */
export class KubeletServer {
  private readonly cfg: KubeletServerConfig;
  private readonly server: Server;
  private readonly wss = new WebSocketServer({
    noServer: true,
    // Channel-protocol messages are bounded by what clients send (stdin chunks, resizes).
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (offered) => selectChannelProtocol(offered) ?? false,
  });
  private readonly sockets = new Set<Duplex>();
  /** Upgrades answered with a subprotocol ws cannot parse itself (see handleUpgrade). */
  private readonly forcedProtocol = new WeakMap<IncomingMessage, string>();

  constructor(cfg: KubeletServerConfig) {
    this.cfg = cfg;
    this.wss.on('headers', (headers: string[], req: IncomingMessage) => {
      const p = this.forcedProtocol.get(req);
      if (p) headers.push(`Sec-WebSocket-Protocol: ${p}`);
    });
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on(
      'upgrade',
      (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.handleUpgrade(req, socket, head),
    );
  }

  /** Serves one tunnel stream as a connection. */
  serveConnection(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    this.server.emit('connection', socket);
  }

  /** Ends every connection (streams in progress included). */
  close(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.wss.close();
    this.server.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kubelet');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new KubeletApiError(405, 'MethodNotAllowed', `${req.method} is not supported`);
      if (parts[0] === 'containerLogs' && parts.length === 4) {
        await this.serveLogs(parts[1]!, parts[2]!, parts[3]!, url.searchParams, req, res);
        return;
      }
      if (url.pathname === '/stats/summary') {
        writeJson(res, 200, await this.cfg.stats.summary());
        return;
      }
      if (url.pathname === '/healthz') {
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
        return;
      }
      if (['exec', 'attach', 'portForward'].includes(parts[0] ?? ''))
        throw new KubeletApiError(400, 'BadRequest', `${parts[0]} needs a websocket or SPDY upgrade`);
      throw new KubeletApiError(404, 'NotFound', `no such kubelet path ${url.pathname}`);
    } catch (err) {
      const e = toKubeletError(err);
      if (e.code >= 500) this.cfg.logger.warn('kubelet API error', { path: url.pathname, error: e.message });
      if (!res.headersSent) writeJson(res, e.code, statusOf(e));
      else res.destroy();
    }
  }

  private async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kubelet');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const q = url.searchParams;
    const isWebsocket = (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    try {
      if ((parts[0] === 'exec' || parts[0] === 'attach') && parts.length === 4) {
        const opts: StreamOptions = {
          stdin: flag(q, 'stdin'),
          stdout: flag(q, 'stdout'),
          stderr: flag(q, 'stderr'),
          tty: flag(q, 'tty'),
        };
        if (!opts.stdin && !opts.stdout && !opts.stderr)
          throw new KubeletApiError(
            400,
            'BadRequest',
            'you must specify at least 1 of stdin, stdout, stderr',
          );
        if (opts.tty && opts.stderr) opts.stderr = false;
        const [, namespace, pod, container] = parts as [string, string, string, string];
        const c = await this.findContainer(namespace, pod, container, q.get('podUID'), false);
        if (c.state !== 'CONTAINER_RUNNING')
          throw new KubeletApiError(
            400,
            'BadRequest',
            `container ${container} is not running in pod ${namespace}/${pod}`,
          );
        const command = q.getAll('command');
        if (parts[0] === 'exec' && command.length === 0)
          throw new KubeletApiError(
            400,
            'BadRequest',
            'you must specify at least one command for the container',
          );
        // Checked after the container, so that a client falling back from websockets to
        // SPDY (kubectl does on any refused upgrade) sees the real reason first.
        const spdy = !isWebsocket && (req.headers.upgrade ?? '').toLowerCase() === 'spdy/3.1';
        if (spdy) {
          if (!streamProtocolVersions(req).includes(SPDY_CHANNEL_PROTOCOL))
            throw new KubeletApiError(
              400,
              'BadRequest',
              `exec and attach over SPDY need X-Stream-Protocol-Version ${SPDY_CHANNEL_PROTOCOL}`,
            );
        } else if (!isWebsocket || !selectChannelProtocol(offered))
          throw new KubeletApiError(
            400,
            'BadRequest',
            'exec and attach are served over websockets with subprotocol v5.channel.k8s.io or v4.channel.k8s.io, or an SPDY/3.1 upgrade',
          );
        const session =
          parts[0] === 'exec'
            ? await this.cfg.runtime.exec(c.id, command, opts)
            : await this.cfg.runtime.attach(c.id, opts);
        if (spdy) {
          acceptSpdyUpgrade(socket, head, SPDY_CHANNEL_PROTOCOL);
          void serveChannelsOverSpdy(socket, opts, session, command);
          return;
        }
        this.wss.handleUpgrade(req, socket, head, (ws) => {
          const protocol = selectChannelProtocol([ws.protocol])!;
          void serveChannels(ws, protocol, session, command);
        });
        return;
      }
      if (parts[0] === 'portForward' && parts.length === 3) {
        const [, namespace, pod] = parts as [string, string, string];
        const sandbox = await this.findSandbox(namespace, pod, q.get('podUID'));
        const dial = (port: number) => this.cfg.runtime.portForward(sandbox, port);
        if (isWebsocket) {
          if (!selectPortForwardProtocol(offered))
            throw new KubeletApiError(
              400,
              'BadRequest',
              'port-forward needs subprotocol SPDY/3.1+portforward.k8s.io',
            );
          // `SPDY/3.1+portforward.k8s.io` is not an RFC 7230 token ('/'), so ws refuses to
          // parse the offer: take the header out and answer the subprotocol ourselves.
          delete req.headers['sec-websocket-protocol'];
          this.forcedProtocol.set(req, PORT_FORWARD_TUNNEL_PROTOCOL);
          this.wss.handleUpgrade(req, socket, head, (ws) =>
            servePortForward({ kind: 'websocket', ws }, dial, this.cfg.logger),
          );
          return;
        }
        const versions = streamProtocolVersions(req);
        if (
          (req.headers.upgrade ?? '').toLowerCase() !== 'spdy/3.1' ||
          !versions.includes('portforward.k8s.io')
        )
          throw new KubeletApiError(
            400,
            'BadRequest',
            'port-forward needs a websocket (SPDY/3.1+portforward.k8s.io) or an SPDY/3.1 upgrade with X-Stream-Protocol-Version portforward.k8s.io',
          );
        acceptSpdyUpgrade(socket, head, 'portforward.k8s.io');
        servePortForward({ kind: 'socket', socket }, dial, this.cfg.logger);
        return;
      }
      throw new KubeletApiError(404, 'NotFound', `no such kubelet path ${url.pathname}`);
    } catch (err) {
      const e = toKubeletError(err);
      const body = JSON.stringify(statusOf(e));
      socket.end(
        `HTTP/1.1 ${e.code} ${e.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
  }

  private async serveLogs(
    namespace: string,
    pod: string,
    container: string,
    q: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const previous = flag(q, 'previous');
    const c = await this.findContainer(namespace, pod, container, q.get('podUID'), previous);
    const tail = intParam(q, 'tailLines');
    const limitBytes = intParam(q, 'limitBytes');
    const sinceSeconds = intParam(q, 'sinceSeconds');
    const sinceTimeText = q.get('sinceTime');
    let sinceTime: bigint | undefined;
    if (sinceSeconds !== undefined) sinceTime = BigInt(Date.now() - sinceSeconds * 1000) * 1_000_000n;
    else if (sinceTimeText) {
      const ms = Date.parse(sinceTimeText);
      if (Number.isNaN(ms))
        throw new KubeletApiError(400, 'BadRequest', `sinceTime: invalid time ${sinceTimeText}`);
      sinceTime = BigInt(ms) * 1_000_000n;
    }
    const stream = await this.cfg.runtime.containerLogs(c.id, {
      follow: flag(q, 'follow') && !previous,
      tailLines: tail,
      sinceTime,
      timestamps: flag(q, 'timestamps'),
    });
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const source = stream as NodeJS.ReadableStream & { destroy?: () => void };
    const stop = () => source.destroy?.();
    res.once('close', stop);
    req.once('close', () => {
      if (!res.writableFinished) stop();
    });
    const out = limitBytes !== undefined ? source.pipe(limiter(limitBytes, stop)) : source;
    out.pipe(res);
  }

  /** The newest container `name` of the pod, or with `previous` the newest exited one before it. */
  private async findContainer(
    namespace: string,
    pod: string,
    name: string,
    podUID: string | null,
    previous: boolean,
  ): Promise<Container> {
    const all = await this.cfg.runtime.listContainers({
      labelSelector: {
        [POD_NAMESPACE_LABEL]: namespace,
        [POD_NAME_LABEL]: pod,
        [CONTAINER_NAME_LABEL]: name,
        ...(podUID ? { [POD_UID_LABEL]: podUID } : {}),
      },
    });
    all.sort((a, b) =>
      a.createdAt === b.createdAt
        ? b.metadata.attempt - a.metadata.attempt
        : a.createdAt < b.createdAt
          ? 1
          : -1,
    );
    if (!previous) {
      if (!all[0])
        throw new KubeletApiError(
          400,
          'BadRequest',
          `container "${name}" in pod "${pod}" is waiting to start: no container has been created yet`,
        );
      return all[0];
    }
    const prev = all.slice(1).find((c) => c.state === 'CONTAINER_EXITED');
    if (!prev)
      throw new KubeletApiError(
        400,
        'BadRequest',
        `previous terminated container "${name}" in pod "${pod}" not found`,
      );
    return prev;
  }

  /** The pod's newest ready sandbox. */
  private async findSandbox(namespace: string, pod: string, podUID: string | null): Promise<string> {
    const all = await this.cfg.runtime.listPodSandbox({
      state: 'SANDBOX_READY',
      labelSelector: {
        [POD_NAMESPACE_LABEL]: namespace,
        [POD_NAME_LABEL]: pod,
        ...(podUID ? { [POD_UID_LABEL]: podUID } : {}),
      },
    });
    all.sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
    if (!all[0])
      throw new KubeletApiError(
        400,
        'BadRequest',
        `pod ${namespace}/${pod} has no running sandbox on this node`,
      );
    return all[0].id;
  }
}

function flag(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === 'true' || v === '1';
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v))
    throw new KubeletApiError(400, 'BadRequest', `${name}: must be a non-negative integer`);
  return Number(v);
}

/** Passes the first `limit` bytes, then ends (and calls `stop` so the source stops reading). */
function limiter(limit: number, stop: () => void): Transform {
  let left = limit;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (left <= 0) return done();
      const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
      left -= part.length;
      this.push(part);
      if (left <= 0) {
        this.push(null);
        stop();
      }
      done();
    },
  });
}

function toKubeletError(err: unknown): KubeletApiError {
  if (err instanceof KubeletApiError) return err;
  if (isCriError(err)) {
    if (err.code === 'NotFound') return new KubeletApiError(404, 'NotFound', err.message);
    if (err.code === 'FailedPrecondition') return new KubeletApiError(400, 'BadRequest', err.message);
    if (err.code === 'Unavailable') return new KubeletApiError(503, 'ServiceUnavailable', err.message);
  }
  return new KubeletApiError(500, 'InternalError', (err as Error).message ?? String(err));
}

function statusOf(e: KubeletApiError): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: e.message,
    reason: e.reason,
    code: e.code,
  };
}

function writeJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The X-Stream-Protocol-Version values a client offers (one header or several, comma-separated). */
function streamProtocolVersions(req: IncomingMessage): string[] {
  const raw = req.headers['x-stream-protocol-version'];
  return (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',').map((v) => v.trim());
}

/** Answers an SPDY/3.1 upgrade with 101 and `protocol`; what came with the request (`head`) is read first. */
function acceptSpdyUpgrade(socket: Duplex, head: Buffer, protocol: string): void {
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`,
  );
  if (head.length > 0) socket.unshift(head);
}
