/**
 * `npm run bench:scheduler`: kube-scheduler's throughput test in miniature, everything in
 * this process: the real API server over the memory store, the real Scheduler talking to
 * it over HTTP, and a watch observing the bindings.
 *
 *  1. Create BENCH_NODES (default 1000) Nodes through the API: 4 cpu, 16Gi, 110 pods each.
 *  2. Create BENCH_PODS (default 10 000) pods (100m cpu, 128Mi each), 100 requests at a
 *     time; they stay Pending.
 *  3. Start the scheduler; a handler on the scheduler's own pod informer (one shared watch,
 *     as informers in one process share) records when each pod is first seen bound.
 *  4. Print the throughput from the first binding to the last one observed, the
 *     throughput from the scheduler's start, p50/p99 of create→bound latency per pod
 *     (which includes the time the pod waited for the scheduler to start), and RSS.
 *
 * The API server runs in a worker thread of this process (its own event loop and core, as
 * kube-apiserver and kube-scheduler are separate processes); BENCH_API_THREAD=0 keeps it
 * on the main thread with the scheduler.
 *
 * Kubernetes' CI floor for this shape is ~700–800 pods/s at 5000 nodes; the target here is
 * ≥ 1000 pods/s. Set BENCH_PERCENTAGE (0 = adaptive) to change percentageOfNodesToScore.
 * Prints a Markdown table. Not a test.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import winston from 'winston';
import { EventRecorder } from '../api/client/events.js';
import { InformerFactory } from '../api/client/factory.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { CoreEvent, Node, Pod } from '../api/types.js';
import { ApiServer } from '../control/apiserver/server.js';
import { nameValidatorFor, strategyFor } from '../control/apiserver/strategies/index.js';
import { Scheduler } from '../control/scheduler/scheduler.js';
import { MemoryStore } from '../control/storage/memory.js';
import { percentile, table } from './lib/stats.js';

const NODES = Number(process.env.BENCH_NODES ?? 1000);
const PODS = Number(process.env.BENCH_PODS ?? 10_000);
const PERCENTAGE = Number(process.env.BENCH_PERCENTAGE ?? 0);
const CONCURRENCY = 100;
/** BENCH_PROFILE=file.cpuprofile: write a CPU profile of the scheduling phase only. */
const PROFILE = process.env.BENCH_PROFILE;
/** BENCH_PROFILE_API=file.cpuprofile: the same of the API server's worker thread. */
const PROFILE_API = process.env.BENCH_PROFILE_API;
const API_THREAD = process.env.BENCH_API_THREAD !== '0';
/** The scheduler's `parallelism` (concurrent bindings); default: the scheduler's own default. */
const PARALLELISM = process.env.BENCH_PARALLELISM ? Number(process.env.BENCH_PARALLELISM) : undefined;

function node(i: number): Node {
  const name = `bench-node-${String(i).padStart(4, '0')}`;
  const capacity = { cpu: '4', memory: '16Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } },
    spec: {},
    status: {
      capacity,
      allocatable: capacity,
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
    },
  };
}

function pod(i: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `bench-pod-${i}`, namespace: 'default', labels: { app: 'bench' } },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'registry.k8s.io/pause:3.9',
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
        },
      ],
    },
  };
}

