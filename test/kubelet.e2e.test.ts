/**
 * The kubelet's pod side against real Docker: the in-process API server, the docker
 * adapter and a PodManager on a node name of this run only, with its own pod network
 * (10.250.<random>.0/24). Pods are bound by setting spec.nodeName (no scheduler).
 *
 * Everything this file makes in Docker carries the node label `io.k8ts.node=<node>` and
 * is removed at the end, passed or failed; nothing else on the engine is touched (the
 * daemon itself is not restarted here: other tests share it).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Docker from 'dockerode';
import { isNotFound } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { silentLogger } from '../api/log.js';
import type { KubeObject } from '../api/object.js';
import type { ContainerStatus, Pod } from '../api/types.js';
import { NODE_LABEL, POD_UID_LABEL } from '../agent/kubelet/pods/labels.js';
import { PodManager, type PodManagerConfig } from '../agent/kubelet/pods/manager.js';
import type { ContainerFilter } from '../cri/api.js';
import { openRuntime, type Runtime } from '../cri/index.js';
import { startTestApi, type TestApi } from './support/api.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import { untilTruthy as until } from './support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NODE = `kubelet-e2e-${RUN}`;
const NETWORK = `k8ts-${NODE}`;
const SUBNET = `10.250.${randomInt(0, 256)}.0/24`;
const docker = new Docker();

interface Recorded {
  reason: string;
  message: string;
  name: string;
}

let api: TestApi;
let runtime: Runtime;
let manager: PodManager;
let dataDir: string;
const events: Recorded[] = [];

function newManager(cfg: Partial<PodManagerConfig> = {}): PodManager {
  return new PodManager({
    client: api.client,
    runtime,
    ...cfg,
    nodeName: NODE,
    nodeIP: '127.0.0.1',
    podNetwork: NETWORK,
    recorder: {
      event: (target, _type, reason, message) =>
        events.push({
          reason,
          message,
          // An ObjectReference (a container's), or the Pod itself.
          name: String(target.name ?? (target as { metadata?: { name?: string } }).metadata?.name),
        }),
    },
    logger: silentLogger(),
    dataDir,
  });
}

/**
 * `rt`, with the label selector of every listContainers call pushed to `calls` (JSON): the
 * relist asks for this node's containers, a pod worker's sync for one pod's.
 */
function recordingListContainers(rt: Runtime, calls: string[]): Runtime {
  return new Proxy(rt, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      if (prop !== 'listContainers') return v.bind(target);
      return (filter?: ContainerFilter) => {
        calls.push(JSON.stringify(filter?.labelSelector ?? {}));
        return target.listContainers(filter);
      };
    },
  });
}

before(async () => {
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'ignore' });
  execFileSync('bash', ['scripts/build-images.sh'], { stdio: 'ignore' });
  api = await startTestApi();
  dataDir = mkdtempSync(join(tmpdir(), 'k8ts-kubelet-e2e-'));
  await api.client.create(resources.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
  } as KubeObject);
  runtime = await openRuntime('docker', { nodeName: NODE });
  await runtime.ensurePodNetwork({ name: NETWORK, subnet: SUBNET, labels: { 'io.k8ts.node': NODE } });
  manager = newManager();
  await manager.start();
});

