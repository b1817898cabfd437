/**
 * What a pod creator must not get from the kubelet, against real Docker (issue 25): the
 * in-process API server, the docker adapter and a PodManager on a node name of this run
 * only, with its own pod network (10.251.<random>.0/24). Pods are bound by setting
 * spec.nodeName (no scheduler, no admission beyond the API server's defaults).
 *
 * - A container that cannot start backs off as a crashing one does (RunContainerError,
 *   then CrashLoopBackOff), instead of a new Docker container and events every second.
 * - A subPath or subPathExpr that a pod's own symlink points out of its volume (an init
 *   container plants `escape -> <host dir>` in an emptyDir) fails the container with
 *   CreateContainerConfigError: Docker is never handed a path it would follow onto the
 *   host, and nothing is created there; subPaths inside the volume work.
 * - A Secret volume is a tmpfs on the node (its bytes never reach the disk).
 * - runAsNonRoot is enforced against the image's user, and allowPrivilegeEscalation:
 *   false sets no_new_privs, as the kubelet does (what Pod Security's restricted level
 *   relies on).
 * - hostNetwork, hostPID, hostIPC, shareProcessNamespace, capabilities add/drop and
 *   privileged do what they say (Pod Security admission is what limits who gets them);
 *   none is dropped silently.
 *
 * Everything this file makes in Docker carries the node label `io.k8ts.node=<node>` and
 * is removed at the end, passed or failed; nothing else on the engine is touched.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Docker from 'dockerode';
import { isNotFound } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { silentLogger } from '../api/log.js';
import type { KubeObject } from '../api/object.js';
import type { ContainerStatus, Pod } from '../api/types.js';
import { PodManager } from '../agent/kubelet/pods/manager.js';
import { hostMounter } from '../agent/kubelet/pods/mount.js';
import { openRuntime, type Runtime } from '../cri/index.js';
import { startTestApi, type TestApi } from './support/api.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import { untilTruthy as until } from './support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NODE = `kubelet-sec-${RUN}`;
const NETWORK = `k8ts-${NODE}`;
const SUBNET = `10.251.${randomInt(0, 256)}.0/24`;
const NODE_IP = '127.0.0.1';
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
/** A directory of the host's that no pod may reach: `ca.key` holds SECRET. */
let hostDir: string;
const SECRET = `host-secret-${RUN}`;
const events: Recorded[] = [];

before(async () => {
  execFileSync('bash', ['scripts/start-dockerd.sh'], { stdio: 'ignore' });
  execFileSync('bash', ['scripts/build-images.sh', 'pause', 'busybox'], { stdio: 'ignore' });
  api = await startTestApi();
  dataDir = mkdtempSync(join(tmpdir(), 'k8ts-kubelet-sec-'));
  hostDir = mkdtempSync(join(tmpdir(), 'k8ts-host-dir-'));
  writeFileSync(join(hostDir, 'ca.key'), SECRET);
  await api.client.create(resources.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
  } as KubeObject);
  runtime = await openRuntime('docker', { nodeName: NODE });
  await runtime.ensurePodNetwork({ name: NETWORK, subnet: SUBNET, labels: { 'io.k8ts.node': NODE } });
  manager = new PodManager({
    client: api.client,
    runtime,
    nodeName: NODE,
    nodeIP: NODE_IP,
    podNetwork: NETWORK,
    recorder: {
      event: (target, _type, reason, message) => events.push({ reason, message, name: String(target.name) }),
    },
    logger: silentLogger(),
    dataDir,
  });
  await manager.start();
});

