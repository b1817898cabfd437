// The controllers and the scheduler inside the real `k8ts server` (the built CLI), driven
// with the real kubectl, with simulated nodes (test/support/fake-nodes.ts: Node objects,
// Lease renewals and pod status through the API; no agent, no Docker). Issue 4's
// acceptance: the spring fixture becomes one ReplicaSet and five bound pods, pods are
// replaced and scaled, an oversized pod stays Pending with the scheduler's explanation,
// rollouts follow `kubectl rollout`, a silent node's pods move, and of two control
// processes on one etcd only the leader acts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InformerFactory } from '../api/client/factory.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import { isPodReady } from '../api/podutil.js';
import type { CoreEvent, Endpoints, Lease, Node, Pod, ReplicaSet } from '../api/types.js';
import { startEtcd, type EtcdMember } from './support/etcd.js';
import { FakeKubelet, makeNode } from './support/fake-nodes.js';
import { startK8tsServer, type K8tsServer } from './support/k8ts-server.js';
import { until as waitUntil } from './support/wait.js';

const FIXTURE = new URL('../../shared/fixtures/spring-deployment.yaml', import.meta.url);
const SELECTOR = 'app=backend-app';

/** Polls `check` (support/wait.ts) with this file's deadline (30_000 ms) and pace (50 ms). */
const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 30_000) =>
  waitUntil(what, check, ms, 50);

async function pods(client: RestClient, selector = SELECTOR): Promise<Pod[]> {
  return (await client.list<Pod>(resources.pods, { namespace: 'default', labelSelector: selector })).items;
}

const active = (ps: Pod[]) => ps.filter((p) => !p.metadata.deletionTimestamp);
const running = (ps: Pod[]) => active(ps).filter((p) => p.status?.phase === 'Running' && p.spec.nodeName);

