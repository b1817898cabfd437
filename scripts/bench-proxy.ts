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
 * Every backend first gets BENCH_WARMUP_SECONDS (default 3) of keep-alive and of
 * `Connection: close` load straight to it, so that no target pays for the JVMs' warm-up.
 * Then, for each target, wrk runs of BENCH_SECONDS (default 5) with BENCH_CONNECTIONS
 * (default 32) connections, keep-alive (bytes relayed on long connections) and
 * `Connection: close` (one proxied TCP connection per request: accept, balance, dial),
 * in BENCH_ROUNDS (default 3) interleaved rounds; the median round of each is printed:
 * requests/s, p50 and p99 latency, the ratio to HAProxy's throughput, the p99 over the
 * direct run, and the CPU the proxy process (or HAProxy) used per request.
 *
 * At saturation (2 cores shared by wrk, three JVMs and the proxy) p99 is queueing in the
 * backends, so the latency the proxy adds is measured apart, under light load: one
 * connection, one request at a time. Target: ≥ 0.8 of HAProxy's throughput, < 2 ms
 * added p99.
 *
 * Last, endpoint propagation: BENCH_CHANGES (default 20) times, one backend's
 * EndpointSlice turns not ready (then ready again), and the time from that write to the
 * NodePort's endpoints showing it is taken (watch, informer, reconcile). Target: < 2 s
 * for every change (agent/proxy/proxy.test.ts checks the routing once it is applied).
 * Not a test; the machine is shared, so numbers move between runs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Proxy } from '../agent/proxy/proxy.js';
import { resources } from '../api/client/resource.js';
import type { RestClient } from '../api/client/rest.js';
import { silentLogger } from '../api/log.js';
import type { EndpointSlice, Service } from '../api/types.js';
import { startTestApi } from '../test/support/api.js';
import { percentile, table } from './lib/stats.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const HAPROXY_THREADS = Number(process.env.BENCH_HAPROXY_THREADS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
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
  /** CPU the proxy itself used during the run (user + system), ms; undefined for direct. */
  cpuMs?: number;
  /** Length of the run, s. */
  seconds?: number;
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

/** User + system CPU of process `pid` so far, ms (from /proc/<pid>/stat, in clock ticks of 10 ms). */
function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Runs wrk and measures the CPU `cpu()` reports (ms, cumulative) across the run. */
async function measured(
  url: string,
  close: boolean,
  seconds: number,
  connections: number,
  cpu?: () => number,
  threads = 2,
): Promise<WrkResult> {
  const before = cpu?.();
  const r = await wrk(url, close, seconds, connections, threads);
  if (cpu && before !== undefined) r.cpuMs = cpu() - before;
  r.seconds = seconds;
  return r;
}

/** The run with the median requests/s (the middle one of an odd count). */
function median(runs: readonly WrkResult[]): WrkResult {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
}

/** Prints one table: a row per target, ratios against the last (HAProxy), p99 added over the first (direct). */
function printTable(title: string, names: readonly string[], results: readonly WrkResult[]): void {
  const haproxy = results[results.length - 1]!;
  const direct = results[0]!;
  const rows = [
    ['target', 'requests/s', 'p50 ms', 'p99 ms', 'errors', 'vs HAProxy', 'added p99 ms', 'proxy CPU µs/req'],
  ];
  results.forEach((r, i) => {
    rows.push([
      names[i]!,
      r.rps.toFixed(0),
      r.p50.toFixed(2),
      r.p99.toFixed(2),
      String(r.errors),
      i === 0 ? '' : (r.rps / haproxy.rps).toFixed(2),
      i === 0 ? '' : (r.p99 - direct.p99).toFixed(2),
      r.cpuMs === undefined ? '' : ((r.cpuMs * 1000) / (r.rps * (r.seconds ?? SECONDS))).toFixed(1),
    ]);
  });
  console.log(title);
  console.log(table(rows));
}

