// One file because one suite: PodManager's pod lifecycle (run, backoff, probes, deletion, adoption, init containers, hooks) on one harness.
/**
 * PodManager against the real in-process API server and the fake runtime, on a fake
 * clock: pods reach Running with their status, crash loops back off 10 s doubling to
 * 300 s, probes drive readiness and restarts, deletion stops and removes everything before
 * the final grace-0 delete, a restarted manager adopts running containers, and a runtime
 * outage is recovered from.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { isNotFound } from '../../../api/client/errors.js';
import { resources } from '../../../api/client/resource.js';
import { silentLogger } from '../../../api/log.js';
import type { KubeObject } from '../../../api/object.js';
import type { ContainerStatus, Pod } from '../../../api/types.js';
import { FakeRuntime } from '../../../cri/fake/runtime.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { Backoff } from './backoff.js';
import { PodManager, type PodManagerConfig } from './manager.js';
import { hostMounter, MountFailure, mountPointsUnder, type Mounter } from './mount.js';
import type { Probe } from './types.js';
import type { ProbeOutcome, ProbeTarget } from '../prober/probe.js';

const IMAGES = ['k8ts/pause:1.0', 'spring-server:1.0', 'k8ts/busybox:1.0'];

interface Event {
  reason: string;
  message: string;
  fieldPath?: string | undefined;
}

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(() => api.stop());

/** Everything one test uses; stopped by afterEach. */
interface Harness {
  /** A node name of its own, so pods of other tests stay out of the way. */
  node: string;
  clock: FakeClock;
  runtime: FakeRuntime;
  events: Event[];
  manager: PodManager;
  dataDir: string;
  start(over?: Partial<PodManagerConfig>): Promise<PodManager>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

let nodes = 0;
async function harness(
  over: Partial<PodManagerConfig> = {},
  runtime?: FakeRuntime | ((clock: FakeClock) => FakeRuntime),
  node = `node-${++nodes}`,
): Promise<Harness> {
  const clock = new FakeClock();
  const rt =
    typeof runtime === 'function' ? runtime(clock) : (runtime ?? new FakeRuntime({ clock, images: IMAGES }));
  await rt.ensurePodNetwork({
    name: `k8ts-${node}`,
    subnet: '10.42.0.0/24',
    labels: { 'io.k8ts.node': node },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-pods-'));
  const events: Event[] = [];
  const h: Harness = {
    node,
    clock,
    runtime: rt,
    events,
    dataDir,
    manager: undefined as unknown as PodManager,
    start: async (o = {}) => {
      const m = new PodManager({
        client: api.client,
        runtime: rt,
        nodeName: node,
        nodeIP: '127.0.0.2',
        podNetwork: `k8ts-${node}`,
        recorder: {
          event: (target, _type, reason, message) =>
            events.push({ reason, message, fieldPath: (target as { fieldPath?: string }).fieldPath }),
        },
        clock,
        logger: silentLogger(),
        dataDir,
        ...over,
        ...o,
      });
      cleanups.push(() => m.stop());
      await m.start();
      h.manager = m;
      return m;
    },
  };
  cleanups.push(async () => {
    // Secret tmpfs mounts of pods a failed test left: never remove through them.
    for (const m of await mountPointsUnder(hostMounter, dataDir)) await hostMounter.unmount(m);
    rmSync(dataDir, { recursive: true, force: true });
  });
  await h.start();
  return h;
}

let seq = 0;
function makePod(
  h: Harness,
  prefix: string,
  spec: Partial<Pod['spec']> & { containers: Pod['spec']['containers'] },
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${prefix}-${++seq}`, namespace: 'default' },
    spec: { nodeName: h.node, ...spec },
  };
}

async function getPod(pod: Pod): Promise<Pod | undefined> {
  try {
    return await api.client.get<Pod>(resources.pods, 'default', pod.metadata.name!);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Polls `check` until it returns something truthy, moving the fake clock `stepMs` between
 * polls and giving real I/O (the API server) a moment; fails after 20 s of real time.
 */
async function until<T>(
  clock: FakeClock,
  what: string,
  check: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  stepMs = 200,
): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.advance(stepMs);
    await new Promise((r) => setTimeout(r, 2));
  }
}

const statusOf = (p: Pod | undefined, name = 'app'): ContainerStatus | undefined =>
  p?.status?.containerStatuses?.find((c) => c.name === name);

function containersOf(rt: FakeRuntime, uid: string, name = 'app') {
  return [...rt.state.containers.values()]
    .filter((c) => c.config.labels['io.kubernetes.pod.uid'] === uid && c.config.metadata.name === name)
    .sort((a, b) => Number(a.createdAt - b.createdAt));
}

describe('PodManager', () => {
  it('runs a pod: sandbox, env, mounts, resources, hostPort; status Running and Ready', async () => {
    const h = await harness();
    await api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', namespace: 'default' },
      data: { greeting: 'hello', 'app.properties': 'x=1' },
    } as KubeObject);
    await api.client.create(resources.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sec', namespace: 'default' },
      data: { password: Buffer.from('s3cret').toString('base64') },
    } as KubeObject);
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'web', {
        containers: [
          {
            name: 'app',
            image: 'spring-server:1.0',
            args: ['--greeting=$(GREETING)'],
            ports: [{ containerPort: 8080, hostPort: 18080 }],
            resources: {
              limits: { cpu: '500m', memory: '128Mi' },
              requests: { cpu: '250m', memory: '64Mi' },
            },
            env: [
              { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } },
              { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
              { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
              { name: 'MSG', value: '$(GREETING) from $(POD_NAME)' },
            ],
            envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'cfg' } }],
            volumeMounts: [
              { name: 'config', mountPath: '/etc/app' },
              { name: 'scratch', mountPath: '/tmp/scratch' },
            ],
            securityContext: { runAsUser: 1000, readOnlyRootFilesystem: true },
          },
        ],
        volumes: [
          {
            name: 'config',
            configMap: { name: 'cfg', items: [{ key: 'app.properties', path: 'conf/app.properties' }] },
          },
          { name: 'scratch', emptyDir: {} },
        ],
      }),
    );
    const uid = created.metadata.uid!;
    const pod = await until(h.clock, 'pod Running and Ready', async () => {
      const p = await getPod(created);
      return p?.status?.phase === 'Running' &&
        p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True'
        ? p
        : undefined;
    });
    const [c] = containersOf(h.runtime, uid);
    assert.ok(c);
    const st = statusOf(pod)!;
    assert.equal(st.containerID, `fake://${c.id}`);
    assert.equal(st.restartCount, 0);
    assert.equal(st.ready, true);
    assert.equal(st.started, true);
    assert.equal(st.image, 'spring-server:1.0');
    assert.match(st.imageID, /^sha256:/);
    const sandbox = h.runtime.state.sandboxes.get(c.podSandboxId)!;
    assert.equal(pod.status?.podIP, sandbox.ip);
    assert.equal(pod.status?.hostIP, '127.0.0.2');
    assert.ok(pod.status?.startTime);
    assert.equal(pod.status?.qosClass, 'Burstable', 'qosClass kept');
    assert.deepEqual(sandbox.config.portMappings, [
      { protocol: 'TCP', containerPort: 8080, hostPort: 18080, hostIp: '127.0.0.2' },
    ]);
    assert.equal(sandbox.config.labels['io.kubernetes.pod.uid'], uid);
    assert.equal(sandbox.config.labels['io.k8ts.node'], h.node);
    assert.equal(sandbox.config.network, `k8ts-${h.node}`);

    const env = Object.fromEntries((c.config.envs ?? []).map((e) => [e.key, e.value]));
    assert.equal(env.GREETING, 'hello');
    assert.equal(env.PASSWORD, 's3cret');
    assert.equal(env.POD_NAME, created.metadata.name);
    assert.equal(env.POD_IP, sandbox.ip);
    assert.equal(env.NODE, h.node);
    assert.equal(env.CPU, '500');
    assert.equal(env.MSG, `hello from ${created.metadata.name}`);
    assert.equal(env.CFG_greeting, 'hello');
    assert.deepEqual(c.config.args, ['--greeting=hello']);
    assert.deepEqual(c.config.linux?.resources, {
      cpuShares: 256,
      cpuPeriod: 100_000,
      cpuQuota: 50_000,
      memoryLimitInBytes: 128 * 1024 * 1024,
    });
    assert.deepEqual(c.config.linux?.securityContext, {
      runAsUser: 1000,
      readonlyRootfs: true,
      namespaceOptions: { network: 'POD', ipc: 'POD', pid: 'CONTAINER' },
    });
    assert.deepEqual(sandbox.config.linux?.securityContext, {
      namespaceOptions: { network: 'POD', ipc: 'POD', pid: 'CONTAINER' },
    });
    assert.equal(c.config.labels['io.kubernetes.container.name'], 'app');
    assert.equal(c.config.annotations['io.kubernetes.container.restartCount'], '0');
    assert.match(c.config.annotations['io.kubernetes.container.hash'] ?? '', /^[0-9a-f]+$/);
    const mounts = Object.fromEntries((c.config.mounts ?? []).map((m) => [m.containerPath, m]));
    assert.equal(mounts['/etc/app']!.readonly, true);
    assert.equal(readFileSync(join(mounts['/etc/app']!.hostPath, 'conf/app.properties'), 'utf8'), 'x=1');
    assert.ok(existsSync(mounts['/tmp/scratch']!.hostPath));
    assert.ok(mounts['/tmp/scratch']!.hostPath.startsWith(join(h.dataDir, 'pods', uid, 'volumes')));

    const reasons = h.events.filter((e) => e.fieldPath === 'spec.containers{app}').map((e) => e.reason);
    assert.deepEqual(reasons, ['Pulled', 'Created', 'Started']);
    assert.equal(h.events[0]!.message, 'Container image "spring-server:1.0" already present on machine');
  });

  it('CrashLoopBackOff: restarts after 0, 10, 20, 40, 80, 160, 300 s; waiting reason and message', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'crash', {
        containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 1'] }],
      }),
    );
    const uid = created.metadata.uid!;
    const seen = new Map<string, { startedAt: number; finishedAt: number }>();
    const record = () => {
      for (const c of containersOf(h.runtime, uid)) {
        if (c.startedAt > 0n && c.finishedAt > 0n && !seen.has(c.id))
          seen.set(c.id, {
            startedAt: Number(c.startedAt / 1_000_000n),
            finishedAt: Number(c.finishedAt / 1_000_000n),
          });
      }
      return seen.size >= 8;
    };
    await until(h.clock, 'eight runs', record, 1000);
    const runs = [...seen.values()].sort((a, b) => a.startedAt - b.startedAt);
    const delays = runs.slice(1).map((r, i) => r.startedAt - runs[i]!.finishedAt);
    const expected = [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000];
    // Each restart waits at least its back-off and less than the next one: the fake clock
    // moves on while the manager's real I/O runs, so on a loaded machine a restart is seen
    // some seconds late, but never in another step of the doubling.
    delays.forEach((d, i) => {
      const below = expected[i + 1] ?? 2 * expected[i]!;
      assert.ok(
        d >= expected[i]! && d < below,
        `restart ${i + 1}: ${d} ms, expected ${expected[i]} ms (and under ${below})`,
      );
    });
    const p = await until(h.clock, 'CrashLoopBackOff at the ceiling', async () => {
      const pod = await getPod(created);
      const w = statusOf(pod)?.state?.waiting as { reason?: string; message?: string } | undefined;
      return w?.reason === 'CrashLoopBackOff' && w.message?.startsWith('back-off 5m0s') ? pod : undefined;
    });
    const st = statusOf(p)!;
    assert.equal(
      (st.state!.waiting as { message: string }).message,
      `back-off 5m0s restarting failed container=app pod=${created.metadata.name}_default(${uid})`,
    );
    assert.ok(st.restartCount >= 7);
    assert.equal((st.lastState!.terminated as { exitCode: number; reason: string }).exitCode, 1);
    assert.equal((st.lastState!.terminated as { reason: string }).reason, 'Error');
    assert.equal(p!.status?.phase, 'Running');
    assert.ok(
      h.events.some(
        (e) => e.reason === 'BackOff' && e.message.startsWith('Back-off restarting failed container app'),
      ),
    );
    assert.ok(containersOf(h.runtime, uid).length <= 2, 'dead containers are pruned to the newest one');
  });

  it('CrashLoopBackOff holds into a new sandbox: a pod in back-off 20s whose sandbox dies waits it out', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'crash-sb', {
        containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 1'] }],
      }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'back-off 20s', async () => {
      const w = statusOf(await getPod(created))?.state?.waiting as { message?: string } | undefined;
      return w?.message?.startsWith('back-off 20s');
    });
    const before = containersOf(h.runtime, uid);
    const finishedAt = Number(before.at(-1)!.finishedAt / 1_000_000n);
    const sandbox = [...h.runtime.state.sandboxes.values()].find(
      (sb) => sb.config.labels['io.kubernetes.pod.uid'] === uid && sb.state === 'SANDBOX_READY',
    )!;
    const sandboxChanged = () => h.events.filter((e) => e.reason === 'SandboxChanged');
    assert.deepEqual(sandboxChanged(), [], "a new pod's first sandbox is no change");
    // The pause container is killed behind the kubelet's back.
    await h.runtime.stopPodSandbox(sandbox.id);
    const next = await until(
      h.clock,
      'the next start',
      () => containersOf(h.runtime, uid).find((c) => !before.some((b) => b.id === c.id) && c.startedAt > 0n),
      500,
    );
    const delay = Number(next.startedAt / 1_000_000n) - finishedAt;
    assert.ok(delay >= 20_000, `restarted ${delay} ms after the crash, inside its 20 s back-off`);
    assert.notEqual(next.podSandboxId, sandbox.id, 'into a new sandbox');
    // kuberuntime's SyncPod, once for the dead sandbox.
    assert.deepEqual(
      sandboxChanged().map((e) => [e.message, e.fieldPath]),
      [['Pod sandbox changed, it will be killed and re-created.', undefined]],
    );
  });

  it('a container whose command does not exist: RunContainerError, then CrashLoopBackOff 10 s doubling', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'nocmd', {
        containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['/nonexistent/app'] }],
      }),
    );
    const uid = created.metadata.uid!;
    const createdAt = new Set<number>();
    const reasons = new Set<string>();
    await until(
      h.clock,
      'five start attempts',
      async () => {
        for (const c of containersOf(h.runtime, uid)) createdAt.add(Number(c.createdAt / 1_000_000n));
        const w = statusOf(await getPod(created))?.state?.waiting as { reason?: string } | undefined;
        if (w?.reason) reasons.add(w.reason);
        return createdAt.size >= 5;
      },
      1000,
    );
    const times = [...createdAt].sort((a, b) => a - b);
    const delays = times.slice(1).map((t, i) => t - times[i]!);
    const expected = [0, 10_000, 20_000, 40_000];
    // At least the back-off and less than the next step (a loaded machine sees them late).
    delays.forEach((d, i) => {
      const below = expected[i + 1] ?? 2 * expected[i]!;
      assert.ok(
        d >= expected[i]! && d < below,
        `attempt ${i + 2}: ${d} ms after the one before, expected ${expected[i]} ms (and under ${below})`,
      );
    });
    assert.ok(reasons.has('RunContainerError'), [...reasons].join(', '));
    assert.ok(reasons.has('CrashLoopBackOff'), [...reasons].join(', '));
    const p = await until(h.clock, 'CrashLoopBackOff', async () => {
      const pod = await getPod(created);
      const w = statusOf(pod)?.state?.waiting as { reason?: string } | undefined;
      return w?.reason === 'CrashLoopBackOff' ? pod : undefined;
    });
    const last = statusOf(p)!.lastState!.terminated as { exitCode: number; reason: string; message: string };
    assert.equal(last.exitCode, 127);
    assert.equal(last.reason, 'ContainerCannotRun');
    assert.match(last.message, /\/nonexistent\/app/);
    const createdEvents = h.events.filter((e) => e.reason === 'Created').length;
    assert.ok(createdEvents <= 6, `${createdEvents} Created events for 5 attempts`);
  });

  it('CrashLoopBackOff resets after 10 minutes of running', async () => {
    // The delay the kubelet chose at each restart (the Backoff's delay when it moves on, 0
    // for a new or expired entry), by container name. On a loaded machine a sync can come
    // many fake seconds late while the clock moves on, so the time a restart came says only
    // that it waited at least the delay, not which delay was chosen.
    const chosen = new Map<string, number[]>([
      ['long', []],
      ['short', []],
    ]);
    const next = Backoff.prototype.next;
    Backoff.prototype.next = function (this: Backoff, key: string, eventTime?: number) {
      const name = key.split('_')[3]!;
      chosen.get(name)?.push(this.remainingSince(key, h.clock.now()));
      next.call(this, key, eventTime);
    };
    cleanups.push(async () => {
      Backoff.prototype.next = next;
    });
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'slow', {
        containers: [
          { name: 'long', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'sleep 700; exit 1'] },
          { name: 'short', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'sleep 300; exit 1'] },
        ],
      }),
    );
    const uid = created.metadata.uid!;
    const runs = new Map<string, Map<string, [number, number]>>([
      ['long', new Map()],
      ['short', new Map()],
    ]);
    await until(
      h.clock,
      'three runs of each',
      () => {
        for (const [name, m] of runs) {
          for (const c of containersOf(h.runtime, uid, name)) {
            if (c.startedAt > 0n)
              m.set(c.id, [Number(c.startedAt / 1_000_000n), Number(c.finishedAt / 1_000_000n)]);
          }
        }
        return [...runs.values()].every((m) => [...m.values()].filter(([s]) => s > 0).length >= 3);
      },
      2000,
    );
    const delays = (name: string) => {
      const r = [...runs.get(name)!.values()].sort((a, b) => a[0] - b[0]);
      return r.slice(1, 3).map(([start], i) => start - r[i]![1]);
    };
    assert.deepEqual(chosen.get('long')!.slice(0, 2), [0, 0], 'ran 700 s each time: restarted at once');
    assert.deepEqual(chosen.get('short')!.slice(0, 2), [0, 10_000], 'ran 300 s only: backed off 10 s');
    const [, second] = delays('short');
    assert.ok(second! >= 10_000, `ran 300 s only: waited the 10 s (${second} ms)`);
  });

  it('restartPolicy Never / OnFailure: Succeeded or Failed when the containers ended', async () => {
    const h = await harness();
    const table = [
      { policy: 'Never' as const, script: 'exit 0', phase: 'Succeeded', reason: 'Completed' },
      { policy: 'Never' as const, script: 'exit 3', phase: 'Failed', reason: 'Error' },
      { policy: 'OnFailure' as const, script: 'exit 0', phase: 'Succeeded', reason: 'Completed' },
    ];
    for (const c of table) {
      const created = await api.client.create<Pod>(
        resources.pods,
        makePod(h, 'job', {
          restartPolicy: c.policy,
          containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sh', '-c', c.script] }],
        }),
      );
      const p = await until(h.clock, `${c.policy}/${c.script} → ${c.phase}`, async () => {
        const pod = await getPod(created);
        return pod?.status?.phase === c.phase ? pod : undefined;
      });
      const t = statusOf(p)!.state!.terminated as { reason: string; exitCode: number };
      assert.equal(t.reason, c.reason);
      assert.equal(statusOf(p)!.restartCount, 0);
      assert.equal(p.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'False');
      await until(h.clock, 'the sandbox stopped', () =>
        [...h.runtime.state.sandboxes.values()]
          .filter((s) => s.config.metadata.uid === created.metadata.uid)
          .every((s) => s.state === 'SANDBOX_NOTREADY'),
      );
    }
  });

  it('deletion: SIGTERM with the grace period, sandbox stopped, everything removed, then the grace-0 delete', async () => {
    const h = await harness();
    const calls: string[] = [];
    const rt = h.runtime;
    const orig = {
      stopContainer: rt.stopContainer.bind(rt),
      stopPodSandbox: rt.stopPodSandbox.bind(rt),
      removeContainer: rt.removeContainer.bind(rt),
      removePodSandbox: rt.removePodSandbox.bind(rt),
    };
    rt.stopContainer = (id, t) => (calls.push(`stopContainer ${t}`), orig.stopContainer(id, t));
    rt.stopPodSandbox = (id) => (calls.push('stopPodSandbox'), orig.stopPodSandbox(id));
    rt.removeContainer = (id) => (calls.push('removeContainer'), orig.removeContainer(id));
    rt.removePodSandbox = (id) => (calls.push('removePodSandbox'), orig.removePodSandbox(id));
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'del', {
        terminationGracePeriodSeconds: 17,
        containers: [{ name: 'app', image: 'spring-server:1.0' }],
        volumes: [{ name: 'v', emptyDir: {} }],
      }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'running', async () => (await getPod(created))?.status?.phase === 'Running');
    const [c] = containersOf(rt, uid);
    assert.ok(existsSync(join(h.dataDir, 'pods', uid)));
    await api.client.delete(resources.pods, 'default', created.metadata.name!);
    assert.ok((await getPod(created))?.metadata.deletionTimestamp, 'the graceful delete keeps the object');
    await until(h.clock, 'the pod object gone', async () => (await getPod(created)) === undefined);
    assert.deepEqual(calls, ['stopContainer 17', 'stopPodSandbox', 'removeContainer', 'removePodSandbox']);
    assert.equal(rt.state.containers.get(c!.id), undefined);
    assert.equal(containersOf(rt, uid).length, 0);
    assert.ok(![...rt.state.sandboxes.values()].some((s) => s.config.metadata.uid === uid));
    assert.ok(!existsSync(join(h.dataDir, 'pods', uid)), 'volumes removed');
    assert.ok(h.events.some((e) => e.reason === 'Killing' && e.message === 'Stopping container app'));
    await until(h.clock, 'the worker done', () => h.manager.workerState(uid) === undefined);
  });

  it('a restarted manager adopts running containers (same ids, no restart) and removes those of deleted pods', async () => {
    const h = await harness();
    const keep = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'keep', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    const gone = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'gone', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    for (const p of [keep, gone]) {
      await until(h.clock, 'running', async () => (await getPod(p))?.status?.phase === 'Running');
    }
    const ids = containersOf(h.runtime, keep.metadata.uid!).map((c) => c.id);
    await h.manager.stop();
    // While the agent is away: one pod is force-deleted.
    await api.client.delete(resources.pods, 'default', gone.metadata.name!, { gracePeriodSeconds: 0 });
    const again = await harness({}, h.runtime.reopen(), h.node);
    await until(
      again.clock,
      'the orphan removed',
      () => containersOf(h.runtime, gone.metadata.uid!).length === 0,
    );
    await until(again.clock, 'status posted again', async () => {
      const p = await getPod(keep);
      return statusOf(p)?.ready === true && p?.status?.phase === 'Running';
    });
    assert.deepEqual(
      containersOf(h.runtime, keep.metadata.uid!).map((c) => c.id),
      ids,
    );
    assert.equal(statusOf(await getPod(keep))?.restartCount, 0);
    assert.deepEqual(
      again.events.filter((e) => e.reason === 'Started'),
      [],
      'nothing was started again',
    );
  });

  it('a container killed outside (docker kill) is restarted: restartCount 1, lastState', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'kill', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    await until(h.clock, 'running', async () => (await getPod(created))?.status?.phase === 'Running');
    const [c] = containersOf(h.runtime, created.metadata.uid!);
    h.runtime.exitContainer(c!.id, 137);
    const p = await until(h.clock, 'restarted', async () => {
      const pod = await getPod(created);
      return statusOf(pod)?.restartCount === 1 && statusOf(pod)?.state?.running ? pod : undefined;
    });
    const last = statusOf(p)!.lastState!.terminated as { exitCode: number; containerID: string };
    assert.equal(last.exitCode, 137);
    assert.equal(last.containerID, `fake://${c!.id}`);
  });

  it('restartCount survives the runtime losing the containers: recovered from the pod log directory', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'lost', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'running', async () => (await getPod(created))?.status?.phase === 'Running');
    h.runtime.exitContainer(containersOf(h.runtime, uid)[0]!.id, 137);
    await until(h.clock, 'restarted', async () => {
      const s = statusOf(await getPod(created));
      return s?.restartCount === 1 && s.state?.running;
    });
    const logs = join(h.dataDir, 'pod-logs', `default_${created.metadata.name}_${uid}`, 'app');
    assert.ok(existsSync(join(logs, '1.log')), 'the kubelet names each log after the restart count');
    // Removed behind the kubelet's back (docker rm -f, a wiped runtime state).
    for (const c of containersOf(h.runtime, uid)) {
      await h.runtime.stopContainer(c.id, 0);
      await h.runtime.removeContainer(c.id);
    }
    const p = await until(h.clock, 'running again', async () => {
      const pod = await getPod(created);
      const s = statusOf(pod);
      return s?.state?.running && s.containerID !== undefined && containersOf(h.runtime, uid).length === 1
        ? pod
        : undefined;
    });
    assert.equal(statusOf(p)!.restartCount, 2, 'one more than the highest N.log, not 0');
    await api.client.delete(resources.pods, 'default', created.metadata.name!, { gracePeriodSeconds: 0 });
    await until(h.clock, 'the pod log directory removed with the pod', () => !existsSync(dirname(logs)));
  });

  it('nothing is created on a runtime that is not ready (shutting down): restarted once it is healthy', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'rt-down', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'running', async () => statusOf(await getPod(created))?.state?.running);
    h.runtime.setRuntimeCondition('RuntimeReady', false, 'Stopping', 'the runtime is shutting down');
    await h.clock.advance(5_000);
    await new Promise((r) => setTimeout(r, 20));
    // The runtime stops the containers on its way down.
    h.runtime.exitContainer(containersOf(h.runtime, uid)[0]!.id, 143);
    for (let i = 0; i < 60; i++) {
      await h.clock.advance(1_000);
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(
      containersOf(h.runtime, uid).length,
      1,
      'no container started while the runtime is not ready',
    );
    h.runtime.setRuntimeCondition('RuntimeReady', true);
    await until(h.clock, 'restarted', async () => {
      const s = statusOf(await getPod(created));
      return s?.restartCount === 1 && s.state?.running;
    });
  });

  it('probes: readiness gates Ready; a failing liveness probe restarts the container', async () => {
    let ready = false;
    let alive = true;
    const runProbe = async (probe: Probe, _t: ProbeTarget): Promise<ProbeOutcome> => {
      const ok = probe.httpGet?.path === '/ready' ? ready : alive;
      return ok
        ? { result: 'Success', output: '' }
        : { result: 'Failure', output: 'HTTP probe failed with statuscode: 500' };
    };
    const h = await harness({ runProbe });
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'probed', {
        containers: [
          {
            name: 'app',
            image: 'spring-server:1.0',
            readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1 },
            livenessProbe: { httpGet: { path: '/live', port: 8080 }, periodSeconds: 1, failureThreshold: 2 },
          },
        ],
      }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'running but not ready', async () => {
      const p = await getPod(created);
      return p?.status?.phase === 'Running' && statusOf(p)?.started === true;
    });
    for (let i = 0; i < 5; i++) await h.clock.advance(1000);
    const notReady = await getPod(created);
    assert.equal(notReady?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    assert.equal(
      notReady?.status?.conditions?.find((c) => c.type === 'ContainersReady')?.reason,
      'ContainersNotReady',
    );
    ready = true;
    await until(h.clock, 'Ready', async () => {
      const p = await getPod(created);
      return p?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    });
    const first = containersOf(h.runtime, uid)[0]!.id;
    alive = false;
    await until(
      h.clock,
      'restarted after the liveness failures',
      async () => statusOf(await getPod(created))?.restartCount === 1,
    );
    alive = true;
    assert.notEqual(containersOf(h.runtime, uid).at(-1)!.id, first);
    assert.ok(
      h.events.some(
        (e) =>
          e.reason === 'Unhealthy' &&
          e.message === 'Liveness probe failed: HTTP probe failed with statuscode: 500',
      ),
    );
    assert.ok(
      h.events.some(
        (e) =>
          e.reason === 'Killing' && e.message === 'Container app failed liveness probe, will be restarted',
      ),
    );
  });

  it('a deleted pod held by a finalizer goes to a terminal phase (Failed) once its containers stopped', async () => {
    const h = await harness();
    const pod = makePod(h, 'held', {
      containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] }],
    });
    pod.metadata.finalizers = ['example.com/hold'];
    const created = await api.client.create<Pod>(resources.pods, pod);
    cleanups.push(async () => {
      await api.client.patch(resources.pods, 'default', created.metadata.name!, 'merge', {
        metadata: { finalizers: null },
      });
    });
    await until(h.clock, 'running', async () => statusOf(await getPod(created))?.state?.running);
    await api.client.delete(resources.pods, 'default', created.metadata.name!, { gracePeriodSeconds: 1 });
    // SIGTERM ends the fake's container with 143: Failed, as a kubelet since 1.27.
    const p = await until(h.clock, 'Failed', async () => {
      const p = await getPod(created);
      return p?.status?.phase === 'Failed' ? p : undefined;
    });
    assert.ok(p.metadata.deletionTimestamp, 'the finalizer keeps the object');
    assert.equal((statusOf(p)?.state?.terminated as { exitCode?: number } | undefined)?.exitCode, 143);
    assert.equal(p.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
  });

  it('status manager: the status is written before the image pull (ContainerCreating, hostIP, startTime)', async () => {
    const h = await harness(
      {},
      (clock) => new FakeRuntime({ clock, images: IMAGES, registry: ['slow:1.0'], pullDelayMs: 65_000 }),
    );
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'slow', { containers: [{ name: 'app', image: 'slow:1.0' }] }),
    );
    const p = await until(h.clock, 'a status during the pull', async () => {
      const p = await getPod(created);
      return statusOf(p) ? p : undefined;
    });
    assert.equal(h.runtime.state.pulls.length, 0, 'the pull has not finished');
    assert.deepEqual(statusOf(p)!.state, { waiting: { reason: 'ContainerCreating' } });
    assert.equal(p.status?.phase, 'Pending');
    assert.equal(p.status?.hostIP, '127.0.0.2');
    assert.ok(p.status?.startTime);
    assert.equal(p.status?.conditions?.find((c) => c.type === 'Initialized')?.status, 'True');
    // Written before the sandbox was made: not ready to start containers yet.
    const readyToStart = (p: Pod | undefined) =>
      p?.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status;
    assert.equal(readyToStart(p), 'False');
    const running = await until(
      h.clock,
      'running after the pull',
      async () => {
        const p = await getPod(created);
        return statusOf(p)?.state?.running ? p : undefined;
      },
      5_000,
    );
    assert.equal(readyToStart(running), 'True');
  });

  it('status manager: the sandbox is made while the first status write is in flight, and no status is written twice', async () => {
    // Status patches wait while the test holds them (the status manager's writes are its own
    // goroutine's: SetPodStatus does not wait for the API).
    let held: Promise<void> | undefined;
    let release = () => {};
    const hold = () => (held = new Promise<void>((r) => (release = r)));
    const statusWrites: unknown[] = [];
    const client = new Proxy(api.client, {
      get(target, key, receiver) {
        if (key !== 'patch') return Reflect.get(target, key, receiver) as unknown;
        return async (...args: Parameters<typeof api.client.patch>) => {
          if (args[5]?.subresource === 'status') {
            statusWrites.push(args[4]);
            await held;
          }
          return target.patch(...args);
        };
      },
    });
    let ready = false;
    const runProbe = async (): Promise<ProbeOutcome> =>
      ready ? { result: 'Success', output: '' } : { result: 'Failure', output: 'not yet' };
    const h = await harness({ client, runProbe });
    cleanups.push(async () => release()); // the first cleanup: a held write would hold up stop()
    hold();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'gated', {
        containers: [
          {
            name: 'app',
            image: 'spring-server:1.0',
            readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1 },
          },
        ],
      }),
    );
    await until(h.clock, 'a sandbox while the status write waits', () =>
      [...h.runtime.state.sandboxes.values()].some((s) => s.config.metadata.uid === created.metadata.uid),
    );
    assert.equal(statusWrites.length, 1, 'only the first status write, still in flight');
    release();
    await until(h.clock, 'running', async () => statusOf(await getPod(created))?.state?.running);
    const before = statusWrites.length;
    // The probe's success syncs the pod: its first status write (Ready) is held while the
    // sync ends; the end of the sync compares with that queued write, not with the older
    // status written before it, so Ready is written once.
    hold();
    ready = true;
    await until(h.clock, 'the Ready write', () => statusWrites.length > before);
    await new Promise((r) => setTimeout(r, 100));
    release();
    await until(h.clock, 'Ready', async () => {
      const p = await getPod(created);
      return p?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    });
    for (let i = 0; i < 10; i++) await h.clock.advance(200);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(statusWrites.length, before + 1, 'Ready written once');
  });

  it("a new pod's first sync lists nothing after a relist found none of it: killPod uses that status, the end status is read by id", async () => {
    const rt = new FakeRuntime({ images: IMAGES });
    const calls: string[] = [];
    let relists = 0;
    const listPodSandbox = rt.listPodSandbox.bind(rt);
    rt.listPodSandbox = (filter) => {
      if (filter?.labelSelector?.['io.kubernetes.pod.uid']) calls.push('list');
      else relists++;
      return listPodSandbox(filter);
    };
    const runPodSandbox = rt.runPodSandbox.bind(rt);
    rt.runPodSandbox = (config, opts) => {
      calls.push('run');
      return runPodSandbox(config, opts);
    };
    const client = new Proxy(api.client, {
      get(target, key, receiver) {
        if (key !== 'patch') return Reflect.get(target, key, receiver) as unknown;
        return (...args: Parameters<typeof api.client.patch>) => {
          const phase = (args[4] as { status?: { phase?: string } }).status?.phase;
          if (args[5]?.subresource === 'status' && phase === 'Running') calls.push('status Running');
          return target.patch(...args);
        };
      },
    });
    const h = await harness({ client }, rt);
    // The relist (the PLEG) runs at start: once it is done, it knows the new pod has nothing.
    await until(h.clock, 'a relist', () => relists > 0);
    await new Promise((r) => setTimeout(r, 20));
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'lists', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    await until(h.clock, 'running', async () => statusOf(await getPod(created))?.state?.running);
    assert.deepEqual(calls.slice(0, calls.indexOf('status Running') + 1), ['run', 'status Running']);
  });

  it("a new pod's container is created while its sandbox starts, where the runtime says so (onCreated); removed when the sandbox fails", async () => {
    // As the Docker adapter: onCreated once the sandbox exists, and the start takes a while.
    const rt = new FakeRuntime({ images: IMAGES });
    const order: string[] = [];
    let failures = 1;
    const runPodSandbox = rt.runPodSandbox.bind(rt);
    rt.runPodSandbox = async (config, opts) => {
      const id = await runPodSandbox(config);
      opts?.onCreated?.({ id, ip: (await rt.podSandboxStatus(id)).network.ip });
      const deadline = Date.now() + 5_000;
      while (![...rt.state.containers.values()].some((c) => c.podSandboxId === id) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 5));
      order.push(
        `sandbox ${id} ran with ${[...rt.state.containers.values()].filter((c) => c.podSandboxId === id).length} container(s)`,
      );
      if (failures-- > 0) {
        // The sandbox did not come up: it is not ready, and what was created in it is the kubelet's to remove.
        await rt.stopPodSandbox(id);
        throw new Error('pause container exited at once');
      }
      return id;
    };
    const h = await harness({}, rt);
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'overlap', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'running', async () => statusOf(await getPod(created))?.state?.running, 1_000);
    assert.equal(order.length, 2);
    assert.match(order[0]!, /ran with 1 container/);
    assert.match(order[1]!, /ran with 1 container/);
    // The container made in the failed sandbox was removed: one container, in the second sandbox.
    const app = containersOf(rt, uid);
    assert.equal(app.length, 1);
    assert.equal(app[0]!.podSandboxId, order[1]!.split(' ')[1]);
    assert.equal(app[0]!.state, 'CONTAINER_RUNNING');
    assert.equal(h.events.filter((e) => e.reason === 'Created').length, 2);
  });

  it('status manager: a Ready=False written by someone else is put right within 10 s, other conditions kept', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'reconciled', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    const ready = (p: Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    const p = await until(h.clock, 'Ready', async () => {
      const p = await getPod(created);
      return ready(p) === 'True' ? p : undefined;
    });
    // Settled: the syncs of the start are over (the next is the 60 s resync).
    for (let i = 0; i < 10; i++) {
      await h.clock.advance(500);
      await new Promise((r) => setTimeout(r, 10));
    }
    // As the node lifecycle controller's MarkPodsNotReady while the node recovers.
    const conditions = p.status!.conditions!.map((c) =>
      c.type === 'Ready' ? { ...c, status: 'False' as const, reason: 'NodeNotReady' } : c,
    );
    conditions.push({
      type: 'example.com/Other',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    await api.client.patch(
      resources.pods,
      'default',
      created.metadata.name!,
      'merge',
      {
        status: { conditions },
      },
      { subresource: 'status' },
    );
    const from = h.clock.now();
    const fixed = await until(
      h.clock,
      'Ready=True again',
      async () => {
        const p = await getPod(created);
        return ready(p) === 'True' ? p : undefined;
      },
      1_000,
    );
    assert.ok(
      h.clock.now() - from <= 12_000,
      `put right after ${h.clock.now() - from} ms, not at the 60 s resync`,
    );
    assert.ok(
      fixed.status?.conditions?.some((c) => c.type === 'example.com/Other'),
      "the others' condition stays",
    );
  });

  it('readiness gates: Ready False ReadinessGatesNotReady until the gate condition is True, then Ready at once', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'gated', {
        readinessGates: [{ conditionType: 'example.com/lb' }],
        containers: [{ name: 'app', image: 'spring-server:1.0' }],
      }),
    );
    const readyOf = (p: Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'Ready');
    const gated = await until(h.clock, 'running, Ready False for the gate', async () => {
      const p = await getPod(created);
      return statusOf(p)?.ready && readyOf(p)?.reason === 'ReadinessGatesNotReady' ? p : undefined;
    });
    assert.equal(readyOf(gated)?.status, 'False');
    assert.equal(
      readyOf(gated)?.message,
      'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    );
    assert.equal(gated.status?.conditions?.find((c) => c.type === 'ContainersReady')?.status, 'True');
    // Settled: the syncs of the start are over (the next is the 60 s resync).
    for (let i = 0; i < 10; i++) {
      await h.clock.advance(500);
      await new Promise((r) => setTimeout(r, 10));
    }
    // As a load balancer controller marks the pod registered.
    const conditions = [
      ...gated.status!.conditions!,
      {
        type: 'example.com/lb',
        status: 'True' as const,
        lastProbeTime: null,
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ];
    await api.client.patch(
      resources.pods,
      'default',
      created.metadata.name!,
      'merge',
      { status: { conditions } },
      { subresource: 'status' },
    );
    const from = h.clock.now();
    const ready = await until(h.clock, 'Ready', async () => {
      const p = await getPod(created);
      return readyOf(p)?.status === 'True' ? p : undefined;
    });
    assert.ok(
      h.clock.now() - from <= 2_000,
      `Ready after ${h.clock.now() - from} ms, not at the 60 s resync`,
    );
    assert.equal(ready.status?.conditions?.find((c) => c.type === 'example.com/lb')?.status, 'True');
  });

  it('a readiness probe on a port name no container has: Warning Unhealthy "errored" every period, never Ready', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'badport', {
        containers: [
          {
            name: 'app',
            image: 'spring-server:1.0',
            ports: [{ name: 'http', containerPort: 8080 }],
            readinessProbe: { httpGet: { path: '/', port: 'web' }, periodSeconds: 2 },
          },
        ],
      }),
    );
    const want = 'Readiness probe errored: strconv.Atoi: parsing "web": invalid syntax';
    const errored = () => h.events.filter((e) => e.reason === 'Unhealthy' && e.message === want);
    await until(h.clock, 'three errored events', () => errored().length >= 3);
    assert.equal(errored()[0]!.fieldPath, 'spec.containers{app}');
    const p = await getPod(created);
    assert.equal(p?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
  });

  /** The filesystem type mounted at `path` ('' when nothing is). */
  const fsTypeAt = (path: string): string => {
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [left = '', right = ''] = line.split(' - ');
      if (left.split(' ')[4] === path) return right.split(' ')[0] ?? '';
    }
    return '';
  };
  const mode = (p: string) => statSync(p).mode & 0o777;
  /** hostMounter, except that tmpfs cannot be mounted (an agent that is not root). */
  const noTmpfs: Mounter = {
    ...hostMounter,
    mountTmpfs: async () => {
      throw new MountFailure('mount -t tmpfs: permission denied');
    },
  };
  const secretVolumeCases: [string, Mounter | undefined, string][] = [
    ['on tmpfs (memory) where the host allows it', undefined, 'tmpfs'],
    ['on disk where it cannot mount tmpfs', noTmpfs, ''],
  ];
  for (const [what, mounter, fsType] of secretVolumeCases) {
    it(
      `Secret volumes ${what}, under owner-only directories; gone with the pod`,
      {
        skip: fsType === 'tmpfs' && process.getuid?.() !== 0 ? 'needs root: tmpfs' : undefined,
      },
      async () => {
        const h = await harness(mounter ? { mounter } : {});
        const secret = `tls-${++seq}`;
        await api.client.create(resources.secrets, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: secret, namespace: 'default' },
          data: { 'tls.key': Buffer.from('key material').toString('base64') },
        } as KubeObject);
        const created = await api.client.create<Pod>(
          resources.pods,
          makePod(h, 'sec', {
            containers: [
              {
                name: 'app',
                image: 'spring-server:1.0',
                volumeMounts: [{ name: 'certs', mountPath: '/certs' }],
              },
            ],
            volumes: [{ name: 'certs', secret: { secretName: secret } }],
          }),
        );
        await until(h.clock, 'Running', async () => (await getPod(created))?.status?.phase === 'Running');
        const [c] = containersOf(h.runtime, created.metadata.uid!);
        const dir = c!.config.mounts!.find((m) => m.containerPath === '/certs')!.hostPath;
        assert.equal(readFileSync(join(dir, 'tls.key'), 'utf8'), 'key material');
        assert.equal(fsTypeAt(dir), fsType);
        assert.equal(mode(join(h.dataDir, 'pods')), 0o700);
        assert.equal(mode(join(dir, '..')), 0o700, 'kubernetes.io~secret');
        assert.equal(mode(join(dir, 'tls.key')), 0o644, 'defaultMode, for the container’s user');

        await api.client.delete(resources.pods, 'default', created.metadata.name!);
        await until(h.clock, 'the pod gone', async () => (await getPod(created)) === undefined);
        assert.equal(fsTypeAt(dir), '');
        assert.equal(existsSync(dir), false);
      },
    );
  }

  it('image reasons in the status: ErrImageNeverPull, InvalidImageName, ErrImagePull then ImagePullBackOff', async () => {
    const h = await harness();
    const table = [
      { image: 'missing:1.0', policy: 'Never' as const, reasons: ['ErrImageNeverPull'] },
      { image: 'Bad Image Name', policy: undefined, reasons: ['InvalidImageName'] },
      {
        image: 'unpullable:1.0',
        policy: 'IfNotPresent' as const,
        reasons: ['ErrImagePull', 'ImagePullBackOff'],
      },
    ];
    for (const c of table) {
      const created = await api.client.create<Pod>(
        resources.pods,
        makePod(h, 'img', {
          containers: [{ name: 'app', image: c.image, ...(c.policy ? { imagePullPolicy: c.policy } : {}) }],
        }),
      );
      for (const reason of c.reasons) {
        const p = await until(h.clock, `${c.image}: ${reason}`, async () => {
          const pod = await getPod(created);
          return (statusOf(pod)?.state?.waiting as { reason?: string } | undefined)?.reason === reason
            ? pod
            : undefined;
        });
        assert.equal(p.status?.phase, 'Pending');
      }
    }
  });

  it('survives a runtime outage: resyncs when it answers again (sandbox recreated, container restarted)', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'outage', { containers: [{ name: 'app', image: 'spring-server:1.0' }] }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'running', async () => (await getPod(created))?.status?.phase === 'Running');
    // A daemon restart: everything stops, and for a while nothing answers.
    for (const s of h.runtime.state.sandboxes.values())
      if (s.config.metadata.uid === uid) await h.runtime.stopPodSandbox(s.id);
    h.runtime.setUnavailable(true);
    for (let i = 0; i < 20; i++) await h.clock.advance(1000);
    h.runtime.setUnavailable(false);
    const p = await until(h.clock, 'running again', async () => {
      const pod = await getPod(created);
      return statusOf(pod)?.state?.running && statusOf(pod)?.restartCount === 1 ? pod : undefined;
    });
    const sandboxes = [...h.runtime.state.sandboxes.values()].filter((s) => s.config.metadata.uid === uid);
    const ready = sandboxes.filter((s) => s.state === 'SANDBOX_READY');
    assert.equal(ready.length, 1);
    assert.equal(ready[0]!.config.metadata.attempt, 1);
    assert.equal(p.status?.podIP, ready[0]!.ip);
  });
});