after(async () => {
  await manager?.stop();
  await removeNodeFromDocker(NODE);
  await runtime?.close();
  await api?.stop();
  if (dataDir) {
    // subPath bind mounts the kubelet left (its pods were not deleted): never remove through them.
    for (const m of (await hostMounter.mountPoints()).filter((p) => p.startsWith(`${dataDir}/`)).reverse())
      await hostMounter.unmount(m);
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

let seq = 0;
async function createPod(
  prefix: string,
  spec: Partial<Pod['spec']> & { containers: Pod['spec']['containers'] },
): Promise<Pod> {
  return api.client.create<Pod>(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${prefix}-${++seq}`, namespace: 'default' },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, ...spec },
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
const waitingOf = (p: Pod | undefined, name = 'app') =>
  statusOf(p, name)?.state?.waiting as { reason?: string; message?: string } | undefined;

/** Waits (at most `timeoutMs`) until pod `name`'s app runs or is refused with CreateContainerConfigError. */
function untilRunningOrRefused(name: string, timeoutMs: number): Promise<Pod> {
  return until(
    'the app running or refused',
    async () => {
      const pod = await getPod(name);
      return statusOf(pod)?.state?.running || waitingOf(pod)?.reason === 'CreateContainerConfigError'
        ? pod
        : undefined;
    },
    timeoutMs,
  );
}

async function running(name: string): Promise<Pod> {
  return until(
    `${name} Running`,
    async () => {
      const p = await getPod(name);
      return p?.status?.phase === 'Running' &&
        (p.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined)
        ? p
        : undefined;
    },
    60_000,
  );
}

/** Runs `script` in the pod's container `name` (docker exec); its stdout. */
async function execIn(p: Pod, name: string, script: string): Promise<string> {
  const id = statusOf(p, name)?.containerID?.replace(/^docker:\/\//, '') ?? '';
  const r = await runtime.execSync(id, ['sh', '-c', script], 10);
  assert.equal(r.exitCode, 0, r.stderr.toString());
  return r.stdout.toString();
}

/** The effective capability set in /proc/self/status output. */
const capEff = (status: string): bigint => BigInt(`0x${/^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0'}`);
const CAP_CHOWN = 1n << 0n;
const CAP_NET_ADMIN = 1n << 12n;
const CAP_SYS_ADMIN = 1n << 21n;
const NAMESPACES = 'for n in net pid ipc; do readlink /proc/self/ns/$n; done';
const hostNamespaces = () =>
  ['net', 'pid', 'ipc'].map((n) => readlinkSync(`/proc/self/ns/${n}`)).join('\n') + '\n';

describe('kubelet security with real Docker', () => {
  it('a command that does not exist: RunContainerError, then CrashLoopBackOff — no new container every second', async () => {
    const created = await createPod('nocmd', {
      containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['/nonexistent/app'] }],
    });
    const name = created.metadata.name!;
    const reasons = new Set<string>();
    const p = await until(
      'CrashLoopBackOff',
      async () => {
        const pod = await getPod(name);
        const reason = waitingOf(pod)?.reason;
        if (reason) reasons.add(reason);
        return reason === 'CrashLoopBackOff' ? pod : undefined;
      },
      30_000,
    );
    assert.ok(reasons.has('RunContainerError') || reasons.size === 1, [...reasons].join(', '));
    assert.equal(
      waitingOf(p)?.message,
      `back-off 10s restarting failed container=app pod=${name}_default(${created.metadata.uid})`,
    );
    // The first start and the one immediate retry; the next waits 10 s.
    assert.equal(statusOf(p)?.restartCount, 1);
    const last = statusOf(p)?.lastState?.terminated as { exitCode: number; reason: string } | undefined;
    assert.equal(last?.reason, 'ContainerCannotRun');
    assert.equal(last?.exitCode, 127);
    const made = events.filter((e) => e.name === name && e.reason === 'Created').length;
    assert.ok(made <= 2, `${made} containers created before the back-off`);
    assert.ok(events.some((e) => e.name === name && e.reason === 'BackOff'));
  });

  it("hostNetwork, hostPID, hostIPC: the host's namespaces, pod IP = node IP; capabilities and privileged", async () => {
    const created = await createPod('hostns', {
      hostNetwork: true,
      hostPID: true,
      hostIPC: true,
      containers: [
        {
          name: 'app',
          image: 'k8ts/busybox:1.0',
          command: ['sleep', '3600'],
          securityContext: { capabilities: { add: ['NET_ADMIN'], drop: ['CHOWN'] } },
        },
      ],
    } as Partial<Pod['spec']> & { containers: Pod['spec']['containers'] });
    const p = await running(created.metadata.name!);
    assert.equal(p.status?.podIP, NODE_IP);
    assert.deepEqual(p.status?.podIPs, [{ ip: NODE_IP }]);
    assert.equal(await execIn(p, 'app', NAMESPACES), hostNamespaces());
    const caps = capEff(await execIn(p, 'app', 'cat /proc/self/status'));
    assert.equal(caps & CAP_NET_ADMIN, CAP_NET_ADMIN, 'NET_ADMIN added');
    assert.equal(caps & CAP_CHOWN, 0n, 'CHOWN dropped');
  });

  it('privileged: the container gets every capability (docker --privileged)', async () => {
    const created = await createPod('privileged', {
      containers: [
        {
          name: 'app',
          image: 'k8ts/busybox:1.0',
          command: ['sleep', '3600'],
          securityContext: { privileged: true },
        },
      ],
    });
    const id = await until(
      'the container created',
      async () => statusOf(await getPod(created.metadata.name!))?.containerID?.replace(/^docker:\/\//, ''),
      30_000,
    );
    assert.equal((await docker.getContainer(id).inspect()).HostConfig.Privileged, true);
    // Where the host's own bounding set lacks a capability (some CI sandboxes), runc cannot
    // grant them all and docker refuses every privileged container ("unable to apply caps").
    const hostBounding = BigInt(
      `0x${/^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0'}`,
    );
    const allCaps = (1n << 41n) - 1n; // CAP_CHOWN .. CAP_CHECKPOINT_RESTORE (40)
    if ((hostBounding & allCaps) === allCaps) {
      const p = await running(created.metadata.name!);
      const caps = capEff(await execIn(p, 'app', 'cat /proc/self/status'));
      assert.equal(caps & CAP_SYS_ADMIN, CAP_SYS_ADMIN);
    }
  });

  it('shareProcessNamespace: the containers of the pod see each other’s processes, not the host’s', async () => {
    const created = await createPod('sharedpid', {
      shareProcessNamespace: true,
      containers: [
        { name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3601'] },
        { name: 'other', image: 'k8ts/busybox:1.0', command: ['sleep', '3602'] },
      ],
    } as Partial<Pod['spec']> & { containers: Pod['spec']['containers'] });
    const p = await running(created.metadata.name!);
    assert.match(await execIn(p, 'app', 'ps'), /sleep 3602/);
    const [net, pid] = (await execIn(p, 'app', NAMESPACES)).split('\n');
    const [hostNet, hostPid] = hostNamespaces().split('\n');
    assert.notEqual(net, hostNet);
    assert.notEqual(pid, hostPid);
    assert.notEqual(p.status?.podIP, NODE_IP);
  });

  /** A pod whose init container plants `/data/escape -> <hostDir>` and whose app mounts `data` with `mount`. */
  const escapingPod = (mount: Record<string, string>, env: { name: string; value: string }[] = []) => ({
    initContainers: [
      {
        name: 'plant',
        image: 'k8ts/busybox:1.0',
        command: ['sh', '-c', `ln -s ${hostDir} /data/escape`],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      },
    ],
    containers: [
      {
        name: 'app',
        image: 'k8ts/busybox:1.0',
        command: ['sh', '-c', 'cat /mnt/ca.key; ls /mnt; sleep 3600'],
        env,
        volumeMounts: [{ name: 'data', mountPath: '/mnt', ...mount }],
      },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
  });

  const escapes: [string, Record<string, string>, { name: string; value: string }[], string][] = [
    ['subPath: a link to a host directory', { subPath: 'escape' }, [], 'failed to prepare subPath'],
    [
      'subPath through a link: a directory made on the host',
      { subPath: 'escape/made-by-pod' },
      [],
      'failed to create subPath directory',
    ],
    [
      'subPathExpr: a link to a host directory',
      { subPathExpr: '$(WHERE)' },
      [{ name: 'WHERE', value: 'escape' }],
      'failed to prepare subPath',
    ],
  ];
  for (const [what, mount, env, message] of escapes) {
    it(`${what} → CreateContainerConfigError, no container, nothing on the host`, async () => {
      const created = await createPod(
        'escape',
        escapingPod(mount, env) as unknown as Partial<Pod['spec']> & {
          containers: Pod['spec']['containers'];
        },
      );
      const name = created.metadata.name!;
      const p = await untilRunningOrRefused(name, 60_000);
      const apps = await docker.listContainers({
        all: true,
        filters: {
          label: [`io.kubernetes.pod.uid=${created.metadata.uid}`, 'io.kubernetes.container.name=app'],
        },
      });
      for (const c of apps) {
        const logs = (await docker.getContainer(c.Id).logs({ stdout: true, stderr: true })).toString();
        assert.doesNotMatch(logs, new RegExp(SECRET), "the host's file was read from the pod");
      }
      assert.equal(waitingOf(p)?.reason, 'CreateContainerConfigError', JSON.stringify(statusOf(p)?.state));
      assert.equal(waitingOf(p)?.message, `${message} for volumeMount "data" of container "app"`);
      assert.deepEqual(apps, [], 'no app container was created');
      assert.deepEqual(readdirSync(hostDir), ['ca.key'], 'nothing was made on the host');
      assert.ok(
        events.some(
          (e) =>
            e.name === name &&
            e.reason === 'Failed' &&
            e.message === `Error: ${message} for volumeMount "data" of container "app"`,
        ),
      );
    });
  }

  it('subPath and subPathExpr inside the volume work: a directory, a file, an in-volume link, $(POD_NAME)', async () => {
    const created = await createPod('subpath', {
      initContainers: [
        {
          name: 'fill',
          image: 'k8ts/busybox:1.0',
          command: [
            'sh',
            '-c',
            'mkdir /data/real && echo inside > /data/real/file && echo one > /data/one && ln -s real /data/alias',
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      containers: [
        {
          name: 'app',
          image: 'k8ts/busybox:1.0',
          command: ['sleep', '3600'],
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          volumeMounts: [
            { name: 'data', mountPath: '/a', subPath: 'real' },
            { name: 'data', mountPath: '/b/one', subPath: 'one' },
            { name: 'data', mountPath: '/c', subPath: 'alias' },
            { name: 'data', mountPath: '/d', subPathExpr: 'pods/$(POD_NAME)' },
            { name: 'data', mountPath: '/all' },
          ],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    } as unknown as Partial<Pod['spec']> & { containers: Pod['spec']['containers'] });
    const p = await running(created.metadata.name!);
    assert.equal(await execIn(p, 'app', 'cat /a/file /b/one /c/file'), 'inside\none\ninside\n');
    assert.equal(await execIn(p, 'app', 'touch /d/made && ls /all/pods/*'), 'made\n');
    assert.equal(await execIn(p, 'app', 'ls /all/pods'), `${created.metadata.name}\n`);
  });

  it('deleting a pod unmounts its subPaths before removing its directory: a hostPath’s files stay', async () => {
    const keep = mkdtempSync(join(tmpdir(), 'k8ts-host-keep-'));
    try {
      writeFileSync(join(keep, 'keep.txt'), 'kept');
      const created = await createPod('teardown', {
        containers: [
          {
            name: 'app',
            image: 'k8ts/busybox:1.0',
            command: ['sleep', '3600'],
            volumeMounts: [
              { name: 'host', mountPath: '/h', subPath: '.' },
              { name: 'host', mountPath: '/made', subPath: 'made' },
              { name: 'scratch', mountPath: '/s', subPath: 'deep/er' },
            ],
          },
        ],
        volumes: [
          { name: 'host', hostPath: { path: keep, type: 'Directory' } },
          { name: 'scratch', emptyDir: {} },
        ],
      } as unknown as Partial<Pod['spec']> & { containers: Pod['spec']['containers'] });
      const p = await running(created.metadata.name!);
      assert.equal(await execIn(p, 'app', 'cat /h/keep.txt'), 'kept');
      const uid = created.metadata.uid!;
      const podDir = join(dataDir, 'pods', uid);
      assert.ok((await hostMounter.mountPoints()).some((m) => m.startsWith(`${podDir}/volume-subpaths/`)));
      await api.client.delete(resources.pods, 'default', created.metadata.name!);
      await until(
        'the pod gone',
        async () => ((await getPod(created.metadata.name!)) ? undefined : true),
        60_000,
      );
      await until('its directory removed', async () => (existsSync(podDir) ? undefined : true), 30_000);
      assert.deepEqual(
        (await hostMounter.mountPoints()).filter((m) => m.startsWith(podDir)),
        [],
      );
      assert.deepEqual(readdirSync(keep).sort(), ['keep.txt', 'made']);
      assert.equal(readFileSync(join(keep, 'keep.txt'), 'utf8'), 'kept');
    } finally {
      rmSync(keep, { recursive: true, force: true });
    }
  });

  it('a Secret volume is a tmpfs on the node, read by the container', async () => {
    await api.client.create(resources.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `tls-${RUN}`, namespace: 'default' },
      data: { 'tls.key': Buffer.from(SECRET).toString('base64') },
    } as KubeObject);
    const created = await createPod('secretvol', {
      containers: [
        {
          name: 'app',
          image: 'k8ts/busybox:1.0',
          command: ['sleep', '3600'],
          securityContext: { runAsUser: 65534 },
          volumeMounts: [{ name: 'certs', mountPath: '/certs' }],
        },
      ],
      volumes: [{ name: 'certs', secret: { secretName: `tls-${RUN}` } }],
    } as unknown as Partial<Pod['spec']> & { containers: Pod['spec']['containers'] });
    const p = await running(created.metadata.name!);
    assert.equal(await execIn(p, 'app', 'cat /certs/tls.key'), SECRET);
    const dir = join(dataDir, 'pods', created.metadata.uid!, 'volumes', 'kubernetes.io~secret', 'certs');
    const line = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === dir);
    assert.match(line ?? '', / - tmpfs /, `${dir} in the mount table`);
  });

  const nonRootCases: [string, Record<string, unknown>, string | undefined][] = [
    [
      'an image that runs as root',
      { runAsNonRoot: true },
      'container has runAsNonRoot and image will run as root (pod: "%s", container: app)',
    ],
    [
      'runAsUser 0',
      { runAsNonRoot: true, runAsUser: 0 },
      'container\'s runAsUser breaks non-root policy (pod: "%s", container: app)',
    ],
    ['runAsUser 65534', { runAsNonRoot: true, runAsUser: 65534 }, undefined],
  ];
  for (const [what, securityContext, refusal] of nonRootCases) {
    it(`runAsNonRoot with ${what}: ${refusal ? 'CreateContainerConfigError' : 'runs'}`, async () => {
      const created = await createPod('nonroot', {
        containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'], securityContext }],
      } as unknown as Partial<Pod['spec']> & { containers: Pod['spec']['containers'] });
      const name = created.metadata.name!;
      const p = await untilRunningOrRefused(name, 30_000);
      if (refusal) {
        assert.equal(waitingOf(p)?.reason, 'CreateContainerConfigError', JSON.stringify(statusOf(p)?.state));
        assert.equal(
          waitingOf(p)?.message,
          refusal.replace('%s', `${name}_default(${created.metadata.uid})`),
        );
      } else {
        assert.ok(statusOf(p)?.state?.running, JSON.stringify(statusOf(p)?.state));
        assert.equal(await execIn(p, 'app', 'id -u'), '65534\n');
      }
    });
  }

  it('allowPrivilegeEscalation: false sets no_new_privs; unset leaves it off', async () => {
    const created = await createPod('nnp', {
      containers: [
        {
          name: 'app',
          image: 'k8ts/busybox:1.0',
          command: ['sleep', '3600'],
          securityContext: { allowPrivilegeEscalation: false },
        },
        { name: 'other', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] },
      ],
    } as unknown as Partial<Pod['spec']> & { containers: Pod['spec']['containers'] });
    const p = await running(created.metadata.name!);
    assert.match(await execIn(p, 'app', 'cat /proc/self/status'), /^NoNewPrivs:\s+1$/m);
    assert.match(await execIn(p, 'other', 'cat /proc/self/status'), /^NoNewPrivs:\s+0$/m);
  });
});
