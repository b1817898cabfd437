/**
 * `npm run bench:podstartup`: pod startup latency through the real control process
 * (API server, scheduler, controllers — startControl, as `k8ts server` runs it) and a real
 * node agent (startAgent on Docker) in this process, next to a bare `docker run` of the
 * same image on the same engine, in one run.
 *
 * Why one file of about 700 lines: one experiment whose phases (control process, agent,
 * the two sandbox networks, the bare docker run, the step timings) share the run's state
 * and its cleanup; the containerd variant is in scripts/lib/podstartup-containerd.ts.
 *
 * - Pods: BENCH_PODS (default 30) pods of `spring-server:1.0`, created without a node (the
 *   scheduler places them), once one at a time (each waited for) and once all at once.
 *   Latency is Kubernetes' pod startup SLI: from just before the create request to the
 *   watch event showing `status.phase=Running`; and, for a fair comparison with
 *   `docker run`, to the first HTTP 200 from `GET http://<podIP>:8080/`.
 * - docker run: the same number of `docker run -d spring-server:1.0` (the docker CLI, as
 *   a user runs it), sequentially and in parallel: until the command returns (the
 *   container is running), and until its HTTP port answers.
 * - A pod by hand: what each pod costs in Docker, done with the docker CLI — a sandbox
 *   (pause) container on a user-defined bridge network, then the app container joining its
 *   namespaces, with the cpu.shares of a BestEffort pod (2, as the kubelet sets for a
 *   container without a CPU request). This separates the kubelet's own overhead from the
 *   price of the sandbox model.
 * - Where the pods' time goes: per pod, the time of the scheduler's binding (watch), the
 *   agent's log lines (pod added, sandbox created, container started, status posted) and
 *   the watch's Running, as p50s of each step.
 *
 * - The sandbox's network, both ways in one run (BENCH_SANDBOX_NETWORK=both, the default;
 *   `docker` or `own` for one): pods whose sandbox joins Docker's bridge network, and pods
 *   whose sandbox Docker starts with NetworkMode none and whose eth0 the agent's network
 *   module makes (cri/docker/pod-interfaces.ts, agent/network/pod-interfaces.ts). The
 *   agent runs on a Docker adapter the bench opens itself, with each engine call and each
 *   network plugin step timed, so the sandbox step is split into its parts (p50 of each:
 *   create, start, inspect, the two `ip -batch` processes, ...). The two are interleaved
 *   (one at a time pod by pod in turn; all at once in bursts A B B A, so 2 × BENCH_PODS
 *   samples each), as the machine's load drifts over a run. The cluster's backend is
 *   vxlan, so the agent owns this host's network, as the fast path requires; the bench's
 *   switch only picks which of the two the plugin answers.
 *
 * Target: the pods' p50 within 1.2× of the bare `docker run` p50 one at a time, 1.5× all
 * at once (issue 19; Kubernetes' SLO is p99 ≤ 5 s). Not a test; the machine is shared, so
 * numbers move between runs.
 *
 * With `--runtime containerd` (`npm run bench:podstartup -- --runtime containerd`), instead:
 * pods on `k8ts agent --runtime containerd` and on Docker side by side on one simulated host,
 * with `ctr run` (host network, and with a CNI network on the agent's conflist), a CRI
 * sandbox + app by hand and `docker run` as references, and each agent's memory
 * (lib/podstartup-containerd.ts).
 *
 * Every container is labelled — the agent's with `io.k8ts.node=<bench node>`, docker
 * run's with `io.k8ts.bench=podstartup` — and removed at the end, as is the pod network.
 * The pod CIDRs come from a cluster CIDR of this run (10.<100–149>.0.0/16), apart from
 * other clusters on the same engine.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import winston from 'winston';
import { startAgent, type Agent } from '../agent/main.js';
import { runHostCommand, type HostCommand } from '../agent/network/host-command.js';
import { VethPodInterfaces } from '../agent/network/pod-interfaces.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { Node, Pod } from '../api/types.js';
import { startControl, type ControlProcess } from '../control/main.js';
import Docker from 'dockerode';
import { dockerodeEngine, dockerSocketPath, type DockerEngine } from '../cri/docker/engine.js';
import type { DockerPodInterfaces } from '../cri/docker/pod-interfaces.js';
import { DEFAULT_PAUSE_IMAGE, DockerRuntime } from '../cri/docker/runtime.js';
import type { Runtime } from '../cri/index.js';
import { removeNodeFromDocker } from '../test/support/k8ts-agent.js';
import { benchContainerd } from './lib/podstartup-containerd.js';
import { percentile, table } from './lib/stats.js';

const PODS = Number(process.env.BENCH_PODS ?? 30);
const IMAGE = 'spring-server:1.0';
const LABEL = 'io.k8ts.bench=podstartup';
const RUN = randomBytes(3).toString('hex');
const NODE = `bench-podstartup-${RUN}`;
const NAMESPACE = 'default';
/** The network of the sandbox + app by hand runs. */
const BENCH_NETWORK = `k8ts-bench-podstartup-net-${RUN}`;
const HTTP_POLL_MS = 20;
const DEADLINE_MS = 180_000;

