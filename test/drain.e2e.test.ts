// `kubectl drain` against a PodDisruptionBudget, end to end (issue 17): the real CLI
// (`k8ts server` with its local agent), real Docker and the real kubectl. A Deployment of
// one pod under a PDB with minAvailable 1 cannot be drained: kubectl cordons the node,
// evicts through policy/v1 (POST pods/<pod>/eviction), gets 429 with the budget's message
// and retries; once the PDB is relaxed, the eviction is allowed and drain completes; the
// replacement pod stays Pending on the cordoned node until `kubectl uncordon`. Everything
// runs on loopback; the node's containers are labelled with its name and removed at the end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freeClusterCIDR } from './support/cluster-cidr.js';
import { removeNodeFromDocker } from './support/k8ts-agent.js';
import {
  buildImages,
  start,
  startK8tsServer,
  type CommandResult,
  type K8tsServer,
} from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const NODE = `drain-e2e-${process.pid}`;

const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 90_000) =>
  waitUntil(what, check, ms, 200);

/** A DaemonSet, whose pod drain --ignore-daemonsets leaves alone. */
const DAEMONSET = `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: agent
        image: k8ts/busybox:1.0
        command: [sleep, '3600']
`;

const MANIFEST = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: k8ts/busybox:1.0
        command: [sleep, '3600']
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
`;

interface PodView {
  name: string;
  node: string;
  phase: string;
  ready: boolean;
  terminating: boolean;
}

describe('kubectl drain honours a PodDisruptionBudget', { timeout: 600_000 }, () => {
  let k: K8tsServer;

  const kubectl = (...args: string[]) => k.kubectlOk(...args);
  const podsOf = async (app: string): Promise<PodView[]> => {
    const list = JSON.parse(await kubectl('get', 'pods', '-l', `app=${app}`, '-o', 'json')) as {
      items: {
        metadata: { name: string; deletionTimestamp?: string };
        spec: { nodeName?: string };
        status?: { phase?: string; conditions?: { type: string; status: string }[] };
      }[];
    };
    return list.items.map((p) => ({
      name: p.metadata.name,
      node: p.spec.nodeName ?? '',
      phase: p.status?.phase ?? '',
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      terminating: p.metadata.deletionTimestamp !== undefined,
    }));
  };
  const webPods = () => podsOf('web');
  const pdbStatus = async () =>
    (
      JSON.parse(await kubectl('get', 'pdb', 'web', '-o', 'json')) as {
        metadata: { generation: number };
        status?: { observedGeneration?: number; disruptionsAllowed: number; currentHealthy: number };
      }
    ).status;

  before(async () => {
    await buildImages(['busybox', 'pause'], 600_000);
    k = await startK8tsServer({
      agent: true,
      args: ['--node-name', NODE, '--node-ip', '127.0.0.1', '--cluster-cidr', await freeClusterCIDR()],
      readyTimeoutMs: 60_000,
    });
  });

  after(async () => {
    try {
      await k?.stop();
    } finally {
      await removeNodeFromDocker(NODE);
    }
  });

  it('discovery offers policy/v1 eviction, so kubectl evicts rather than deletes', async () => {
    const out = await kubectl('get', '--raw', '/api/v1');
    const eviction = (
      JSON.parse(out) as { resources: { name: string; group?: string; version?: string }[] }
    ).resources.find((r) => r.name === 'pods/eviction');
    assert.deepEqual([eviction?.group, eviction?.version], ['policy', 'v1']);
    assert.match(
      await kubectl('api-resources', '--api-group', 'policy'),
      /poddisruptionbudgets\s+pdb\s+policy\/v1\s+true\s+PodDisruptionBudget/,
    );
  });

  it('the budget of a one-pod Deployment allows no disruption', async () => {
    await until('node Ready', async () => {
      const r = await k.kubectl(
        'get',
        'node',
        NODE,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      );
      return r.stdout === 'True' ? true : undefined;
    });
    const applied = await k.kubectlIn(MANIFEST, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    const ds = await k.kubectlIn(DAEMONSET, 'apply', '-f', '-');
    assert.equal(ds.code, 0, ds.stderr);
    await until('web pod Ready', async () => {
      const ps = await webPods();
      return ps.length === 1 && ps[0]!.ready ? ps : undefined;
    });
    await until('the DaemonSet pod Ready', async () => {
      const ps = await podsOf('agent');
      return ps.length === 1 && ps[0]!.ready ? ps : undefined;
    });
    await until('PDB observed with currentHealthy 1', async () => {
      const s = await pdbStatus();
      return s?.observedGeneration === 1 && s.currentHealthy === 1 ? s : undefined;
    });
    const table = await kubectl('get', 'pdb', 'web');
    assert.match(
      table,
      /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\nweb\s+1\s+N\/A\s+0\s+\S+\n$/,
    );
  });

  it('drain cordons the node, leaves the DaemonSet pod, and retries the refused eviction; relaxing the budget lets it complete', async () => {
    const [victim] = await webPods();
    const [daemon] = await podsOf('agent');
    const drain = start(
      'kubectl',
      [
        '--kubeconfig',
        k.kubeconfig,
        'drain',
        NODE,
        '--ignore-daemonsets',
        '--delete-emptydir-data',
        '--timeout',
        '240s',
      ],
      { timeoutMs: 300_000 },
    );
    let result: CommandResult | undefined;
    void drain.done.then((r) => (result = r));
    const refused = `error when evicting pods/"${victim!.name}" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`;
    // Two refusals: kubectl keeps retrying while the budget holds.
    await until('drain retries the refused eviction', () => {
      assert.equal(result, undefined, `drain ended early: ${JSON.stringify(result)}`);
      return drain.output().stderr.split(refused).length > 2 ? true : undefined;
    });
    assert.equal(await kubectl('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}'), 'true');
    const still = await webPods();
    assert.deepEqual(
      still.map((p) => [p.name, p.terminating]),
      [[victim!.name, false]],
      'the guarded pod is still there',
    );

    await kubectl('patch', 'pdb', 'web', '--type', 'merge', '-p', '{"spec":{"minAvailable":0}}');
    const done = await drain.done;
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, new RegExp(`pod/${victim!.name} evicted`));
    assert.match(done.stdout, new RegExp(`node/${NODE} drained`));
    assert.match(
      done.stdout + done.stderr,
      new RegExp(`Warning: ignoring DaemonSet-managed Pods: default/${daemon!.name}`),
    );
    assert.deepEqual(
      (await podsOf('agent')).map((p) => [p.name, p.terminating]),
      [[daemon!.name, false]],
      'the DaemonSet pod is not evicted',
    );

    // The replacement cannot land on the cordoned node; uncordon lets it run.
    const pending = await until('a Pending replacement', async () => {
      const ps = await webPods();
      return ps.length === 1 && ps[0]!.name !== victim!.name && ps[0]!.phase === 'Pending'
        ? ps[0]
        : undefined;
    });
    assert.equal(pending.node, '');
    await kubectl('uncordon', NODE);
    await until('the replacement Ready on the node', async () => {
      const ps = await webPods();
      return ps.length === 1 && ps[0]!.ready && ps[0]!.node === NODE ? ps : undefined;
    });
  });
});
