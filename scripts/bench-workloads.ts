/**
 * `npm run bench:workloads`: the workload controllers at scale, everything in this process:
 * the real API server over the memory store (in a worker thread: its own event loop, as
 * kube-apiserver is its own process), the real ControllerManager and Scheduler talking to
 * it over HTTP, and a FakeKubelet playing BENCH_NODES hollow nodes (test/support/fake-nodes.ts:
 * pods bound to them become Running and Ready).
 *
 * Sections (BENCH_SECTIONS=daemonset,... picks some; default all), each printing its
 * phases as Markdown table rows: wall time and the CPU time of the whole process (all
 * threads, user+system) from the phase's start to its end condition.
 *
 * - daemonset: a DaemonSet on BENCH_NODES (default 1000) nodes until every node runs a
 *   Ready pod (status.numberReady = updatedNumberScheduled = desired), then rolled to a new
 *   image (maxUnavailable BENCH_DS_MAX_UNAVAILABLE, default 10%) until all pods are Ready
 *   on it. Target: the first phase < 10 s at 1000 nodes.
 *
 * - job: a Job of BENCH_JOB_COMPLETIONS (default 1000) completions at parallelism
 *   BENCH_JOB_PARALLELISM (default 50), each pod succeeding as soon as it runs, until the
 *   Job is Complete.
 *
 * BENCH_PROFILE=file.cpuprofile writes a CPU profile of the main thread (controllers,
 * scheduler, kubelet) for the whole run. Not a test.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import winston from 'winston';
import type { Job } from '../api/batch.js';
import { InformerFactory } from '../api/client/factory.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { DaemonSet, Node, Pod } from '../api/types.js';
import { ApiServer } from '../control/apiserver/server.js';
import { nameValidatorFor, strategyFor } from '../control/apiserver/strategies/index.js';
import { silentLogger } from '../control/controllers/context.js';
import { daemonSetController } from '../control/controllers/daemon/index.js';
import { jobController } from '../control/controllers/job/index.js';
import { ControllerManager } from '../control/controllers/manager.js';
import { Scheduler } from '../control/scheduler/scheduler.js';
import { MemoryStore } from '../control/storage/memory.js';
import { FakeKubelet, makeNode } from '../test/support/fake-nodes.js';
import { table } from './lib/stats.js';

const NODES = Number(process.env.BENCH_NODES ?? 1000);
const SECTIONS = (process.env.BENCH_SECTIONS ?? 'daemonset,job').split(',').filter(Boolean);
/** An IntOrString: `10%` stays a string, `1` becomes the integer 1. */
const DS_MAX_UNAVAILABLE: number | string = /^[0-9]+$/.test(process.env.BENCH_DS_MAX_UNAVAILABLE ?? '')
  ? Number(process.env.BENCH_DS_MAX_UNAVAILABLE)
  : (process.env.BENCH_DS_MAX_UNAVAILABLE ?? '10%');
const PROFILE = process.env.BENCH_PROFILE;

/** One phase's result: a table row. */
interface Phase {
  section: string;
  phase: string;
  seconds: number;
  cpuSeconds: number;
  note: string;
}

/** What a section gets: a client of the running cluster and a phase timer. */
interface BenchContext {
  client: RestClient;
  nodes: readonly string[];
  /** Runs `done` polls (every 50 ms) after `start()`; records wall and CPU time until it holds. */
  measure(
    section: string,
    phase: string,
    start: () => Promise<void>,
    done: () => Promise<string | false>,
  ): Promise<Phase>;
}

type Section = (ctx: BenchContext) => Promise<Phase[]>;

/** A node (4 cpu, 16Gi, 110 pods) of the hollow cluster. */
function benchNode(i: number): Node {
  return makeNode(`bench-node-${String(i).padStart(4, '0')}`, { cpu: '4', memory: '16Gi' });
}

// ---------------------------------------------------------------------------------------
// Sections

