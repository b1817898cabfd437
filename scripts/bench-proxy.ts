/**
 * `npm run bench:proxy`: HTTP through the k8ts proxy's NodePort, compared with the same
 * load sent directly to one backend and through HAProxy (Debian's `haproxy`, `mode tcp`,
 * round-robin) configured with the same three endpoints, all in one run. The load
 * generator is `wrk` (Debian's package); both are installed by `.ci/run`.
 *
 * Backends: three `spring-server:1.0` containers on a labelled Docker network when the
 * image exists (`npm run build:images`), removed at the end; otherwise three node HTTP
 * servers (in a child process) on this host's first non-loopback address; BENCH_BACKENDS=node
 * forces those. The output says which.
 *
 * The proxy runs in this process against an in-process API server (a Service of type
 * NodePort and hand-written EndpointSlices), bound on 127.0.0.1 as an agent with
 * `--node-ip 127.0.0.1` would. HAProxy runs with BENCH_HAPROXY_THREADS threads (default
 * 1, like the single event loop of the proxy).
 *
 * For each target, two wrk runs of BENCH_SECONDS (default 5) with BENCH_CONNECTIONS
 * (default 32) connections: keep-alive (bytes relayed on long connections) and
 * `Connection: close` (one proxied TCP connection per request: accept, balance, dial).
 * Prints requests/s, p50 and p99 latency, the ratio to HAProxy's throughput and the p99
 * added over the direct run. Target: ≥ 0.8 of HAProxy's throughput, < 2 ms added p99.
 * Not a test; the machine is shared, so numbers move between runs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Proxy } from '../agent/proxy/proxy.js';
import { resources } from '../api/client/resource.js';
import { silentLogger } from '../api/log.js';
import type { EndpointSlice, Service } from '../api/types.js';
import { startTestApi } from '../test/support/api.js';
import { table } from './lib/stats.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const HAPROXY_THREADS = Number(process.env.BENCH_HAPROXY_THREADS ?? 1);
const IMAGE = 'spring-server:1.0';
const LABEL = 'io.k8ts.bench=proxy';
const NETWORK = 'k8ts-bench-proxy';

const run = promisify(execFile);

interface Backend {
  ip: string;
  port: number;
}

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Resolves once `GET http://ip:port/` answers 200, or throws after `ms`. */
async function waitForHttp(b: Backend, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get({ host: b.ip, port: b.port, path: '/', timeout: 1000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`backend ${b.ip}:${b.port} did not answer within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function dockerCleanup(): Promise<void> {
  const { stdout } = await run('docker', ['ps', '-aq', '--filter', `label=${LABEL}`]).catch(() => ({
    stdout: '',
  }));
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length > 0) await run('docker', ['rm', '-f', ...ids]).catch(() => undefined);
  await run('docker', ['network', 'rm', NETWORK]).catch(() => undefined);
}

/** Three spring-server containers, or undefined when Docker or the image is missing. */
async function containerBackends(): Promise<Backend[] | undefined> {
  try {
    await run('docker', ['image', 'inspect', IMAGE]);
  } catch {
    return undefined;
  }
  await dockerCleanup();
  await run('docker', ['network', 'create', '--label', LABEL, NETWORK]);
  const out: Backend[] = [];
  for (let i = 0; i < 3; i++) {
    const { stdout } = await run('docker', [
      'run',
      '-d',
      '--label',
      LABEL,
      '--network',
      NETWORK,
      '--name',
      `k8ts-bench-proxy-${i}`,
      IMAGE,
    ]);
    const id = stdout.trim();
    const { stdout: ip } = await run('docker', [
      'inspect',
      '-f',
      `{{(index .NetworkSettings.Networks "${NETWORK}").IPAddress}}`,
      id,
    ]);
    out.push({ ip: ip.trim(), port: 8080 });
  }
  for (const b of out) await waitForHttp(b, 60_000);
  return out;
}

/**
 * Three node HTTP servers on the first non-loopback IPv4 address (EndpointSlices refuse
 * loopback), in a child process of their own so they do not share the proxy's event loop.
 */
async function nodeBackends(): Promise<{ backends: Backend[]; close(): void }> {
  const ip = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  if (!ip) throw new Error('no non-loopback IPv4 address for the node backends');
  const script = `
    const http = require('node:http');
    const ports = [];
    let n = 0;
    for (let i = 0; i < 3; i++) {
      const body = 'node backend ' + i + '\\n';
      const s = http.createServer((req, res) => res.end(body));
      s.listen(0, ${JSON.stringify(ip)}, () => {
        ports[i] = s.address().port;
        if (++n === 3) console.log(JSON.stringify(ports));
      });
    }`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ports = await new Promise<number[]>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out) as number[]);
    });
    child.once('exit', (code) => reject(new Error(`node backends exited with ${code}`)));
  });
  return { backends: ports.map((port) => ({ ip, port })), close: () => child.kill() };
}

/** HAProxy in the foreground on 127.0.0.1:`port`, round-robin TCP over `backends`. */
async function startHAProxy(port: number, backends: Backend[], dir: string): Promise<ChildProcess> {
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(
    cfg,
    [
      'global',
      `  nbthread ${HAPROXY_THREADS}`,
      '  maxconn 4000',
      'defaults',
      '  mode tcp',
      '  timeout connect 1s',
      '  timeout client 60s',
      '  timeout server 60s',
      'frontend bench',
      `  bind 127.0.0.1:${port}`,
      '  default_backend pods',
      'backend pods',
      '  balance roundrobin',
      ...backends.map((b, i) => `  server pod${i} ${b.ip}:${b.port}`),
      '',
    ].join('\n'),
  );
  const child = spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('haproxy did not start');
}

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Milliseconds from wrk's `635.00us` / `2.07ms` / `1.01s`. */
function wrkMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v);
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000;
}

async function wrk(url: string, close: boolean): Promise<WrkResult> {
  const args = ['-t', '2', '-c', String(CONNECTIONS), '-d', `${SECONDS}s`, '--latency', '--timeout', '5s'];
  if (close) args.push('-H', 'Connection: close');
  const { stdout } = await run('wrk', [...args, url], { maxBuffer: 1 << 20 });
  const pct = (p: string) => wrkMs(new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1] ?? '');
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN),
    p50: pct('50'),
    p99: pct('99'),
    errors: (errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0) + (non2xx ? Number(non2xx[1]) : 0),
  };
}

async function main(): Promise<void> {
  for (const tool of ['wrk', 'haproxy']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      throw new Error(`${tool} is missing: apt-get install ${tool} (.ci/run installs it)`);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-bench-proxy-'));
  let closeNode: (() => void) | undefined;
  let haproxy: ChildProcess | undefined;
  const api = await startTestApi();
  const proxy = new Proxy({
    client: api.client,
    nodeName: 'bench',
    nodeIP: '127.0.0.1',
    clusterIPInterface: 'k8ts-bench0',
    logger: silentLogger(),
  });
  let usedContainers = false;
  try {
    let backends = process.env.BENCH_BACKENDS === 'node' ? undefined : await containerBackends();
    let kind = `3 ${IMAGE} containers on Docker network ${NETWORK}`;
    if (backends) usedContainers = true;
    else {
      const nb = await nodeBackends();
      backends = nb.backends;
      closeNode = nb.close;
      kind = `3 node HTTP servers on ${backends[0]!.ip} (no ${IMAGE} image)`;
    }
    const svc = await api.client.create<Service>(resources.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'bench', namespace: 'default' },
      spec: {
        type: 'NodePort',
        selector: { app: 'bench' },
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      },
    });
    // One slice per backend: each may have its own port (node backends share one IP).
    for (const [i, b] of backends.entries()) {
      await api.client.create<EndpointSlice>(resources.endpointslices, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `bench-${i}`,
          namespace: 'default',
          labels: { 'kubernetes.io/service-name': 'bench' },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [b.ip], conditions: { ready: true } }],
        ports: [{ name: 'http', port: b.port, protocol: 'TCP' }],
      });
    }
    await proxy.start();
    const nodePort = svc.spec.ports![0]!.nodePort!;
    const deadline = Date.now() + 10_000;
    while ((proxy.snapshot()['default/bench']?.http?.endpoints.length ?? 0) < 3) {
      if (Date.now() > deadline) throw new Error('the proxy did not pick up the endpoints');
      await new Promise((r) => setTimeout(r, 50));
    }
    await waitForHttp({ ip: '127.0.0.1', port: nodePort }, 10_000);
    const haproxyPort = await freePort();
    haproxy = await startHAProxy(haproxyPort, backends, dir);

    const targets: [string, string][] = [
      ['direct (one backend)', `http://${backends[0]!.ip}:${backends[0]!.port}/`],
      ['k8ts proxy NodePort', `http://127.0.0.1:${nodePort}/`],
      [
        `HAProxy (${HAPROXY_THREADS} thread${HAPROXY_THREADS === 1 ? '' : 's'})`,
        `http://127.0.0.1:${haproxyPort}/`,
      ],
    ];
    console.log(`backends: ${kind}`);
    console.log(
      `wrk: 2 threads, ${CONNECTIONS} connections, ${SECONDS} s per run; machine: shared, 2 cores\n`,
    );
    for (const close of [false, true]) {
      const results: WrkResult[] = [];
      for (const [, url] of targets) results.push(await wrk(url, close));
      const [direct, viaProxy, viaHAProxy] = results as [WrkResult, WrkResult, WrkResult];
      const rows = [['target', 'requests/s', 'p50 ms', 'p99 ms', 'errors', 'vs HAProxy', 'added p99 ms']];
      targets.forEach(([name], i) => {
        const r = results[i]!;
        rows.push([
          name,
          r.rps.toFixed(0),
          r.p50.toFixed(2),
          r.p99.toFixed(2),
          String(r.errors),
          i === 0 ? '' : (r.rps / viaHAProxy.rps).toFixed(2),
          i === 0 ? '' : (r.p99 - direct.p99).toFixed(2),
        ]);
      });
      console.log(close ? '### one connection per request (Connection: close)' : '### keep-alive');
      console.log(table(rows));
      const ratio = viaProxy.rps / viaHAProxy.rps;
      const added = viaProxy.p99 - direct.p99;
      console.log(
        `target ≥ 0.80 of HAProxy and < 2 ms added p99: ${ratio.toFixed(2)} and ${added.toFixed(2)} ms → ${
          ratio >= 0.8 && added < 2 ? 'met' : 'NOT met'
        }\n`,
      );
    }
  } finally {
    haproxy?.kill();
    await proxy.stop();
    await api.stop();
    closeNode?.();
    if (usedContainers) await dockerCleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