/** Runs `fn(i)` for i in [0, n) with at most `limit` at a time. */
async function pool(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

function rssMiB(): number {
  return process.memoryUsage().rss / 2 ** 20;
}

/** A running API server: its port, its thread's event loop utilization so far, and stop. */
interface ApiHandle {
  port: number;
  /** The worker thread the API server runs on (none when on the main thread). */
  worker?: Worker;
  /** performance.eventLoopUtilization() of the thread the API server runs on. */
  elu: () => EventLoopUtilization;
  stop: () => Promise<void>;
}

/** The real API server over a MemoryStore on a free loopback port; `stop` ends it. */
async function startApiServer(): Promise<ApiHandle> {
  const store = new MemoryStore();
  const server = new ApiServer({
    store,
    strategyFor,
    nameValidatorFor,
    bindAddress: '127.0.0.1',
    port: 0,
    logger: winston.createLogger({ silent: true }),
  });
  const { port } = await server.start();
  return {
    port,
    elu: () => performance.eventLoopUtilization(),
    stop: async () => {
      await server.stop();
      await store.close();
    },
  };
}

/** Starts the API server in a worker thread running this file; resolves with its port. */
async function startApiThread(): Promise<ApiHandle> {
  // The worker loads this file through tsx, as the main thread was.
  const boot = `(async () => {
    const { register } = await import('tsx/esm/api');
    register();
    await import(${JSON.stringify(import.meta.url)});
  })()`;
  const worker = new Worker(boot, { eval: true });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (m: { port: number }) => resolve(m.port));
    worker.once('error', reject);
  });
  return {
    port,
    elu: () => worker.performance.eventLoopUtilization(),
    worker,
    stop: async () => {
      const exited = new Promise((r) => worker.once('exit', r));
      worker.postMessage('stop');
      await exited;
    },
  };
}

async function apiWorker(): Promise<void> {
  const api = await startApiServer();
  parentPort!.postMessage({ port: api.port });
  let session: Session | undefined;
  parentPort!.on('message', (m: string) => {
    if (m === 'profile-start') {
      session = new Session();
      session.connect();
      void session.post('Profiler.enable').then(() => session!.post('Profiler.start'));
    } else if (m === 'profile-stop') {
      void session!.post('Profiler.stop').then(({ profile }) => {
        writeFileSync(PROFILE_API!, JSON.stringify(profile));
        session!.disconnect();
        parentPort!.postMessage('profiled');
      });
    } else {
      void api.stop().then(() => process.exit(0));
    }
  });
}