const daemonSetSection: Section = async (ctx) => {
  const ds: DaemonSet = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'bench-ds', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'bench-ds' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: DS_MAX_UNAVAILABLE } },
      template: {
        metadata: { labels: { app: 'bench-ds' } },
        spec: { containers: [{ name: 'c', image: 'k8ts/pause:1.0' }] },
      },
    },
  };
  const rolledTo = (image: string) => async (): Promise<string | false> => {
    const cur = await ctx.client.get<DaemonSet>(resources.daemonsets, 'default', 'bench-ds');
    const s = cur.status;
    const n = ctx.nodes.length;
    const done =
      s !== undefined &&
      cur.spec.template.spec.containers[0]?.image === image &&
      s.observedGeneration === cur.metadata.generation &&
      s.desiredNumberScheduled === n &&
      s.numberReady === n &&
      s.updatedNumberScheduled === n &&
      s.numberAvailable === n;
    return done && `${n} pods Ready (${image})`;
  };
  const create = await ctx.measure(
    'daemonset',
    `create on ${ctx.nodes.length} nodes`,
    async () => {
      await ctx.client.create(resources.daemonsets, ds);
    },
    rolledTo('k8ts/pause:1.0'),
  );
  const roll = await ctx.measure(
    'daemonset',
    `roll to a new image (maxUnavailable ${DS_MAX_UNAVAILABLE})`,
    async () => {
      await ctx.client.patch(resources.daemonsets, 'default', 'bench-ds', 'strategic', {
        spec: { template: { spec: { containers: [{ name: 'c', image: 'k8ts/busybox:1.0' }] } } },
      });
    },
    rolledTo('k8ts/busybox:1.0'),
  );
  return [create, roll];
};

/**
 * job: a Job of BENCH_JOB_COMPLETIONS (default 1000) completions at parallelism
 * BENCH_JOB_PARALLELISM (default 50); every pod succeeds as soon as it runs (a pod informer
 * here plays the container that exits 0). Ends when the Job is Complete.
 */
const jobSection: Section = async (ctx) => {
  const completions = Number(process.env.BENCH_JOB_COMPLETIONS ?? 1000);
  const parallelism = Number(process.env.BENCH_JOB_PARALLELISM ?? 50);
  const factory = new InformerFactory({ client: ctx.client });
  const pods = factory.informerFor<Pod>(resources.pods);
  const finishing = new Set<string>();
  let maxRunning = 0;
  const succeed = (pod: Pod): void => {
    if (pod.metadata.labels?.['job-name'] !== 'bench-job' || pod.status?.phase !== 'Running') return;
    const uid = pod.metadata.uid ?? '';
    if (finishing.has(uid)) return;
    finishing.add(uid);
    const running = pods
      .lister()
      .list()
      .filter(
        (p) =>
          p.metadata.labels?.['job-name'] === 'bench-job' &&
          p.status?.phase === 'Running' &&
          !p.metadata.deletionTimestamp,
      ).length;
    maxRunning = Math.max(maxRunning, running);
    const now = new Date().toISOString();
    void ctx.client
      .patch(
        resources.pods,
        pod.metadata.namespace,
        pod.metadata.name!,
        'merge',
        {
          status: {
            phase: 'Succeeded',
            containerStatuses: [
              {
                name: 'c',
                image: 'k8ts/busybox:1.0',
                imageID: '',
                ready: false,
                restartCount: 0,
                state: { terminated: { exitCode: 0, finishedAt: now } },
              },
            ],
          },
        },
        { subresource: 'status' },
      )
      .catch(() => finishing.delete(uid));
  };
  pods.addEventHandler({ onAdd: succeed, onUpdate: (_, p) => succeed(p) });
  factory.start();
  await factory.waitForCacheSync(60_000);
  const job: Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'bench-job', namespace: 'default' },
    spec: {
      completions,
      parallelism,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'k8ts/busybox:1.0' }] } },
    },
  };
  const run = await ctx.measure(
    'job',
    `${completions} completions at parallelism ${parallelism}`,
    async () => {
      await ctx.client.create(resources.jobs, job);
    },
    async () => {
      const cur = await ctx.client.get<Job>(resources.jobs, 'default', 'bench-job');
      const complete = cur.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
      return (
        !!complete &&
        `Complete: ${cur.status?.succeeded} succeeded, ${cur.status?.failed ?? 0} failed, at most ${maxRunning} of its pods Running at once`
      );
    },
  );
  await factory.shutdown();
  return [run];
};

