/**
 * `npm run bench:crd`: custom resources next to ConfigMaps of the same size, in one run
 * (issue 18 item 9; target: custom resources within 1.5× of ConfigMaps on create
 * throughput and on server RSS).
 *
 * For each kind, a fresh `k8ts server --disable-agent` (its own process, sqlite store,
 * fresh data dir; for custom resources the CRD `benchwidgets.bench.k8ts.io` is created
 * first, with a schema of typed fields, defaults and the status subresource, and the run
 * waits until the controllers watch benchwidgets as they watch ConfigMaps), measured
 * from this process over keep-alive HTTPS with the admin certificate:
 *
 *  1. RSS of the server process once idle (and, for custom resources, after the CRD);
 *  2. BENCH_COUNT (default 10,000) creates in namespace `default`, BENCH_CONCURRENCY
 *     (default 50) in flight → creates/s, p50/p99 ms, errors, and the server's CPU time
 *     per create (user + system: what a busy machine disturbs least);
 *  3. a full list (no limit) and a paginated list (limit=500, following `continue`), each
 *     the median of 3, in ms, with the bytes of the full list and the server's CPU time
 *     per list;
 *  4. RSS after the lists.
 *
 * The objects: a ConfigMap with `data` {key: 512 × "x", replicas: "3", color: "blue"} and
 * a label; a BenchWidget with `spec` {key: 512 × "x", replicas: 3, color: "blue"} and the
 * same label — the same bytes give or take the type of two values.
 *
 * BENCH_ROUNDS=N (default 1) runs the pair N times, alternating kinds, and reports each
 * figure's median over the rounds (for a machine that is not quiet).
 * BENCH_FROM_SOURCE=1 runs the servers from cli.ts through tsx (no `npm run build`);
 * BENCH_CPU_PROF=DIR writes a CPU profile of each server process into DIR
 * (scripts/lib/cpu-profile-preload.mjs).
 * Prints Markdown tables. Not a test.
 */
import https from 'node:https';
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadKubeconfig } from '../api/client/kubeconfig.js';
import { startK8tsServer, type K8tsServer } from '../test/support/k8ts-server.js';
import { percentile, table } from './lib/stats.js';

