/**
 * `npm run bench:idle`: the memory of a `k8ts server` that sits idle (issue 20 item 7),
 * as a separate real process (the built CLI, sqlite store, fresh data dir), in two
 * configurations: the default (the control process and its in-process agent on the local
 * Docker) and `--disable-agent`.
 *
 * For each run: start the server, wait until it is ready (the "listening on" line; with
 * the agent also its "node is ready" log line), then BENCH_IDLE_SECONDS (default 60) with
 * no request from here; RSS (VmRSS, and its RssAnon / RssFile parts) is read from
 * /proc/PID/status once a second over the last 10 s, and at the end the process reports
 * process.memoryUsage() and V8's heap spaces (scripts/lib/memory-report-preload.mjs, on
 * SIGUSR2: no HTTP request disturbs what is measured). The table gives the last reading and
 * the range over those 10 s; BENCH_IDLE_RUNS (default 2) runs of each configuration.
 *
 * BENCH_IDLE_HEAPSNAPSHOT=DIR also writes a heap snapshot of each run's idle process to
 * DIR and prints its largest parts (self size by V8 node type and constructor, the
 * largest strings), as a start for finding where the memory goes.
 * BENCH_IDLE_NODE_OPTIONS adds V8/Node flags to the server's command line (to compare
 * e.g. `--max-semi-space-size=...`), BENCH_IDLE_SERVER_ARGS flags to `k8ts server` (e.g.
 * `--disable-snapshots`), BENCH_IDLE_CLI another build of cli.js (default dist/cli.js).
 * BENCH_IDLE_ONLY=agent|no-agent runs one configuration.
 *
 * The agent runs with `--flannel-backend none` (as the e2e tests: the VXLAN backend
 * changes the host's links and routes, and costs the process nothing measurable), a node
 * name of its own and a free --cluster-cidr; its Docker network is removed afterwards.
 *
 * Prints Markdown tables. Not a test.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeClusterCIDR } from '../test/support/cluster-cidr.js';
import { removeNodeFromDocker } from '../test/support/k8ts-agent.js';
import { table } from './lib/stats.js';

const CLI = process.env.BENCH_IDLE_CLI ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./lib/memory-report-preload.mjs', import.meta.url));
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const RUNS = Number(process.env.BENCH_IDLE_RUNS ?? 2);
const SNAPSHOT_DIR = process.env.BENCH_IDLE_HEAPSNAPSHOT;
const NODE_OPTIONS = (process.env.BENCH_IDLE_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
const ONLY = process.env.BENCH_IDLE_ONLY;
const SERVER_ARGS = (process.env.BENCH_IDLE_SERVER_ARGS ?? '').split(/\s+/).filter(Boolean);
/** The window at the end of the idle period over which RSS is sampled, seconds. */
const SAMPLE_SECONDS = Math.min(10, IDLE_SECONDS);

interface ProcStatus {
  rss: number;
  rssAnon: number;
  rssFile: number;
}

/** VmRSS, RssAnon and RssFile of a process, MiB. */
function procStatus(pid: number): ProcStatus {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) / 1024;
  return { rss: kib('VmRSS'), rssAnon: kib('RssAnon'), rssFile: kib('RssFile') };
}

interface MemoryReport {
  memoryUsage: NodeJS.MemoryUsage;
  heapSpaces: { space_name: string; space_size: number; space_used_size: number }[];
}