async function main(): Promise<void> {
  const api = API_THREAD ? await startApiThread() : await startApiServer();
  const url = `http://127.0.0.1:${api.port}`;
  // Generous deadline: on a busy machine a create can wait long behind 99 others.
  const client = new RestClient({ server: url, timeoutMs: 300_000 });
  const rssStart = rssMiB();

  let t = performance.now();
  await pool(NODES, 50, async (i) => void (await client.create(resources.nodes, node(i))));
  const nodesSeconds = (performance.now() - t) / 1000;

  const createdAt = new Map<string, number>();
  t = performance.now();
  const creating = setInterval(() => process.stderr.write(`  created ${createdAt.size}/${PODS}\n`), 5000);
  await pool(PODS, CONCURRENCY, async (i) => {
    const p = pod(i);
    createdAt.set(p.metadata.name!, performance.now());
    await client.create(resources.pods, p);
  });
  const podsSeconds = (performance.now() - t) / 1000;
  clearInterval(creating);

  const schedClient = new RestClient({ server: url });
  const informers = new InformerFactory({ client: schedClient });
  const boundAt = new Map<string, number>();
  let firstBound = 0;
  let lastBound = 0;
  let allBound: () => void = () => {};
  const done = new Promise<void>((r) => (allBound = r));
  const observe = (p: Pod) => {
    const name = p.metadata.name!;
    if (!p.spec.nodeName || boundAt.has(name)) return;
    const now = performance.now();
    if (boundAt.size === 0) firstBound = now;
    boundAt.set(name, now);
    lastBound = now;
    if (boundAt.size === PODS) allBound();
  };
  informers
    .informerFor<Pod>(resources.pods)
    .addEventHandler({ onAdd: observe, onUpdate: (_, p) => observe(p) });

  let eventsDropped = 0;
  const recorder = new EventRecorder({
    client: schedClient,
    component: 'default-scheduler',
    onError: () => eventsDropped++,
  });
  const scheduler = new Scheduler({
    client: schedClient,
    informers,
    recorder,
    percentageOfNodesToScore: PERCENTAGE,
    ...(PARALLELISM !== undefined ? { parallelism: PARALLELISM } : {}),
  });
  const ac = new AbortController();
  const session = PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  if (PROFILE_API && api.worker) api.worker.postMessage('profile-start');
  const cpuStart = process.cpuUsage();
  const eluStart = { main: performance.eventLoopUtilization(), api: api.elu() };
  const schedStart = performance.now();
  const running = scheduler.run(ac.signal);
  const progress = setInterval(() => {
    process.stderr.write(`  bound ${boundAt.size}/${PODS}\n`);
  }, 2000);
  await done;
  const cpu = process.cpuUsage(cpuStart);
  const busy = (start: EventLoopUtilization, now: EventLoopUtilization) =>
    `${(performance.eventLoopUtilization(now, start).utilization * 100).toFixed(0)} %`;
  const eluMain = busy(eluStart.main, performance.eventLoopUtilization());
  const eluApi = API_THREAD ? busy(eluStart.api, api.elu()) : eluMain;
  clearInterval(progress);
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE!, JSON.stringify(profile));
    session.disconnect();
  }
  if (PROFILE_API && api.worker) {
    const written = new Promise((r) => api.worker!.once('message', r));
    api.worker.postMessage('profile-stop');
    await written;
  }
  const rssEnd = rssMiB();
  const eventsDroppedWhileBinding = eventsDropped;
  // The Scheduled events still queued are written after the bindings (as client-go's
  // broadcaster lags behind a burst): how long that takes is part of the work.
  await recorder.flush();
  const eventsDone = (performance.now() - lastBound) / 1000;
  const { items: scheduledEvents } = await client.list<CoreEvent>(resources.events, {
    namespace: 'default',
    fieldSelector: 'reason=Scheduled',
  });
  ac.abort();
  await running;
  await informers.shutdown();

  const lat = [...boundAt].map(([name, at]) => at - createdAt.get(name)!);
  const bindSpan = (lastBound - firstBound) / 1000;
  const fromStart = (lastBound - schedStart) / 1000;
  console.log(
    table([
      ['measure', 'value'],
      ['nodes created', `${NODES} in ${nodesSeconds.toFixed(1)} s`],
      ['pods created', `${PODS} in ${podsSeconds.toFixed(1)} s`],
      ['API server', API_THREAD ? 'worker thread' : 'main thread'],
      ['scheduler parallelism (concurrent bindings)', String(PARALLELISM ?? 'default')],
      ['percentageOfNodesToScore', PERCENTAGE === 0 ? 'adaptive' : `${PERCENTAGE}%`],
      [
        'throughput, first → last binding',
        `${(PODS / bindSpan).toFixed(0)} pods/s (${bindSpan.toFixed(2)} s)`,
      ],
      [
        'throughput, scheduler start → last binding',
        `${(PODS / fromStart).toFixed(0)} pods/s (${fromStart.toFixed(2)} s)`,
      ],
      [
        'CPU used while scheduling (whole process: API server, scheduler, observer)',
        `${((cpu.user + cpu.system) / 1e6).toFixed(2)} s = ${(PODS / ((cpu.user + cpu.system) / 1e6)).toFixed(0)} pods per CPU-second`,
      ],
      ['busy (event loop utilization): scheduler thread / API server thread', `${eluMain} / ${eluApi}`],
      ['create → bound p50', `${(percentile(lat, 50) / 1000).toFixed(2)} s`],
      ['create → bound p99', `${(percentile(lat, 99) / 1000).toFixed(2)} s`],
      ['binding errors', String(scheduler.stats.bindingErrors)],
      [
        'Scheduled events written / dropped (queue full, as client-go drops)',
        `${scheduledEvents.length} / ${eventsDroppedWhileBinding}; the last written ${eventsDone.toFixed(2)} s after the last binding`,
      ],
      ['RSS at start / after scheduling', `${rssStart.toFixed(0)} MiB / ${rssEnd.toFixed(0)} MiB`],
    ]),
  );
  schedClient.close();
  client.close();
  await api.stop();
}

if (isMainThread) await main();
else await apiWorker();
