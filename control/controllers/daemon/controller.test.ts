/**
 * The DaemonSet controller against the real in-process API server, the real scheduler and
 * a FakeKubelet playing the nodes (pods become Running, and Ready unless their image is
 * `bad`): placement by nodeSelector and taints, nodes joining and leaving, RollingUpdate
 * with maxUnavailable and with maxSurge, OnDelete, history and `kubectl rollout`, and
 * minReadySeconds on an injected FakeClock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { resources } from '../../../api/client/resource.js';
import { isPodReady } from '../../../api/podutil.js';
import type { ControllerRevision, DaemonSet, Node, Pod } from '../../../api/types.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { Scheduler } from '../../scheduler/scheduler.js';
import { garbageCollectorController } from '../garbagecollector/index.js';
import { startControllers, until, type ControllerTest } from '../testing.js';
import { daemonSetController } from './index.js';

const NS = 'default';

function makeDS(
  name: string,
  spec: Partial<DaemonSet['spec']> = {},
  podSpec: Partial<Pod['spec']> = {},
): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: NS },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'v1' }], ...podSpec },
      },
      ...spec,
    },
  };
}

interface Cluster {
  c: ControllerTest;
  stop(): Promise<void>;
}

async function startCluster(nodes: Node[], clock?: FakeClock): Promise<Cluster> {
  const c = await startControllers({
    nodes,
    controllers: { daemonset: daemonSetController, garbagecollector: garbageCollectorController },
    ready: (pod) => pod.spec.containers[0]?.image !== 'bad',
    ...(clock ? { clock } : {}),
  });
  const ac = new AbortController();
  const scheduling = new Scheduler({
    client: c.api.client,
    podInitialBackoffMs: 100,
    podMaxBackoffMs: 200,
  }).run(ac.signal);
  return {
    c,
    stop: async () => {
      ac.abort();
      await scheduling;
      await c.stop();
    },
  };
}

async function podsOf(c: ControllerTest, app: string): Promise<Pod[]> {
  return (await c.api.client.list<Pod>(resources.pods, { namespace: NS, labelSelector: `app=${app}` })).items;
}

const live = (pods: Pod[]) => pods.filter((p) => !p.metadata.deletionTimestamp);
const image = (p: Pod) => p.spec.containers[0]?.image;

async function getDS(c: ControllerTest, name: string): Promise<DaemonSet> {
  return c.api.client.get<DaemonSet>(resources.daemonsets, NS, name);
}

async function setImage(c: ControllerTest, name: string, img: string): Promise<void> {
  await c.api.client.patch(resources.daemonsets, NS, name, 'strategic', {
    spec: { template: { spec: { containers: [{ name: 'c', image: img }] } } },
  });
}

/** Waits until every node in `nodes` runs exactly one live, Ready pod of `app` with `img`. */
function untilRolled(c: ControllerTest, app: string, nodes: string[], img: string): Promise<Pod[]> {
  return until(
    `${app}: one Ready ${img} pod on each of ${nodes}`,
    async () => {
      const pods = live(await podsOf(c, app));
      if (pods.length !== nodes.length) return false;
      const ok = pods.every((p) => image(p) === img && isPodReady(p));
      const on = pods.map((p) => p.spec.nodeName).sort();
      return ok && JSON.stringify(on) === JSON.stringify([...nodes].sort()) && pods;
    },
    30_000,
  );
}