interface RunResult {
  config: string;
  readyMs: number;
  last: ProcStatus;
  rssMin: number;
  rssMax: number;
  report: MemoryReport;
  snapshot?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, ok: () => boolean, timeoutMs: number, exited: () => string | undefined) {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    const gone = exited();
    if (gone) throw new Error(`k8ts server exited before ${what}: ${gone}`);
    if (Date.now() > deadline) throw new Error(`k8ts server: no ${what} within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** One server start, idle period and reading; the process is stopped and its files removed. */
async function idleRun(agent: boolean, run: number): Promise<RunResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-bench-idle-'));
  const nodeName = `bench-idle-${process.pid}-${run}`;
  const reportPath = join(dataDir, 'memory-report.json');
  const snapshot = SNAPSHOT_DIR
    ? join(SNAPSHOT_DIR, `idle-${agent ? 'agent' : 'no-agent'}-${run}.heapsnapshot`)
    : undefined;
  const args = [
    ...NODE_OPTIONS,
    '--import',
    PRELOAD,
    CLI,
    'server',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    ...(agent
      ? ['--node-name', nodeName, '--flannel-backend', 'none', '--cluster-cidr', await freeClusterCIDR()]
      : ['--disable-agent']),
    ...SERVER_ARGS,
  ];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      K8TS_MEMORY_REPORT: reportPath,
      ...(snapshot ? { K8TS_HEAP_SNAPSHOT: snapshot } : {}),
    },
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stdout = '';
  let logTail = '';
  let nodeReady = false;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    const s = d.toString();
    if (s.includes('"message":"node is ready"')) nodeReady = true;
    logTail = (logTail + s).slice(-4000);
  });
  const exited = () =>
    child.exitCode !== null || child.signalCode !== null
      ? `${child.exitCode ?? child.signalCode}\n${stdout}\n${logTail}`
      : undefined;
  try {
    await waitFor('"listening on" line', () => /listening on \S+/.test(stdout), 60_000, exited);
    if (agent) await waitFor('"node is ready" log line', () => nodeReady, 120_000, exited);
    const readyMs = performance.now() - t0;
    await sleep((IDLE_SECONDS - SAMPLE_SECONDS) * 1000);
    const samples: ProcStatus[] = [];
    for (let s = 0; s < SAMPLE_SECONDS; s++) {
      await sleep(1000);
      samples.push(procStatus(child.pid!));
    }
    const last = samples.at(-1)!;
    child.kill('SIGUSR2');
    await waitFor('memory report', () => existsSync(reportPath), 10_000, exited);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as MemoryReport;
    if (snapshot) await waitFor('heap snapshot', () => existsSync(snapshot), 120_000, exited);
    return {
      config: agent ? 'default (with agent)' : '--disable-agent',
      readyMs,
      last,
      rssMin: Math.min(...samples.map((s) => s.rss)),
      rssMax: Math.max(...samples.map((s) => s.rss)),
      report,
      ...(snapshot ? { snapshot } : {}),
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(timer);
    }
    process.removeListener('exit', killOnExit);
    rmSync(dataDir, { recursive: true, force: true });
    if (agent) await removeNodeFromDocker(nodeName);
  }
}

const mib = (bytes: number) => (bytes / 1048576).toFixed(1);

/**
 * The largest parts of a V8 heap snapshot (a `.heapsnapshot` file): self size by node
 * type and constructor name, and the largest strings (their first characters), in MiB.
 */
function summarizeHeapSnapshot(path: string, top = 25): string {
  const snap = JSON.parse(readFileSync(path, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const n = fields.length;
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const types = snap.snapshot.meta.node_types[0];
  const groups = new Map<string, { size: number; count: number }>();
  const strings: [number, string][] = [];
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += n) {
    const type = types[snap.nodes[i + iType]!]!;
    const name = snap.strings[snap.nodes[i + iName]!]!;
    const size = snap.nodes[i + iSize]!;
    total += size;
    const key =
      type === 'object' || type === 'native' || type === 'hidden'
        ? `${type} ${name.slice(0, 50)}`
        : type === 'code' && name.startsWith('(')
          ? `code ${name}`
          : type;
    const g = groups.get(key) ?? { size: 0, count: 0 };
    g.size += size;
    g.count++;
    groups.set(key, g);
    if (type === 'string' && size > 100_000) strings.push([size, name.slice(0, 70).replace(/\s+/g, ' ')]);
  }
  const rows = [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, top);
  strings.sort((a, b) => b[0] - a[0]);
  return [
    `heap snapshot ${path}: ${mib(total)} MiB self size in all`,
    '',
    table([
      ['MiB', 'count', 'V8 node type / constructor'],
      ...rows.map(([k, g]) => [mib(g.size), String(g.count), k]),
    ]),
    '',
    table([['MiB', 'string over 100 kB (start)'], ...strings.slice(0, 15).map(([s, t]) => [mib(s), t])]),
  ].join('\n');
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} missing: npm run build first`);
  const configs = [true, false].filter((a) => !ONLY || ONLY === (a ? 'agent' : 'no-agent'));
  const results: RunResult[] = [];
  for (let run = 1; run <= RUNS; run++)
    for (const agent of configs) {
      const r = await idleRun(agent, run);
      results.push(r);
      process.stderr.write(`# ${r.config} run ${run}: RSS ${r.last.rss.toFixed(1)} MiB\n`);
    }
  console.log(
    `## k8ts server idle memory (${IDLE_SECONDS} s after ready${NODE_OPTIONS.length ? `; node ${NODE_OPTIONS.join(' ')}` : ''}${SERVER_ARGS.length ? `; k8ts server ${SERVER_ARGS.join(' ')}` : ''})\n`,
  );
  console.log(
    table([
      [
        'configuration',
        'ready s',
        'RSS MiB (last 10 s)',
        'anon / file',
        'heapUsed / heapTotal',
        'external',
        'arrayBuffers',
        'new / old / code space used',
      ],
      ...results.map((r) => {
        const m = r.report.memoryUsage;
        const space = (name: string) => r.report.heapSpaces.find((s) => s.space_name === name);
        const spaces = ['new_space', 'old_space', 'code_space']
          .map((s) => `${mib(space(s)?.space_used_size ?? NaN)}/${mib(space(s)?.space_size ?? NaN)}`)
          .join(' · ');
        return [
          r.config,
          (r.readyMs / 1000).toFixed(1),
          `${r.last.rss.toFixed(1)} (${r.rssMin.toFixed(1)}–${r.rssMax.toFixed(1)})`,
          `${r.last.rssAnon.toFixed(1)} / ${r.last.rssFile.toFixed(1)}`,
          `${mib(m.heapUsed)} / ${mib(m.heapTotal)}`,
          mib(m.external),
          mib(m.arrayBuffers),
          spaces,
        ];
      }),
    ]),
  );
  console.log(
    '\n(MiB; heap spaces as used/committed; RSS read from /proc, the rest from process.memoryUsage())',
  );
  for (const r of results)
    if (r.snapshot) console.log(`\n### ${r.config}\n\n${summarizeHeapSnapshot(r.snapshot)}`);
}

await main();
