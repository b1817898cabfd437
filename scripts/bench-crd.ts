/**
 * `npm run bench:crd`: custom resources next to ConfigMaps of the same size, in one run
 * (issue 18 item 9; target: custom resources within 1.5× of ConfigMaps on create
 * throughput and on server RSS).
 *
 * Each kind has a fresh `k8ts server --disable-agent` of its own (its own process, sqlite
 * store, fresh data dir; for custom resources the CRD `benchwidgets.bench.k8ts.io` is
 * created first, with a schema of typed fields, defaults and the status subresource, and
 * the run waits until the controllers watch benchwidgets as they watch ConfigMaps). Both
 * servers run side by side and are driven in turns, one at a time, from this process over
 * keep-alive HTTPS with the admin certificate, so that a machine busy with other work
 * slows both alike:
 *
 *  1. RSS of each server process once idle (and, for custom resources, after the CRD);
 *  2. BENCH_COUNT (default 10,000) creates in namespace `default`, BENCH_CONCURRENCY
 *     (default 50) in flight, in turns of BENCH_BATCH (default 500) per kind, ABBA →
 *     creates/s over the kind's own turns, p50/p99 ms, errors, and the server's CPU time
 *     per create (user + system: what a busy machine disturbs least);
 *  3. 3 full lists (no limit) and 3 paginated lists (limit=500, following `continue`) per
 *     kind, in turns: the median ms, the bytes of the full list and the server's CPU time
 *     per list;
 *  4. RSS after the creates and after the lists.
 *
 * The objects: a ConfigMap with `data` {key: 512 × "x", replicas: "3", color: "blue"} and
 * a label; a BenchWidget with `spec` {key: 512 × "x", replicas: 3, color: "blue"} and the
 * same label — the same bytes give or take the type of two values.
 *
 * BENCH_VERBOSE=1 prints each turn's time and slowest create on stderr.
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
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const VERBOSE = process.env.BENCH_VERBOSE === '1';
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

/** One kind's server and what has been measured on it so far. */
interface Run {
  kind: Kind;
  k: K8tsServer;
  agent: https.Agent;
  base: URL;
  idle: number;
  ready: number;
  lat: number[];
  createMs: number;
  createCpuMs: number;
  errors: number;
  firstError?: string;
  full: number[];
  fullCpuMs: number;
  fullListBytes: number;
  fullListItems: number;
  paged: number[];
  pagedCpuMs: number;
  pages: number;
}

async function startRun(kind: Kind): Promise<Run> {
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
  // Start-up allocations settle before idle RSS is read.
  await new Promise((r) => setTimeout(r, 2000));
  const idle = rssMiB(k.pid);
  await kind.setup(k);
  return {
    kind,
    k,
    agent,
    base: new URL(k.url),
    idle,
    ready: rssMiB(k.pid),
    lat: [],
    createMs: 0,
    createCpuMs: 0,
    errors: 0,
    full: [],
    fullCpuMs: 0,
    fullListBytes: 0,
    fullListItems: 0,
    paged: [],
    pagedCpuMs: 0,
    pages: 0,
  };
}

/** Creates objects `from`..`to`-1 with CONCURRENCY in flight; adds to the run's figures. */
async function createBatch(run: Run, from: number, to: number): Promise<void> {
  let next = from;
  const cpu = cpuMs(run.k.pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, to - from) }, async () => {
      for (let i = next++; i < to; i = next++) {
        const t = performance.now();
        const r = await request(run.agent, run.base, 'POST', run.kind.path, run.kind.body(`bench-${i}`));
        run.lat.push(performance.now() - t);
        if (r.code !== 201) {
          run.errors++;
          run.firstError ??= `${r.code} ${r.body.slice(0, 300)}`;
        }
      }
    }),
  );
  run.createMs += performance.now() - t0;
  if (VERBOSE) {
    const slowest = Math.max(...run.lat.slice(-(to - from)));
    console.error(
      `${run.kind.name} ${from}..${to - 1}: ${(performance.now() - t0).toFixed(0)} ms, slowest ${slowest.toFixed(0)} ms`,
    );
  }
  run.createCpuMs += cpuMs(run.k.pid) - cpu;
}

