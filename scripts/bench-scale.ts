/**
 * `npm run bench:scale -- --nodes 500 --pods 5000`: the control process at scale (issue 20
 * item 2). A real `k8ts server` (sqlite unless `--datastore`, fresh data dir, cluster CIDR
 * 100.64.0.0/10 so every node gets a /24) and `k8ts hollow-nodes --count N` (agent/hollow/)
 * run as their own processes on this machine; this one drives and measures them.
 *
 * Stages:
 *  1. join: the hollow nodes join (each its own credential) until all N are Ready;
 *  2. deploy: `--deployments` Deployments (default one per 500 pods) totalling P pods of
 *     `k8ts/busybox:1.0 sleep 3600` until every pod is available;
 *  3. roll: a rolling update of every Deployment (a template annotation; 25 % surge and
 *     unavailable) until every rollout is complete and no old pod is left;
 *  4. delete: the Deployments deleted (background propagation) until no pod is left.
 *
 * For each stage: wall time; pods/s (pods Running, replaced or deleted per second); the
 * control process's RSS at the end and the most seen (sampled every second) and its CPU
 * (% of one core over the stage); mutating API calls (create, update, patch, delete of
 * everyone: kubelets, controllers, scheduler) p50 and p99, interpolated from the server's
 * `apiserver_request_duration_seconds` buckets as Prometheus' histogram_quantile does; the
 * watch-delivery lag p99 (a canary ConfigMap written every 250 ms, received through a watch
 * of this process); a list of all pods after the stage, p50 of 3, from the store and with
 * `resourceVersion=0` (the watch cache); the store's size on disk (the sqlite files). The
 * deploy and roll stages also give the pods' created→Ready p50/p99 (1 s resolution: the
 * condition's lastTransitionTime), and every stage the hollow process's memory line.
 *
 * Flags: --nodes (default 100), --pods (default 1000), --deployments, --datastore
 * sqlite|etcd|memory (etcd: --etcd-endpoints URL,..., else a cluster of --etcd-members
 * members, default 3, of Debian's etcd-server on loopback started for the run and stopped
 * after it, test/support/etcd.ts startEtcdCluster; its store size is one member's bbolt db), --max-pods per node (110), --built
 * (run dist/cli.js; default cli.ts through tsx, whose loader adds some 30 MiB to each
 * process), --stage-timeout seconds (1800), --profile DIR (the control process writes a
 * V8 CPU profile there when it stops: open it in Chrome's DevTools), --node-arg FLAG
 * (repeatable: a flag for the control process's node, e.g. --heapsnapshot-signal=SIGUSR2),
 * --hollow-node-arg FLAG (the same for the hollow process, e.g. --cpu-prof), --idle S (after
 * the join, S seconds of idle nodes: both processes' CPU seconds per minute per 1,000 nodes
 * and the requests per second by verb and resource), --pods 0 (the join only: no pod stages).
 * Prints Markdown. Not a test: the numbers depend on the machine, and on what else runs on
 * it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isNotFound } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { ConfigMap, Deployment, Node, Pod } from '../api/types.js';
import { startEtcdCluster, type EtcdCluster } from '../test/support/etcd.js';
import { startHollowNodesProcess, type HollowNodesProcess } from '../test/support/hollow-nodes.js';
import { startK8tsServer, type K8tsServer } from '../test/support/k8ts-server.js';
import { percentile, table } from './lib/stats.js';

const { values: flags } = parseArgs({
  options: {
    nodes: { type: 'string', default: '100' },
    pods: { type: 'string', default: '1000' },
    deployments: { type: 'string' },
    datastore: { type: 'string', default: 'sqlite' },
    'etcd-endpoints': { type: 'string' },
    'etcd-members': { type: 'string', default: '3' },
    'max-pods': { type: 'string', default: '110' },
    built: { type: 'boolean', default: false },
    'stage-timeout': { type: 'string', default: '1800' },
    profile: { type: 'string' },
    'node-arg': { type: 'string', multiple: true },
    'hollow-node-arg': { type: 'string', multiple: true },
    idle: { type: 'string', default: '0' },
  },
});
const NODES = Number(flags.nodes);
const PODS = Number(flags.pods);
const DEPLOYMENTS = Number(flags.deployments ?? Math.max(1, Math.round(PODS / 500)));
const STAGE_TIMEOUT_MS = Number(flags['stage-timeout']) * 1000;
const IDLE_MS = Number(flags.idle) * 1000;
const NAMESPACE = 'bench-scale';
const APP = 'bench-scale';

// ---------------------------------------------------------------------------------------
// The control process, sampled

function procStat(pid: number): { cpuSeconds: number; rssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5), the 12th and 13th after the name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds: ticks / 100, rssBytes: rss ? Number(rss[1]) * 1024 : Number.NaN };
}

/** Samples the control process every second: the largest RSS seen. */
class Sampler {
  maxRss = 0;
  private timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    // A control process that died is the stage's failure to report, not this timer's.
    this.timer = setInterval(() => {
      try {
        this.sample();
      } catch {
        clearInterval(this.timer);
      }
    }, 1000);
    this.sample();
  }
  sample(): { cpuSeconds: number; rssBytes: number } {
    const s = procStat(this.pid);
    this.maxRss = Math.max(this.maxRss, s.rssBytes);
    return s;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** apiserver_request_duration_seconds bucket counts of the mutating verbs: upper bound → count. */
type Buckets = Map<number, number>;
const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

async function mutatingBuckets(k: K8tsServer): Promise<Buckets> {
  const text = await (await k.fetch('/metrics')).text();
  const out: Buckets = new Map();
  const line = /^apiserver_request_duration_seconds_bucket\{([^}]*)\} (\S+)$/gm;
  for (const m of text.matchAll(line)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (!MUTATING.has(labels.verb ?? '')) continue;
    const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
    out.set(le, (out.get(le) ?? 0) + Number(m[2]));
  }
  return out;
}