after(async () => {
  await manager?.stop();
  await removeNodeFromDocker(NODE);
  await runtime?.close();
  await api?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

let seq = 0;
async function createPod(
  prefix: string,
  spec: Partial<Pod['spec']> & { containers: Pod['spec']['containers'] },
) {
  return api.client.create<Pod>(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${prefix}-${++seq}`, namespace: 'default' },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 10, ...spec },
  });
}

async function getPod(name: string): Promise<Pod | undefined> {
  try {
    return await api.client.get<Pod>(resources.pods, 'default', name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const statusOf = (p: Pod | undefined, name = 'app'): ContainerStatus | undefined =>
  p?.status?.containerStatuses?.find((c) => c.name === name);
const dockerId = (s: ContainerStatus | undefined) => s?.containerID?.replace(/^docker:\/\//, '') ?? '';
const isReady = (p: Pod | undefined) =>
  p?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
const waitingReason = (p: Pod | undefined) =>
  (statusOf(p)?.state?.waiting as { reason?: string } | undefined)?.reason;

async function running(name: string): Promise<Pod> {
  return until(`${name} Running and Ready`, async () => {
    const p = await getPod(name);
    return p?.status?.phase === 'Running' && isReady(p) ? p : undefined;
  });
}

describe('kubelet with real Docker', () => {
  let web: Pod;

  it('runs spring-server: Running, answers on its pod IP, limits in docker inspect', async () => {
    const created = await createPod('web', {
      containers: [
        {
          name: 'app',
          image: 'spring-server:1.0',
          ports: [{ containerPort: 8080 }],
          resources: { limits: { cpu: '500m', memory: '128Mi' } },
          readinessProbe: { httpGet: { path: '/actuator/health', port: 8080 }, periodSeconds: 1 },
        },
      ],
    });
    web = await running(created.metadata.name!);
    const podIP = web.status?.podIP ?? '';
    assert.ok(podIP.startsWith(SUBNET.split('.').slice(0, 3).join('.')), `pod IP ${podIP} in ${SUBNET}`);
    assert.equal(web.status?.hostIP, '127.0.0.1');
    const st = statusOf(web)!;
    assert.match(st.containerID ?? '', /^docker:\/\/[0-9a-f]{64}$/);
    assert.equal(st.restartCount, 0);
    assert.deepEqual(
      web.status?.conditions?.map((c) => `${c.type}=${c.status}`),
      ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
        (t) => `${t}=True`,
      ),
      "the kubelet's conditions in upstream's order",
    );
    const res = await fetch(`http://${podIP}:8080/`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /spring-server 1\.0/);
    const info = await docker.getContainer(dockerId(st)).inspect();
    const hc = info.HostConfig as {
      CpuQuota?: number;
      CpuPeriod?: number;
      NanoCpus?: number;
      Memory?: number;
    };
    assert.ok(
      (hc.CpuQuota === 50_000 && hc.CpuPeriod === 100_000) || hc.NanoCpus === 500_000_000,
      `CPU limit in HostConfig: ${JSON.stringify({ q: hc.CpuQuota, p: hc.CpuPeriod, n: hc.NanoCpus })}`,
    );
    assert.equal(hc.Memory, 128 * 1024 * 1024);
    assert.equal(info.Config.Labels['io.kubernetes.pod.uid'], web.metadata.uid);
  });

  it('docker kill of the container → restarted, restartCount 1', async () => {
    const before = dockerId(statusOf(web));
    await docker.getContainer(before).kill();
    const p = await until('restarted', async () => {
      const pod = await getPod(web.metadata.name!);
      return statusOf(pod)?.restartCount === 1 && statusOf(pod)?.state?.running ? pod : undefined;
    });
    assert.notEqual(dockerId(statusOf(p)), before);
    assert.equal((statusOf(p)!.lastState?.terminated as { exitCode: number }).exitCode, 137);
    web = await running(web.metadata.name!);
  });

  it('restarting the PodManager leaves the container ids unchanged', async () => {
    const ids = (
      await docker.listContainers({ filters: { label: [`io.kubernetes.pod.uid=${web.metadata.uid}`] } })
    )
      .map((c) => c.Id)
      .sort();
    await manager.stop();
    // The new manager resyncs the pod every 200 ms, so that it soon has looked at the
    // adopted container several times; what it read shows that it did.
    const calls: string[] = [];
    manager = newManager({ runtime: recordingListContainers(runtime, calls), resyncIntervalMs: 200 });
    await manager.start();
    const uid = web.metadata.uid!;
    await until(
      'the new manager to relist twice and sync the pod three times',
      () => {
        const relists = calls.filter((c) => c === JSON.stringify({ [NODE_LABEL]: NODE })).length;
        const syncs = calls.filter((c) => (JSON.parse(c) as Record<string, string>)[POD_UID_LABEL] === uid);
        // A worker syncs one at a time: a third sync has begun only once two have ended.
        return relists >= 2 && syncs.length >= 3;
      },
      30_000,
    );
    const again = (
      await docker.listContainers({ filters: { label: [`io.kubernetes.pod.uid=${web.metadata.uid}`] } })
    )
      .map((c) => c.Id)
      .sort();
    assert.deepEqual(again, ids);
    const adopted = await getPod(web.metadata.name!);
    assert.equal(statusOf(adopted)?.restartCount, 1);
    assert.ok(isReady(adopted), 'still Ready');
    // The tests after this one run with a manager as the agent makes it (60 s resyncs).
    await manager.stop();
    manager = newManager();
    await manager.start();
  });

  it('delete → SIGTERM (clean exit 0), containers gone, pod object gone', async () => {
    const name = web.metadata.name!;
    const uid = web.metadata.uid!;
    const seen: Pod[] = [];
    const abort = new AbortController();
    const stream = await api.client.watch<Pod>(resources.pods, {
      namespace: 'default',
      fieldSelector: `metadata.name=${name}`,
      resourceVersion: web.metadata.resourceVersion,
      signal: abort.signal,
    });
    const watching = (async () => {
      try {
        for await (const ev of stream) {
          if (ev.type === 'MODIFIED' || ev.type === 'DELETED') seen.push(ev.object as Pod);
          if (ev.type === 'DELETED') break;
        }
      } catch {
        // aborted
      }
    })();
    await api.client.delete(resources.pods, 'default', name);
    await until('pod object gone', async () => (await getPod(name)) === undefined, 60_000);
    await until(
      'the watch saw the delete',
      async () => seen.length > 0 && seen.at(-1)?.metadata.deletionTimestamp !== undefined,
    );
    abort.abort();
    await watching;
    const terminated = seen
      .map((p) => statusOf(p)?.state?.terminated as { exitCode: number } | undefined)
      .find((t) => t !== undefined);
    assert.ok(terminated, 'the final status showed the container terminated');
    assert.equal(terminated.exitCode, 0, 'spring-server exited cleanly on SIGTERM');
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`io.kubernetes.pod.uid=${uid}`] },
    });
    assert.deepEqual(left, []);
    assert.ok(events.some((e) => e.name === name && e.reason === 'Killing'));
  });

  it('a container that exits at once → CrashLoopBackOff, restarted again and again', async () => {
    const created = await createPod('crash', {
      containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 1'] }],
    });
    const name = created.metadata.name!;
    const seen = new Set<string>();
    await until(
      'two restarts and CrashLoopBackOff',
      async () => {
        const p = await getPod(name);
        const reason = waitingReason(p);
        if (reason) seen.add(reason);
        return (statusOf(p)?.restartCount ?? 0) >= 2 && seen.has('CrashLoopBackOff') ? p : undefined;
      },
      90_000,
    );
    const p = await getPod(name);
    assert.equal((statusOf(p)?.lastState?.terminated as { exitCode: number; reason: string }).exitCode, 1);
    assert.equal((statusOf(p)?.lastState?.terminated as { reason: string }).reason, 'Error');
    assert.ok(events.some((e) => e.name === name && e.reason === 'BackOff'));
  });

  it("docker rm -f of a crash-looping pod's containers: restartCount goes on from the pod log directory and never drops meanwhile", async () => {
    const created = await createPod('lost', {
      containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 1'] }],
    });
    const name = created.metadata.name!;
    const uid = created.metadata.uid!;
    const before = await until(
      'restartCount 1',
      async () => {
        const p = await getPod(name);
        return (statusOf(p)?.restartCount ?? 0) >= 1 && statusOf(p)?.lastState?.terminated ? p : undefined;
      },
      90_000,
    );
    const count = statusOf(before)!.restartCount;
    const logs = join(dataDir, 'pod-logs', `default_${name}_${uid}`, 'app');
    // The Docker adapter links each container's kubelet log path to Docker's json log (cri-dockerd).
    assert.ok(existsSync(join(logs, `${count}.log`)), `${count}.log linked to the container's log`);
    assert.match(readlinkSync(join(logs, `${count}.log`)), /-json\.log$/);

    // Every status the kubelet writes from here on (issue 23 K2: with no container in the
    // runtime it showed restartCount 0 next to CrashLoopBackOff until the next start).
    const seen: number[] = [];
    const abort = new AbortController();
    const stream = await api.client.watch<Pod>(resources.pods, {
      namespace: 'default',
      fieldSelector: `metadata.name=${name}`,
      resourceVersion: before.metadata.resourceVersion,
      signal: abort.signal,
    });
    const watching = (async () => {
      try {
        for await (const ev of stream) {
          const st = statusOf(ev.object as Pod);
          if (st) seen.push(st.restartCount);
        }
      } catch {
        // aborted
      }
    })();
    // Behind the kubelet's back: every app container of the pod, as `docker rm -f`.
    const ctrs = await docker.listContainers({
      all: true,
      filters: {
        label: [`io.kubernetes.pod.uid=${uid}`, 'io.k8ts.type=container', `${NODE_LABEL}=${NODE}`],
      },
    });
    assert.ok(ctrs.length > 0);
    for (const c of ctrs) await docker.getContainer(c.Id).remove({ force: true });
    const renewed = await until(
      'a new container',
      async () => {
        const p = await getPod(name);
        const st = statusOf(p);
        return st?.containerID && !ctrs.some((c) => dockerId(st) === c.Id) ? p : undefined;
      },
      90_000,
    );
    assert.equal(statusOf(renewed)!.restartCount, count + 1, 'one more than the highest N.log, not 0');
    const attempt = (await docker.getContainer(dockerId(statusOf(renewed))).inspect()).Config.Labels;
    assert.equal(attempt['io.k8ts.attempt'], String(count + 1));
    await until('the watch to see the new container', () => seen.includes(count + 1));
    abort.abort();
    await watching;
    assert.ok(
      seen.every((n) => n >= count),
      `restartCount never went back while the runtime had no container: ${seen.join(' ')}`,
    );
    await api.client.delete(resources.pods, 'default', name, { gracePeriodSeconds: 0 });
  });

  it('a readiness probe gates Ready', async () => {
    const created = await createPod('ready', {
      containers: [
        {
          name: 'app',
          image: 'k8ts/busybox:1.0',
          command: ['sh', '-c', 'sleep 4; touch /tmp/ready; sleep 3600'],
          readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 },
        },
      ],
    });
    const name = created.metadata.name!;
    const notReady = await until('Running, not ready', async () => {
      const p = await getPod(name);
      return p?.status?.phase === 'Running' ? p : undefined;
    });
    assert.equal(isReady(notReady), false);
    await running(name);
    assert.ok(
      events.some(
        (e) => e.name === name && e.reason === 'Unhealthy' && e.message.startsWith('Readiness probe failed'),
      ),
    );
  });

  it('a failing liveness probe restarts the container', async () => {
    const created = await createPod('live', {
      containers: [
        {
          name: 'app',
          image: 'spring-server:1.0',
          livenessProbe: {
            httpGet: { path: '/nope', port: 8080 },
            initialDelaySeconds: 2,
            periodSeconds: 1,
            failureThreshold: 2,
          },
        },
      ],
    });
    const name = created.metadata.name!;
    await until(
      'restarted by the liveness probe',
      async () => ((statusOf(await getPod(name))?.restartCount ?? 0) >= 1 ? true : undefined),
      90_000,
    );
    assert.ok(
      events.some(
        (e) =>
          e.name === name &&
          e.reason === 'Killing' &&
          e.message === 'Container app failed liveness probe, will be restarted',
      ),
    );
    assert.ok(
      events.some(
        (e) =>
          e.name === name &&
          e.reason === 'Unhealthy' &&
          e.message.startsWith('Liveness probe failed: HTTP probe failed'),
      ),
    );
  });

  it('pull policy reasons: Never with a missing image → ErrImageNeverPull; an invalid name → InvalidImageName', async () => {
    for (const [image, policy, reason] of [
      [`k8ts/missing-${RUN}:1.0`, 'Never', 'ErrImageNeverPull'],
      ['Invalid Image:1.0', 'IfNotPresent', 'InvalidImageName'],
    ] as const) {
      const created = await createPod('img', {
        containers: [{ name: 'app', image, imagePullPolicy: policy }],
      });
      const p = await until(`${image}: ${reason}`, async () => {
        const pod = await getPod(created.metadata.name!);
        return waitingReason(pod) === reason ? pod : undefined;
      });
      assert.equal(p.status?.phase, 'Pending');
    }
  });

  it('a Ready=False written by someone else (the node lifecycle controller) is put right within seconds', async () => {
    const created = await createPod('reconcile', {
      containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] }],
    });
    const name = created.metadata.name!;
    await running(name);
    // Settled: the pod object unchanged for 3 s (the syncs of the start are over).
    let rv = '';
    let since = Date.now();
    const p = await until('settled', async () => {
      const now = await getPod(name);
      if (now?.metadata.resourceVersion !== rv)
        [rv, since] = [now?.metadata.resourceVersion ?? '', Date.now()];
      return Date.now() - since >= 3_000 ? now : undefined;
    });
    const conditions = p.status!.conditions!.map((c) =>
      c.type === 'Ready' ? { ...c, status: 'False' as const, reason: 'NodeNotReady' } : c,
    );
    await api.client.patch(
      resources.pods,
      'default',
      name,
      'merge',
      { status: { conditions } },
      { subresource: 'status' },
    );
    assert.equal(isReady(await getPod(name)), false);
    const from = Date.now();
    // The status manager's 10 s syncBatch, not the 60 s resync.
    await until('Ready again', async () => isReady(await getPod(name)), 20_000);
    assert.ok(Date.now() - from < 20_000);
    await api.client.delete(resources.pods, 'default', name, { gracePeriodSeconds: 0 });
  });

  it('a readiness probe on a port name no container defines: Warning Unhealthy "Readiness probe errored" every period', async () => {
    const created = await createPod('badport', {
      containers: [
        {
          name: 'app',
          image: 'spring-server:1.0',
          ports: [{ name: 'http', containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/', port: 'web' }, periodSeconds: 1 },
        },
      ],
    });
    const name = created.metadata.name!;
    const want = 'Readiness probe errored: strconv.Atoi: parsing "web": invalid syntax';
    await until(
      'two errored events',
      () =>
        events.filter((e) => e.name === name && e.reason === 'Unhealthy' && e.message === want).length >= 2,
      30_000,
    );
    assert.equal(isReady(await getPod(name)), false);
    await api.client.delete(resources.pods, 'default', name, { gracePeriodSeconds: 0 });
  });

  it('a deleted pod held by a finalizer goes to a terminal phase once its containers exited', async () => {
    const created = await api.client.create<Pod>(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `held-${++seq}`, namespace: 'default', finalizers: ['example.com/hold'] },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] }],
      },
    });
    const name = created.metadata.name!;
    try {
      await until('running', async () => statusOf(await getPod(name))?.state?.running, 60_000);
      await api.client.delete(resources.pods, 'default', name);
      // sleep as PID 1 ignores SIGTERM: SIGKILL after the grace period, exit 137.
      const p = await until(
        'Failed',
        async () => {
          const p = await getPod(name);
          return p?.status?.phase === 'Failed' ? p : undefined;
        },
        60_000,
      );
      assert.ok(p.metadata.deletionTimestamp);
      assert.equal((statusOf(p)?.state?.terminated as { exitCode?: number } | undefined)?.exitCode, 137);
      // A Failed pod's Ready and ContainersReady say so (generate.go), not ContainersNotReady.
      for (const type of ['Ready', 'ContainersReady']) {
        const c = p.status?.conditions?.find((x) => x.type === type);
        assert.deepEqual([c?.status, c?.reason, c?.message], ['False', 'PodFailed', undefined], type);
      }
    } finally {
      await api.client.patch(resources.pods, 'default', name, 'merge', { metadata: { finalizers: null } });
    }
  });

  it('killing the pause container of a pod in back-off 20s does not restart it before the back-off ends', async () => {
    const created = await createPod('crash-pause', {
      containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 1'] }],
    });
    const name = created.metadata.name!;
    const uid = created.metadata.uid!;
    const inBackOff = await until(
      'back-off 20s',
      async () => {
        const p = await getPod(name);
        const w = statusOf(p)?.state?.waiting as { message?: string } | undefined;
        return w?.message?.startsWith('back-off 20s') ? p : undefined;
      },
      90_000,
    );
    const finishedAt = Date.parse(
      (statusOf(inBackOff)?.lastState?.terminated as { finishedAt: string }).finishedAt,
    );
    const [pause] = await docker.listContainers({
      filters: {
        label: [`io.kubernetes.pod.uid=${uid}`, 'io.k8ts.type=podsandbox', `${NODE_LABEL}=${NODE}`],
      },
    });
    assert.ok(pause, 'the sandbox container');
    await docker.getContainer(pause.Id).kill();
    const restarted = await until(
      'the next run',
      async () => {
        const p = await getPod(name);
        return (statusOf(p)?.restartCount ?? 0) > statusOf(inBackOff)!.restartCount ? p : undefined;
      },
      90_000,
    );
    // The new container's start: it runs (briefly), has exited, or is waiting with it as lastState.
    const st = statusOf(restarted)!;
    const started = Date.parse(
      ((st.state?.running ?? st.state?.terminated ?? st.lastState?.terminated) as { startedAt: string })
        .startedAt,
    );
    assert.ok(started - finishedAt >= 19_000, `started ${started - finishedAt} ms after the crash`);
    assert.ok(
      events.some(
        (e) =>
          e.name === name &&
          e.reason === 'SandboxChanged' &&
          e.message === 'Pod sandbox changed, it will be killed and re-created.',
      ),
      'Normal SandboxChanged',
    );
    await api.client.delete(resources.pods, 'default', name, { gracePeriodSeconds: 0 });
  });
});