const SANDBOX_NETWORK = process.env.BENCH_SANDBOX_NETWORK ?? 'both';
/**
 * BENCH_EARLY_CREATE=on (default): the agent creates a new pod's app container while the
 * sandbox starts (RunPodSandboxOptions.onCreated); off: after it runs, as before; both: each
 * sandbox network both ways, interleaved.
 */
const EARLY_CREATE = process.env.BENCH_EARLY_CREATE ?? 'on';
if (!['both', 'on', 'off'].includes(EARLY_CREATE))
  throw new Error(`BENCH_EARLY_CREATE must be both, on or off, not ${EARLY_CREATE}`);
/** The current phase's switch of RunPodSandboxOptions (timedRuntime drops them when false). */
let earlyCreate = true;
if (!['both', 'docker', 'own'].includes(SANDBOX_NETWORK))
  throw new Error(`BENCH_SANDBOX_NETWORK must be both, docker or own, not ${SANDBOX_NETWORK}`);

const exec = promisify(execFile);
const now = () => performance.now();

/** Resolves once `GET http://ip:8080/` answers 200; throws after DEADLINE_MS. */
async function waitForHttp(ip: string): Promise<void> {
  const deadline = now() + DEADLINE_MS;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get({ host: ip, port: 8080, path: '/', timeout: 1000, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
    if (ok) return;
    if (now() > deadline) throw new Error(`${ip}:8080 did not answer within ${DEADLINE_MS} ms`);
    await new Promise((r) => setTimeout(r, HTTP_POLL_MS));
  }
}

/** One sample: ms to running, ms to HTTP 200, both from the start of the request. */
interface Sample {
  running: number;
  http: number;
  /** The pod's name (pods only). */
  name?: string;
}

// ---- docker run ----

/** Runs `docker run -d` of IMAGE; resolves with the container's ms to running and to HTTP. */
async function dockerRunOnce(): Promise<Sample> {
  const t0 = now();
  const { stdout } = await exec('docker', ['run', '-d', '--label', LABEL, IMAGE]);
  const running = now() - t0;
  const id = stdout.trim();
  const ip = (
    await exec('docker', ['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', id])
  ).stdout.trim();
  await waitForHttp(ip);
  return { running, http: now() - t0 };
}

async function removeBenchContainers(): Promise<void> {
  const { stdout } = await exec('docker', ['ps', '-aq', '--filter', `label=${LABEL}`]).catch(() => ({
    stdout: '',
  }));
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length > 0) await exec('docker', ['rm', '-f', ...ids]).catch(() => undefined);
}

/**
 * A pod by hand: `docker run` of the sandbox image on a user-defined bridge network (as
 * the agent's pod network) with a shareable IPC namespace, then `docker run` of IMAGE
 * joining its network and IPC namespaces — the two container starts every pod costs —
 * both with cpu.shares 2, as the kubelet runs a BestEffort pod.
 * Running once the second command returns; HTTP on the sandbox's address.
 */
