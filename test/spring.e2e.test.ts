// The main job, end to end, as a user meets it (issue 7): the real CLI (`k8ts server` with
// its local agent, and a second `k8ts agent` on 127.0.0.2 — "Several nodes on one host" in
// DESIGN.md), real Docker, the real kubectl, the sample spring-server images, and the
// manifests in examples/. Everything runs on loopback and the test's own containers; every
// container and network is labelled with the test's node names and removed at the end.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { run, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLES = `${REPO}examples/`;
const NODE_A = `spring-e2e-${process.pid}-a`;
const NODE_B = `spring-e2e-${process.pid}-b`;
const NODE_PORT = 30080;

interface PodView {
  name: string;
  node: string;
  phase: string;
  ready: boolean;
  terminating: boolean;
  image: string;
  restarts: number;
  containerID: string;
}

/** Polls `check` (support/wait.ts) with this file's deadline (60_000 ms) and pace (200 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 60_000) =>
  waitUntil(what, check, ms, 200);

/** One HTTP GET with a fresh connection; resolves with the body, rejects on any error or non-200. */
function get(url: string, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${res.statusCode}: ${body}`)),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

describe('spring-server from examples/, end to end', { timeout: 900_000 }, () => {
  let k: K8tsServer;
  let agentB: K8tsAgent | undefined;
  let dataDir: string;
  let agentBDir: string | undefined;
  let port: string;
  const serverArgs = [
    '--node-name',
    NODE_A,
    '--node-ip',
    '127.0.0.1',
    // Longer than the agent's 10 s Lease renewal interval (Kubernetes' default is 40 s), or
    // healthy nodes would flap to Unknown between renewals.
    '--node-monitor-grace-period',
    '20s',
    '--node-monitor-period',
    '1s',
    '--default-unreachable-toleration-seconds',
    '3',
    '--default-not-ready-toleration-seconds',
    '3',
  ];

  const kubectl = async (...args: string[]) => {
    const r = await k.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const pods = async (): Promise<PodView[]> => {
    const list = JSON.parse(await kubectl('get', 'pods', '-l', 'app=backend-app', '-o', 'json')) as {
      items: {
        metadata: { name: string; deletionTimestamp?: string };
        spec: { nodeName?: string; containers: { image: string }[] };
        status?: {
          phase?: string;
          conditions?: { type: string; status: string }[];
          containerStatuses?: { restartCount: number; containerID?: string }[];
        };
      }[];
    };
    return list.items.map((p) => ({
      name: p.metadata.name,
      node: p.spec.nodeName ?? '',
      phase: p.status?.phase ?? '',
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      terminating: p.metadata.deletionTimestamp !== undefined,
      image: p.spec.containers[0]!.image,
      restarts: p.status?.containerStatuses?.[0]?.restartCount ?? 0,
      containerID: p.status?.containerStatuses?.[0]?.containerID ?? '',
    }));
  };
  const live = async () => (await pods()).filter((p) => !p.terminating);
  const readyPods = async (n: number) =>
    until(`${n} ready pods`, async () => {
      const ps = await live();
      return ps.length === n && ps.every((p) => p.phase === 'Running' && p.ready) ? ps : undefined;
    });
  /** The app containers (not sandboxes) this test's nodes run, by docker's own account. */
  const appContainers = async (): Promise<string[]> => {
    const ids: string[] = [];
    for (const node of [NODE_A, NODE_B]) {
      const r = await run('docker', [
        'ps',
        '-q',
        '--no-trunc',
        '--filter',
        `label=io.k8ts.node=${node}`,
        '--filter',
        'label=io.k8ts.type=container',
      ]);
      ids.push(...r.stdout.split('\n').filter(Boolean));
    }
    return ids;
  };
  /** Asks the NodePort until every one of `names` has answered (at most 20 requests per pod). */
  const reachAll = async (host: string, names: string[]) => {
    const seen = new Set<string>();
    for (let i = 0; i < names.length * 20 && seen.size < names.length; i++) {
      const body = await get(`http://${host}:${NODE_PORT}/`);
      const who = names.find((n) => body.includes(n));
      assert.ok(who, `the answer names a pod: ${body}`);
      seen.add(who);
    }
    assert.deepEqual([...seen].sort(), [...names].sort());
  };

  before(async () => {
    const images = await run('bash', [`${REPO}scripts/build-images.sh`], { timeoutMs: 900_000 });
    assert.equal(images.code, 0, images.stderr);
    // Our own data dir: the server is restarted on it in step 6 (a dir the helper made
    // would be removed when the first server stops).
    dataDir = mkdtempSync(join(tmpdir(), 'k8ts-spring-e2e-'));
    // Kept for the restart in step 6, as serverArgs are.
    serverArgs.push('--cluster-cidr', await freeClusterCIDR());
    k = await startK8tsServer({ agent: true, dataDir, args: serverArgs, readyTimeoutMs: 60_000 });
    port = new URL(k.url).port;
    // The second agent's own data dir, kept across its restart in step 5: it holds the
    // node credential (a join token registers new nodes only).
    agentBDir = mkdtempSync(join(tmpdir(), 'k8ts-spring-e2e-agent-'));
    agentB = await startK8tsAgent({
      server: k.url,
      token: readFileSync(`${dataDir}/node-token`, 'utf8').trim(),
      nodeName: NODE_B,
      nodeIP: '127.0.0.2',
      dataDir: agentBDir,
    });
  });

  after(async () => {
    await agentB?.stop();
    await k?.stop();
    await removeNodeFromDocker(NODE_A);
    await removeNodeFromDocker(NODE_B);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (agentBDir) rmSync(agentBDir, { recursive: true, force: true });
  });

  it('1. the server node and a second agent are both Ready', async () => {
    await until('both nodes Ready', async () => {
      const out = await kubectl('get', 'nodes', '--no-headers');
      const ready = out
        .split('\n')
        .filter((l) => / Ready /.test(l))
        .map((l) => l.split(/\s+/)[0]);
      return ready.includes(NODE_A) && ready.includes(NODE_B) ? true : undefined;
    });
  });

  it('2. kubectl apply -f examples/ runs 5 pods over both nodes, and the NodePort reaches all 5', async () => {
    const applied = await kubectl('apply', '-f', EXAMPLES);
    assert.match(applied, /deployment.apps\/spring-deployment created/);
    assert.match(applied, /service\/spring-service created/);
    const ps = await readyPods(5);
    assert.deepEqual([...new Set(ps.map((p) => p.node))].sort(), [NODE_A, NODE_B].sort());
    await until('the NodePort answering', () => get(`http://127.0.0.1:${NODE_PORT}/actuator/health`));
    await reachAll(
      '127.0.0.1',
      ps.map((p) => p.name),
    );
    await reachAll(
      '127.0.0.2',
      ps.map((p) => p.name),
    );
  });

  it('3. a deleted pod is replaced, a killed container restarted, and scaling to 2 removes 3 containers', async () => {
    const before = await live();
    await kubectl('delete', 'pod', before[0]!.name);
    await until('a replacement', async () => {
      const ps = await live();
      return ps.length === 5 && !ps.some((p) => p.name === before[0]!.name) && ps.every((p) => p.ready)
        ? true
        : undefined;
    });

    const victim = (await live())[0]!;
    const id = victim.containerID.replace(/^docker:\/\//, '');
    assert.ok(id, 'the pod reports its containerID');
    const killed = await run('docker', ['kill', id]);
    assert.equal(killed.code, 0, killed.stderr);
    await until('the killed container restarted', async () => {
      const p = (await live()).find((x) => x.name === victim.name);
      return p && p.restarts === 1 && p.ready ? true : undefined;
    });

    assert.equal((await appContainers()).length, 5);
    await kubectl('scale', 'deployment/spring-deployment', '--replicas=2');
    await readyPods(2);
    await until('3 containers removed', async () =>
      (await appContainers()).length === 2 ? true : undefined,
    );
  });

  it('4. set image 1.1: rollout status completes and a polling client sees no failure', async () => {
    const failures: string[] = [];
    const versions = new Set<string>();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        try {
          const body = await get(`http://127.0.0.1:${NODE_PORT}/`);
          versions.add(/1\.1/.test(body) ? '1.1' : '1.0');
        } catch (err) {
          failures.push(String(err));
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await kubectl('set', 'image', 'deployment/spring-deployment', 'spring-container=spring-server:1.1');
      const status = await k.kubectl('rollout', 'status', 'deployment/spring-deployment', '--timeout=180s');
      assert.equal(status.code, 0, status.stderr);
      await until('only 1.1 answering', async () => {
        const bodies = await Promise.all([1, 2, 3, 4].map(() => get(`http://127.0.0.1:${NODE_PORT}/`)));
        return bodies.every((b) => /1\.1/.test(b)) ? true : undefined;
      });
    } finally {
      polling = false;
      await poller;
    }
    assert.deepEqual(failures, []);
    assert.ok(versions.has('1.0') && versions.has('1.1'), `the client saw both versions: ${[...versions]}`);
  });

  it('5. a stopped agent: its node goes NotReady and its pods are replaced on the other node', async () => {
    await kubectl('scale', 'deployment/spring-deployment', '--replicas=4');
    const ps = await readyPods(4);
    assert.ok(
      ps.some((p) => p.node === NODE_B),
      'some pods run on the second node',
    );
    await agentB!.stop();
    await until(`${NODE_B} NotReady`, async () => {
      const out = await kubectl('get', 'node', NODE_B, '--no-headers');
      return /NotReady/.test(out) ? true : undefined;
    });
    await until(`all live pods on ${NODE_A}`, async () => {
      const now = await live();
      return now.length === 4 && now.every((p) => p.node === NODE_A && p.ready) ? true : undefined;
    });
    // The agent comes back (its data dir, its credential): the node is Ready again and the
    // pods deleted meanwhile are cleaned up.
    agentB = await startK8tsAgent({
      server: k.url,
      token: readFileSync(`${dataDir}/node-token`, 'utf8').trim(),
      nodeName: NODE_B,
      nodeIP: '127.0.0.2',
      dataDir: agentBDir,
    });
    await until(`${NODE_B} Ready again, its old pods gone`, async () => {
      const out = await kubectl('get', 'node', NODE_B, '--no-headers');
      const all = await pods();
      return / Ready /.test(out) && all.length === 4 ? true : undefined;
    });
  });

  it('6. restarting the server keeps every object and restarts no container', async () => {
    const before = await live();
    const containersBefore = (await appContainers()).sort();
    await k.stop();
    k = await startK8tsServer({
      agent: true,
      dataDir,
      args: [...serverArgs, '--port', port],
      readyTimeoutMs: 60_000,
    });
    assert.equal(new URL(k.url).port, port);
    await until('the server answering with the same pods', async () => {
      const now = await live();
      return now.length === before.length && now.every((p) => p.ready) ? now : undefined;
    });
    const after = await live();
    assert.deepEqual(
      after.map((p) => `${p.name}:${p.containerID}:${p.restarts}`).sort(),
      before.map((p) => `${p.name}:${p.containerID}:${p.restarts}`).sort(),
    );
    assert.deepEqual((await appContainers()).sort(), containersBefore);
    assert.match(await kubectl('get', 'service', 'spring-service', '--no-headers'), /NodePort/);
  });

  it('7. kubectl delete -f examples/ removes every container the test created', async () => {
    await kubectl('delete', '-f', EXAMPLES, '--wait=true', '--timeout=120s');
    await until('no pods', async () => ((await pods()).length === 0 ? true : undefined));
    await until('no containers of the test nodes', async () => {
      let left = 0;
      for (const node of [NODE_A, NODE_B]) {
        const r = await run('docker', [
          'ps',
          '-aq',
          '--filter',
          `label=io.k8ts.node=${node}`,
          '--filter',
          'label=io.k8ts.type',
        ]);
        left += r.stdout.split('\n').filter(Boolean).length;
      }
      return left === 0 ? true : undefined;
    });
  });
});