async function fullList(run: Run): Promise<void> {
  const cpu = cpuMs(run.k.pid);
  const t = performance.now();
  const r = await request(run.agent, run.base, 'GET', run.kind.path);
  run.full.push(performance.now() - t);
  run.fullCpuMs += cpuMs(run.k.pid) - cpu;
  if (r.code !== 200) throw new Error(`list ${run.kind.path}: ${r.code} ${r.body.slice(0, 300)}`);
  run.fullListBytes = r.body.length;
  run.fullListItems = (JSON.parse(r.body) as { items: unknown[] }).items.length;
}

async function pagedList(run: Run): Promise<void> {
  const cpu = cpuMs(run.k.pid);
  const t = performance.now();
  let cont = '';
  run.pages = 0;
  do {
    const r = await request(
      run.agent,
      run.base,
      'GET',
      `${run.kind.path}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
    );
    if (r.code !== 200) throw new Error(`paged list: ${r.code} ${r.body.slice(0, 300)}`);
    cont = (JSON.parse(r.body) as { metadata?: { continue?: string } }).metadata?.continue ?? '';
    run.pages++;
  } while (cont);
  run.paged.push(performance.now() - t);
  run.pagedCpuMs += cpuMs(run.k.pid) - cpu;
}

/**
 * Both kinds on their own servers, side by side: the creates in batches of BATCH, the
 * kinds taking turns (ABBA: neither always goes first), then 3 full lists and 3 paginated
 * lists each, also in turns; so whatever else the machine does in the meantime falls on
 * both alike. Only one server is driven at a time.
 */
async function measure(kinds: readonly Kind[]): Promise<Result[]> {
  const runs: Run[] = [];
  try {
    for (const kind of kinds) runs.push(await startRun(kind));
    const afterCreates: number[] = [];
    for (let from = 0, turn = 0; from < COUNT; from += BATCH, turn++) {
      const order = turn % 2 === 0 ? runs : [...runs].reverse();
      for (const run of order) await createBatch(run, from, Math.min(COUNT, from + BATCH));
    }
    await new Promise((r) => setTimeout(r, 1000));
    for (const run of runs) afterCreates.push(rssMiB(run.k.pid));
    for (let i = 0; i < 3; i++)
      for (const run of i % 2 === 0 ? runs : [...runs].reverse()) await fullList(run);
    for (let i = 0; i < 3; i++)
      for (const run of i % 2 === 0 ? runs : [...runs].reverse()) await pagedList(run);
    return runs.map((run, i) => ({
      kind: run.kind.name,
      idle: run.idle,
      ready: run.ready,
      createsPerSec: COUNT / (run.createMs / 1000),
      p50: percentile(run.lat, 50),
      p99: percentile(run.lat, 99),
      errors: run.errors,
      ...(run.firstError ? { firstError: run.firstError } : {}),
      cpuPerCreateMs: run.createCpuMs / COUNT,
      afterCreates: afterCreates[i]!,
      fullListMs: median(run.full),
      fullListCpuMs: run.fullCpuMs / run.full.length,
      fullListBytes: run.fullListBytes,
      fullListItems: run.fullListItems,
      pagedListMs: median(run.paged),
      pagedListCpuMs: run.pagedCpuMs / run.paged.length,
      pages: run.pages,
      afterLists: rssMiB(run.k.pid),
    }));
  } finally {
    for (const run of runs) {
      run.agent.destroy();
      await run.k.stop();
    }
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
  const results = await measure(KINDS);
  const [cm, cr] = results as [Result, Result];
  const f0 = (x: number) => x.toFixed(0);
  const f1 = (x: number) => x.toFixed(1);
  const f2 = (x: number) => x.toFixed(2);
  const mib = (x: number) => `${f0(x)} MiB`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  console.log(
    `CRD benchmark: ${COUNT} objects, ${CONCURRENCY} in flight, a fresh sqlite server per kind, ` +
      `driven in turns of ${BATCH}, node ${process.version}\n`,
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