describe('PodManager: init containers', () => {
  const initStatus = (p: Pod | undefined, name: string): ContainerStatus | undefined =>
    (p?.status?.initContainerStatuses as ContainerStatus[] | undefined)?.find((c) => c.name === name);
  const condition = (p: Pod | undefined, type: string) => p?.status?.conditions?.find((c) => c.type === type);

  it('runs them one at a time, in order, each to completion, before the app container', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'init', {
        initContainers: [
          { name: 'first', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'sleep 5'] },
          { name: 'second', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'sleep 3'] },
        ],
        containers: [{ name: 'app', image: 'spring-server:1.0' }],
      }),
    );
    const uid = created.metadata.uid!;
    // While the first runs: Pending, not initialized, the second and the app not created.
    const during = await until(h.clock, 'first running', async () => {
      const p = await getPod(created);
      return initStatus(p, 'first')?.state?.running ? p : undefined;
    });
    assert.equal(during.status?.phase, 'Pending');
    assert.equal(condition(during, 'Initialized')?.status, 'False');
    assert.equal(condition(during, 'Initialized')?.reason, 'ContainersNotInitialized');
    assert.equal(
      condition(during, 'Initialized')?.message,
      'containers with incomplete status: [first second]',
    );
    assert.deepEqual(initStatus(during, 'second')?.state, { waiting: { reason: 'PodInitializing' } });
    assert.deepEqual(statusOf(during)?.state, { waiting: { reason: 'PodInitializing' } });
    assert.equal(containersOf(h.runtime, uid, 'second').length, 0);
    assert.equal(containersOf(h.runtime, uid, 'app').length, 0);

    const running = await until(h.clock, 'Running', async () => {
      const p = await getPod(created);
      return p?.status?.phase === 'Running' ? p : undefined;
    });
    const [first] = containersOf(h.runtime, uid, 'first');
    const [second] = containersOf(h.runtime, uid, 'second');
    const [app] = containersOf(h.runtime, uid, 'app');
    assert.ok(first && second && app);
    assert.ok(second.startedAt >= first.finishedAt, 'the second starts after the first ended');
    assert.ok(app.startedAt >= second.finishedAt, 'the app starts after the last init container ended');
    assert.equal(condition(running, 'Initialized')?.status, 'True');
    for (const name of ['first', 'second']) {
      const st = initStatus(running, name)!;
      assert.equal((st.state?.terminated as { reason: string }).reason, 'Completed');
      assert.equal(st.ready, true);
      assert.equal(st.restartCount, 0);
      assert.equal(st.image, 'k8ts/busybox:1.0');
      assert.match(st.imageID, /^sha256:/);
      assert.match(st.containerID ?? '', /^fake:\/\//);
    }
    const order = h.events.filter((e) => e.reason === 'Started').map((e) => e.fieldPath);
    assert.deepEqual(order, [
      'spec.initContainers{first}',
      'spec.initContainers{second}',
      'spec.containers{app}',
    ]);
  });

  it('a failing init container: restarted with CrashLoopBackOff under OnFailure, the app never started', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'initfail', {
        restartPolicy: 'OnFailure',
        initContainers: [{ name: 'setup', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 2'] }],
        containers: [{ name: 'app', image: 'spring-server:1.0' }],
      }),
    );
    const uid = created.metadata.uid!;
    const p = await until(
      h.clock,
      'CrashLoopBackOff after restarts',
      async () => {
        const pod = await getPod(created);
        const st = initStatus(pod, 'setup');
        const w = st?.state?.waiting as { reason?: string } | undefined;
        return w?.reason === 'CrashLoopBackOff' && st!.restartCount >= 2 ? pod : undefined;
      },
      1000,
    );
    assert.equal(p.status?.phase, 'Pending');
    assert.equal((initStatus(p, 'setup')!.lastState!.terminated as { exitCode: number }).exitCode, 2);
    assert.equal(condition(p, 'Initialized')?.status, 'False');
    assert.equal(containersOf(h.runtime, uid, 'app').length, 0);
    assert.ok(h.events.some((e) => e.reason === 'BackOff' && e.fieldPath === 'spec.initContainers{setup}'));
  });

  it('a failing init container under Never: the pod Failed, the app never started', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'initnever', {
        restartPolicy: 'Never',
        initContainers: [{ name: 'setup', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 4'] }],
        containers: [{ name: 'app', image: 'spring-server:1.0' }],
      }),
    );
    const uid = created.metadata.uid!;
    const p = await until(h.clock, 'Failed', async () => {
      const pod = await getPod(created);
      return pod?.status?.phase === 'Failed' ? pod : undefined;
    });
    const t = initStatus(p, 'setup')!.state!.terminated as { exitCode: number; reason: string };
    assert.equal(t.exitCode, 4);
    assert.equal(t.reason, 'Error');
    assert.equal(initStatus(p, 'setup')!.restartCount, 0);
    assert.equal(containersOf(h.runtime, uid, 'setup').length, 1);
    assert.equal(containersOf(h.runtime, uid, 'app').length, 0);
    await until(h.clock, 'the sandbox stopped', () =>
      [...h.runtime.state.sandboxes.values()]
        .filter((s) => s.config.metadata.uid === uid)
        .every((s) => s.state === 'SANDBOX_NOTREADY'),
    );
  });

  it('a sidecar init container (restartPolicy Always) is not run: one Warning event, the pod runs without it', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'sidecar', {
        initContainers: [{ name: 'proxy', image: 'k8ts/busybox:1.0', restartPolicy: 'Always' }],
        containers: [{ name: 'app', image: 'spring-server:1.0' }],
      }),
    );
    const p = await until(h.clock, 'running', async () => {
      const pod = await getPod(created);
      return pod?.status?.phase === 'Running' ? pod : undefined;
    });
    assert.equal(containersOf(h.runtime, created.metadata.uid!, 'proxy').length, 0);
    assert.equal(p.status?.initContainerStatuses, undefined);
    const warned = h.events.filter((e) => e.reason === 'SidecarContainersNotSupported');
    assert.equal(warned.length, 1);
    assert.match(warned[0]!.message, /: proxy$/);
  });

  it('a new sandbox runs the init containers again', async () => {
    const h = await harness();
    const created = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'initresb', {
        initContainers: [{ name: 'setup', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'true'] }],
        containers: [{ name: 'app', image: 'spring-server:1.0' }],
      }),
    );
    const uid = created.metadata.uid!;
    await until(h.clock, 'running', async () => (await getPod(created))?.status?.phase === 'Running');
    for (const s of h.runtime.state.sandboxes.values())
      if (s.config.metadata.uid === uid) await h.runtime.stopPodSandbox(s.id);
    await until(h.clock, 'app running again in a new sandbox', () => {
      const apps = containersOf(h.runtime, uid, 'app');
      return apps.length === 2 && apps[1]!.state === 'CONTAINER_RUNNING';
    });
    const inits = containersOf(h.runtime, uid, 'setup');
    const apps = containersOf(h.runtime, uid, 'app');
    assert.equal(inits.length, 2, 'the init container ran once per sandbox');
    assert.equal(inits[1]!.podSandboxId, apps[1]!.podSandboxId);
    assert.ok(apps[1]!.startedAt >= inits[1]!.finishedAt);
  });
});