describe('DaemonSet controller', () => {
  let cl: Cluster;
  let c: ControllerTest;
  before(async () => {
    cl = await startCluster([
      makeNode('n1', { labels: { role: 'web' } }),
      makeNode('n2', {
        labels: { role: 'web' },
        taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }],
      }),
      makeNode('n3', { labels: { role: 'db' } }),
      makeNode('n4', { labels: { role: 'web' }, unschedulable: true }),
    ]);
    c = cl.c;
  });
  after(() => cl.stop());

  it('places one pod per eligible node: nodeSelector, untolerated taints, unschedulable tolerated', async () => {
    await c.api.client.create(resources.daemonsets, makeDS('sel', {}, { nodeSelector: { role: 'web' } }));
    const pods = await untilRolled(c, 'sel', ['n1', 'n4'], 'v1');
    for (const pod of pods) {
      assert.deepEqual(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, {
        nodeSelectorTerms: [
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: [pod.spec.nodeName] }] },
        ],
      });
      const keys = (pod.spec.tolerations ?? []).map((t) => `${t.key}:${t.effect}`);
      for (const k of [
        'node.kubernetes.io/not-ready:NoExecute',
        'node.kubernetes.io/unreachable:NoExecute',
        'node.kubernetes.io/disk-pressure:NoSchedule',
        'node.kubernetes.io/memory-pressure:NoSchedule',
        'node.kubernetes.io/pid-pressure:NoSchedule',
        'node.kubernetes.io/unschedulable:NoSchedule',
      ])
        assert.ok(keys.includes(k), `${k} in ${keys}`);
      assert.ok(!keys.includes('node.kubernetes.io/network-unavailable:NoSchedule'), 'not hostNetwork');
      assert.equal(pod.metadata.labels?.['pod-template-generation'], '1');
      assert.match(pod.metadata.labels?.['controller-revision-hash'] ?? '', /^[a-z0-9]+$/);
      assert.equal(pod.metadata.ownerReferences?.[0]?.kind, 'DaemonSet');
    }
    const ds = await until('status counted', async () => {
      const d = await getDS(c, 'sel');
      return d.status?.numberAvailable === 2 && d;
    });
    assert.deepEqual(
      {
        desired: ds.status?.desiredNumberScheduled,
        current: ds.status?.currentNumberScheduled,
        ready: ds.status?.numberReady,
        updated: ds.status?.updatedNumberScheduled,
        misscheduled: ds.status?.numberMisscheduled,
        unavailable: ds.status?.numberUnavailable,
        observed: ds.status?.observedGeneration,
      },
      {
        desired: 2,
        current: 2,
        ready: 2,
        updated: 2,
        misscheduled: 0,
        // omitempty upstream: a zero numberUnavailable is not in the object.
        unavailable: undefined,
        observed: ds.metadata.generation,
      },
    );
    // A DaemonSet tolerating the taint runs on n2 too.
    await c.api.client.create(
      resources.daemonsets,
      makeDS('tol', {}, { tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] }),
    );
    await untilRolled(c, 'tol', ['n1', 'n2', 'n3', 'n4'], 'v1');
  });

  it('gives a joining node a pod and takes it from a node that leaves or stops matching', async () => {
    await c.api.client.create(resources.nodes, makeNode('n5', { labels: { role: 'web' } }));
    await until('a sel pod bound to n5', async () =>
      live(await podsOf(c, 'sel')).some((p) => p.spec.nodeName === 'n5'),
    );
    await c.api.client.delete(resources.nodes, '', 'n5');
    await until('no live sel pod for n5', async () =>
      live(await podsOf(c, 'sel')).every((p) => p.spec.nodeName !== 'n5'),
    );
    // n4 stops matching the nodeSelector: its pod goes (misscheduled until then).
    await c.api.client.patch(resources.nodes, '', 'n4', 'merge', { metadata: { labels: { role: 'db' } } });
    await untilRolled(c, 'sel', ['n1'], 'v1');
    await until('desired 1', async () => (await getDS(c, 'sel')).status?.desiredNumberScheduled === 1);
  });

  it('RollingUpdate with maxUnavailable 1 replaces one pod at a time and waits for it to be available', async () => {
    await c.api.client.create(
      resources.daemonsets,
      makeDS('roll', {}, { tolerations: [{ operator: 'Exists' }] }),
    );
    const all = ['n1', 'n2', 'n3', 'n4'];
    await untilRolled(c, 'roll', all, 'v1');
    // New pods never become Ready: only one node may be without an available pod.
    await setImage(c, 'roll', 'bad');
    const stuck = await until('one bad pod, three v1', async () => {
      const ds = await getDS(c, 'roll');
      const pods = live(await podsOf(c, 'roll'));
      const bad = pods.filter((p) => image(p) === 'bad' && p.status?.phase === 'Running');
      const old = pods.filter((p) => image(p) === 'v1');
      return (
        bad.length === 1 &&
        old.length === 3 &&
        ds.status?.observedGeneration === ds.metadata.generation &&
        ds.status?.updatedNumberScheduled === 1 &&
        ds.status?.numberUnavailable === 1 &&
        ds
      );
    });
    assert.equal(stuck.metadata.annotations?.['deprecated.daemonset.template.generation'], '2');
    // A fixed image completes the rollout.
    await setImage(c, 'roll', 'v2');
    const pods = await untilRolled(c, 'roll', all, 'v2');
    assert.ok(pods.every((p) => p.metadata.labels?.['pod-template-generation'] === '3'));
  });

  it('RollingUpdate with maxSurge 1 starts the new pod next to the old one and deletes the old once available', async () => {
    await c.api.client.create(
      resources.daemonsets,
      makeDS(
        'surge',
        { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } },
        { nodeSelector: { role: 'web' } },
      ),
    );
    await untilRolled(
      c,
      'surge',
      ['n1', 'n2'].filter((n) => n !== 'n2'),
      'v1',
    );
    await c.api.client.patch(resources.nodes, '', 'n3', 'merge', { metadata: { labels: { role: 'web' } } });
    await untilRolled(c, 'surge', ['n1', 'n3'], 'v1');
    await setImage(c, 'surge', 'bad');
    await until('one node with old and new pod, the other untouched', async () => {
      const pods = live(await podsOf(c, 'surge'));
      const bad = pods.filter((p) => image(p) === 'bad' && p.status?.phase === 'Running');
      const old = pods.filter((p) => image(p) === 'v1' && isPodReady(p));
      return (
        bad.length === 1 && old.length === 2 && old.some((p) => p.spec.nodeName === bad[0]!.spec.nodeName)
      );
    });
    await setImage(c, 'surge', 'v2');
    await untilRolled(c, 'surge', ['n1', 'n3'], 'v2');
  });

  it('OnDelete replaces a pod only when it is deleted', async () => {
    await c.api.client.create(
      resources.daemonsets,
      makeDS('ondel', { updateStrategy: { type: 'OnDelete' } }, { nodeSelector: { role: 'web' } }),
    );
    await untilRolled(c, 'ondel', ['n1', 'n3'], 'v1');
    await setImage(c, 'ondel', 'v2');
    await until('the new generation observed, nothing updated', async () => {
      const ds = await getDS(c, 'ondel');
      return (
        ds.status?.observedGeneration === ds.metadata.generation &&
        ds.status?.updatedNumberScheduled === undefined
      );
    });
    assert.ok(live(await podsOf(c, 'ondel')).every((p) => image(p) === 'v1'));
    const victim = (await podsOf(c, 'ondel')).find((p) => p.spec.nodeName === 'n1')!;
    await c.api.client.delete(resources.pods, NS, victim.metadata.name!);
    await until('n1 runs v2, n3 still v1', async () => {
      const pods = live(await podsOf(c, 'ondel'));
      return (
        pods.length === 2 &&
        pods.some((p) => p.spec.nodeName === 'n1' && image(p) === 'v2' && isPodReady(p)) &&
        pods.some((p) => p.spec.nodeName === 'n3' && image(p) === 'v1')
      );
    });
  });

  it('keeps history in ControllerRevisions, and kubectl rollout status/history/undo work', async () => {
    const revs = async () =>
      (
        await c.api.client.list<ControllerRevision>(resources.controllerrevisions, {
          namespace: NS,
          labelSelector: 'app=roll',
        })
      ).items.sort((a, b) => a.revision - b.revision);
    const r = await revs();
    assert.deepEqual(
      r.map((x) => x.revision),
      [1, 2, 3],
    );
    const cur = r[2]!;
    assert.equal(cur.metadata.name, `roll-${cur.metadata.labels?.['controller-revision-hash']}`);
    assert.deepEqual(
      (cur.data as { spec: { template: { $patch: string } } }).spec.template.$patch,
      'replace',
    );

    const status = await c.api.kubectl('rollout', 'status', 'daemonset/roll', '--timeout=20s');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /daemon set "roll" successfully rolled out/);
    const history = await c.api.kubectl('rollout', 'history', 'daemonset/roll');
    assert.equal(history.code, 0, history.stderr);
    assert.match(history.stdout, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n3\s+<none>/);
    const one = await c.api.kubectl('rollout', 'history', 'daemonset/roll', '--revision=1');
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /Image:\s+v1/);

    const undo = await c.api.kubectl('rollout', 'undo', 'daemonset/roll', '--to-revision=1');
    assert.equal(undo.code, 0, undo.stderr);
    assert.match(undo.stdout, /daemonset.apps\/roll rolled back/);
    await untilRolled(c, 'roll', ['n1', 'n2', 'n3', 'n4'], 'v1');
    // The old template is current again: revision 1 becomes revision 4.
    await until('revision 1 renumbered 4', async () => {
      const now = await revs();
      return now.find((x) => x.metadata.name === r[0]!.metadata.name)?.revision === 4;
    });
  });

  it('adopts a matching orphan instead of creating a second pod, and kubectl delete takes pods and revisions', async () => {
    // An orphan on n1 matching the selector of a new DaemonSet is adopted, not doubled.
    await c.api.client.create(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'orphan', namespace: NS, labels: { app: 'adopt' } },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'v1' }] },
    });
    // OnDelete: the adopted pod (no controller-revision-hash) is kept, not rolled.
    await c.api.client.create(
      resources.daemonsets,
      makeDS('adopt', { updateStrategy: { type: 'OnDelete' } }, { nodeSelector: { role: 'web' } }),
    );
    const pods = await untilRolled(c, 'adopt', ['n1', 'n3'], 'v1');
    const orphan = pods.find((p) => p.metadata.name === 'orphan');
    assert.equal(orphan?.metadata.ownerReferences?.[0]?.kind, 'DaemonSet');
    assert.equal(orphan?.spec.nodeName, 'n1');
    const del = await c.api.kubectl('delete', 'daemonset', 'adopt', '-n', NS, '--wait=false');
    assert.equal(del.code, 0, del.stderr);
    await until('pods and revisions of adopt gone', async () => {
      const revs = await c.api.client.list(resources.controllerrevisions, {
        namespace: NS,
        labelSelector: 'app=adopt',
      });
      return (await podsOf(c, 'adopt')).length === 0 && revs.items.length === 0;
    });
  });
});