const COUNT = Number(process.env.BENCH_COUNT ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const FROM_SOURCE = process.env.BENCH_FROM_SOURCE === '1';
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
const PAGE = 500;
const GROUP = 'bench.k8ts.io';
const PAYLOAD = 'x'.repeat(512);

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `benchwidgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'benchwidgets', singular: 'benchwidget', kind: 'BenchWidget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['key'],
                properties: {
                  key: { type: 'string', maxLength: 4096 },
                  replicas: { type: 'integer', minimum: 0, default: 1 },
                  color: { type: 'string', enum: ['blue', 'green', 'red'], default: 'blue' },
                },
              },
              status: {
                type: 'object',
                properties: { ready: { type: 'integer' } },
              },
            },
          },
        },
      },
    ],
  },
};

interface Kind {
  name: string;
  /** The collection's path in namespace `default`. */
  path: string;
  body(name: string): unknown;
  /** Prepares a fresh server (the CRD for custom resources). */
  setup(k: K8tsServer): Promise<void>;
}

const KINDS: readonly Kind[] = [
  {
    name: 'ConfigMap',
    path: '/api/v1/namespaces/default/configmaps',
    body: (name) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { bench: 'crd' } },
      data: { key: PAYLOAD, replicas: '3', color: 'blue' },
    }),
    setup: async () => {},
  },
  {
    name: 'custom resource',
    path: `/apis/${GROUP}/v1/namespaces/default/benchwidgets`,
    body: (name) => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'BenchWidget',
      metadata: { name, labels: { bench: 'crd' } },
      spec: { key: PAYLOAD, replicas: 3, color: 'blue' },
    }),
    setup: async (k) => {
      const r = await k.fetch('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(crd),
      });
      if (r.status !== 201) throw new Error(`creating the CRD: ${r.status} ${await r.text()}`);
      // Served once Established; then, as ConfigMaps are from the start, watched by the
      // controllers that follow every resource (the garbage collector finds new ones by
      // reading discovery every 30 s), so both kinds' writes feed the same watchers.
      const deadline = Date.now() + 90_000;
      for (;;) {
        const metrics = await (await k.fetch('/metrics')).text();
        // An informer's first LIST (a watch is counted only once it ends); this script lists none before.
        if (/^apiserver_request_total\{verb="list",resource="benchwidgets",code="200"\}/m.test(metrics))
          return;
        if (Date.now() > deadline) throw new Error('benchwidgets not watched within 90 s');
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  },
];

/** User + system CPU time of process `pid` so far, ms (/proc/<pid>/stat utime and stime, at 100 ticks/s). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** One HTTPS request over `agent`; resolves with the status code and the body. */
function request(
  agent: https.Agent,
  base: URL,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ code: number; body: string }> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolvePromise, reject) => {
    const req = https.request(
      {
        host: base.hostname,
        port: base.port,
        path,
        method,
        agent,
        headers: data
          ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) }
          : { Accept: 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolvePromise({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

interface Result {
  kind: string;
  idle: number;
  ready: number;
  createsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  firstError?: string;
  /** Server CPU time (user + system) per create, ms. */
  cpuPerCreateMs: number;
  afterCreates: number;
  fullListMs: number;
  /** Server CPU time per full list, ms. */
  fullListCpuMs: number;
  fullListBytes: number;
  fullListItems: number;
  pagedListMs: number;
  pagedListCpuMs: number;
  pages: number;
  afterLists: number;
}

const median = (xs: number[]) => percentile(xs, 50);

/** Each numeric figure's median over `runs` of one kind; errors summed, the first error kept. */
function medianResult(runs: readonly Result[]): Result {
  const out = { ...runs[0]! } as Result & Record<string, unknown>;
  for (const [key, value] of Object.entries(runs[0]!))
    if (typeof value === 'number') out[key] = median(runs.map((r) => r[key as keyof Result] as number));
  out.errors = runs.reduce((n, r) => n + r.errors, 0);
  return out;
}

async function benchKind(kind: Kind): Promise<Result> {
  const k = await startK8tsServer({
    args: ['--log-level', 'warn'],
    fromSource: FROM_SOURCE,
    readyTimeoutMs: 60_000,
  });
  const { ca, cert, key } = loadKubeconfig(k.kubeconfig).config;
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: Infinity,
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
  });
  try {
    const base = new URL(k.url);
    // Start-up allocations settle before idle RSS is read.
    await new Promise((r) => setTimeout(r, 2000));
    const idle = rssMiB(k.pid);
    await kind.setup(k);
    const ready = rssMiB(k.pid);

    const lat: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    let next = 0;
    const cpu0 = cpuMs(k.pid);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < COUNT; i = next++) {
          const t = performance.now();
          const r = await request(agent, base, 'POST', kind.path, kind.body(`bench-${i}`));
          lat.push(performance.now() - t);
          if (r.code !== 201) {
            errors++;
            firstError ??= `${r.code} ${r.body.slice(0, 300)}`;
          }
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const createsCpuMs = cpuMs(k.pid) - cpu0;
    await new Promise((r) => setTimeout(r, 1000));
    const afterCreates = rssMiB(k.pid);

    const full: number[] = [];
    let fullListBytes = 0;
    let fullListItems = 0;
    const cpu1 = cpuMs(k.pid);
    for (let run = 0; run < 3; run++) {
      const t = performance.now();
      const r = await request(agent, base, 'GET', kind.path);
      full.push(performance.now() - t);
      if (r.code !== 200) throw new Error(`list ${kind.path}: ${r.code} ${r.body.slice(0, 300)}`);
      fullListBytes = r.body.length;
      fullListItems = (JSON.parse(r.body) as { items: unknown[] }).items.length;
    }
    const cpu2 = cpuMs(k.pid);
    const paged: number[] = [];
    let pages = 0;
    for (let run = 0; run < 3; run++) {
      const t = performance.now();
      let cont = '';
      pages = 0;
      do {
        const r = await request(
          agent,
          base,
          'GET',
          `${kind.path}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
        );
        if (r.code !== 200) throw new Error(`paged list: ${r.code} ${r.body.slice(0, 300)}`);
        cont = (JSON.parse(r.body) as { metadata?: { continue?: string } }).metadata?.continue ?? '';
        pages++;
      } while (cont);
      paged.push(performance.now() - t);
    }
    const cpu3 = cpuMs(k.pid);
    const afterLists = rssMiB(k.pid);
    return {
      kind: kind.name,
      idle,
      ready,
      createsPerSec: COUNT / seconds,
      p50: percentile(lat, 50),
      p99: percentile(lat, 99),
      errors,
      ...(firstError ? { firstError } : {}),
      cpuPerCreateMs: createsCpuMs / COUNT,
      afterCreates,
      fullListMs: median(full),
      fullListCpuMs: (cpu2 - cpu1) / 3,
      fullListBytes,
      fullListItems,
      pagedListMs: median(paged),
      pagedListCpuMs: (cpu3 - cpu2) / 3,
      pages,
      afterLists,
    };
  } finally {
    agent.destroy();
    await k.stop();
  }
}

