/**
 * `npm run bench:dns`: Debian's `dnsperf` against the agent's cluster DNS server
 * (agent/dns/), next to the same load on Debian's Knot DNS (`knotd`) serving the same
 * records, in one run. Both packages are installed by `.ci/run` (the benchmark is not run
 * in CI).
 *
 * The DNS server runs in a child process of its own (this script with `--serve`), so
 * that dnsperf's output handling and the measurements here take none of its CPU; its
 * index holds BENCH_SERVICES (default 10 000) ClusterIP Services, its upstream is a test
 * resolver (agent/dns/testing.ts) in that child. Knot gets a zone file with the same
 * names, one UDP and one TCP worker (the Node server is one event loop), on 127.0.0.1.
 *
 * Loads, each BENCH_SECONDS (default 8) of UDP with BENCH_OUTSTANDING (default 20)
 * queries in flight (by Little's law the latency a closed loop sees is outstanding / qps,
 * so this is the load at which the p99 target is meant), over 1000 names each:
 * - `hit`: existing Services' A records (`svc-N.default.svc.cluster.local`);
 * - `nxdomain`: names in the zone that do not exist;
 * - `upstream`: names outside the cluster (`wwwN.outside.test`), answered from the
 *   forwarder's cache after one warm-up pass (Knot answers them from a zone of its own).
 * Printed: queries/s, lost queries, p50/p99 latency (from dnsperf -v's per-query times).
 *
 * Then, in this process: the heap and RSS that BENCH_SERVICES Services' records take in
 * the index (after gc, with --expose-gc); and BENCH_CREATES (default 50) times, a new
 * Service created through an in-process API server until its name answers from a
 * ClusterDNS (informers, index, server) on 127.0.0.1: p50/p99 of create-to-resolve.
 * Targets: ≥ 20 000 queries/s with p99 < 2 ms for in-cluster names; new-Service p99 < 1 s.
 * Not a test; the machine is shared, so numbers move between runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Answer } from 'dns-packet';
import { resources } from '../api/client/resource.js';
import { silentLogger } from '../api/log.js';
import type { Service } from '../api/types.js';
import { ClusterDNS } from '../agent/dns/cluster-dns.js';
import { Forwarder } from '../agent/dns/forwarder.js';
import { ClusterRecords } from '../agent/dns/records.js';
import { DnsServer } from '../agent/dns/server.js';
import { query, startTestResolver } from '../agent/dns/testing.js';
import { startTestApi } from '../test/support/api.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const OUTSTANDING = Number(process.env.BENCH_OUTSTANDING ?? 20);
const CREATES = Number(process.env.BENCH_CREATES ?? 50);
const NAMES = 1000;
const ZONE = 'cluster.local';

/** The clusterIP of Service i (10.96.0.0/12 style, within 10.100/16). */
const ipOf = (i: number) => `10.100.${(i >> 8) & 255}.${i & 255}`;

function service(i: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: 'default' },
    spec: {
      type: 'ClusterIP',
      clusterIP: ipOf(i),
      clusterIPs: [ipOf(i)],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    },
  };
}

function fill(records: ClusterRecords, n: number): void {
  for (let i = 0; i < n; i++) records.setService(`default/svc-${i}`, service(i), []);
}

const upstreamZone = (): Record<string, Answer[]> => {
  const z: Record<string, Answer[]> = {};
  for (let i = 0; i < NAMES; i++)
    z[`www${i}.outside.test`] = [
      { name: `www${i}.outside.test`, type: 'A', ttl: 3600, class: 'IN', data: '198.18.9.9' },
    ];
  return z;
};

/** `--serve`: the DNS server alone in this process; prints its port on stdout. */
async function serve(): Promise<void> {
  const resolver = await startTestResolver(upstreamZone());
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  const records = new ClusterRecords(ZONE);
  fill(records, SERVICES);
  gc?.();
  const after = process.memoryUsage();
  const server = new DnsServer({
    records,
    forwarder: new Forwarder({ upstreams: () => [{ host: resolver.host, port: resolver.port }] }),
    logger: silentLogger(),
    ...(process.argv.includes('--no-memo') ? { memoEntries: 1 } : {}),
  });
  const { port } = await server.listen({ host: '127.0.0.1', port: 0 });
  const mib = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
  const mem = {
    names: records.size,
    heapMiB: mib(after.heapUsed - before.heapUsed),
    rssMiB: mib(after.rss - before.rss),
    gc: gc !== undefined,
  };
  process.stdout.write(`${port} ${JSON.stringify(mem)}\n`);
  process.on('SIGTERM', () => void server.close().then(() => resolver.close().then(() => process.exit(0))));
}

