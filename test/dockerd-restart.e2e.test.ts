/**
 * A Docker daemon restart is survived: a real `k8ts server` with its local agent (the CLI
 * from source), a pod of spring-server:1.0 Running, then dockerd is stopped — exactly its
 * PID, SIGTERM, as `systemctl stop docker` would — and started again with
 * scripts/start-dockerd.sh (or systemctl where systemd runs the engine).
 *
 * What happens: there is no live-restore, so the engine stops every container on its way
 * down (the pod's sandbox and app container exit). The stopping engine still serves its
 * API for several seconds, so the agent's relist sees the dead sandbox and may already
 * start the pod again in a new sandbox there — which the engine then stops as well. While
 * the engine is away the agent's calls fail with Unavailable (relist retried with backoff;
 * node status "container runtime is down" if a status update falls into the outage); once
 * it answers the agent logs "container runtime is back; resyncing every pod" (when one of
 * its calls fell into the outage) and every pod worker resyncs: the sandbox is dead, so the pod is started again in a new sandbox (a
 * higher attempt) with a new app container whose restartCount is the last exited one's
 * plus 1 (1, or 2 when the stopping engine ran it once in between). The pod is Running and
 * Ready again and answers HTTP, and the node is Ready.
 *
 * The engine is shared with every other test on this host: the restart is kept short,
 * happens once, and dockerd is started again whatever happens (also in after()).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import Docker from 'dockerode';
import { isNotFound } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { ContainerStatus, Node, Pod } from '../api/types.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import { run, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { untilTruthy } from './support/wait.js';

const NODE = `dockerd-restart-${randomBytes(3).toString('hex')}`;
const POD = 'survivor';
const docker = new Docker();

/** Polls `check` (support/wait.ts) with this file's deadline (60_000 ms) and pace (200 ms). */
const until = <T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  ms = 60_000,
) => untilTruthy(what, check, ms, 200);

const systemd = () => existsSync('/run/systemd/system');

/**
 * Starts dockerd (scripts/start-dockerd.sh) in its own session, so that the engine does not
 * belong to this test's process group; resolves once `docker info` answers.
 */
async function startDockerd(): Promise<void> {
  const child = spawn('bash', ['scripts/start-dockerd.sh'], { detached: true, stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  });
  assert.equal(code, 0, 'scripts/start-dockerd.sh failed; see /var/log/k8ts-dockerd.log');
}