/** The sections, in run order. A new workload kind adds its section here. */
const ALL_SECTIONS: Readonly<Record<string, Section>> = {
  daemonset: daemonSetSection,
  job: jobSection,
};

// ---------------------------------------------------------------------------------------
// The cluster

async function apiWorker(): Promise<void> {
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
  parentPort!.postMessage({ port });
  parentPort!.on('message', () => {
    void server
      .stop()
      .then(() => store.close())
      .then(() => process.exit(0));
  });
}

async function startApiThread(): Promise<{ port: number; stop: () => Promise<void> }> {
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
    stop: async () => {
      const exited = new Promise((r) => worker.once('exit', r));
      worker.postMessage('stop');
      await exited;
    },
  };
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function main(): Promise<void> {
  const unknown = SECTIONS.filter((s) => !ALL_SECTIONS[s]);
  if (unknown.length > 0) throw new Error(`unknown sections ${unknown}; known: ${Object.keys(ALL_SECTIONS)}`);
  const api = await startApiThread();
  const client = new RestClient({ server: `http://127.0.0.1:${api.port}` });
  const nodes = Array.from({ length: NODES }, (_, i) => benchNode(i));
  const setupStart = performance.now();
  // Leases renewed once at start (the node lifecycle controller does not run here).
  const kubelet = new FakeKubelet({ client, nodes, leaseRenewMs: 3_600_000 });
  await kubelet.start();
  process.stderr.write(`${NODES} nodes up in ${((performance.now() - setupStart) / 1000).toFixed(1)} s\n`);

  const ac = new AbortController();
  const manager = new ControllerManager({
    client,
    controllers: { daemonset: daemonSetController, job: jobController },
    logger: silentLogger,
  }).run(ac.signal);
  const scheduling = new Scheduler({ client }).run(ac.signal);

  let session: Session | undefined;
  if (PROFILE) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const ctx: BenchContext = {
    client,
    nodes: nodes.map((n) => n.metadata.name!),
    async measure(section, phase, start, done) {
      const t0 = performance.now();
      const c0 = cpuSeconds();
      await start();
      let note: string | false = false;
      while (!(note = await done().catch(() => false))) await new Promise((r) => setTimeout(r, 50));
      const p: Phase = {
        section,
        phase,
        seconds: (performance.now() - t0) / 1000,
        cpuSeconds: cpuSeconds() - c0,
        note,
      };
      process.stderr.write(`${section}: ${phase}: ${p.seconds.toFixed(2)} s\n`);
      return p;
    },
  };
  const phases: Phase[] = [];
  for (const name of SECTIONS) phases.push(...(await ALL_SECTIONS[name]!(ctx)));
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE!, JSON.stringify(profile));
    session.disconnect();
  }

  process.stdout.write(
    table([
      ['section', 'phase', 'wall (s)', 'CPU (s, all threads)', 'end state'],
      ...phases.map((p) => [p.section, p.phase, p.seconds.toFixed(2), p.cpuSeconds.toFixed(2), p.note]),
    ]) + '\n',
  );
  ac.abort();
  await Promise.all([manager, scheduling]);
  await kubelet.stop();
  client.close();
  await api.stop();
}

if (isMainThread) await main();
else await apiWorker();
