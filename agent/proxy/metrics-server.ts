/**
 * kube-proxy's metrics server (its `--metrics-bind-address`, 127.0.0.1:10249 by default): plain
 * HTTP, no authentication, as upstream's (so by default on loopback only). Paths, as
 * cmd/kube-proxy/app/server.go serves them there:
 *
 *   GET /metrics     the proxy's registry as Prometheus text (metrics.ts), among them
 *                    k8ts_proxy_network_programming_duration_seconds, kube-proxy's SLI
 *   GET /healthz     `ok` while the process serves
 *   GET /proxyMode   the mode in effect: nftables, iptables or userspace
 *
 * Anything else is 404; a method other than GET or HEAD is 405. kube-proxy's separate
 * healthz server (`--healthz-bind-address`, 0.0.0.0:10256, with the time of the last sync)
 * is not served.
 *
 *   const server = new ProxyMetricsServer({ host: '127.0.0.1', port: 10249, proxy, logger });
 *   await server.start();   // false (and a warning) when the address is taken; retried every 5 s
 *   await server.close();   // also ends the retries
 *
 * A taken address is tried again every 5 s until it frees (one warning, then quiet), as
 * kube-proxy runs its metrics server under wait.Until with a 5 s period (it gives up only
 * with --bind-address-hard-fail, which k8ts has not).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock, type Clock } from '../../api/clock.js';
import type { Logger } from '../../api/log.js';
import { errorMessage } from '../../api/errors.js';

/** Milliseconds between tries of an address that could not be listened on (kube-proxy's 5 s). */
export const METRICS_RETRY_MS = 5_000;

/** What the server reads from the proxy. */
export interface MetricsSource {
  /** Prometheus text exposition of the proxy's metrics. */
  metrics(): Promise<string>;
  /** The registry's content type (prom-client's `text/plain; version=0.0.4; charset=utf-8`). */
  readonly contentType: string;
  /** The mode in effect now. */
  readonly mode: string;
}

/** Settings of a ProxyMetricsServer. */
export interface ProxyMetricsServerConfig {
  /** The address to listen on (an IP; `0.0.0.0` for all IPv4 addresses). */
  host: string;
  /** The port; 0 for a free one (see address()). */
  port: number;
  proxy: MetricsSource;
  logger: Pick<Logger, 'warn' | 'info'>;
  /** The retries' timers; default the real clock. */
  clock?: Clock;
  /** Milliseconds between tries of a taken address; default METRICS_RETRY_MS. */
  retryMs?: number;
}

/**
 * Answers one request of the metrics server (see the file comment); never throws (a failed
 * read of the metrics is a 500 with its message).
 */
export async function serveProxyMetrics(
  source: MetricsSource,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const send = (code: number, type: string, body: string) => {
    res.writeHead(code, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(405, 'text/plain; charset=utf-8', 'method not allowed\n');
  }
  try {
    if (path === '/metrics') return send(200, source.contentType, await source.metrics());
    if (path === '/healthz') return send(200, 'text/plain; charset=utf-8', 'ok');
    if (path === '/proxyMode') return send(200, 'text/plain; charset=utf-8', source.mode);
    return send(404, 'text/plain; charset=utf-8', '404 page not found\n');
  } catch (err) {
    return send(500, 'text/plain; charset=utf-8', `${errorMessage(err)}\n`);
  }
}

/** The HTTP server of the proxy's metrics (see the file comment). */
export class ProxyMetricsServer {
  private server: Server | undefined;
  private readonly clock: Clock;
  private retryTimer: unknown;
  private warned = false;
  private closed = false;

  constructor(private readonly cfg: ProxyMetricsServerConfig) {
    this.clock = cfg.clock ?? realClock;
  }

  /**
   * Listens on the configured address. Resolves true once listening; false, with one
   * warning, when it cannot (the address is taken, as by a second agent on the host, or is
   * not local): the proxy goes on without its metrics server rather than the agent failing,
   * and the address is tried again every `retryMs` until it is listened on or close() is
   * called (the retries warn no more; success is logged at info).
   */
  async start(): Promise<boolean> {
    this.closed = false;
    return this.listen();
  }

  /** One try; schedules the next when it fails. */
  private async listen(): Promise<boolean> {
    if (this.server || this.closed) return this.server !== undefined;
    const server = createServer((req, res) => void serveProxyMetrics(this.cfg.proxy, req, res));
    const where = this.cfg.host.includes(':')
      ? `[${this.cfg.host}]:${this.cfg.port}`
      : `${this.cfg.host}:${this.cfg.port}`;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.cfg.port, this.cfg.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      if (!this.warned)
        this.cfg.logger.warn(
          'kube-proxy metrics are not served yet: cannot listen on --metrics-bind-address; retrying',
          { address: where, error: errorMessage(err), retryMs: this.cfg.retryMs ?? METRICS_RETRY_MS },
        );
      this.warned = true;
      if (!this.closed)
        this.retryTimer = this.clock.setTimeout(() => {
          this.retryTimer = undefined;
          void this.listen();
        }, this.cfg.retryMs ?? METRICS_RETRY_MS);
      return false;
    }
    if (this.closed) {
      // close() came while this try was under way.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return false;
    }
    this.server = server;
    this.cfg.logger.info('kube-proxy metrics served', { address: this.address() ?? where });
    return true;
  }

  /** `host:port` listened on (the real port when 0 was asked), or undefined when not listening. */
  address(): string | undefined {
    const a = this.server?.address() as AddressInfo | null | undefined;
    if (!a) return undefined;
    return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  }

  /** Stops listening (or trying to) and ends open connections. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
