import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { untilTruthy } from '../../test/support/wait.js';
import { ProxyMetrics } from './metrics.js';
import { METRICS_RETRY_MS, ProxyMetricsServer, type MetricsSource } from './metrics-server.js';

/** A logger that keeps what it is told. */
function recordingLogger() {
  const lines: { level: string; message: string; meta?: Record<string, unknown> }[] = [];
  return {
    lines,
    warn: (message: string, meta?: Record<string, unknown>) =>
      void lines.push({ level: 'warn', message, meta }),
    info: (message: string, meta?: Record<string, unknown>) =>
      void lines.push({ level: 'info', message, meta }),
  };
}

/** The proxy's own registry, as Proxy hands it to the server. */
function source(metrics: ProxyMetrics, mode = 'nftables'): MetricsSource {
  return {
    metrics: () => metrics.registry.metrics(),
    contentType: metrics.registry.contentType,
    mode,
  };
}

describe('ProxyMetricsServer', () => {
  it('serves the proxy metrics as Prometheus text on /metrics, with the programming-latency histogram', async () => {
    const metrics = new ProxyMetrics();
    metrics.networkProgramming.observe(0.2);
    metrics.networkProgramming.observe(0.04);
    const logger = recordingLogger();
    const server = new ProxyMetricsServer({ host: '127.0.0.1', port: 0, proxy: source(metrics), logger });
    assert.equal(await server.start(), true);
    try {
      const base = `http://${server.address()}`;
      const r = await fetch(`${base}/metrics`);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = await r.text();
      assert.match(text, /^# TYPE k8ts_proxy_network_programming_duration_seconds histogram$/m);
      assert.match(text, /^k8ts_proxy_network_programming_duration_seconds_count 2$/m);
      assert.match(text, /^k8ts_proxy_network_programming_duration_seconds_bucket\{le="0\.05"\} 1$/m);
      assert.match(text, /^k8ts_proxy_network_programming_duration_seconds_bucket\{le="0\.25"\} 2$/m);
      // What is observed later is served at the next scrape.
      metrics.networkProgramming.observe(3);
      assert.match(
        await (await fetch(`${base}/metrics`)).text(),
        /^k8ts_proxy_network_programming_duration_seconds_count 3$/m,
      );

      const healthz = await fetch(`${base}/healthz`);
      assert.equal(healthz.status, 200);
      assert.equal(await healthz.text(), 'ok');
      assert.equal(await (await fetch(`${base}/proxyMode`)).text(), 'nftables');
      assert.equal((await fetch(`${base}/other`)).status, 404);
      const post = await fetch(`${base}/metrics`, { method: 'POST' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET, HEAD');
      assert.ok(logger.lines.some((l) => l.level === 'info' && l.meta?.address === server.address()));
    } finally {
      await server.close();
    }
    assert.equal(server.address(), undefined);
    await server.close();
  });

  it('answers 500 with the message when the metrics cannot be read', async () => {
    const failing: MetricsSource = {
      metrics: () => Promise.reject(new Error('collect failed')),
      contentType: 'text/plain',
      mode: 'userspace',
    };
    const server = new ProxyMetricsServer({
      host: '127.0.0.1',
      port: 0,
      proxy: failing,
      logger: recordingLogger(),
    });
    assert.ok(await server.start());
    try {
      const r = await fetch(`http://${server.address()}/metrics`);
      assert.equal(r.status, 500);
      assert.equal(await r.text(), 'collect failed\n');
    } finally {
      await server.close();
    }
  });

  it('warns once and goes on when the address is taken (a second agent on the host), trying again every 5 s until it frees', async () => {
    const metrics = new ProxyMetrics();
    const first = new ProxyMetricsServer({
      host: '127.0.0.1',
      port: 0,
      proxy: source(metrics),
      logger: recordingLogger(),
    });
    assert.ok(await first.start());
    const clock = new FakeClock();
    const logger = recordingLogger();
    let second: ProxyMetricsServer | undefined;
    try {
      const port = Number(first.address()!.split(':').pop());
      second = new ProxyMetricsServer({ host: '127.0.0.1', port, proxy: source(metrics), logger, clock });
      assert.equal(await second.start(), false);
      assert.equal(second.address(), undefined);
      assert.equal(logger.lines.length, 1);
      assert.equal(logger.lines[0]!.level, 'warn');
      assert.equal(logger.lines[0]!.meta?.address, `127.0.0.1:${port}`);
      assert.match(String(logger.lines[0]!.meta?.error), /EADDRINUSE/);
      assert.equal(clock.pendingTimers, 1, 'a retry is due');
      // 5 s on, still taken: tried again, no second warning, the next try due.
      await clock.advance(METRICS_RETRY_MS);
      await untilTruthy('the second try', () => clock.pendingTimers === 1, 5000, 10);
      assert.equal(second.address(), undefined);
      assert.deepEqual(
        logger.lines.map((l) => l.level),
        ['warn'],
      );
      // The first one still serves.
      assert.equal((await fetch(`http://${first.address()}/healthz`)).status, 200);
      // The address frees: the next try listens on it.
      await first.close();
      await clock.advance(METRICS_RETRY_MS);
      await untilTruthy('the second server listening', () => second!.address(), 5000, 10);
      assert.equal(second.address(), `127.0.0.1:${port}`);
      assert.equal((await fetch(`http://${second.address()}/proxyMode`)).status, 200);
      assert.deepEqual(
        logger.lines.map((l) => l.level),
        ['warn', 'info'],
      );
      assert.equal(clock.pendingTimers, 0, 'no more retries once listening');
    } finally {
      await first.close();
      await second?.close();
    }
  });

  it('close() ends the retries', async () => {
    const first = new ProxyMetricsServer({
      host: '127.0.0.1',
      port: 0,
      proxy: source(new ProxyMetrics()),
      logger: recordingLogger(),
    });
    assert.ok(await first.start());
    const clock = new FakeClock();
    const port = Number(first.address()!.split(':').pop());
    const second = new ProxyMetricsServer({
      host: '127.0.0.1',
      port,
      proxy: source(new ProxyMetrics()),
      logger: recordingLogger(),
      clock,
    });
    try {
      assert.equal(await second.start(), false);
      assert.equal(clock.pendingTimers, 1);
      await second.close();
      assert.equal(clock.pendingTimers, 0);
      await first.close();
      await clock.advance(METRICS_RETRY_MS * 3);
      assert.equal(second.address(), undefined);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