async function main(): Promise<void> {
  if (CPU_PROF_DIR) {
    const dir = resolve(CPU_PROF_DIR);
    mkdirSync(dir, { recursive: true });
    // The server is a child of this process and inherits its environment (NODE_OPTIONS
    // refuses --cpu-prof itself).
    const preload = fileURLToPath(new URL('./lib/cpu-profile-preload.mjs', import.meta.url));
    process.env.K8TS_CPU_PROF_DIR = dir;
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim();
  }
  const rounds: Result[][] = KINDS.map(() => []);
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, kind] of KINDS.entries()) rounds[i]!.push(await benchKind(kind));
  const results = rounds.map(medianResult);
  const [cm, cr] = results as [Result, Result];
  const f0 = (x: number) => x.toFixed(0);
  const f1 = (x: number) => x.toFixed(1);
  const f2 = (x: number) => x.toFixed(2);
  const mib = (x: number) => `${f0(x)} MiB`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  console.log(
    `CRD benchmark: ${COUNT} objects, ${CONCURRENCY} in flight, a fresh sqlite server per kind` +
      `${ROUNDS > 1 ? ` and round (medians of ${ROUNDS} rounds)` : ''}, node ${process.version}\n`,
  );
  console.log(
    table([
      ['', 'ConfigMap', 'custom resource', 'CR / ConfigMap'],
      ['creates/s', f0(cm.createsPerSec), f0(cr.createsPerSec), ratio(cr.createsPerSec, cm.createsPerSec)],
      [
        'server CPU ms per create',
        f2(cm.cpuPerCreateMs),
        f2(cr.cpuPerCreateMs),
        ratio(cr.cpuPerCreateMs, cm.cpuPerCreateMs),
      ],
      ['create p50 ms', f1(cm.p50), f1(cr.p50), ratio(cr.p50, cm.p50)],
      ['create p99 ms', f1(cm.p99), f1(cr.p99), ratio(cr.p99, cm.p99)],
      ['create errors', String(cm.errors), String(cr.errors), ''],
      [
        'full list ms (items, KiB)',
        `${f0(cm.fullListMs)} (${cm.fullListItems}, ${f0(cm.fullListBytes / 1024)})`,
        `${f0(cr.fullListMs)} (${cr.fullListItems}, ${f0(cr.fullListBytes / 1024)})`,
        ratio(cr.fullListMs, cm.fullListMs),
      ],
      [
        'server CPU ms per full list',
        f0(cm.fullListCpuMs),
        f0(cr.fullListCpuMs),
        ratio(cr.fullListCpuMs, cm.fullListCpuMs),
      ],
      [
        `paginated list ms (limit=${PAGE}, pages)`,
        `${f0(cm.pagedListMs)} (${cm.pages})`,
        `${f0(cr.pagedListMs)} (${cr.pages})`,
        ratio(cr.pagedListMs, cm.pagedListMs),
      ],
      [
        'server CPU ms per paginated list',
        f0(cm.pagedListCpuMs),
        f0(cr.pagedListCpuMs),
        ratio(cr.pagedListCpuMs, cm.pagedListCpuMs),
      ],
      ['server RSS idle', mib(cm.idle), mib(cr.idle), ratio(cr.idle, cm.idle)],
      ['server RSS ready (CRD created)', mib(cm.ready), mib(cr.ready), ratio(cr.ready, cm.ready)],
      [
        'server RSS after creates',
        mib(cm.afterCreates),
        mib(cr.afterCreates),
        ratio(cr.afterCreates, cm.afterCreates),
      ],
      ['server RSS after lists', mib(cm.afterLists), mib(cr.afterLists), ratio(cr.afterLists, cm.afterLists)],
      [
        'RSS growth (after lists − idle)',
        mib(cm.afterLists - cm.idle),
        mib(cr.afterLists - cr.idle),
        ratio(cr.afterLists - cr.idle, cm.afterLists - cm.idle),
      ],
    ]),
  );
  for (const r of results) if (r.firstError) console.log(`\nfirst ${r.kind} create error: ${r.firstError}`);
  const ok = (x: number) => (x <= 1.5 ? 'within 1.5×' : 'OVER 1.5×');
  console.log(
    `\ntarget: creates/s ${ok(cm.createsPerSec / cr.createsPerSec)} (ConfigMap/CR ${ratio(cm.createsPerSec, cr.createsPerSec)}), ` +
      `RSS after lists ${ok(cr.afterLists / cm.afterLists)} (CR/ConfigMap ${ratio(cr.afterLists, cm.afterLists)})`,
  );
  if (CPU_PROF_DIR) console.log(`\nCPU profiles of the servers (ConfigMap first): ${resolve(CPU_PROF_DIR)}`);
}

await main();
