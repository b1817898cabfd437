/**
 * Image pull policies against a real registry: Debian's `docker-registry` (distribution
 * 2.x) run by this file on 127.0.0.1 on a free port with a temporary storage dir — Docker
 * allows plain HTTP to registries on 127.0.0.0/8 without configuration. spring-server:1.0
 * is pushed there as `127.0.0.1:<port>/spring-server:1.0` and that tag is removed locally,
 * so the kubelet's pull really goes to the registry (the layers stay on the engine under
 * `spring-server:1.0`, so only the manifest travels).
 *
 * The kubelet side is the in-process API server, the docker adapter and a PodManager on a
 * node name of this run only, whose events go through the real EventRecorder to the API.
 * `Never` with a missing image (ErrImageNeverPull) and InvalidImageName are covered by
 * test/kubelet.e2e.test.ts ('pull policy reasons').
 *
 * Everything made in Docker carries `io.k8ts.node=<node>` and is removed at the end, with
 * the registry's tags; the registry process is stopped by its PID.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EventRecorder } from '../api/client/events.js';
import { isNotFound } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { silentLogger } from '../api/log.js';
import type { KubeObject } from '../api/object.js';
import type { ContainerStatus, CoreEvent, Pod } from '../api/types.js';
import { PodManager } from '../agent/kubelet/pods/manager.js';
import { openRuntime, type Runtime } from '../cri/index.js';
import { startTestApi, type TestApi } from './support/api.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import { run } from './support/k8ts-server.js';
import { startRegistry, type TestRegistry } from './support/registry.js';
import { untilTruthy as until } from './support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NODE = `pull-e2e-${RUN}`;
const NETWORK = `k8ts-${NODE}`;
const SUBNET = `10.251.${randomInt(0, 256)}.0/24`;

let api: TestApi;
let runtime: Runtime;
let manager: PodManager;
let recorder: EventRecorder;
let registry: TestRegistry | undefined;
/** The same storage behind htpasswd auth (user ann), for imagePullSecrets. */
let authRegistry: TestRegistry | undefined;
let dataDir: string;
/** `127.0.0.1:<port>`, the registry's host. */
let host: string;
/** `127.0.0.1:<port>`, the auth registry's host. */
let authHost: string;
const USER = 'ann';
const PASSWORD = `pw-${RUN}`;

async function docker(...args: string[]): Promise<string> {
  const r = await run('docker', args, { timeoutMs: 120_000 });
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'ignore' });
  execFileSync('bash', ['scripts/build-images.sh'], { stdio: 'ignore' });
  registry = await startRegistry();
  host = registry.host;
  authRegistry = await startRegistry({ users: { [USER]: PASSWORD }, storageDir: registry.storageDir });
  authHost = authRegistry.host;
  await docker('tag', 'spring-server:1.0', `${host}/spring-server:1.0`);
  await docker('push', `${host}/spring-server:1.0`);
  await docker('rmi', `${host}/spring-server:1.0`);

  api = await startTestApi();
  dataDir = mkdtempSync(join(tmpdir(), 'k8ts-pull-e2e-'));
  await api.client.create(resources.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
  } as KubeObject);
  runtime = await openRuntime('docker', { nodeName: NODE });
  await runtime.ensurePodNetwork({ name: NETWORK, subnet: SUBNET, labels: { 'io.k8ts.node': NODE } });
  recorder = new EventRecorder({ client: api.client, component: 'kubelet', host: NODE });
  manager = new PodManager({
    client: api.client,
    runtime,
    nodeName: NODE,
    nodeIP: '127.0.0.1',
    podNetwork: NETWORK,
    recorder,
    logger: silentLogger(),
    dataDir,
  });
  await manager.start();
});

