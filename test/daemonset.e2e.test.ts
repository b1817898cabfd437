// DaemonSet end to end (issue 17): the real CLI (`k8ts server` without an agent and two
// `k8ts agent`s on one host, 127.0.0.1 and 127.0.0.2), real Docker, the real kubectl. A
// DaemonSet of k8ts/pause:1.0 gets one Running pod on each node (a container labelled with
// that node in Docker), `kubectl patch` rolls it to k8ts/busybox:1.0 (sleeping) (`kubectl rollout
// status` waits for it; every pod is then busybox, one per node), `kubectl rollout history`
// lists revisions 1 and 2, and `kubectl rollout undo` goes back to pause (revision 1
// becomes 3). Every container is labelled with the test's node names and removed at the end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../api/types.js';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker, startK8tsAgent, type K8tsAgent } from './support/k8ts-agent.js';
import { buildImages, cleanUp, run, startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const unique = `ds-e2e-${process.pid}`;
const NODES = [`${unique}-a`, `${unique}-b`];
const IPS = ['127.0.0.1', '127.0.0.2'];
const NS = 'ds-e2e';

const manifests = `
apiVersion: v1
kind: Namespace
metadata: { name: ${NS} }
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent, namespace: ${NS} }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 1
      containers:
        - { name: main, image: k8ts/pause:1.0, imagePullPolicy: IfNotPresent }
`;

const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 120_000) =>
  waitUntil(what, check, ms, 200);

describe('DaemonSet on two nodes (real agents, Docker, kubectl)', { timeout: 600_000 }, () => {
  let k: K8tsServer | undefined;
  const agents: K8tsAgent[] = [];

  const kubectl = (...args: string[]) => k!.kubectlOk(...args);
  const pods = async (): Promise<Pod[]> =>
    (JSON.parse(await kubectl('get', 'pods', '-n', NS, '-l', 'app=agent', '-o', 'json')) as { items: Pod[] })
      .items;
  /** One Running, Ready pod of `image` on each node and nothing else (terminating pods included). */
  const onEachNode = (image: string) => async () => {
    const ps = await pods();
    const ok =
      ps.length === NODES.length &&
      ps.every(
        (p) =>
          !p.metadata.deletionTimestamp &&
          p.status?.phase === 'Running' &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
          p.spec.containers[0]?.image === image,
      ) &&
      JSON.stringify(ps.map((p) => p.spec.nodeName).sort()) === JSON.stringify([...NODES].sort());
    return ok ? ps : undefined;
  };
  /** The running containers (not sandboxes, which are pause too) Docker has for `node` of `image`. */
  const containersOn = async (node: string, image: string) => {
    const r = await run('docker', [
      'ps',
      '--filter',
      `label=io.k8ts.node=${node}`,
      '--filter',
      'label=io.k8ts.type=container',
      '--filter',
      `ancestor=${image}`,
      '--format',
      '{{.ID}}',
    ]);
    return r.stdout.trim().split('\n').filter(Boolean).length;
  };

  before(async () => {
    const started = await run('bash', ['scripts/start-dockerd.sh'], { timeoutMs: 60_000 });
    assert.equal(started.code, 0, `dockerd did not start: ${started.stderr}`);
    await buildImages(['busybox', 'pause']);
    k = await startK8tsServer({ readyTimeoutMs: 60_000, args: ['--cluster-cidr', await freeClusterCIDR()] });
    for (let i = 0; i < NODES.length; i++) {
      agents.push(
        await startK8tsAgent({ server: k.url, token: k.nodeToken(), nodeName: NODES[i]!, nodeIP: IPS[i]! }),
      );
    }
    await until('two nodes Ready', async () => {
      const r = await k!.kubectl(
        'get',
        'nodes',
        '-o',
        'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}',
      );
      return NODES.every((n) => r.stdout.includes(`${n}=True`)) || undefined;
    });
  });

  after(async () => {
    await cleanUp([
      ...agents.map((a) => () => a.stop()),
      () => k?.stop(),
      ...NODES.map((n) => () => removeNodeFromDocker(n)),
    ]);
  });

  it('runs one pod on each node', async () => {
    await k!.kubectlIn(manifests, 'apply', '-f', '-').then((r) => assert.equal(r.code, 0, r.stderr));
    await until('a Ready pause pod on each node', onEachNode('k8ts/pause:1.0'));
    for (const node of NODES) assert.equal(await containersOn(node, 'k8ts/pause:1.0'), 1, node);
    const get = await kubectl('get', 'ds', '-n', NS, 'agent');
    assert.match(get, /^agent\s+2\s+2\s+2\s+2\s+2\s+<none>\s+/m);
    const status = await kubectl('rollout', 'status', '-n', NS, 'daemonset/agent', '--timeout=60s');
    assert.match(status, /daemon set "agent" successfully rolled out/);
  });

  it('rolls to a new image, and kubectl rollout status waits for it', async () => {
    // busybox's sh would exit at once: the new template sleeps.
    await kubectl(
      'patch',
      '-n',
      NS,
      'daemonset/agent',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"k8ts/busybox:1.0","command":["sleep","3600"]}]}}}}',
    );
    const status = await kubectl('rollout', 'status', '-n', NS, 'daemonset/agent', '--timeout=120s');
    assert.match(status, /daemon set "agent" successfully rolled out/);
    await until('a Ready busybox pod on each node', onEachNode('k8ts/busybox:1.0'));
    for (const node of NODES) {
      await until(
        `${node}: the pause container gone`,
        async () => (await containersOn(node, 'k8ts/pause:1.0')) === 0 || undefined,
      );
      assert.equal(await containersOn(node, 'k8ts/busybox:1.0'), 1, node);
    }
    const history = await kubectl('rollout', 'history', '-n', NS, 'daemonset/agent');
    assert.match(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n/);
    const revs = await kubectl('get', 'controllerrevisions', '-n', NS);
    assert.match(revs, /^NAME\s+CONTROLLER\s+REVISION\s+AGE$/m);
    assert.match(revs, /^agent-\S+\s+daemonset\.apps\/agent\s+2\s+/m);
  });

  it('kubectl rollout undo goes back to the first image', async () => {
    const undo = await kubectl('rollout', 'undo', '-n', NS, 'daemonset/agent', '--to-revision=1');
    assert.match(undo, /daemonset.apps\/agent rolled back/);
    await kubectl('rollout', 'status', '-n', NS, 'daemonset/agent', '--timeout=120s');
    await until('a Ready pause pod on each node again', onEachNode('k8ts/pause:1.0'));
    for (const node of NODES)
      await until(
        `${node}: one pause container`,
        async () => (await containersOn(node, 'k8ts/pause:1.0')) === 1 || undefined,
      );
    const history = await kubectl('rollout', 'history', '-n', NS, 'daemonset/agent');
    assert.match(history, /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>\n/);
  });
});
