/**
 * The runtime conformance suite: the behaviours of CRI (api.ts) that the kubelet relies
 * on, run unchanged against every adapter by its `*.test.ts`:
 *
 *   runRuntimeConformance('fake', async () => fakeHarness(), { sharedLocalhost: false });
 *
 * Every test gets a fresh harness (an empty runtime, or a fresh node name on a shared
 * engine) and cleans it up afterwards, passed or failed. Containers run the busybox
 * image (`sh`, `sleep`, `httpd`, `wget`); the fake adapter runs the same commands through
 * its fake programs (fake/process.ts). Waits poll with a deadline; nothing is timed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContainerConfig, ContainerStatus, PodNetworkConfig, PodSandboxConfig, Runtime } from './api.js';
import { isCriError, type CriErrorCode } from './errors.js';

/** One test's runtime. */
export interface RuntimeHarness {
  /** A runtime with nothing of this test's in it yet. */
  runtime: Runtime;
  /** A new connection to the same runtime, as a restarted agent would open. */
  reconnect(): Promise<Runtime>;
  /** Removes everything the test made and closes the connections; runs even after a failure. */
  cleanup(): Promise<void>;
  /** A pod network this test may create and remove (a fresh name; labels that cleanup finds). */
  podNetwork: PodNetworkConfig;
  /** A second subnet for `podNetwork`, overlapping nothing else. */
  otherSubnet: string;
}

/** What an adapter can do, and what the suite runs on it. */
export interface ConformanceOptions {
  /** A present image with busybox's `sh`, `sleep`, `httpd`, `wget` (default `k8ts/busybox:1.0`). */
  image?: string;
  /** The network sandboxes join (PodSandboxConfig.network). */
  network?: string;
  /** Containers of one pod reach each other on 127.0.0.1 (false for the fake: no network). */
  sharedLocalhost: boolean;
  /**
   * The adapter creates and removes pod networks (ensurePodNetwork); default true. False
   * where the runtime's network is configured outside it (containerd's CNI, for now).
   */
  podNetworks?: boolean;
  /** Deadline of each wait, milliseconds (default 30 000). */
  waitMs?: number;
}

const UNKNOWN_ID = 'f'.repeat(64);