after(async () => {
  await manager?.stop();
  await recorder?.flush();
  await removeNodeFromDocker(NODE);
  await runtime?.close();
  await api?.stop();
  if (host) await run('docker', ['rmi', `${host}/spring-server:1.0`]);
  if (authHost) await run('docker', ['rmi', `${authHost}/spring-server:1.0`]);
  await authRegistry?.stop();
  await registry?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

let seq = 0;
async function createPod(
  prefix: string,
  image: string,
  policy: 'Always' | 'IfNotPresent',
  pullSecrets: string[] = [],
): Promise<string> {
  const pod = await api.client.create<Pod>(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${prefix}-${++seq}`, namespace: 'default' },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'app', image, imagePullPolicy: policy }],
      ...(pullSecrets.length > 0 ? { imagePullSecrets: pullSecrets.map((name) => ({ name })) } : {}),
    },
  } as Pod);
  return pod.metadata.name!;
}

async function getPod(name: string): Promise<Pod | undefined> {
  try {
    return await api.client.get<Pod>(resources.pods, 'default', name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const statusOf = (p: Pod | undefined): ContainerStatus | undefined =>
  p?.status?.containerStatuses?.find((c) => c.name === 'app');
const waitingReason = (p: Pod | undefined) =>
  (statusOf(p)?.state?.waiting as { reason?: string } | undefined)?.reason;

/** The events of pod `name` as `reason: message` lines, oldest first. */
async function eventsOf(name: string): Promise<string[]> {
  const list = await api.client.list<CoreEvent>(resources.events, { namespace: 'default' });
  return list.items
    .filter((e) => e.involvedObject?.name === name)
    .sort((a, b) => String(a.firstTimestamp).localeCompare(String(b.firstTimestamp)))
    .map((e) => `${e.reason}: ${e.message}`);
}

async function runningPod(name: string): Promise<Pod> {
  return until(`${name} Running`, async () => {
    const p = await getPod(name);
    return p?.status?.phase === 'Running' && statusOf(p)?.state?.running ? p : undefined;
  });
}

/** Waits until pod `name` has events matching every pattern; returns its events. */
async function eventsMatching(name: string, patterns: RegExp[]): Promise<string[]> {
  let last: string[] = [];
  try {
    return await until(
      `events of ${name}`,
      async () => {
        last = await eventsOf(name);
        return patterns.every((p) => last.some((e) => p.test(e))) ? last : undefined;
      },
      30_000,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; events so far:\n${last.join('\n')}`);
  }
}

describe('image pull policies against a local registry', { timeout: 240_000 }, () => {
  it('Always: the image is pulled from the registry (Pulling, Pulled) and the pod runs', async () => {
    const image = `${host}/spring-server:1.0`;
    const absent = await run('docker', ['image', 'inspect', image]);
    assert.notEqual(absent.code, 0, 'the registry tag was removed locally before the test');
    const name = await createPod('always', image, 'Always');
    const pod = await runningPod(name);
    assert.equal(statusOf(pod)?.image, image);
    assert.match(statusOf(pod)?.imageID ?? '', /sha256:[0-9a-f]{64}/);
    const events = await eventsMatching(name, [
      new RegExp(`^Pulling: Pulling image "${image}"$`),
      new RegExp(`^Pulled: Successfully pulled image "${image}" in [0-9.]+s`),
      /^Started: /,
    ]);
    assert.ok(!events.some((e) => e.includes('already present')), events.join('\n'));
    assert.match(
      registry!.log(),
      /\/v2\/spring-server\/manifests\/1\.0 /,
      'the registry was asked for the manifest',
    );
    await docker('image', 'inspect', image);
  });

  it('Always pulls again even when the image is present', async () => {
    const image = `${host}/spring-server:1.0`;
    await docker('image', 'inspect', image);
    const name = await createPod('always-again', image, 'Always');
    await runningPod(name);
    const events = await eventsMatching(name, [/^Pulling: /, /^Pulled: Successfully pulled image/]);
    assert.ok(!events.some((e) => e.includes('already present')), events.join('\n'));
  });

  it('a missing image in the registry → ErrImagePull, then ImagePullBackOff', async () => {
    const image = `${host}/nope:1`;
    const name = await createPod('nope', image, 'Always');
    const reasons: string[] = [];
    await until(
      'ErrImagePull then ImagePullBackOff',
      async () => {
        const r = waitingReason(await getPod(name));
        if (r && reasons.at(-1) !== r) reasons.push(r);
        // The reasons cycle (ErrImagePull → ImagePullBackOff → ErrImagePull ...) and polling
        // may miss the first ErrImagePull: wait for a BackOff seen after an ErrImagePull.
        const first = reasons.indexOf('ErrImagePull');
        return first !== -1 && reasons.indexOf('ImagePullBackOff', first) !== -1;
      },
      60_000,
    );
    assert.ok(
      reasons.indexOf('ErrImagePull') < reasons.lastIndexOf('ImagePullBackOff'),
      `order: ${reasons.join(' → ')}`,
    );
    const pod = await getPod(name);
    assert.equal(pod?.status?.phase, 'Pending');
    await eventsMatching(name, [
      new RegExp(`^Pulling: Pulling image "${image}"$`),
      new RegExp(`^Failed: Failed to pull image "${image}": .*(manifest unknown|not found)`),
      /^Failed: Error: ErrImagePull$/,
      new RegExp(`^BackOff: Back-off pulling image "${image}"$`),
      /^Failed: Error: ImagePullBackOff$/,
    ]);
  });

  it('IfNotPresent with a present image → no pull, "already present on machine"', async () => {
    const image = 'spring-server:1.0';
    const name = await createPod('present', image, 'IfNotPresent');
    await runningPod(name);
    const events = await eventsMatching(name, [
      new RegExp(`^Pulled: Container image "${image}" already present on machine$`),
      /^Started: /,
    ]);
    assert.ok(!events.some((e) => e.startsWith('Pulling:')), events.join('\n'));
  });
});

describe('imagePullSecrets against a registry with basic auth', { timeout: 240_000 }, () => {
  it('without a secret the pull is refused; with a dockerconfigjson secret for it the pod runs', async () => {
    const image = `${authHost}/spring-server:1.0`;
    const denied = await createPod('nosecret', image, 'Always');
    await eventsMatching(denied, [
      new RegExp(`^Failed: Failed to pull image "${image}": .*(no basic auth credentials|unauthorized)`),
    ]);
    const auth = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
    await api.client.create(resources.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'regcred', namespace: 'default' },
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [authHost]: { auth } } })).toString(
          'base64',
        ),
      },
    } as KubeObject);
    const name = await createPod('secret', image, 'Always', ['regcred']);
    const pod = await runningPod(name);
    assert.equal(statusOf(pod)?.image, image);
    await eventsMatching(name, [new RegExp(`^Pulled: Successfully pulled image "${image}"`)]);
  });
});