/** apiserver_request_total by `verb resource`, summed over codes. */
async function requestTotals(k: K8tsServer): Promise<Map<string, number>> {
  const text = await (await k.fetch('/metrics')).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^apiserver_request_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const key = `${labels.verb ?? ''} ${labels.resource ?? ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[2]));
  }
  return out;
}

/**
 * The idle window after the join (`--idle S`): both processes' CPU over it, as CPU seconds
 * per minute per 1,000 nodes, and the requests per second the server answered by verb and
 * resource (the nodes' Lease renewals, status cycles, ...).
 */
async function idleWindow(b: Bench, ms: number): Promise<string> {
  const hollowPid = b.hollow!.pid;
  const c0 = procStat(b.k.pid).cpuSeconds;
  const h0 = procStat(hollowPid).cpuSeconds;
  const r0 = await requestTotals(b.k);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const minutes = (performance.now() - t0) / 60_000;
  const c1 = procStat(b.k.pid).cpuSeconds;
  const h1 = procStat(hollowPid).cpuSeconds;
  const r1 = await requestTotals(b.k);
  const perK = (cpu: number) => (cpu / minutes / NODES) * 1000;
  const rates = [...r1]
    .map(([key, n]) => [key, (n - (r0.get(key) ?? 0)) / (minutes * 60)] as const)
    .filter(([, rate]) => rate >= 0.1)
    .sort((x, y) => y[1] - x[1])
    .map(([key, rate]) => `${key} ${rate.toFixed(1)}/s`);
  return (
    `idle ${(minutes * 60).toFixed(0)} s with ${NODES} nodes: CPU s per minute per 1,000 nodes: ` +
    `control ${perK(c1 - c0).toFixed(2)}, hollow ${perK(h1 - h0).toFixed(2)} ` +
    `(control ${(((c1 - c0) / minutes / 60) * 100).toFixed(1)} %, hollow ${(((h1 - h0) / minutes / 60) * 100).toFixed(1)} % of a core); ` +
    `requests: ${rates.join(', ')}`
  );
}

/** The q-quantile (0..1) of the requests between two bucket snapshots, seconds (histogram_quantile). */
function histogramQuantile(before: Buckets, after: Buckets, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i]! >= rank) {
      const upper = bounds[i]!;
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      const below = i === 0 ? 0 : counts[i - 1]!;
      if (upper === Infinity) return lower;
      return lower + ((upper - lower) * (rank - below)) / Math.max(1, counts[i]! - below);
    }
  }
  return Number.NaN;
}

/** The bytes of the files under `dir`, recursively; NaN when it cannot be read. */
function dirBytes(dir: string): number {
  try {
    return readdirSync(dir, { withFileTypes: true }).reduce(
      (sum, f) => sum + (f.isDirectory() ? dirBytes(join(dir, f.name)) : statSync(join(dir, f.name)).size),
      0,
    );
  } catch {
    return Number.NaN;
  }
}

/**
 * The store's files on disk, bytes: sqlite's DATA_DIR/db (the database and its WAL), or the
 * bbolt db of one member of the run's etcd cluster (member/snap/db; its WAL is left out, as
 * etcd preallocates each 64 MiB segment).
 */
function storeBytes(b: Pick<Bench, 'k' | 'etcd'>): number {
  return b.etcd
    ? dirBytes(join(b.etcd.members[0]!.dataDir, 'member', 'snap'))
    : dirBytes(join(b.k.dataDir, 'db'));
}

/** A canary ConfigMap written every 250 ms and watched: the delivery lag of each write, ms. */
class WatchCanary {
  private lags: number[] = [];
  private readonly abort = new AbortController();
  private readonly done: Promise<void>[];
  constructor(private readonly client: RestClient) {
    this.done = [this.write(), this.watch()];
  }
  /** The lags since the last take(). */
  take(): number[] {
    const out = this.lags;
    this.lags = [];
    return out;
  }
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.done);
  }
  private async write(): Promise<void> {
    while (!this.abort.signal.aborted) {
      const cm: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'canary', namespace: NAMESPACE },
        data: { sentAt: String(Date.now()) },
      };
      await this.client.update(resources.configmaps, cm).catch(async (err: unknown) => {
        if (isNotFound(err)) await this.client.create(resources.configmaps, cm).catch(() => undefined);
      });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  private async watch(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        const stream = await this.client.watch<ConfigMap>(resources.configmaps, {
          namespace: NAMESPACE,
          fieldSelector: 'metadata.name=canary',
          signal: this.abort.signal,
          timeoutSeconds: 300,
        });
        for await (const ev of stream) {
          if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
          const sent = Number(ev.object.data?.sentAt);
          if (sent > 0) this.lags.push(Date.now() - sent);
        }
      } catch {
        if (!this.abort.signal.aborted) await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// The stages

interface StageResult {
  stage: string;
  seconds: number;
  pods: number;
  rssEnd: number;
  rssMax: number;
  cpuPercent: number;
  mutatingP50: number;
  mutatingP99: number;
  watchLagP99: number;
  listMs: number;
  listCachedMs: number;
  listItems: number;
  storeBytes: number;
  note: string;
}

interface Bench {
  k: K8tsServer;
  /** performance.now() when the control process was spawned. */
  spawnedAt: number;
  client: RestClient;
  canary: WatchCanary;
  sampler: Sampler;
  hollow?: HollowNodesProcess;
  /** The etcd cluster this run started (--datastore etcd without --etcd-endpoints). */
  etcd?: EtcdCluster;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, pollMs = 1000): Promise<T> {
  const deadline = Date.now() + STAGE_TIMEOUT_MS;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${STAGE_TIMEOUT_MS / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** p50 of three GETs of every pod (`query`: '' from the store, '?resourceVersion=0' from the watch cache), ms. */
async function listAllPods(k: K8tsServer, query: string): Promise<{ ms: number; items: number }> {
  const times: number[] = [];
  let items = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const res = await k.fetch(`/api/v1/pods${query}`);
    const body = (await res.json()) as { items?: unknown[] };
    times.push(performance.now() - t0);
    items = body.items?.length ?? 0;
  }
  return { ms: percentile(times, 50), items };
}

/** Runs `act`, then waits for `done`; measures the stage (see the file comment). */
async function stage(
  b: Bench,
  name: string,
  pods: number,
  act: () => Promise<void>,
  done: () => Promise<string | undefined>,
  pollMs = 1000,
): Promise<StageResult> {
  process.stderr.write(`bench:scale: stage ${name}...\n`);
  b.canary.take();
  b.sampler.maxRss = 0;
  const buckets0 = await mutatingBuckets(b.k);
  const cpu0 = b.sampler.sample().cpuSeconds;
  const t0 = performance.now();
  await act();
  const note = await until(name, done, pollMs);
  const t1 = performance.now();
  const seconds = (t1 - t0) / 1000;
  // Where the stage lies in a --profile of the control process (its clock starts about when it was spawned).
  const since = (t: number) => ((t - b.spawnedAt) / 1000).toFixed(1);
  process.stderr.write(
    `bench:scale: ${name} ran from ${since(t0)} s to ${since(t1)} s after the control process started\n`,
  );
  const end = b.sampler.sample();
  const buckets1 = await mutatingBuckets(b.k);
  const lags = b.canary.take();
  const list = await listAllPods(b.k, '');
  const cached = await listAllPods(b.k, '?resourceVersion=0');
  const hollowLine = b.hollow ? await b.hollow.reportMemory(30_000).catch((err: Error) => err.message) : '';
  const result: StageResult = {
    stage: name,
    seconds,
    pods,
    rssEnd: end.rssBytes,
    rssMax: b.sampler.maxRss,
    cpuPercent: ((end.cpuSeconds - cpu0) / seconds) * 100,
    mutatingP50: histogramQuantile(buckets0, buckets1, 0.5) * 1000,
    mutatingP99: histogramQuantile(buckets0, buckets1, 0.99) * 1000,
    watchLagP99: percentile(lags, 99),
    listMs: list.ms,
    listCachedMs: cached.ms,
    listItems: cached.items,
    storeBytes: storeBytes(b),
    note: [note, hollowLine.replace(/^hollow-nodes: /, 'hollow: ')].filter(Boolean).join('; '),
  };
  process.stderr.write(`bench:scale: ${name} done in ${seconds.toFixed(1)} s: ${result.note}\n`);
  return result;
}

function deployment(i: number, replicas: number): Deployment {
  const name = `bench-${i}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      replicas,
      selector: { matchLabels: { app: APP, deployment: name } },
      template: {
        metadata: { labels: { app: APP, deployment: name } },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [{ name: 'c', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] }],
        },
      },
    },
  } as Deployment;
}