/** A UDP+TCP port free now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const p = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

function zoneFile(): string {
  const lines = [
    `$ORIGIN ${ZONE}.`,
    '$TTL 5',
    `@ IN SOA ns.dns.${ZONE}. hostmaster.${ZONE}. 1 7200 1800 86400 5`,
    `@ IN NS ns.dns.${ZONE}.`,
    'ns.dns IN A 127.0.0.1',
    'dns-version IN TXT "1.1.0"',
  ];
  for (let i = 0; i < SERVICES; i++) {
    lines.push(`svc-${i}.default.svc IN A ${ipOf(i)}`);
    lines.push(`_http._tcp.svc-${i}.default.svc IN SRV 0 100 80 svc-${i}.default.svc`);
  }
  return lines.join('\n') + '\n';
}

function outsideZone(): string {
  const lines = [
    '$ORIGIN outside.test.',
    '$TTL 3600',
    '@ IN SOA ns.outside.test. h.outside.test. 1 60 60 60 30',
    '@ IN NS ns',
    'ns IN A 127.0.0.1',
  ];
  for (let i = 0; i < NAMES; i++) lines.push(`www${i} IN A 198.18.9.9`);
  return lines.join('\n') + '\n';
}

async function startKnot(dir: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  writeFileSync(join(dir, `${ZONE}.zone`), zoneFile());
  writeFileSync(join(dir, 'outside.test.zone'), outsideZone());
  writeFileSync(
    join(dir, 'knot.conf'),
    [
      'server:',
      `    rundir: "${dir}"`,
      `    listen: 127.0.0.1@${port}`,
      '    udp-workers: 1',
      '    tcp-workers: 1',
      '    background-workers: 1',
      'database:',
      `    storage: "${dir}"`,
      'log:',
      '  - target: stderr',
      '    any: warning',
      'template:',
      '  - id: default',
      `    storage: "${dir}"`,
      '    file: "%s.zone"',
      'zone:',
      `  - domain: ${ZONE}`,
      '  - domain: outside.test',
      '',
    ].join('\n'),
  );
  const child = spawn('knotd', ['-c', join(dir, 'knot.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const r = await query('127.0.0.1', port, `svc-0.default.svc.${ZONE}`, 'A', { timeoutMs: 300 });
      if (r.rcode === 'NOERROR') break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('knotd did not answer within 20 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, child };
}

interface Result {
  qps: number;
  lost: number;
  p50ms: number;
  p99ms: number;
  /** dnsperf's "Response codes" line. */
  rcodes: string;
}

/** dnsperf over `names` (lines `name TYPE`) against 127.0.0.1:port. */
async function dnsperf(dir: string, port: number, names: string[], seconds: number): Promise<Result> {
  const data = join(dir, 'queries.txt');
  writeFileSync(data, names.join('\n') + '\n');
  const outPath = join(dir, 'dnsperf.out');
  const out = openSync(outPath, 'w');
  const child = spawn(
    'dnsperf',
    [
      '-s',
      '127.0.0.1',
      '-p',
      String(port),
      '-d',
      data,
      '-l',
      String(seconds),
      '-q',
      String(OUTSTANDING),
      '-c',
      '4',
      '-v',
    ],
    { stdio: ['ignore', out, 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`dnsperf exited ${code}`))));
    child.once('error', reject);
  });
  closeSync(out);
  const text = readFileSync(outPath, 'utf8');
  const lat: number[] = [];
  for (const m of text.matchAll(/^> \S+ \S+ \S+ (\d+\.\d+)$/gm)) lat.push(Number(m[1]));
  lat.sort((a, b) => a - b);
  const q = (p: number) =>
    lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]! * 1000 : NaN;
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(text)?.[1] ?? NaN);
  const rcodes = /Response codes:\s+(.*)/.exec(text)?.[1] ?? '?';
  return { qps, lost, p50ms: q(0.5), p99ms: q(0.99), rcodes };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

async function newServiceLatency(): Promise<{ p50ms: number; p99ms: number; max: number }> {
  const api = await startTestApi();
  const dns = new ClusterDNS({
    client: api.client,
    nodeName: 'bench',
    logger: silentLogger(),
    address: { host: '127.0.0.1', port: 0 },
    upstreams: [],
  });
  try {
    await dns.start();
    const port = dns.address!.port;
    const times: number[] = [];
    for (let i = 0; i < CREATES; i++) {
      const name = `new-${i}`;
      const t0 = performance.now();
      const created = await api.client.create<Service>(resources.services, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'default' },
        spec: { ports: [{ port: 80 }] },
      });
      for (;;) {
        const r = await query('127.0.0.1', port, `${name}.default.svc.${ZONE}`, 'A');
        const ip = (r.packet.answers?.[0] as { data?: string } | undefined)?.data;
        if (ip === created.spec.clusterIP) break;
        if (performance.now() - t0 > 10_000) throw new Error(`${name} did not resolve within 10 s`);
        await new Promise((res) => setTimeout(res, 2));
      }
      times.push(performance.now() - t0);
    }
    return { p50ms: pct(times, 0.5), p99ms: pct(times, 0.99), max: Math.max(...times) };
  } finally {
    await dns.stop();
    await api.stop();
  }
}

