/**
 * `npm run bench:scheduler`: kube-scheduler's throughput test in miniature, everything in
 * this process: the real API server over the memory store, the real Scheduler talking to
 * it over HTTP, and a watch observing the bindings.
 *
 *  1. Create BENCH_NODES (default 1000) Nodes through the API: 4 cpu, 16Gi, 110 pods each.
 *  2. Create BENCH_PODS (default 10 000) pods (100m cpu, 128Mi each), 100 requests at a
 *     time; they stay Pending.
 *  3. Start the scheduler; a watch on pods records when each pod is first seen bound.
 *  4. Print the throughput from the first binding to the last one observed, the
 *     throughput from the scheduler's start, p50/p99 of create→bound latency per pod
 *     (which includes the time the pod waited for the scheduler to start), and RSS.
 *
 * Kubernetes' CI floor for this shape is ~700–800 pods/s at 5000 nodes; the target here is
 * ≥ 1000 pods/s. Set BENCH_PERCENTAGE (0 = adaptive) to change percentageOfNodesToScore.
 * Prints a Markdown table. Not a test.
 */
import winston from 'winston';
import { EventRecorder } from '../api/client/events.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { Node, Pod } from '../api/types.js';
import { ApiServer } from '../control/apiserver/server.js';
import { nameValidatorFor, strategyFor } from '../control/apiserver/strategies/index.js';
import { Scheduler } from '../control/scheduler/scheduler.js';
import { MemoryStore } from '../control/storage/memory.js';
import { percentile, table } from './lib/stats.js';

const NODES = Number(process.env.BENCH_NODES ?? 1000);
const PODS = Number(process.env.BENCH_PODS ?? 10_000);
const PERCENTAGE = Number(process.env.BENCH_PERCENTAGE ?? 0);
const CONCURRENCY = 100;

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

async function main(): Promise<void> {
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
  const url = `http://127.0.0.1:${port}`;
  const client = new RestClient({ server: url });
  const rssStart = rssMiB();

  let t = performance.now();
  await pool(NODES, 50, async (i) => void (await client.create(resources.nodes, node(i))));
  const nodesSeconds = (performance.now() - t) / 1000;

  const createdAt = new Map<string, number>();
  t = performance.now();
  await pool(PODS, CONCURRENCY, async (i) => {
    const p = pod(i);
    createdAt.set(p.metadata.name!, performance.now());
    await client.create(resources.pods, p);
  });
  const podsSeconds = (performance.now() - t) / 1000;

  // The observer: its own client and watch, from the current resourceVersion.
  const observer = new RestClient({ server: url });
  const list = await observer.list<Pod>(resources.pods, { namespace: 'default', limit: 1 });
  const boundAt = new Map<string, number>();
  let firstBound = 0;
  let lastBound = 0;
  let allBound: () => void = () => {};
  const done = new Promise<void>((r) => (allBound = r));
  const watch = await observer.watch<Pod>(resources.pods, {
    namespace: 'default',
    resourceVersion: list.metadata.resourceVersion,
  });
  void (async () => {
    for await (const ev of watch) {
      if (ev.type !== 'MODIFIED') continue;
      const p = ev.object as Pod;
      const name = p.metadata.name!;
      if (!p.spec.nodeName || boundAt.has(name)) continue;
      const now = performance.now();
      if (boundAt.size === 0) firstBound = now;
      boundAt.set(name, now);
      lastBound = now;
      if (boundAt.size === PODS) allBound();
    }
  })();

  const schedClient = new RestClient({ server: url });
  const scheduler = new Scheduler({
    client: schedClient,
    recorder: new EventRecorder({ client: schedClient, component: 'default-scheduler' }),
    percentageOfNodesToScore: PERCENTAGE,
  });
  const ac = new AbortController();
  const schedStart = performance.now();
  const running = scheduler.run(ac.signal);
  const progress = setInterval(() => {
    process.stderr.write(`  bound ${boundAt.size}/${PODS}\n`);
  }, 2000);
  await done;
  clearInterval(progress);
  const rssEnd = rssMiB();
  ac.abort();
  await running;
  watch.stop();

  const lat = [...boundAt].map(([name, at]) => at - createdAt.get(name)!);
  const bindSpan = (lastBound - firstBound) / 1000;
  const fromStart = (lastBound - schedStart) / 1000;
  console.log(
    table([
      ['measure', 'value'],
      ['nodes created', `${NODES} in ${nodesSeconds.toFixed(1)} s`],
      ['pods created', `${PODS} in ${podsSeconds.toFixed(1)} s`],
      ['percentageOfNodesToScore', PERCENTAGE === 0 ? 'adaptive' : `${PERCENTAGE}%`],
      [
        'throughput, first → last binding',
        `${(PODS / bindSpan).toFixed(0)} pods/s (${bindSpan.toFixed(2)} s)`,
      ],
      [
        'throughput, scheduler start → last binding',
        `${(PODS / fromStart).toFixed(0)} pods/s (${fromStart.toFixed(2)} s)`,
      ],
      ['create → bound p50', `${(percentile(lat, 50) / 1000).toFixed(2)} s`],
      ['create → bound p99', `${(percentile(lat, 99) / 1000).toFixed(2)} s`],
      ['binding errors', String(scheduler.stats.bindingErrors)],
      ['RSS at start / after scheduling', `${rssStart.toFixed(0)} MiB / ${rssEnd.toFixed(0)} MiB`],
    ]),
  );
  schedClient.close();
  observer.close();
  client.close();
  await server.stop();
  await store.close();
}

await main();