describe('DaemonSet controller with minReadySeconds on a FakeClock', () => {
  let clock: FakeClock;
  let cl: Cluster;
  before(async () => {
    clock = new FakeClock(Date.now());
    cl = await startCluster([makeNode('m1'), makeNode('m2')], clock);
  });
  after(() => cl.stop());

  it('counts pods available only minReadySeconds after they became Ready', async () => {
    const c = cl.c;
    await c.api.client.create(resources.daemonsets, makeDS('mrs', { minReadySeconds: 30 }));
    const pods = await untilRolled(c, 'mrs', ['m1', 'm2'], 'v1');
    const readyAt = Math.max(
      ...pods.map((p) =>
        Date.parse(p.status?.conditions?.find((x) => x.type === 'Ready')?.lastTransitionTime ?? ''),
      ),
    );
    await until('ready 2, available 0', async () => {
      const ds = await getDS(c, 'mrs');
      return (
        ds.status?.numberReady === 2 &&
        ds.status.numberAvailable === undefined &&
        ds.status.numberUnavailable === 2
      );
    });
    assert.ok(clock.now() < readyAt + 30_000);
    // Past minReadySeconds; the controller looks again on the timers it set (every 30 s of fake time).
    await clock.advance(readyAt + 31_000 - clock.now());
    await until('available 2', async () => {
      if ((await getDS(c, 'mrs')).status?.numberAvailable === 2) return true;
      await clock.advance(30_000);
      return false;
    });
  });

  it('replaces a failed pod, and backs off (1 s, FakeClock) when the next one fails too', async () => {
    const c = cl.c;
    await c.api.client.create(
      resources.daemonsets,
      makeDS('fail', {}, { nodeSelector: { 'kubernetes.io/hostname': 'm1' } }),
    );
    const fail = async (pod: Pod) =>
      c.api.client.patch(
        resources.pods,
        NS,
        pod.metadata.name!,
        'merge',
        { status: { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False' }] } },
        {
          subresource: 'status',
        },
      );
    const [first] = await untilRolled(c, 'fail', ['m1'], 'v1');
    await fail(first!);
    const [second] = await until('a new Ready pod replaces the failed one', async () => {
      const pods = await untilRolled(c, 'fail', ['m1'], 'v1');
      return pods[0]!.metadata.name !== first!.metadata.name && pods;
    });
    await fail(second!);
    // The sync that counts the failure (numberReady 0) is the one that would delete the pod.
    await until('status shows the failure', async () => (await getDS(c, 'fail')).status?.numberReady === 0);
    const kept = await c.api.client.get<Pod>(resources.pods, NS, second!.metadata.name!);
    assert.equal(kept.metadata.deletionTimestamp, undefined, 'in backoff: not deleted yet');
    await clock.advance(2_000);
    await until('replaced after the backoff', async () => {
      const pods = live(await podsOf(c, 'fail'));
      return pods.length === 1 && pods[0]!.metadata.name !== second!.metadata.name && isPodReady(pods[0]!);
    });
  });
});