/** Polls `probe` until it returns a value other than undefined, or fails at the deadline. */
async function until<T>(what: string, deadlineMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True when the IPv4 address `ip` is inside `cidr` (`a.b.c.d/n`). */
function inCidr(ip: string, cidr: string): boolean {
  const toInt = (a: string): number => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const [net = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(net) / size);
}

/** Asserts that `p` rejects with a CriError of `code`. */
async function rejectsWith(p: Promise<unknown>, code: CriErrorCode): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isCriError(err), `expected CriError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    return true;
  });
}

/**
 * Runs the suite against the runtimes `makeHarness` builds, under `describe(name)`.
 */
export function runRuntimeConformance(
  name: string,
  makeHarness: () => Promise<RuntimeHarness>,
  opts: ConformanceOptions,
): void {
  const image = opts.image ?? 'k8ts/busybox:1.0';
  const waitMs = opts.waitMs ?? 30_000;
  let seq = 0;

  const sandboxConfig = (pod = `pod-${++seq}`): PodSandboxConfig => {
    const uid = `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`;
    const cfg: PodSandboxConfig = {
      metadata: { name: pod, namespace: 'conformance', uid, attempt: 0 },
      hostname: pod,
      portMappings: [],
      labels: {
        'io.kubernetes.pod.name': pod,
        'io.kubernetes.pod.namespace': 'conformance',
        'io.kubernetes.pod.uid': uid,
        app: pod,
      },
      annotations: { 'kubernetes.io/config.source': 'api', note: 'quotes " and = and\nnewlines' },
    };
    if (opts.network !== undefined) cfg.network = opts.network;
    return cfg;
  };

  const containerConfig = (sb: PodSandboxConfig, cname: string, argv: string[]): ContainerConfig => ({
    metadata: { name: cname, attempt: 0 },
    image: { image },
    command: argv.slice(0, 1),
    args: argv.slice(1),
    labels: {
      'io.kubernetes.container.name': cname,
      'io.kubernetes.pod.name': sb.metadata.name,
      'io.kubernetes.pod.namespace': sb.metadata.namespace,
      'io.kubernetes.pod.uid': sb.metadata.uid,
    },
    annotations: { 'io.kubernetes.container.restartCount': '0', 'io.kubernetes.container.hash': 'abc123' },
  });

  /** Runs a sandbox and one started container running `argv`. */
  const runPod = async (
    rt: Runtime,
    argv: string[],
    cname = 'main',
  ): Promise<{ sandboxId: string; sandbox: PodSandboxConfig; containerId: string }> => {
    const sandbox = sandboxConfig();
    const sandboxId = await rt.runPodSandbox(sandbox);
    const containerId = await rt.createContainer(sandboxId, containerConfig(sandbox, cname, argv), sandbox);
    await rt.startContainer(containerId);
    return { sandboxId, sandbox, containerId };
  };

  const waitExited = (rt: Runtime, id: string): Promise<ContainerStatus> =>
    until(`container ${id} to exit`, waitMs, async () => {
      const st = await rt.containerStatus(id);
      return st.state === 'CONTAINER_EXITED' ? st : undefined;
    });

  /** Declares a test that gets a fresh harness and always cleans it up. */
  const test = (title: string, fn: (h: RuntimeHarness) => Promise<void>, skip?: string): void => {
    it(title, skip === undefined ? {} : { skip }, async () => {
      const h = await makeHarness();
      try {
        await fn(h);
      } finally {
        await h.cleanup();
      }
    });
  };

  describe(`runtime conformance: ${name}`, () => {
    test('reports its version and a ready status', async ({ runtime: rt }) => {
      const v = await rt.version();
      assert.ok(v.runtimeName.length > 0 && v.runtimeVersion.length > 0, JSON.stringify(v));
      const st = await rt.status();
      const ready = st.conditions.find((c) => c.type === 'RuntimeReady');
      assert.equal(ready?.status, true, JSON.stringify(st));
    });

    test('runs a sandbox: READY with an IP, metadata, labels and annotations', async ({ runtime: rt }) => {
      const cfg = sandboxConfig('web');
      const id = await rt.runPodSandbox(cfg);
      const st = await rt.podSandboxStatus(id);
      assert.equal(st.id, id);
      assert.equal(st.state, 'SANDBOX_READY');
      assert.match(st.network.ip, /^\d+\.\d+\.\d+\.\d+$/);
      assert.deepEqual(st.metadata, cfg.metadata);
      assert.deepEqual(st.labels, cfg.labels);
      assert.deepEqual(st.annotations, cfg.annotations);
      assert.ok(st.createdAt > 0n);

      const other = await rt.runPodSandbox(sandboxConfig('other'));
      const listed = await rt.listPodSandbox();
      assert.deepEqual(listed.map((s) => s.id).sort(), [id, other].sort());
      assert.deepEqual(
        (await rt.listPodSandbox({ labelSelector: { app: 'web' } })).map((s) => s.id),
        [id],
      );
      assert.deepEqual(
        (await rt.listPodSandbox({ id: other, state: 'SANDBOX_READY' })).map((s) => s.id),
        [other],
      );
      assert.deepEqual(await rt.listPodSandbox({ state: 'SANDBOX_NOTREADY' }), []);
    });

    test('creates and starts a container: CREATED, then RUNNING; listed by label', async ({
      runtime: rt,
    }) => {
      const sandbox = sandboxConfig();
      const sandboxId = await rt.runPodSandbox(sandbox);
      const cfg = containerConfig(sandbox, 'app', ['sleep', '3600']);
      const id = await rt.createContainer(sandboxId, cfg, sandbox);
      const created = await rt.containerStatus(id);
      assert.equal(created.state, 'CONTAINER_CREATED');
      assert.equal(created.startedAt, 0n);
      assert.equal(created.podSandboxId, sandboxId);
      assert.deepEqual(created.metadata, cfg.metadata);
      assert.equal(created.image, image);
      assert.match(created.imageRef, /^sha256:[0-9a-f]{64}$/);

      await rt.startContainer(id);
      const running = await rt.containerStatus(id);
      assert.equal(running.state, 'CONTAINER_RUNNING');
      assert.ok(running.startedAt >= running.createdAt && running.startedAt > 0n);
      assert.equal(running.finishedAt, 0n);
      assert.deepEqual(running.labels, cfg.labels);
      assert.deepEqual(running.annotations, cfg.annotations);

      const byLabel = await rt.listContainers({ labelSelector: { 'io.kubernetes.container.name': 'app' } });
      assert.deepEqual(
        byLabel.map((c) => c.id),
        [id],
      );
      assert.deepEqual(
        (await rt.listContainers({ podSandboxId: sandboxId, state: 'CONTAINER_RUNNING' })).map((c) => c.id),
        [id],
      );
      assert.deepEqual(await rt.listContainers({ state: 'CONTAINER_EXITED' }), []);
      assert.deepEqual(
        await rt.listContainers({ labelSelector: { 'io.kubernetes.container.name': 'x' } }),
        [],
      );
    });

    test(
      'two containers of one pod share localhost',
      async ({ runtime: rt }) => {
        const { sandboxId, sandbox } = await runPod(rt, [
          'sh',
          '-c',
          'mkdir -p /tmp/www && echo hello-from-server > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www',
        ]);
        const clientId = await rt.createContainer(
          sandboxId,
          containerConfig(sandbox, 'client', ['sleep', '3600']),
          sandbox,
        );
        await rt.startContainer(clientId);
        const body = await until('the server to answer on 127.0.0.1:8080', waitMs, async () => {
          const r = await rt.execSync(clientId, ['wget', '-q', '-O', '-', 'http://127.0.0.1:8080/'], 5);
          return r.exitCode === 0 ? r.stdout.toString() : undefined;
        });
        assert.equal(body, 'hello-from-server\n');
      },
      opts.sharedLocalhost ? undefined : 'the runtime has no shared pod network (capability sharedLocalhost)',
    );

    test('execSync returns stdout, stderr and the exit code', async ({ runtime: rt }) => {
      const { containerId } = await runPod(rt, ['sleep', '3600']);
      const r = await rt.execSync(containerId, ['sh', '-c', 'echo out; echo err >&2; exit 7'], 10);
      assert.equal(r.stdout.toString(), 'out\n');
      assert.equal(r.stderr.toString(), 'err\n');
      assert.equal(r.exitCode, 7);
      const ok = await rt.execSync(containerId, ['true'], 0);
      assert.equal(ok.exitCode, 0);
      assert.equal(ok.stdout.length, 0);
    });

    test('execSync past its timeout rejects DeadlineExceeded', async ({ runtime: rt }) => {
      const { containerId } = await runPod(rt, ['sleep', '3600']);
      await rejectsWith(rt.execSync(containerId, ['sleep', '30'], 1), 'DeadlineExceeded');
    });

    test('stopContainer with a timeout: EXITED, killed by a signal, reason Error; idempotent', async ({
      runtime: rt,
    }) => {
      const { containerId } = await runPod(rt, ['sleep', '3600']);
      await rt.stopContainer(containerId, 1);
      const st = await rt.containerStatus(containerId);
      assert.equal(st.state, 'CONTAINER_EXITED');
      assert.ok([137, 143].includes(st.exitCode), `exit code ${st.exitCode}`);
      assert.equal(st.reason, 'Error');
      assert.ok(st.finishedAt >= st.startedAt && st.startedAt > 0n);
      await rt.stopContainer(containerId, 1);
      assert.equal((await rt.containerStatus(containerId)).state, 'CONTAINER_EXITED');
      await rejectsWith(rt.startContainer(containerId), 'FailedPrecondition');
    });

    const exits: [string, number, string][] = [
      ['exit 3', 3, 'Error'],
      ['exit 0', 0, 'Completed'],
    ];
    for (const [script, code, reason] of exits) {
      test(`a container running \`sh -c '${script}'\` is EXITED with ${code}, reason ${reason}`, async ({
        runtime: rt,
      }) => {
        const { containerId } = await runPod(rt, ['sh', '-c', script]);
        const st = await waitExited(rt, containerId);
        assert.equal(st.exitCode, code);
        assert.equal(st.reason, reason);
        assert.ok(st.finishedAt >= st.startedAt && st.startedAt > 0n);
      });
    }

    test('a container whose command does not exist: the start rejects; EXITED, ContainerCannotRun, finished when created', async ({
      runtime: rt,
    }) => {
      const sandbox = sandboxConfig();
      const sandboxId = await rt.runPodSandbox(sandbox);
      const id = await rt.createContainer(
        sandboxId,
        containerConfig(sandbox, 'app', ['/nonexistent/command']),
        sandbox,
      );
      await assert.rejects(rt.startContainer(id), (err: unknown) => isCriError(err));
      const st = await rt.containerStatus(id);
      assert.equal(st.state, 'CONTAINER_EXITED');
      assert.equal(st.reason, 'ContainerCannotRun');
      assert.notEqual(st.exitCode, 0);
      assert.match(st.message, /\/nonexistent\/command/);
      // As dockershim (and containerd's StartError): a start failure is a finish, so the
      // kubelet's CrashLoopBackOff counts from it.
      assert.ok(st.createdAt > 0n);
      assert.equal(st.finishedAt, st.createdAt);
      assert.equal(st.startedAt, st.createdAt);
    });

    test('removeContainer is idempotent and the container is gone', async ({ runtime: rt }) => {
      const { containerId } = await runPod(rt, ['sleep', '3600']);
      await rt.removeContainer(containerId);
      await rt.removeContainer(containerId);
      await rejectsWith(rt.containerStatus(containerId), 'NotFound');
      assert.deepEqual(await rt.listContainers({ id: containerId }), []);
    });

    test('stopPodSandbox stops its containers; removePodSandbox removes them; both idempotent', async ({
      runtime: rt,
    }) => {
      const { sandboxId, containerId } = await runPod(rt, ['sleep', '3600']);
      await rt.stopPodSandbox(sandboxId);
      assert.equal((await rt.podSandboxStatus(sandboxId)).state, 'SANDBOX_NOTREADY');
      assert.equal((await rt.containerStatus(containerId)).state, 'CONTAINER_EXITED');
      await rt.stopPodSandbox(sandboxId);

      const second = await runPod(rt, ['sleep', '3600']);
      await rt.removePodSandbox(second.sandboxId);
      await rt.removePodSandbox(second.sandboxId);
      await rejectsWith(rt.podSandboxStatus(second.sandboxId), 'NotFound');
      await rejectsWith(rt.containerStatus(second.containerId), 'NotFound');
      assert.deepEqual(await rt.listContainers({ podSandboxId: second.sandboxId }), []);
      assert.deepEqual(
        (await rt.listPodSandbox()).map((s) => s.id),
        [sandboxId],
      );
    });

    test('unknown ids: NotFound, but stop and remove succeed', async ({ runtime: rt }) => {
      const sandbox = sandboxConfig();
      const calls: [string, () => Promise<unknown>][] = [
        ['podSandboxStatus', () => rt.podSandboxStatus(UNKNOWN_ID)],
        ['containerStatus', () => rt.containerStatus(UNKNOWN_ID)],
        ['startContainer', () => rt.startContainer(UNKNOWN_ID)],
        ['execSync', () => rt.execSync(UNKNOWN_ID, ['true'], 5)],
        ['containerStats', () => rt.containerStats(UNKNOWN_ID)],
        [
          'createContainer',
          () => rt.createContainer(UNKNOWN_ID, containerConfig(sandbox, 'c', ['true']), sandbox),
        ],
      ];
      for (const [what, call] of calls) {
        await rejectsWith(call(), 'NotFound').catch((err: Error) => {
          throw new Error(`${what}: ${err.message}`);
        });
      }
      await rt.stopContainer(UNKNOWN_ID, 0);
      await rt.removeContainer(UNKNOWN_ID);
      await rt.stopPodSandbox(UNKNOWN_ID);
      await rt.removePodSandbox(UNKNOWN_ID);
    });

    test('a sandbox id is not a container id, and the reverse', async ({ runtime: rt }) => {
      const { sandboxId, containerId } = await runPod(rt, ['sleep', '3600']);
      await rejectsWith(rt.containerStatus(sandboxId), 'NotFound');
      await rejectsWith(rt.podSandboxStatus(containerId), 'NotFound');
      assert.deepEqual(await rt.listContainers({ id: sandboxId }), []);
    });

    test('createContainer with an image that is not present rejects NotFound', async ({ runtime: rt }) => {
      const sandbox = sandboxConfig();
      const sandboxId = await rt.runPodSandbox(sandbox);
      const cfg = { ...containerConfig(sandbox, 'c', ['true']), image: { image: 'k8ts/absent:0.0' } };
      await rejectsWith(rt.createContainer(sandboxId, cfg, sandbox), 'NotFound');
    });

    test('containerStats of a running container', async ({ runtime: rt }) => {
      const { containerId } = await runPod(rt, ['sleep', '3600']);
      const s = await rt.containerStats(containerId);
      assert.equal(s.id, containerId);
      assert.ok(s.timestamp > 0n);
      assert.ok(s.cpuUsageCoreNanoSeconds >= 0n);
      assert.ok(Number.isInteger(s.memoryWorkingSetBytes) && s.memoryWorkingSetBytes >= 0);
    });

    test('images: status of a present and a missing image; listImages', async ({ runtime: rt }) => {
      const img = await rt.imageStatus(image);
      assert.ok(img, `${image} should be present`);
      assert.match(img.id, /^sha256:[0-9a-f]{64}$/);
      assert.ok(img.repoTags.includes(image), JSON.stringify(img.repoTags));
      assert.ok(img.size > 0);
      assert.deepEqual(await rt.imageStatus(img.id), img);
      assert.ok((await rt.listImages()).some((i) => i.id === img.id));
      assert.equal(await rt.imageStatus('k8ts/absent:0.0'), undefined);
    });

    const pullFailures: [string, string, CriErrorCode][] = [
      ['an unreachable registry', '127.0.0.1:1/nope:1', 'ImagePullFailed'],
      ['a malformed reference', 'INVALID/Ref:x', 'InvalidArgument'],
      ['a bad tag', 'k8ts/busybox:no tags with spaces', 'InvalidArgument'],
    ];
    for (const [what, ref, code] of pullFailures) {
      test(`pulling from ${what} rejects ${code}`, async ({ runtime: rt }) => {
        await rejectsWith(rt.pullImage(ref), code);
      });
    }

    test('imageStatus of a malformed reference rejects InvalidArgument', async ({ runtime: rt }) => {
      await rejectsWith(rt.imageStatus('k8ts/BusyBox:1.0'), 'InvalidArgument');
    });

    test(
      'pod networks: sandboxes get addresses of the subnet; a used network is kept',
      async (h) => {
        const rt = h.runtime;
        const net = h.podNetwork;
        await rt.ensurePodNetwork(net);
        await rt.ensurePodNetwork(net);
        const cfg = { ...sandboxConfig(), network: net.name };
        const id = await rt.runPodSandbox(cfg);
        const ip = (await rt.podSandboxStatus(id)).network.ip;
        assert.ok(inCidr(ip, net.subnet), `${ip} is not in ${net.subnet}`);
        await rejectsWith(rt.ensurePodNetwork({ ...net, subnet: h.otherSubnet }), 'FailedPrecondition');
        await rejectsWith(rt.removePodNetwork(net.name), 'FailedPrecondition');
        await rt.removePodSandbox(id);
        await rt.ensurePodNetwork({ ...net, subnet: h.otherSubnet });
        const moved = await rt.runPodSandbox({ ...sandboxConfig(), network: net.name });
        const ip2 = (await rt.podSandboxStatus(moved)).network.ip;
        assert.ok(inCidr(ip2, h.otherSubnet), `${ip2} is not in ${h.otherSubnet}`);
        await rt.removePodSandbox(moved);
        await rt.removePodNetwork(net.name);
        await rt.removePodNetwork(net.name);
        await rejectsWith(rt.runPodSandbox({ ...sandboxConfig(), network: net.name }), 'NotFound');
      },
      opts.podNetworks === false
        ? 'the adapter does not manage pod networks (capability podNetworks)'
        : undefined,
    );

    test('a new connection lists the same sandboxes and containers with the same metadata', async (h) => {
      const rt = h.runtime;
      const a = await runPod(rt, ['sleep', '3600'], 'first');
      const b = await runPod(rt, ['sh', '-c', 'exit 2'], 'second');
      await waitExited(rt, b.containerId);
      await rt.stopPodSandbox(b.sandboxId);
      const before = {
        sandboxes: await rt.listPodSandbox(),
        containers: await rt.listContainers(),
        statuses: await Promise.all([a.containerId, b.containerId].map((id) => rt.containerStatus(id))),
        sandboxStatuses: await Promise.all([a.sandboxId, b.sandboxId].map((id) => rt.podSandboxStatus(id))),
      };
      const again = await h.reconnect();
      const after = {
        sandboxes: await again.listPodSandbox(),
        containers: await again.listContainers(),
        statuses: await Promise.all([a.containerId, b.containerId].map((id) => again.containerStatus(id))),
        sandboxStatuses: await Promise.all(
          [a.sandboxId, b.sandboxId].map((id) => again.podSandboxStatus(id)),
        ),
      };
      const byId = <T extends { id: string }>(xs: T[]): T[] =>
        [...xs].sort((x, y) => x.id.localeCompare(y.id));
      assert.equal(before.sandboxes.length, 2);
      assert.equal(before.containers.length, 2);
      assert.deepEqual(byId(after.sandboxes), byId(before.sandboxes));
      assert.deepEqual(byId(after.containers), byId(before.containers));
      assert.deepEqual(after.statuses, before.statuses);
      assert.deepEqual(after.sandboxStatuses, before.sandboxStatuses);
      assert.equal(after.statuses[1]?.exitCode, 2);
    });
  });
}