/** created→Ready of every Ready pod of the app, seconds (p50, p99), 1 s resolution. */
async function startupLatency(client: RestClient): Promise<string> {
  const pods = (await client.list<Pod>(resources.pods, { namespace: NAMESPACE, labelSelector: `app=${APP}` }))
    .items;
  const s = pods.flatMap((p) => {
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    if (!ready?.lastTransitionTime || !p.metadata.creationTimestamp) return [];
    return [(Date.parse(ready.lastTransitionTime) - Date.parse(p.metadata.creationTimestamp)) / 1000];
  });
  return `created→Ready p50 ${percentile(s, 50)} s, p99 ${percentile(s, 99)} s`;
}

async function deploymentsDone(client: RestClient, rolled: boolean): Promise<boolean> {
  const ds = (await client.list<Deployment>(resources.deployments, { namespace: NAMESPACE })).items;
  return (
    ds.length === DEPLOYMENTS &&
    ds.every((d) => {
      const s = d.status ?? {};
      const want = d.spec.replicas ?? 1;
      return (
        (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) &&
        s.updatedReplicas === want &&
        s.availableReplicas === want &&
        s.replicas === want &&
        (!rolled || d.spec.template.metadata?.annotations?.['bench.k8ts.io/rev'] === '2')
      );
    })
  );
}