async function dockerPodOnce(): Promise<Sample> {
  const t0 = now();
  const sandbox = (
    await exec('docker', [
      'run',
      '-d',
      '--label',
      LABEL,
      '--network',
      BENCH_NETWORK,
      '--ipc',
      'shareable',
      '--cpu-shares',
      '2',
      DEFAULT_PAUSE_IMAGE,
    ])
  ).stdout.trim();
  await exec('docker', [
    'run',
    '-d',
    '--label',
    LABEL,
    '--network',
    `container:${sandbox}`,
    '--ipc',
    `container:${sandbox}`,
    '--cpu-shares',
    '2',
    IMAGE,
  ]);
  const running = now() - t0;
  const ip = (
    await exec('docker', [
      'inspect',
      '-f',
      '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
      sandbox,
    ])
  ).stdout.trim();
  await waitForHttp(ip);
  return { running, http: now() - t0 };
}

/** `n` runs of `once`, one after the other; then removes the containers. */
async function sequentially(n: number, once: () => Promise<Sample>): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) out.push(await once());
  await removeBenchContainers();
  return out;
}

/** `n` runs of `once`, all at once; then removes the containers. */
async function inParallel(n: number, once: () => Promise<Sample>): Promise<Sample[]> {
  const out = await Promise.all(Array.from({ length: n }, () => once()));
  await removeBenchContainers();
  return out;
}

// ---- the adapter's steps ----

/** ms of each timed step (engine call or plugin step) of the current phase, by step name. */
let stepTimes = new Map<string, number[]>();

/**
 * Every timed call of the run (CRI calls as `cri <method>`, engine calls, plugin steps) with
 * its start and end (performance.now() ms): the one-at-a-time pods' timelines are cut from it.
 */
const timeline: { name: string; t0: number; t1: number }[] = [];

async function timed<T>(step: string, fn: () => Promise<T>, keep = true): Promise<T> {
  const t0 = now();
  try {
    return await fn();
  } finally {
    const t1 = now();
    timeline.push({ name: step, t0, t1 });
    if (keep) {
      let list = stepTimes.get(step);
      if (!list) stepTimes.set(step, (list = []));
      list.push(t1 - t0);
    }
  }
}

/** The CRI methods whose calls go on the timeline (the streaming ones do not). */
const CRI_TIMED = new Set([
  'runPodSandbox',
  'podSandboxStatus',
  'listPodSandbox',
  'createContainer',
  'startContainer',
  'listContainers',
  'containerStatus',
  'imageStatus',
  'pullImage',
]);

/** `runtime` with its CRI calls put on the timeline (not in the per-step table). */
function timedRuntime(runtime: Runtime): Runtime {
  return new Proxy(runtime, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      const fn = v as (...args: unknown[]) => Promise<unknown>;
      if (typeof prop !== 'string' || !CRI_TIMED.has(prop)) return fn.bind(target);
      // Without onCreated, the agent creates the app container after the sandbox runs.
      if (prop === 'runPodSandbox')
        return (config: unknown, opts: unknown) =>
          timed('cri runPodSandbox', () => fn.call(target, config, earlyCreate ? opts : undefined), false);
      return (...args: unknown[]) => timed(`cri ${prop}`, () => fn.apply(target, args), false);
    },
  });
}

/**
 * `engine` with its container calls timed, named after the object's type (`sandbox` or
 * `container`, from the create body's labels, remembered by id).
 */
function timedEngine(engine: DockerEngine): DockerEngine {
  const kindOf = new Map<string, string>();
  const kind = (id: string) => kindOf.get(id) ?? 'other';
  return {
    ...engine,
    createContainer: async (body) => {
      const k =
        (body.Labels as Record<string, string>)['io.k8ts.type'] === 'podsandbox' ? 'sandbox' : 'container';
      const id = await timed(`docker create (${k})`, () => engine.createContainer(body));
      kindOf.set(id, k);
      return id;
    },
    startContainer: (id) => timed(`docker start (${kind(id)})`, () => engine.startContainer(id)),
    inspectContainer: (id) => timed(`docker inspect (${kind(id)})`, () => engine.inspectContainer(id)),
  };
}

/** `plugin` with each step timed, and its commands timed by program. */
function timedPlugin(plugin: DockerPodInterfaces): DockerPodInterfaces {
  return {
    enabled: () => plugin.enabled(),
    allocate: (net, owner) => timed('IPAM allocate', () => plugin.allocate(net, owner)),
    attach: (req) => timed('attach (both ip batches)', () => plugin.attach(req)),
    release: (network, ip, owner) => plugin.release(network, ip, owner),
    sweep: (network, owners) => plugin.sweep(network, owners),
  };
}