describe('controllers and scheduler in k8ts server', () => {
  let k: K8tsServer;
  let client: RestClient;
  let kubelet: FakeKubelet;

  before(async () => {
    k = await startK8tsServer({
      args: [
        '--node-monitor-grace-period',
        '3s',
        '--node-monitor-period',
        '1s',
        '--default-unreachable-toleration-seconds',
        '2',
        '--default-not-ready-toleration-seconds',
        '2',
      ],
    });
    client = RestClient.fromKubeconfig(k.kubeconfig);
    kubelet = new FakeKubelet({
      client,
      nodes: [
        makeNode('node-a', { cpu: '2', memory: '4Gi' }),
        makeNode('node-b', { cpu: '2', memory: '4Gi' }),
      ],
      leaseRenewMs: 500,
    });
    await kubelet.start();
  });
  after(async () => {
    await kubelet?.stop();
    client?.close();
    await k?.stop();
  });

  it('applying the spring fixture yields one ReplicaSet and five pods bound across both nodes', async () => {
    const r = await k.kubectl('apply', '-f', FIXTURE.pathname);
    assert.equal(r.code, 0, r.stderr);
    const ps = await until('5 running pods', async () => {
      const ps = running(await pods(client));
      return ps.length === 5 ? ps : undefined;
    });
    assert.deepEqual([...new Set(ps.map((p) => p.spec.nodeName))].sort(), ['node-a', 'node-b']);
    const rss = (await client.list<ReplicaSet>(resources.replicasets, { namespace: 'default' })).items;
    assert.equal(rss.length, 1);
    assert.match(rss[0]!.metadata.name!, /^spring-deployment-[bcdfghjklmnpqrstvwxz2456789]+$/);
    for (const p of ps) assert.equal(p.metadata.ownerReferences?.[0]?.uid, rss[0]!.metadata.uid);
    const status = await k.kubectl('rollout', 'status', 'deployment/spring-deployment', '--timeout=60s');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /successfully rolled out/);
  });

  it('a deleted pod is replaced', async () => {
    const victim = running(await pods(client))[0]!.metadata.name!;
    const r = await k.kubectl('delete', 'pod', victim);
    assert.equal(r.code, 0, r.stderr);
    await until('5 running pods without the deleted one', async () => {
      const ps = running(await pods(client));
      return ps.length === 5 && !ps.some((p) => p.metadata.name === victim) ? true : undefined;
    });
  });

  it('scaling works both ways', async () => {
    for (const n of [7, 2]) {
      const r = await k.kubectl('scale', 'deployment/spring-deployment', `--replicas=${n}`);
      assert.equal(r.code, 0, r.stderr);
      await until(`${n} pods`, async () => {
        const ps = await pods(client);
        return ps.length === n && running(ps).length === n ? true : undefined;
      });
    }
  });

  it('a pod too big for any node stays Pending and says why', async () => {
    const r = await k.kubectlIn(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'huge', namespace: 'default' },
        spec: {
          containers: [{ name: 'c', image: 'spring-server:1.0', resources: { requests: { cpu: '64' } } }],
        },
      }),
      'apply',
      '-f',
      '-',
    );
    assert.equal(r.code, 0, r.stderr);
    const pod = await until('PodScheduled=False', async () => {
      const p = await client.get<Pod>(resources.pods, 'default', 'huge');
      return p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False')
        ? p
        : undefined;
    });
    assert.equal(pod.status?.phase, 'Pending');
    assert.equal(pod.spec.nodeName, undefined);
    const describe = await until('the FailedScheduling event in describe', async () => {
      const d = await k.kubectl('describe', 'pod', 'huge');
      return /FailedScheduling/.test(d.stdout) ? d.stdout : undefined;
    });
    assert.match(describe, /0\/2 nodes are available: 2 Insufficient cpu/);
    await k.kubectl('delete', 'pod', 'huge', '--wait=false');
  });

  it('a rolling update keeps availability; rollout history and undo behave as Kubernetes', async () => {
    // 2 replicas, maxUnavailable 25% → 0, maxSurge 25% → 1: never fewer than 2 ready pods, never more than 3.
    const factory = new InformerFactory({ client });
    const informer = factory.informerFor<Pod>(resources.pods, {
      namespace: 'default',
      labelSelector: SELECTOR,
    });
    const violations: string[] = [];
    let samples = 0;
    const check = () => {
      samples++;
      const all = informer.lister().list();
      const ready = all.filter((p) => !p.metadata.deletionTimestamp && isPodReady(p)).length;
      const total = all.filter((p) => !p.metadata.deletionTimestamp).length;
      if (ready < 2 || total > 3) violations.push(`ready ${ready}, total ${total}`);
    };
    informer.addEventHandler({ onAdd: check, onUpdate: check, onDelete: check });
    factory.start();
    await factory.waitForCacheSync(10_000);
    try {
      const set = await k.kubectl(
        'set',
        'image',
        'deployment/spring-deployment',
        'spring-container=spring-server:1.1',
      );
      assert.equal(set.code, 0, set.stderr);
      const status = await k.kubectl('rollout', 'status', 'deployment/spring-deployment', '--timeout=60s');
      assert.equal(status.code, 0, status.stderr);
      const ps = await until('two running 1.1 pods', async () => {
        const ps = await pods(client);
        return ps.length === 2 &&
          running(ps).every((p) => p.spec.containers[0]!.image === 'spring-server:1.1')
          ? ps
          : undefined;
      });
      assert.equal(ps.length, 2);
    } finally {
      await factory.shutdown();
    }
    assert.ok(samples > 0, 'the pod informer saw the rollout');
    assert.deepEqual(violations, []);

    const history = await k.kubectl('rollout', 'history', 'deployment/spring-deployment');
    assert.equal(history.code, 0, history.stderr);
    assert.match(history.stdout, /^1\s/m);
    assert.match(history.stdout, /^2\s/m);

    const undo = await k.kubectl('rollout', 'undo', 'deployment/spring-deployment');
    assert.equal(undo.code, 0, undo.stderr);
    const back = await k.kubectl('rollout', 'status', 'deployment/spring-deployment', '--timeout=60s');
    assert.equal(back.code, 0, back.stderr);
    await until('pods back on 1.0', async () => {
      const ps = await pods(client);
      return ps.length === 2 && running(ps).every((p) => p.spec.containers[0]!.image === 'spring-server:1.0')
        ? true
        : undefined;
    });
    const after = await k.kubectl('rollout', 'history', 'deployment/spring-deployment');
    assert.match(after.stdout, /^3\s/m, 'the undone revision comes back as revision 3');
  });

  it('a node that stops renewing its lease goes NotReady and its pods move to the other node', async () => {
    const ps = running(await pods(client));
    const silent = ps[0]!.spec.nodeName!;
    const other = silent === 'node-a' ? 'node-b' : 'node-a';
    kubelet.pauseLease(silent);
    const node = await until(`${silent} Ready=Unknown and tainted`, async () => {
      const n = await client.get<Node>(resources.nodes, undefined, silent);
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
      const tainted = n.spec?.taints?.some(
        (t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute',
      );
      return ready?.status === 'Unknown' && tainted ? n : undefined;
    });
    assert.ok(node);
    const nr = await k.kubectl('get', 'node', silent);
    assert.match(nr.stdout, /NotReady/);
    await until(`all active pods on ${other}`, async () => {
      const ps = active(await pods(client));
      return ps.length === 2 && ps.every((p) => p.spec.nodeName === other && p.status?.phase === 'Running')
        ? true
        : undefined;
    });
    kubelet.resumeLease(silent);
    await until(`${silent} untainted`, async () => {
      const n = await client.get<Node>(resources.nodes, undefined, silent);
      return !(n.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/')) ? true : undefined;
    });
  });
});