async function main(): Promise<void> {
  const results: StageResult[] = [];
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const etcd =
    flags.datastore === 'etcd' && !flags['etcd-endpoints']
      ? await startEtcdCluster({ size: Number(flags['etcd-members']), quotaBackendBytes: 8 * 2 ** 30 })
      : undefined;
  const endpoints = flags['etcd-endpoints'] ?? etcd?.endpoints.join(',');
  const serverArgs = [
    '--cluster-cidr',
    '100.64.0.0/10',
    '--datastore',
    flags.datastore,
    ...(endpoints ? ['--etcd-endpoints', endpoints] : []),
    '--log-level',
    'warn',
  ];
  const spawnedAt = performance.now();
  const k = await startK8tsServer({
    args: serverArgs,
    fromSource: !flags.built,
    readyTimeoutMs: 120_000,
    nodeArgs: [
      ...(flags.profile ? ['--cpu-prof', '--cpu-prof-dir', flags.profile] : []),
      ...(flags['node-arg'] ?? []),
    ],
  });
  const client = RestClient.fromKubeconfig(k.kubeconfig);
  const sampler = new Sampler(k.pid);
  let canary: WatchCanary | undefined;
  let hollow: HollowNodesProcess | undefined;
  const idleNotes: string[] = [];
  try {
    await client.create(resources.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NAMESPACE },
    });
    await until('the default ServiceAccount', async () =>
      (await client.get(resources.serviceaccounts, NAMESPACE, 'default')) ? true : undefined,
    );
    canary = new WatchCanary(client);
    const b: Bench = { k, spawnedAt, client, canary, sampler, ...(etcd ? { etcd } : {}) };
    const idle = sampler.sample();
    process.stderr.write(`bench:scale: server up, RSS ${(idle.rssBytes / 2 ** 20).toFixed(0)} MiB\n`);

    results.push(
      await stage(
        b,
        `join ${NODES} nodes`,
        0,
        async () => {
          b.hollow = hollow = await startHollowNodesProcess({
            server: k.url,
            token: k.nodeToken(),
            count: NODES,
            built: flags.built,
            readyTimeoutMs: STAGE_TIMEOUT_MS,
            args: ['--max-pods', flags['max-pods'], '--report-interval', '1h', '--concurrency', '16'],
            ...(flags['hollow-node-arg'] ? { nodeArgs: flags['hollow-node-arg'] } : {}),
          });
        },
        async () => {
          const nodes = (await client.list<Node>(resources.nodes)).items.filter((n) =>
            n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
          return nodes.length >= NODES ? `${nodes.length} nodes Ready` : undefined;
        },
      ),
    );

    if (IDLE_MS > 0) {
      process.stderr.write(`bench:scale: idle for ${IDLE_MS / 1000} s...\n`);
      const line = await idleWindow(b, IDLE_MS);
      process.stderr.write(`bench:scale: ${line}\n`);
      idleNotes.push(line);
    }
    if (PODS > 0) await podStages(b, results);
  } finally {
    await canary?.stop();
    sampler.stop();
    await hollow?.stop();
    client.close();
    await k.stop();
    await etcd?.stop();
  }
  printResults(results, load, etcd);
  for (const line of idleNotes) process.stdout.write(`- ${line}\n`);
}