describe('PodManager: lifecycle hooks', () => {
  function recordStops(h: Harness, calls: string[]) {
    const orig = h.runtime.stopContainer.bind(h.runtime);
    h.runtime.stopContainer = (id, t) => (calls.push(`stop ${t} at ${h.clock.now()}`), orig(id, t));
  }

  it('postStart exec runs right after the start; a failure kills the container (FailedPostStartHook)', async () => {
    const h = await harness();
    const execs: string[] = [];
    h.runtime.setExecHandler((id, cmd) => {
      execs.push(`${id} ${cmd.join(' ')}`);
      return {
        stdout: Buffer.from(''),
        stderr: Buffer.from('no such file'),
        exitCode: cmd.includes('fail') ? 1 : 0,
      };
    });
    const ok = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'poststart', {
        containers: [
          {
            name: 'app',
            image: 'spring-server:1.0',
            lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo hi > /tmp/x'] } } },
          },
        ],
      }),
    );
    await until(h.clock, 'running', async () => (await getPod(ok))?.status?.phase === 'Running');
    const [c] = containersOf(h.runtime, ok.metadata.uid!);
    assert.deepEqual(execs, [`${c!.id} sh -c echo hi > /tmp/x`]);

    const bad = await api.client.create<Pod>(
      resources.pods,
      makePod(h, 'poststartfail', {
        containers: [
          {
            name: 'app',
            image: 'spring-server:1.0',
            lifecycle: { postStart: { exec: { command: ['fail'] } } },
          },
        ],
      }),
    );
    const p = await until(h.clock, 'PostStartHookError', async () => {
      const pod = await getPod(bad);
      const w = statusOf(pod)?.state?.waiting as { reason?: string } | undefined;
      return w?.reason === 'PostStartHookError' ? pod : undefined;
    });
    const msg = (statusOf(p)!.state!.waiting as { message: string }).message;
    assert.match(
      msg,
      /^Exec lifecycle hook \(\[fail\]\) for Container "app" in Pod "poststartfail-\d+_default\(/,
    );
    assert.match(msg, /message: "no such file"$/);
    const [killed] = containersOf(h.runtime, bad.metadata.uid!);
    assert.equal(killed!.state, 'CONTAINER_EXITED', 'the container was killed');
    assert.ok(
      h.events.some((e) => e.reason === 'FailedPostStartHook' && e.message === 'PostStartHook failed'),
    );
    assert.ok(h.events.some((e) => e.reason === 'Killing' && e.message === 'FailedPostStartHook'));
  });

  it('preStop runs before the stop; its time is taken off the grace period (at least 2 s left)', async () => {
    const h = await harness();
    const calls: string[] = [];
    recordStops(h, calls);
    const table = [
      { hook: { exec: { command: ['sh', '-c', 'sleep 10'] } }, grace: 30, took: 10, left: 20, fails: false },
      { hook: { sleep: { seconds: 7 } }, grace: 30, took: 7, left: 23, fails: false },
      // Not done within the grace period: the stop goes on with the minimum 2 s; no failure event.
      { hook: { exec: { command: ['sh', '-c', 'sleep 100'] } }, grace: 5, took: 5, left: 2, fails: false },
      { hook: { exec: { command: ['sh', '-c', 'exit 1'] } }, grace: 9, took: 0, left: 9, fails: true },
    ];
    for (const c of table) {
      calls.length = 0;
      const created = await api.client.create<Pod>(
        resources.pods,
        makePod(h, 'prestop', {
          terminationGracePeriodSeconds: c.grace,
          containers: [{ name: 'app', image: 'spring-server:1.0', lifecycle: { preStop: c.hook } }],
        }),
      );
      await until(h.clock, 'running', async () => (await getPod(created))?.status?.phase === 'Running');
      const before = h.events.length;
      const t0 = h.clock.now();
      await api.client.delete(resources.pods, 'default', created.metadata.name!);
      await until(h.clock, 'the pod object gone', async () => (await getPod(created)) === undefined, 500);
      assert.equal(calls.length, 1, JSON.stringify(calls));
      const [, left, , at] = calls[0]!.split(' ');
      assert.equal(Number(left), c.left, `${JSON.stringify(c.hook)}: grace left`);
      assert.ok(Number(at) - t0 >= c.took * 1000, 'the stop came after the hook');
      const failed = h.events.slice(before).filter((e) => e.reason === 'FailedPreStopHook');
      assert.equal(
        failed.length,
        c.fails ? 1 : 0,
        `${JSON.stringify(c.hook)}: FailedPreStopHook only for the failing hook`,
      );
    }
  });
});