/** One wrk run against `url`; `close` sends `Connection: close` (a new connection per request). */
async function wrk(
  url: string,
  close: boolean,
  seconds: number,
  connections = CONNECTIONS,
  threads = 2,
): Promise<WrkResult> {
  const args = [
    '-t',
    String(threads),
    '-c',
    String(connections),
    '-d',
    `${seconds}s`,
    '--latency',
    '--timeout',
    '5s',
  ];
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

/**
 * Makes EndpointSlice `bench-0` not ready, then ready, `changes` times in all; for each,
 * the ms from the update request to the proxy's NodePort endpoints of `default/bench`
 * showing it (polled every ms; a change not seen within 30 s fails the benchmark).
 */
async function endpointPropagation(
  client: RestClient,
  proxy: Proxy,
  total: number,
  changes: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < changes; i++) {
    const ready = i % 2 === 1;
    const slice = await client.get<EndpointSlice>(resources.endpointslices, 'default', 'bench-0');
    const endpoints = slice.endpoints.map((e) => ({ ...e, conditions: { ready } }));
    const t0 = performance.now();
    await client.update(resources.endpointslices, { ...slice, endpoints });
    const want = ready ? total : total - 1;
    while ((proxy.snapshot()['default/bench']?.http?.externalEndpoints.length ?? 0) !== want) {
      if (performance.now() - t0 > 30_000) throw new Error(`the proxy did not apply change ${i} within 30 s`);
      await new Promise((r) => setTimeout(r, 1));
    }
    out.push(performance.now() - t0);
  }
  return out;
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

    const haproxyPid = haproxy.pid!;
    const ownCpuMs = (): number => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const targets: [string, string, (() => number) | undefined][] = [
      ['direct (one backend)', `http://${backends[0]!.ip}:${backends[0]!.port}/`, undefined],
      ['k8ts proxy NodePort', `http://127.0.0.1:${nodePort}/`, ownCpuMs],
      [
        `HAProxy (${HAPROXY_THREADS} thread${HAPROXY_THREADS === 1 ? '' : 's'})`,
        `http://127.0.0.1:${haproxyPort}/`,
        () => procCpuMs(haproxyPid),
      ],
    ];
    console.log(`backends: ${kind}`);
    console.log(
      `wrk: 2 threads, ${CONNECTIONS} connections, ${SECONDS} s per run, median of ${ROUNDS} rounds; machine: shared, 2 cores\n`,
    );
    // The JVMs compile their hot paths during the first few thousand requests: every
    // backend gets the same warm-up first, or whichever target runs first pays for it.
    for (const b of backends) {
      await wrk(`http://${b.ip}:${b.port}/`, false, WARMUP_SECONDS);
      await wrk(`http://${b.ip}:${b.port}/`, true, WARMUP_SECONDS);
    }
    for (const close of [false, true]) {
      // Rounds interleave the targets (the proxy and HAProxy swap places every round), so
      // a slow spell of the shared machine does not land on one target only.
      const runs: WrkResult[][] = targets.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [0, 1, 2] : [0, 2, 1];
        for (const i of order) {
          const [, url, cpu] = targets[i]!;
          runs[i]!.push(await measured(url, close, SECONDS, CONNECTIONS, cpu));
        }
      }
      const results = runs.map(median);
      printTable(
        close ? '### one connection per request (Connection: close)' : '### keep-alive',
        targets.map(([name]) => name),
        results,
      );
      const [direct, viaProxy, viaHAProxy] = results as [WrkResult, WrkResult, WrkResult];
      const ratio = viaProxy.rps / viaHAProxy.rps;
      console.log(
        `throughput target ≥ 0.80 of HAProxy: ${ratio.toFixed(2)} → ${ratio >= 0.8 ? 'met' : 'NOT met'}; ` +
          `p99 at saturation: ${(viaProxy.p99 - direct.p99).toFixed(2)} ms over direct (HAProxy: ${(viaHAProxy.p99 - direct.p99).toFixed(2)} ms)\n`,
      );
    }
    // Latency the proxy adds, measured where it is not hidden by queueing: one connection,
    // one request at a time, so neither the backends nor the machine are saturated.
    const light: WrkResult[] = [];
    for (const [, url, cpu] of targets) light.push(await measured(url, false, SECONDS, 1, cpu, 1));
    printTable(
      '### light load (1 connection, keep-alive)',
      targets.map(([name]) => name),
      light,
    );
    const added = light[1]!.p99 - light[0]!.p99;
    console.log(
      `added p99 target < 2 ms: ${added.toFixed(2)} ms → ${added < 2 ? 'met' : 'NOT met'} (HAProxy adds ${(light[2]!.p99 - light[0]!.p99).toFixed(2)} ms)\n`,
    );
    const propagation = await endpointPropagation(api.client, proxy, backends.length, CHANGES);
    const slowest = Math.max(...propagation);
    console.log(
      `### endpoint propagation (EndpointSlice write → NodePort endpoints), ${CHANGES} changes\n` +
        `p50 ${percentile(propagation, 50).toFixed(1)} ms, max ${slowest.toFixed(1)} ms; ` +
        `target < 2000 ms for every change → ${slowest < 2000 ? 'met' : 'NOT met'}\n`,
    );
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