const timedHost: HostCommand = (file, args, stdin) =>
  timed(file === 'nsenter' ? 'ip -batch in the pod netns' : `${file} ${args[0]} in the host netns`, () =>
    runHostCommand(file, args, stdin),
  );

// ---- pods ----

/** What the agent's log said about each pod, ms timestamps (performance.now()) by `ns/name`. */
const agentSteps = new Map<string, Record<string, number>>();
const STEP_OF: Record<string, string> = {
  'pod added': 'added',
  'created pod sandbox': 'sandbox',
  'started container': 'started',
  'pod status posted': 'posted',
};

/** A log sink keeping the time of the agent's per-pod log lines (the first of each). */
function stepRecorder(): winston.transport {
  const stream = new Writable({
    objectMode: true,
    write(info: { message: string; pod?: string; phase?: string }, _encoding, next) {
      const step = STEP_OF[info.message];
      // The status write that matters is the one saying Running (the first, ContainerCreating,
      // is queued before the sandbox).
      if (step === 'posted' && info.phase !== 'Running') return next();
      if (step && info.pod) {
        let steps = agentSteps.get(info.pod);
        if (!steps) agentSteps.set(info.pod, (steps = {}));
        steps[step] ??= now();
      }
      next();
    },
  });
  return new winston.transports.Stream({ stream });
}

/** One way of making the sandbox's network, measured one at a time and all at once. */
interface Phase {
  own: boolean;
  /** Whether the agent is told the sandbox's id before it runs (RunPodSandboxOptions.onCreated). */
  early: boolean;
  what: string;
  seq: Sample[];
  par: Sample[];
  seqSteps: Map<string, number[]>;
  parSteps: Map<string, number[]>;
}

/** Per pod: when it was created, bound (watch) and seen Running (watch), and its IP. */
interface PodTimes {
  created: number;
  bound?: number;
  running?: number;
  ip?: string;
  onRunning?: () => void;
}