describe('two control processes against one etcd', () => {
  let etcd: EtcdMember;
  const servers: K8tsServer[] = [];
  let client: RestClient | undefined;
  let kubelet: FakeKubelet | undefined;

  before(async () => {
    etcd = await startEtcd();
    const args = [
      '--datastore',
      'etcd',
      '--etcd-endpoints',
      etcd.endpoints.join(','),
      '--leader-elect-lease-duration',
      '3s',
      '--leader-elect-renew-deadline',
      '2s',
      '--leader-elect-retry-period',
      '500ms',
    ];
    servers.push(await startK8tsServer({ args }), await startK8tsServer({ args }));
  });
  after(async () => {
    await kubelet?.stop();
    client?.close();
    for (const s of servers) await s.stop();
    await etcd?.stop();
  });

  const identityOf = (s: K8tsServer): string => {
    const m = /"identity":"([^"]+)"/.exec(s.logs());
    assert.ok(m, 'the server logs its identity');
    return m[1]!;
  };

  async function holder(c: RestClient, name: string): Promise<string | undefined> {
    const lease = await c.get<Lease>(resources.leases, 'kube-system', name);
    return lease.spec?.holderIdentity || undefined;
  }

  /** Creates `n` unscheduled pods and waits until all are bound; returns every nodeName each pod ever had. */
  async function createAndBind(
    c: RestClient,
    prefix: string,
    n: number,
    seen: Map<string, Set<string>>,
  ): Promise<void> {
    for (let i = 0; i < n; i++) {
      await c.create(resources.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${prefix}-${i}`, namespace: 'default', labels: { batch: prefix } },
        spec: { containers: [{ name: 'c', image: 'spring-server:1.0' }] },
      });
    }
    await until(`${n} ${prefix} pods bound`, () =>
      [...Array(n).keys()].every((i) => (seen.get(`${prefix}-${i}`)?.size ?? 0) > 0) ? true : undefined,
    );
  }

  it('only the leader schedules; killing it hands over and no pod is bound twice', async () => {
    const [a, b] = servers as [K8tsServer, K8tsServer];
    const ids = new Map([
      [identityOf(a), a],
      [identityOf(b), b],
    ]);
    client = RestClient.fromKubeconfig(a.kubeconfig);
    const c = client;
    const leaderId = await until('a scheduler leader', () => holder(c, 'kube-scheduler'));
    assert.ok(ids.has(leaderId), `the leader ${leaderId} is one of the two processes`);
    const managerId = await until('a controller manager leader', () => holder(c, 'kube-controller-manager'));
    assert.ok(ids.has(managerId), `the controller manager leader ${managerId} is one of the two processes`);
    const leader = ids.get(leaderId)!;
    const survivor = leader === a ? b : a;
    // Each live API server is an endpoint of the kubernetes Service (both on one address
    // here, so one Endpoints subset per port).
    const portOf = (s: K8tsServer) => Number(new URL(s.url).port);
    const endpointPorts = async (through: RestClient) =>
      (await through.get<Endpoints>(resources.endpoints, 'default', 'kubernetes')).subsets
        ?.flatMap((sub) => (sub.ports ?? []).map((p) => p.port))
        .sort((x, y) => x - y)
        .join(',');
    const both = [portOf(a), portOf(b)].sort((x, y) => x - y).join(',');
    await until('both API servers in the kubernetes endpoints', async () =>
      (await endpointPorts(c)) === both ? true : undefined,
    );

    // Watch every binding through the survivor (it outlives the leader).
    const sc = RestClient.fromKubeconfig(survivor.kubeconfig);
    const factory = new InformerFactory({ client: sc });
    const informer = factory.informerFor<Pod>(resources.pods, {
      namespace: 'default',
      labelSelector: 'batch',
    });
    const seen = new Map<string, Set<string>>();
    const record = (p: Pod) => {
      if (!p.spec.nodeName) return;
      const s = seen.get(p.metadata.name!) ?? new Set<string>();
      s.add(p.spec.nodeName);
      seen.set(p.metadata.name!, s);
    };
    informer.addEventHandler({ onAdd: record, onUpdate: (_, p) => record(p) });
    factory.start();
    await factory.waitForCacheSync(10_000);

    kubelet = new FakeKubelet({
      client: sc,
      nodes: [makeNode('etcd-node-a'), makeNode('etcd-node-b')],
    });
    await kubelet.start();
    try {
      await createAndBind(sc, 'before', 10, seen);

      const killedAt = Date.now();
      process.kill(leader.pid, 'SIGKILL');
      // Its endpoint leaves once its lease (15 s) has expired as the survivor sees it.
      const endpointGone = until(
        'the killed API server out of the kubernetes endpoints',
        async () =>
          (await endpointPorts(sc)) === String(portOf(survivor)) ? Date.now() - killedAt : undefined,
        45_000,
      );
      endpointGone.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
      const next = await until('a new scheduler leader', async () => {
        const h = await holder(sc, 'kube-scheduler');
        return h !== undefined && h !== leaderId ? h : undefined;
      });
      assert.equal(next, identityOf(survivor));
      process.stdout.write(`# scheduler handover took ${Date.now() - killedAt} ms (lease 3 s)\n`);

      await createAndBind(sc, 'after', 10, seen);
      for (const [name, nodes] of seen) assert.equal(nodes.size, 1, `${name} was bound to ${[...nodes]}`);
      // Events are best effort (the killed leader may not have written its last ones), so:
      // the survivor reports every pod it bound, and no pod has two Scheduled events.
      const scheduled = async () => {
        const perPod = new Map<string, number>();
        const events = (await sc.list<CoreEvent>(resources.events, { namespace: 'default' })).items;
        for (const e of events.filter((e) => e.reason === 'Scheduled')) {
          perPod.set(e.involvedObject.name!, (perPod.get(e.involvedObject.name!) ?? 0) + (e.count ?? 1));
        }
        return perPod;
      };
      const perPod = await until('Scheduled events for the pods bound after the handover', async () => {
        const m = await scheduled();
        return [...Array(10).keys()].every((i) => m.has(`after-${i}`)) ? m : undefined;
      });
      for (const [name, count] of perPod) assert.equal(count, 1, `${name} has ${count} Scheduled events`);
      process.stdout.write(
        `# the killed API server left the kubernetes endpoints after ${await endpointGone} ms\n`,
      );
    } finally {
      await factory.shutdown();
      await kubelet.stop();
      kubelet = undefined;
      sc.close();
    }
  });
});
