// Init containers and lifecycle hooks as users meet them: a real `k8ts server` with its
// local agent on a node name of this run only, real dockerd, the real kubectl. The CLI
// runs from source (cli.ts through tsx) so that no build is needed.
//
// - An init container writes a file into an emptyDir; the app container prints it. kubectl
//   shows Init:0/1 (or PodInitializing) first, then Running.
// - A failing init container under restartPolicy Never: the pod Failed, STATUS Init:Error,
//   the app container never created.
// - A failing init container under OnFailure: restarted, STATUS Init:CrashLoopBackOff,
//   the pod Pending.
// - A preStop exec hook runs before the SIGTERM: both append to a file in a hostPath dir
//   of this test, in that order.
//
// Everything this file makes in Docker carries the node label and is removed at the end,
// passed or failed; the hostPath dir is removed too.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ContainerStatus, Pod } from '../api/types.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import { cleanUp, run, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';

const NODE = `init-e2e-${process.pid}-${Date.now().toString(36)}`;
const NS = 'default';

describe('init containers and lifecycle hooks on real Docker', { timeout: 300_000 }, () => {
  let k: K8tsServer | undefined;
  let hostDir: string;

  before(async () => {
    const started = await run('bash', ['scripts/start-dockerd.sh'], { timeoutMs: 60_000 });
    assert.equal(started.code, 0, `dockerd did not start: ${started.stderr}`);
    hostDir = mkdtempSync(join(tmpdir(), 'k8ts-init-e2e-'));
    chmodSync(hostDir, 0o777);
    k = await startK8tsServer({
      agent: true,
      fromSource: true,
      args: ['--node-name', NODE, '--node-ip', '127.0.0.1', '--cluster-cidr', await freeClusterCIDR()],
      readyTimeoutMs: 60_000,
    });
  });

  after(async () => {
    // Every step even when one fails: a server whose stop threw once left this node's
    // containers behind.
    await cleanUp([
      () => k?.stop(),
      () => removeNodeFromDocker(NODE),
      () => rmSync(hostDir, { recursive: true, force: true }),
    ]);
  });

  function server(): K8tsServer {
    assert.ok(k, 'the server did not start');
    return k;
  }

  async function apply(pod: Pod): Promise<void> {
    const r = await server().kubectlIn(JSON.stringify(pod), 'apply', '-f', '-');
    assert.equal(r.code, 0, r.stderr);
  }

  async function getPod(name: string): Promise<Pod | undefined> {
    const r = await server().kubectl('get', 'pod', name, '-n', NS, '-o', 'json');
    return r.code === 0 ? (JSON.parse(r.stdout) as Pod) : undefined;
  }

  /** Polls `check` until it returns something truthy (90 s deadline); `last` explains a timeout. */
  async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const v = await check();
      if (v) return v;
      if (Date.now() > deadline) {
        const pods = await server().kubectl('get', 'pods', '-n', NS, '-o', 'yaml');
        throw new Error(`timed out waiting for ${what}; pods:\n${pods.stdout.slice(0, 4000)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The STATUS column of `kubectl get pod <name>` (the server-side Table). */
  async function statusColumn(name: string): Promise<string | undefined> {
    const r = await server().kubectl('get', 'pod', name, '-n', NS, '--no-headers');
    if (r.code !== 0) return undefined;
    return r.stdout.trim().split(/\s+/)[2];
  }

  /** The ids of the Docker containers of pod `name`'s container `container`. */
  async function dockerContainers(pod: string, container: string): Promise<string[]> {
    const r = await run('docker', [
      'ps',
      '-aq',
      '--filter',
      `label=io.k8ts.node=${NODE}`,
      '--filter',
      `label=io.kubernetes.pod.name=${pod}`,
      '--filter',
      `label=io.kubernetes.container.name=${container}`,
    ]);
    return r.stdout.split('\n').filter(Boolean);
  }

  const podOf = (
    name: string,
    spec: Partial<Pod['spec']> & { containers: Pod['spec']['containers'] },
  ): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 5, ...spec },
  });

  it('an init container fills an emptyDir before the app starts; Init:0/1, then Running', async () => {
    await apply(
      podOf('init-web', {
        initContainers: [
          {
            name: 'fill',
            image: 'k8ts/busybox:1.0',
            command: ['sh', '-c', 'sleep 3; echo "made by init $HOSTNAME" > /work/msg'],
            volumeMounts: [{ name: 'work', mountPath: '/work' }],
          },
        ],
        containers: [
          {
            name: 'app',
            image: 'k8ts/busybox:1.0',
            command: ['sh', '-c', 'cat /work/msg; exec sleep 3600'],
            volumeMounts: [{ name: 'work', mountPath: '/work' }],
          },
        ],
        volumes: [{ name: 'work', emptyDir: {} }],
      }),
    );
    const seen = new Set<string>();
    await until('kubectl STATUS Running', async () => {
      const s = await statusColumn('init-web');
      if (s) seen.add(s);
      return s === 'Running';
    });
    assert.ok(
      seen.has('Init:0/1') || seen.has('PodInitializing'),
      `kubectl showed the initialization: ${[...seen].join(', ')}`,
    );
    const pod = (await getPod('init-web'))!;
    assert.equal(pod.status?.phase, 'Running');
    assert.equal(pod.status?.conditions?.find((c) => c.type === 'Initialized')?.status, 'True');
    const init = (
      pod.status?.initContainerStatuses as {
        name: string;
        ready: boolean;
        state: { terminated?: { exitCode: number; reason: string } };
      }[]
    )[0]!;
    assert.equal(init.name, 'fill');
    assert.equal(init.ready, true);
    assert.deepEqual([init.state.terminated?.exitCode, init.state.terminated?.reason], [0, 'Completed']);
    const [app] = await dockerContainers('init-web', 'app');
    assert.ok(app, 'the app container exists');
    const logs = await until('the app printed the file', async () => {
      const r = await run('docker', ['logs', app]);
      return r.stdout.includes('made by init') ? r.stdout : undefined;
    });
    assert.match(logs, /^made by init init-web\n/);
  });

  it('a failing init container under restartPolicy Never: the pod Failed, Init:Error, no app container', async () => {
    await apply(
      podOf('init-fail', {
        restartPolicy: 'Never',
        initContainers: [{ name: 'check', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 3'] }],
        containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] }],
      }),
    );
    const pod = await until('phase Failed', async () => {
      const p = await getPod('init-fail');
      return p?.status?.phase === 'Failed' ? p : undefined;
    });
    const init = (
      pod.status?.initContainerStatuses as { state: { terminated?: { exitCode: number } } }[]
    )[0]!;
    assert.equal(init.state.terminated?.exitCode, 3);
    const initialized = pod.status?.conditions?.find((c) => c.type === 'Initialized');
    assert.equal(initialized?.status, 'False');
    assert.equal(initialized?.reason, 'ContainersNotInitialized');
    assert.equal(await statusColumn('init-fail'), 'Init:Error');
    assert.deepEqual(await dockerContainers('init-fail', 'app'), []);
  });

  it('a failing init container under restartPolicy OnFailure is restarted: Init:CrashLoopBackOff, still Pending', async () => {
    await apply(
      podOf('init-crash', {
        restartPolicy: 'OnFailure',
        initContainers: [{ name: 'check', image: 'k8ts/busybox:1.0', command: ['sh', '-c', 'exit 5'] }],
        containers: [{ name: 'app', image: 'k8ts/busybox:1.0', command: ['sleep', '3600'] }],
      }),
    );
    const seen = new Set<string>();
    const pod = await until('restarted once and backing off', async () => {
      const s = await statusColumn('init-crash');
      if (s) seen.add(s);
      const p = await getPod('init-crash');
      const st = (p?.status?.initContainerStatuses as ContainerStatus[] | undefined)?.[0];
      return st && st.restartCount >= 1 && s === 'Init:CrashLoopBackOff' ? p : undefined;
    });
    assert.equal(pod.status?.phase, 'Pending');
    assert.ok(seen.has('Init:Error') || seen.has('Init:CrashLoopBackOff'), [...seen].join(', '));
    const st = (pod.status?.initContainerStatuses as ContainerStatus[])[0]!;
    assert.equal((st.lastState?.terminated as { exitCode: number }).exitCode, 5);
    assert.ok((await dockerContainers('init-crash', 'check')).length >= 2, 'a new container per restart');
    assert.deepEqual(await dockerContainers('init-crash', 'app'), []);
  });

  it('a preStop exec hook runs before the SIGTERM', async () => {
    await apply(
      podOf('prestop', {
        terminationGracePeriodSeconds: 20,
        containers: [
          {
            name: 'app',
            image: 'k8ts/busybox:1.0',
            command: [
              'sh',
              '-c',
              'trap "echo sigterm >> /out/log; exit 0" TERM; echo started >> /out/log; while true; do sleep 1; done',
            ],
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /out/log'] } } },
            volumeMounts: [{ name: 'out', mountPath: '/out' }],
          },
        ],
        volumes: [{ name: 'out', hostPath: { path: hostDir, type: 'Directory' } }],
      }),
    );
    const log = join(hostDir, 'log');
    const read = () => {
      try {
        return readFileSync(log, 'utf8');
      } catch {
        return '';
      }
    };
    await until(
      'the app started',
      async () =>
        ((await getPod('prestop'))?.status?.phase === 'Running' && read().includes('started')) || undefined,
    );
    const del = await server().kubectl('delete', 'pod', 'prestop', '-n', NS, '--wait=false');
    assert.equal(del.code, 0, del.stderr);
    const text = await until('prestop and sigterm written', async () =>
      read().includes('sigterm') ? read() : undefined,
    );
    assert.equal(text, 'started\nprestop\nsigterm\n');
    await until('the pod gone', async () => (await getPod('prestop')) === undefined || undefined);
  });
});