interface ServerMemory {
  names: number;
  heapMiB: number;
  rssMiB: number;
  gc: boolean;
}

/** The DNS server in a child process (`--serve`; `--no-memo`: an answer memo of one entry). */
function startServer(
  self: string,
  noMemo: boolean,
): { child: ChildProcess; ready: Promise<{ port: number; mem: ServerMemory }> } {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', self, '--serve', ...(noMemo ? ['--no-memo'] : [])],
    { stdio: ['ignore', 'pipe', 'inherit'], env: process.env },
  );
  const ready = new Promise<{ port: number; mem: ServerMemory }>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /^(\d+) (.*)\n/.exec(buf);
      if (m) resolve({ port: Number(m[1]), mem: JSON.parse(m[2]!) as ServerMemory });
    });
    child.once('exit', (c) => reject(new Error(`DNS server exited ${c}`)));
  });
  return { child, ready };
}

const fmt = (r: Result) =>
  `${Math.round(r.qps).toString().padStart(7)} q/s  p50 ${r.p50ms.toFixed(3)} ms  p99 ${r.p99ms.toFixed(3)} ms  lost ${r.lost}  (${r.rcodes})`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-bench-dns-'));
  const self = fileURLToPath(import.meta.url);
  const servers = [startServer(self, false), startServer(self, true)];
  let knot: ChildProcess | undefined;
  try {
    const [{ port, mem }, { port: noMemoPort }] = await Promise.all(servers.map((x) => x.ready));
    const k = await startKnot(dir);
    knot = k.child;
    const loads: Record<string, string[]> = {
      hit: Array.from({ length: NAMES }, (_, i) => `svc-${(i * 7919) % SERVICES}.default.svc.${ZONE} A`),
      nxdomain: Array.from({ length: NAMES }, (_, i) => `nope-${i}.default.svc.${ZONE} A`),
      upstream: Array.from({ length: NAMES }, (_, i) => `www${i}.outside.test A`),
    };
    process.stdout.write(
      `bench:dns — ${SERVICES} Services, ${SECONDS} s per load, ${OUTSTANDING} queries outstanding, UDP, ${NAMES} names per load\n`,
    );
    process.stdout.write(
      `  records of ${SERVICES} Services (in the server's process): ${mem.names} names, heap +${mem.heapMiB} MiB, RSS +${mem.rssMiB} MiB${mem.gc ? '' : ' (no gc: garbage included)'}\n`,
    );
    // Warm-up: fills the forwarder's cache and lets V8 optimise the hot path.
    await dnsperf(dir, port, loads.upstream!, 1);
    await dnsperf(dir, port, loads.hit!, 1);
    await dnsperf(dir, k.port, loads.hit!, 1);
    for (const [load, names] of Object.entries(loads)) {
      const ours = await dnsperf(dir, port, names, SECONDS);
      const theirs = await dnsperf(dir, k.port, names, SECONDS);
      process.stdout.write(`  ${load.padEnd(9)} k8ts ${fmt(ours)}\n  ${''.padEnd(9)} knot ${fmt(theirs)}\n`);
    }
    // The path under the memo: every query decoded, looked up in the index and encoded.
    await dnsperf(dir, noMemoPort, loads.hit!, 1);
    const cold = await dnsperf(dir, noMemoPort, loads.hit!, SECONDS);
    process.stdout.write(`  ${'hit, no answer memo'.padEnd(9)} k8ts ${fmt(cold)}\n`);
  } finally {
    for (const x of servers) x.child.kill('SIGTERM');
    knot?.kill('SIGTERM');
    await Promise.all(
      [...servers.map((x) => x.child), knot].map((c) =>
        c && c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined,
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  }
  const lat = await newServiceLatency();
  process.stdout.write(
    `  new Service → resolves (${CREATES} creates): p50 ${lat.p50ms.toFixed(1)} ms  p99 ${lat.p99ms.toFixed(1)} ms  max ${lat.max.toFixed(1)} ms\n`,
  );
}

if (process.argv.includes('--serve')) await serve();
else await main();