/** Watches the namespace's pods, filling `times` and waking waiters; returns the stopper. */
async function watchPods(client: RestClient, times: Map<string, PodTimes>): Promise<() => Promise<void>> {
  const abort = new AbortController();
  const list = await client.list<Pod>(resources.pods, { namespace: NAMESPACE });
  const stream = await client.watch<Pod>(resources.pods, {
    namespace: NAMESPACE,
    resourceVersion: list.metadata?.resourceVersion,
    signal: abort.signal,
  });
  const done = (async () => {
    try {
      for await (const ev of stream) {
        if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
        const pod = ev.object as Pod;
        const t = times.get(pod.metadata.name ?? '');
        if (!t) continue;
        const at = now();
        if (pod.spec.nodeName && t.bound === undefined) t.bound = at;
        if (pod.status?.phase === 'Running' && t.running === undefined) {
          t.running = at;
          t.ip = pod.status.podIP;
          t.onRunning?.();
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
  })();
  return async () => {
    abort.abort();
    await done;
  };
}

let podSeq = 0;

/** Creates one pod and resolves with its sample once it is Running and answers HTTP. */
async function startPod(client: RestClient, times: Map<string, PodTimes>): Promise<Sample> {
  const name = `startup-${++podSeq}`;
  const t: PodTimes = { created: now() };
  const running = new Promise<void>((resolve) => (t.onRunning = resolve));
  times.set(name, t);
  await client.create<Pod>(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app: 'podstartup' } },
    spec: {
      terminationGracePeriodSeconds: 5,
      containers: [{ name: 'app', image: IMAGE, ports: [{ containerPort: 8080 }] }],
    },
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    running,
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${name} not Running within ${DEADLINE_MS} ms`)),
        DEADLINE_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  const runningMs = t.running! - t.created;
  await waitForHttp(t.ip!);
  return { name, running: runningMs, http: now() - t.created };
}

/** Deletes every pod of the namespace and waits until the API and Docker have none left. */
async function deleteAllPods(client: RestClient): Promise<void> {
  const list = await client.list<Pod>(resources.pods, { namespace: NAMESPACE });
  await Promise.all(
    list.items.map((p) => client.delete(resources.pods, NAMESPACE, p.metadata.name!).catch(() => undefined)),
  );
  const deadline = now() + DEADLINE_MS;
  for (;;) {
    const left = (await client.list<Pod>(resources.pods, { namespace: NAMESPACE })).items.length;
    const { stdout } = await exec('docker', ['ps', '-q', '--filter', `label=io.k8ts.node=${NODE}`]);
    const containers = stdout.split('\n').filter(Boolean).length;
    if (left === 0 && containers === 0) return;
    if (now() > deadline) throw new Error(`${left} pods and ${containers} containers left after deletion`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Polls until the bench node is Ready with its pod network; throws after DEADLINE_MS. */
async function nodeReady(client: RestClient, agent: Agent): Promise<void> {
  const deadline = now() + DEADLINE_MS;
  for (;;) {
    const node = await client.get<Node>(resources.nodes, undefined, NODE);
    const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready && agent.podNetwork.ready && !(node.spec?.taints ?? []).length) return;
    if (now() > deadline) throw new Error(`node ${NODE} not Ready within ${DEADLINE_MS} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// ---- report ----

const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : '-');

function row(what: string, samples: Sample[]): string[] {
  const r = samples.map((s) => s.running);
  const h = samples.map((s) => s.http);
  return [what, ms(percentile(r, 50)), ms(percentile(r, 99)), ms(percentile(h, 50)), ms(percentile(h, 99))];
}

/** p50 of each step of the pods of `samples` (ms since the previous step). */
function breakdown(what: string, samples: Sample[], times: Map<string, PodTimes>): string[] {
  const steps: [string, number[]][] = [
    ['bound', []],
    ['added', []],
    ['sandbox', []],
    ['started', []],
    ['posted', []],
    ['running', []],
  ];
  for (const { name } of samples) {
    const t = times.get(name!)!;
    const a = agentSteps.get(`${NAMESPACE}/${name}`) ?? {};
    const at: Record<string, number | undefined> = { ...a, bound: t.bound, running: t.running };
    let prev = t.created;
    for (const [step, samples] of steps) {
      const v = at[step];
      if (v === undefined) continue;
      samples.push(v - prev);
      prev = v;
    }
  }
  return [what, ...steps.map(([, s]) => ms(percentile(s, 50)))];
}

/**
 * The one-at-a-time pods' timeline: every timed call that began between a pod's create
 * request and its watch Running (one pod in flight, so all are its own), named with its
 * ordinal (the second `docker inspect (sandbox)` is `#2`), with the p50 over pods of its
 * start (ms after the create request) and of its duration, in order of start; the agent's
 * log lines and the watch's events as marks.
 */
function timelineRows(samples: Sample[], times: Map<string, PodTimes>): string[][] {
  const at = new Map<string, { start: number[]; dur: number[] }>();
  const add = (name: string, start: number, dur: number) => {
    let e = at.get(name);
    if (!e) at.set(name, (e = { start: [], dur: [] }));
    e.start.push(start);
    e.dur.push(dur);
  };
  for (const { name } of samples) {
    const t = times.get(name!)!;
    if (t.running === undefined) continue;
    const seen = new Map<string, number>();
    for (const ev of timeline) {
      if (ev.t0 < t.created || ev.t0 > t.running) continue;
      const n = (seen.get(ev.name) ?? 0) + 1;
      seen.set(ev.name, n);
      add(n > 1 ? `${ev.name} #${n}` : ev.name, ev.t0 - t.created, ev.t1 - ev.t0);
    }
    const marks: Record<string, number | undefined> = {
      ...agentSteps.get(`${NAMESPACE}/${name}`),
      bound: t.bound,
      running: t.running,
    };
    for (const [k, v] of Object.entries(marks)) if (v !== undefined) add(`— ${k}`, v - t.created, 0);
  }
  return [...at.entries()]
    .filter(([, e]) => e.start.length >= samples.length / 2)
    .map(([name, e]) => ({
      name,
      start: percentile(e.start, 50),
      dur: percentile(e.dur, 50),
      n: e.start.length,
    }))
    .sort((a, b) => a.start - b.start)
    .map((e) => [e.name, ms(e.start), e.name.startsWith('—') ? '' : ms(e.dur), String(e.n)]);
}

async function main(): Promise<void> {
  await exec('bash', ['scripts/start-dockerd.sh']);
  await exec('bash', ['scripts/build-images.sh']);
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-bench-podstartup-'));
  let control: ControlProcess | undefined;
  let agent: Agent | undefined;
  const cleanUp = async () => {
    await agent?.stop().catch(() => undefined);
    await control?.stop().catch(() => undefined);
    await removeNodeFromDocker(NODE).catch(() => undefined);
    await removeBenchContainers();
    await exec('docker', ['network', 'rm', BENCH_NETWORK]).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const onSignal = () => void cleanUp().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const clusterCIDR = `10.${randomInt(100, 150)}.0.0/16`;
    control = await startControl({
      dataDir: join(dataDir, 'control'),
      bindAddress: '127.0.0.1',
      port: 0,
      datastore: 'sqlite',
      etcdEndpoints: [],
      logLevel: 'error',
      controllers: { clusterCIDR },
    });
    // The fast path's switch: the plugin answers enabled() with it (the backend, vxlan,
    // lets the agent own this host's network either way).
    let ownInterfaces = false;
    const plugin = timedPlugin(
      new VethPodInterfaces({
        host: timedHost,
        ipamDir: join(dataDir, 'agent', 'docker-ipam'),
        enabled: () => ownInterfaces,
      }),
    );
    const runtime = await DockerRuntime.onEngine(
      timedEngine(dockerodeEngine(new Docker({ socketPath: dockerSocketPath() }))),
      { nodeName: NODE, podInterfaces: plugin },
    );
    agent = await startAgent({
      server: control.url,
      // The join token the control process wrote, as `k8ts agent --token-file` reads it.
      token: readFileSync(join(dataDir, 'control', 'node-token'), 'utf8').trim(),
      nodeName: NODE,
      nodeIP: '127.0.0.1',
      nodePortAddress: '127.0.0.1',
      clusterIPInterface: 'k8ts-bench0',
      dataDir: join(dataDir, 'agent'),
      runtime: timedRuntime(runtime),
      ownsRuntime: true,
      logger: winston.createLogger({ level: 'debug', transports: [stepRecorder()] }),
    });
    const client = RestClient.fromKubeconfig(control.kubeconfigPath, { userAgent: 'bench-podstartup' });
    await nodeReady(client, agent);
    const times = new Map<string, PodTimes>();
    const stopWatch = await watchPods(client, times);
    process.stderr.write(`node ${NODE} Ready (cluster CIDR ${clusterCIDR}); warming up\n`);

    // Both ways interleaved, so that a load that drifts over the run (the machine is
    // shared) weighs on both alike: one at a time pod by pod in turn, all at once in
    // bursts ordered A B B A.
    const phases: Phase[] = (SANDBOX_NETWORK === 'both' ? [false, true] : [SANDBOX_NETWORK === 'own'])
      .flatMap((own) =>
        (EARLY_CREATE === 'both' ? [false, true] : [EARLY_CREATE === 'on']).map((early) => ({ own, early })),
      )
      .map(({ own, early }) => ({
        own,
        early,
        what:
          (own ? "sandbox's own interface (NetworkMode none)" : "Docker's network") +
          (EARLY_CREATE === 'both' ? (early ? ', app created meanwhile' : ', app created after') : ''),
        seq: [],
        par: [],
        seqSteps: new Map(),
        parSteps: new Map(),
      }));
    const offTheRecord = async (fn: () => Promise<void>) => {
      stepTimes = new Map();
      await fn();
    };
    // One of each first, so that neither pays first-use costs (page cache, the sandbox
    // image, the pod network's first endpoint) inside the measurement.
    for (const p of phases) {
      ownInterfaces = p.own;
      earlyCreate = p.early;
      await offTheRecord(async () => {
        await startPod(client, times);
        await deleteAllPods(client);
      });
    }
    process.stderr.write(`${PODS} pods of each, one at a time, in turn\n`);
    for (let i = 0; i < PODS; i++) {
      for (const p of phases) {
        ownInterfaces = p.own;
        earlyCreate = p.early;
        earlyCreate = p.early;
        stepTimes = p.seqSteps;
        p.seq.push(await startPod(client, times));
      }
    }
    await offTheRecord(() => deleteAllPods(client));
    const bursts = phases.length > 1 ? [...phases, ...[...phases].reverse()] : phases;
    for (const p of bursts) {
      process.stderr.write(`${PODS} pods on ${p.what}, all at once\n`);
      ownInterfaces = p.own;
      earlyCreate = p.early;
      stepTimes = p.parSteps;
      p.par.push(...(await Promise.all(Array.from({ length: PODS }, () => startPod(client, times)))));
      await offTheRecord(() => deleteAllPods(client));
    }
    await stopWatch();
    client.close();
    await dockerRunOnce();
    await removeBenchContainers();

    process.stderr.write(`${PODS} docker run, one at a time\n`);
    const dockSeq = await sequentially(PODS, dockerRunOnce);
    process.stderr.write(`${PODS} docker run at once\n`);
    const dockPar = await inParallel(PODS, dockerRunOnce);
    await exec('docker', [
      'network',
      'create',
      '--label',
      LABEL,
      '--subnet',
      `10.${randomInt(150, 200)}.${randomInt(0, 256)}.0/24`,
      BENCH_NETWORK,
    ]);
    process.stderr.write(`${PODS} sandbox + app by hand, one at a time\n`);
    const handSeq = await sequentially(PODS, dockerPodOnce);
    process.stderr.write(`${PODS} sandbox + app by hand at once\n`);
    const handPar = await inParallel(PODS, dockerPodOnce);

    const cores = (await exec('nproc')).stdout.trim();
    const load = (await exec('cat', ['/proc/loadavg'])).stdout.split(' ').slice(0, 3).join(' ');
    console.log(
      `\nPod startup, ${PODS} × ${IMAGE} (${cores} cores, load ${load}); latency from the request to running / to HTTP 200\n`,
    );
    console.log(
      table([
        ['', 'running p50', 'running p99', 'HTTP p50', 'HTTP p99'],
        ...phases.map((p) => row(`pods on ${p.what}, one at a time (watch: Running)`, p.seq)),
        row('docker run, one at a time', dockSeq),
        row('sandbox + app by hand, one at a time', handSeq),
        ...phases.map((p) => row(`pods on ${p.what}, all at once (watch: Running)`, p.par)),
        row('docker run, all at once', dockPar),
        row('sandbox + app by hand, all at once', handPar),
      ]),
    );
    const ratio = (a: Sample[], b: Sample[], k: 'running' | 'http') =>
      (
        percentile(
          a.map((s) => s[k]),
          50,
        ) /
        percentile(
          b.map((s) => s[k]),
          50,
        )
      ).toFixed(2);
    for (const { what, seq, par } of phases) {
      console.log(
        `\npods on ${what}: p50 ratio pods / docker run (targets ≤ 1.2 one at a time, ≤ 1.5 all at once): ` +
          `one at a time ${ratio(seq, dockSeq, 'running')} (HTTP ${ratio(seq, dockSeq, 'http')}), ` +
          `all at once ${ratio(par, dockPar, 'running')} (HTTP ${ratio(par, dockPar, 'http')})`,
      );
      console.log(
        `pods on ${what}: p50 ratio pods / sandbox + app by hand: one at a time ${ratio(seq, handSeq, 'running')} ` +
          `(HTTP ${ratio(seq, handSeq, 'http')}), all at once ${ratio(par, handPar, 'running')} ` +
          `(HTTP ${ratio(par, handPar, 'http')})`,
      );
    }
    console.log(`\nWhere the pods' time goes (p50 of each step, ms after the previous one)\n`);
    console.log(
      table([
        [
          '',
          'created→bound',
          '→kubelet added',
          '→sandbox',
          '→container started',
          '→status posted',
          '→watch Running',
        ],
        ...phases.flatMap((p) => [
          breakdown(`${p.what}, one at a time`, p.seq, times),
          breakdown(`${p.what}, all at once`, p.par, times),
        ]),
      ]),
    );
    console.log(`\nThe adapter's calls (p50 ms of each; count)\n`);
    const stepNames = [
      ...new Set(phases.flatMap((p) => [...p.seqSteps.keys(), ...p.parSteps.keys()])),
    ].sort();
    console.log(
      table([
        ['', ...phases.flatMap((p) => [`${p.what}, one at a time`, `${p.what}, all at once`])],
        ...stepNames.map((name) => [
          name,
          ...phases.flatMap((p) =>
            [p.seqSteps, p.parSteps].map((m) => {
              const v = m.get(name) ?? [];
              return v.length ? `${ms(percentile(v, 50))} (${v.length})` : '-';
            }),
          ),
        ]),
      ]),
    );
    for (const p of phases) {
      console.log(
        `\nOne pod at a time on ${p.what}: its calls in order (p50 over the pods of start, ms after the create request, and of duration)\n`,
      );
      console.log(table([['', 'start', 'took', 'pods'], ...timelineRows(p.seq, times)]));
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await cleanUp();
  }
}

/** `--runtime containerd`: the comparison of lib/podstartup-containerd.ts, printed as one table. */
async function mainContainerd(): Promise<void> {
  await exec('bash', ['scripts/start-dockerd.sh']);
  await exec('bash', ['scripts/build-images.sh', 'spring-server', 'pause']);
  const r = await benchContainerd(PODS, (line) => process.stderr.write(`${line}\n`));
  const cores = (await exec('nproc')).stdout.trim();
  const load = (await exec('cat', ['/proc/loadavg'])).stdout.split(' ').slice(0, 3).join(' ');
  console.log(
    `\nPod startup on one simulated host, ${PODS} × ${IMAGE} (${cores} cores, load ${load}); ms from the request to running\n`,
  );
  const line = (what: string, v: { sequential: number[]; parallel: number[] }) => [
    what,
    ms(percentile(v.sequential, 50)),
    ms(percentile(v.sequential, 99)),
    ms(percentile(v.parallel, 50)),
    ms(percentile(v.parallel, 99)),
  ];
  console.log(
    table([
      ['', 'one at a time p50', 'p99', 'all at once p50', 'p99'],
      line('pods on containerd (watch: Running)', r.containerdPods),
      line('pods on Docker (watch: Running)', r.dockerPods),
      line('ctr run (host network)', r.ctrRun),
      line('ctr run with a CNI network (by hand)', r.ctrRunCni),
      line('CRI sandbox + app by hand (CNI)', r.criByHand),
      line('docker run (bridge network)', r.dockerRun),
    ]),
  );
  const p50 = (v: number[]) => percentile(v, 50);
  console.log(
    `\np50 ratio containerd pods / ctr run with CNI: one at a time ${(p50(r.containerdPods.sequential) / p50(r.ctrRunCni.sequential)).toFixed(2)}, ` +
      `all at once ${(p50(r.containerdPods.parallel) / p50(r.ctrRunCni.parallel)).toFixed(2)} (target ≤ 1.2); ` +
      `/ ctr run (host network): ${(p50(r.containerdPods.sequential) / p50(r.ctrRun.sequential)).toFixed(2)}, ` +
      `${(p50(r.containerdPods.parallel) / p50(r.ctrRun.parallel)).toFixed(2)}; ` +
      `/ CRI by hand: ${(p50(r.containerdPods.sequential) / p50(r.criByHand.sequential)).toFixed(2)}, ` +
      `${(p50(r.containerdPods.parallel) / p50(r.criByHand.parallel)).toFixed(2)}; ` +
      `/ Docker pods: ${(p50(r.containerdPods.sequential) / p50(r.dockerPods.sequential)).toFixed(2)}, ` +
      `${(p50(r.containerdPods.parallel) / p50(r.dockerPods.parallel)).toFixed(2)}`,
  );
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
  console.log(
    `agent memory (VmRSS after the pods): containerd ${mib(r.agentRss.containerd)}, Docker ${mib(r.agentRss.docker)}`,
  );
}

const runtimeFlag = process.argv.indexOf('--runtime');
const RUNTIME = runtimeFlag >= 0 ? process.argv[runtimeFlag + 1] : 'docker';
if (RUNTIME !== 'docker' && RUNTIME !== 'containerd') {
  console.error(`--runtime must be docker or containerd, got ${RUNTIME}`);
  process.exit(2);
}

(RUNTIME === 'containerd' ? mainContainerd() : main()).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