/** Whether process `pid` has exited (gone, or a zombie nobody reaped yet). */
function exited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Stops exactly the running dockerd with SIGTERM, waits for it to exit, and starts it again. */
async function restartDockerd(): Promise<void> {
  if (systemd()) {
    const r = await run('systemctl', ['restart', 'docker'], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    return;
  }
  // The machine's engine is the one whose pidfile is the default one: other dockerds (the
  // simulated hosts' of test/support/simulated-hosts.ts, with pidfiles of their own) are
  // not this test's to stop.
  const pid = Number(readFileSync('/var/run/docker.pid', 'utf8').trim());
  assert.ok(
    Number.isInteger(pid) && pid > 0 && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'dockerd',
    `/var/run/docker.pid names no running dockerd (${pid})`,
  );
  process.kill(pid, 'SIGTERM');
  try {
    await until('dockerd to exit', async () => exited(pid), 60_000);
  } finally {
    await startDockerd();
  }
}

describe('a Docker daemon restart is survived', { timeout: 300_000 }, () => {
  let k: K8tsServer;
  let client: RestClient;

  before(async () => {
    await startDockerd();
    const built = await run('bash', ['scripts/build-images.sh'], { timeoutMs: 300_000 });
    assert.equal(built.code, 0, built.stderr);
    k = await startK8tsServer({
      agent: true,
      fromSource: true,
      args: ['--node-name', NODE, '--node-ip', '127.0.0.1', '--cluster-cidr', await freeClusterCIDR()],
      readyTimeoutMs: 60_000,
    });
    client = RestClient.fromKubeconfig(k.kubeconfig);
  });

  after(async () => {
    // Whatever failed, the engine must be up for everybody else.
    if (
      !(await docker.ping().then(
        () => true,
        () => false,
      ))
    )
      await startDockerd();
    client?.close();
    await k?.stop();
    await removeNodeFromDocker(NODE);
  });

  const getPod = async (): Promise<Pod | undefined> => {
    try {
      return await client.get<Pod>(resources.pods, 'default', POD);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const app = (p: Pod | undefined): ContainerStatus | undefined =>
    p?.status?.containerStatuses?.find((c) => c.name === 'app');
  const podReady = (p: Pod | undefined) =>
    p?.status?.phase === 'Running' &&
    p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  /** The node, or undefined before the agent has registered it. */
  const getNode = async (): Promise<Node | undefined> => {
    try {
      return await client.get<Node>(resources.nodes, undefined, NODE);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const nodeReady = (n: Node | undefined) =>
    n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const dockerIds = async () =>
    (await docker.listContainers({ all: true, filters: { label: [`io.k8ts.node=${NODE}`] } }))
      .map((c) => `${c.Labels['io.k8ts.type'] ?? '?'} ${c.Id} ${c.State}`)
      .sort();
  const answers = async (ip: string) => {
    const res = await fetch(`http://${ip}:8080/`).catch(() => undefined);
    return res?.status === 200 && /spring-server 1\.0/.test(await res.text());
  };

  let first: Pod;

  it('a pod of spring-server:1.0 is Running and Ready on the node', async () => {
    await until('the node Ready', async () => nodeReady(await getNode()));
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: POD, namespace: 'default' },
      spec: {
        terminationGracePeriodSeconds: 5,
        containers: [
          {
            name: 'app',
            image: 'spring-server:1.0',
            ports: [{ containerPort: 8080 }],
            readinessProbe: { httpGet: { path: '/actuator/health', port: 8080 }, periodSeconds: 1 },
          },
        ],
      },
    });
    const applied = await k.kubectlIn(manifest, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    first = await until('the pod Running and Ready', async () => {
      const p = await getPod();
      return podReady(p) ? p : undefined;
    });
    assert.equal(app(first)?.restartCount, 0);
    assert.ok(await answers(first.status!.podIP!), 'the pod answers on its IP');
  });

  it('dockerd restarts: the agent reconnects, resyncs and the pod is Running and Ready again', async () => {
    assert.ok(first, 'the pod did not start');
    const idsBefore = await dockerIds();
    await restartDockerd();
    const upAgain = Date.now();
    /** Whether the container `id` runs in the new engine (started after it came up). */
    const runsInNewEngine = async (id: string | undefined) => {
      const info = await docker
        .getContainer(id?.replace(/^docker:\/\//, '') ?? '')
        .inspect()
        .catch(() => undefined);
      return info?.State.Running === true && Date.parse(info.State.StartedAt) >= upAgain - 1000;
    };
    // The pod's status can still show containers that the old engine started while it was
    // stopping (it serves its API until it exits), so "new containers" means: running, in
    // the engine that is up now.
    const again = await until(
      'the pod Running and Ready with its container running in the new engine',
      async () => {
        const p = await getPod();
        return podReady(p) && (await runsInNewEngine(app(p)?.containerID)) ? p : undefined;
      },
      120_000,
    );
    const agentLog = () =>
      k
        .logs()
        .split('\n')
        .filter((l) => l && !l.includes('"message":"request"'))
        .join('\n');
    // The agent logs "container runtime is back" when one of its calls saw the engine away;
    // a restart that falls between its calls is noticed only as dead containers, and the pod
    // comes back through the normal resync. Either way the pod must run in the new engine
    // (checked above); the log line is reported, not required.
    if (!/container runtime is back; resyncing every pod/.test(agentLog())) {
      process.stdout.write('# the agent did not see the engine away (the restart fell between its calls)\n');
    }
    // The engine stopped both containers: a new sandbox and a new app container, counted as a restart.
    const idsAfter = await dockerIds();
    const running = (type: string) =>
      idsAfter.filter((l) => l.startsWith(`${type} `) && l.endsWith(' running'));
    assert.equal(running('podsandbox').length, 1, idsAfter.join('\n'));
    assert.equal(running('container').length, 1, idsAfter.join('\n'));
    for (const line of running('podsandbox').concat(running('container'))) {
      assert.ok(!idsBefore.includes(line), `${line} was running before the restart`);
    }
    assert.ok((app(again)?.restartCount ?? 0) >= 1, `restartCount ${app(again)?.restartCount}`);
    assert.ok((app(again)?.lastState?.terminated as { exitCode?: number } | undefined) !== undefined);
    assert.ok(await answers(again.status!.podIP!), `the pod answers on ${again.status!.podIP}`);
  });

  it('the node is Ready again', async () => {
    const node = await until(
      'the node Ready',
      async () => {
        const n = await getNode();
        return nodeReady(n) ? n : undefined;
      },
      90_000,
    );
    assert.match(
      String((node.status?.nodeInfo as { containerRuntimeVersion?: string }).containerRuntimeVersion),
      /^docker:\/\//,
    );
  });
});