/** Stages 2 to 4: deploy, roll and delete PODS pods. */
async function podStages(b: Bench, results: StageResult[]): Promise<void> {
  const { client } = b;
  {
    const per = Math.floor(PODS / DEPLOYMENTS);
    const sizes = Array.from({ length: DEPLOYMENTS }, (_, i) => per + (i < PODS - per * DEPLOYMENTS ? 1 : 0));
    const deploy = await stage(
      b,
      `deploy ${PODS} pods`,
      PODS,
      async () => {
        for (const [i, n] of sizes.entries()) await client.create(resources.deployments, deployment(i, n));
      },
      async () => ((await deploymentsDone(client, false)) ? `${PODS} pods available` : undefined),
    );
    deploy.note = `${await startupLatency(client)}; ${deploy.note}`;
    results.push(deploy);

    const roll = await stage(
      b,
      `roll ${PODS} pods`,
      PODS,
      async () => {
        for (let i = 0; i < DEPLOYMENTS; i++)
          await client.patch(resources.deployments, NAMESPACE, `bench-${i}`, 'merge', {
            spec: { template: { metadata: { annotations: { 'bench.k8ts.io/rev': '2' } } } },
          });
      },
      async () => ((await deploymentsDone(client, true)) ? `${DEPLOYMENTS} rollouts complete` : undefined),
    );
    roll.note = `${await startupLatency(client)}; ${roll.note}`;
    results.push(roll);

    results.push(
      await stage(
        b,
        `delete ${PODS} pods`,
        PODS,
        async () => {
          for (let i = 0; i < DEPLOYMENTS; i++)
            await client.delete(resources.deployments, NAMESPACE, `bench-${i}`, {
              propagationPolicy: 'Background',
            });
        },
        async () => {
          const left = (
            await client.list<Pod>(resources.pods, {
              namespace: NAMESPACE,
              labelSelector: `app=${APP}`,
              resourceVersion: '0',
            })
          ).items.length;
          return left === 0 ? 'no pod left' : undefined;
        },
        2000,
      ),
    );
  }
}

function printResults(results: StageResult[], load: string, etcd: EtcdCluster | undefined): void {
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  const ms = (v: number) => (Number.isNaN(v) ? '-' : v < 10 ? v.toFixed(1) : v.toFixed(0));
  process.stdout.write(
    `\nbench:scale on a loaded, shared machine (${cpus().length} cores, load average ${load} at the start): ` +
      `${NODES} hollow nodes, ${PODS} pods in ${DEPLOYMENTS} Deployments, datastore ${flags.datastore}${etcd ? ` (${etcd.members.length} members on loopback)` : ''}, ` +
      `${flags.built ? 'dist/cli.js' : 'cli.ts through tsx'}\n\n`,
  );
  process.stdout.write(
    table([
      [
        'stage',
        'time s',
        'pods/s',
        'RSS MiB end/max',
        'CPU %',
        'mutating p50/p99 ms',
        'watch lag p99 ms',
        'list pods ms (rv=0)',
        'store MiB',
      ],
      ...results.map((r) => [
        r.stage,
        r.seconds.toFixed(1),
        r.pods > 0 ? (r.pods / r.seconds).toFixed(1) : '-',
        `${mib(r.rssEnd)}/${mib(r.rssMax)}`,
        r.cpuPercent.toFixed(0),
        `${ms(r.mutatingP50)}/${ms(r.mutatingP99)}`,
        ms(r.watchLagP99),
        `${ms(r.listMs)} (${ms(r.listCachedMs)}), ${r.listItems} pods`,
        Number.isNaN(r.storeBytes) ? '-' : mib(r.storeBytes),
      ]),
    ]) + '\n\n',
  );
  for (const r of results) process.stdout.write(`- ${r.stage}: ${r.note}\n`);
}

await main();
