/**
 * The ReplicaSet controller against the real API server, with simulated nodes (FakeKubelet)
 * and a FakeBinder in place of the scheduler. Each test gets its own namespace and its own
 * ControllerManager.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { EventRecorder } from '../../../api/client/events.js';
import { InformerFactory } from '../../../api/client/factory.js';
import { resources } from '../../../api/client/resource.js';
import { realClock } from '../../../api/clock.js';
import type { RestClient } from '../../../api/client/rest.js';
import { controllerOf, getCondition, isPodReady } from '../../../api/podutil.js';
import type { CoreEvent, Pod, ReplicaSet } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { FakeKubelet, makeNode, setPodReady } from '../../../test/support/fake-nodes.js';
import { silentLogger } from '../context.js';
import type { ControllerFactory } from '../context.js';
import { ControllerManager } from '../manager.js';
import { DEFAULT_CONTROLLERS_CONFIG } from '../context.js';
import { ReplicaSetController } from './controller.js';
import { replicaSetController } from './index.js';
import { makeReplicaSet, until } from '../testing.js';
import { FakeBinder, TestClient } from './test-support.js';

let api: TestApi;
let kubelet: FakeKubelet;
let binder: FakeBinder;
let seq = 0;
let stopManager: (() => Promise<void>) | undefined;

before(async () => {
  api = await startTestApi();
  kubelet = new FakeKubelet({ client: api.client, nodes: [makeNode('n1'), makeNode('n2')] });
  await kubelet.start();
  binder = new FakeBinder(api.client, ['n1', 'n2']);
  await binder.start();
});
after(async () => {
  await binder.stop();
  await kubelet.stop();
  await api.stop();
});
afterEach(async () => {
  binder.shouldBind = () => true;
  await stopManager?.();
  stopManager = undefined;
});

/** Starts a ControllerManager running only the replicaset controller. */
function startManager(
  client: RestClient = api.client,
  factory: ControllerFactory = replicaSetController,
): void {
  const ac = new AbortController();
  const done = new ControllerManager({
    client,
    controllers: { replicaset: factory },
    logger: silentLogger,
  }).run(ac.signal);
  stopManager = async () => {
    ac.abort();
    await done;
  };
}

async function namespace(): Promise<string> {
  const name = `rs-${++seq}`;
  await api.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

async function createRS(
  ns: string,
  name: string,
  replicas: number | undefined,
  extra: Partial<ReplicaSet['spec']> = {},
): Promise<ReplicaSet> {
  return api.client.create<ReplicaSet>(
    resources.replicasets,
    makeReplicaSet(ns, name, {
      replicas,
      templateLabels: { app: name, tier: 'web' },
      image: 'nginx:1.25',
      spec: extra,
    }),
  );
}

async function pods(ns: string): Promise<Pod[]> {
  return (await api.client.list<Pod>(resources.pods, { namespace: ns })).items;
}

/** Pods without a deletionTimestamp. */
async function livePods(ns: string): Promise<Pod[]> {
  return (await pods(ns)).filter((p) => !p.metadata.deletionTimestamp);
}

async function getRS(ns: string, name: string): Promise<ReplicaSet> {
  return api.client.get<ReplicaSet>(resources.replicasets, ns, name);
}

async function untilStatus(
  ns: string,
  name: string,
  want: (s: NonNullable<ReplicaSet['status']>, rs: ReplicaSet) => boolean,
  what = 'status',
): Promise<ReplicaSet> {
  return until(`${ns}/${name} ${what}`, async () => {
    const rs = await getRS(ns, name);
    return rs.status && want(rs.status, rs) ? rs : undefined;
  });
}

async function untilLivePods(ns: string, n: number, pred: (p: Pod) => boolean = () => true): Promise<Pod[]> {
  return until(`${n} live pods in ${ns}`, async () => {
    const ps = (await livePods(ns)).filter(pred);
    return ps.length === n ? ps : undefined;
  });
}

const running = (p: Pod): boolean => p.status?.phase === 'Running';

async function events(ns: string, reason: string): Promise<CoreEvent[]> {
  return (await api.client.list<CoreEvent>(resources.events, { namespace: ns })).items.filter(
    (e) => e.reason === reason,
  );
}

async function scale(ns: string, name: string, replicas: number): Promise<void> {
  const r = await api.kubectl('scale', `rs/${name}`, `--replicas=${replicas}`, '-n', ns);
  assert.equal(r.code, 0, r.stderr);
}

describe('ReplicaSet controller', () => {
  it('creates 3 pods that run, each controlled by the ReplicaSet; status and events follow', async () => {
    const ns = await namespace();
    startManager();
    const rs = await createRS(ns, 'web', 3);
    const ps = await untilLivePods(ns, 3, running);
    for (const p of ps) {
      assert.match(p.metadata.name!, /^web-[a-z0-9]{5}$/);
      assert.deepEqual(controllerOf(p), {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: 'web',
        uid: rs.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      });
      assert.deepEqual(p.metadata.labels, { app: 'web', tier: 'web' });
    }
    const got = await untilStatus(ns, 'web', (s) => s.availableReplicas === 3);
    assert.deepEqual(got.status, {
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      observedGeneration: 1,
    });
    const created = await until('3 SuccessfulCreate events', async () => {
      const evs = await events(ns, 'SuccessfulCreate');
      return evs.length === 3 ? evs : undefined;
    });
    assert.deepEqual(
      created.map((e) => e.message).sort(),
      ps.map((p) => `Created pod: ${p.metadata.name}`).sort(),
    );
    for (const e of created) {
      assert.equal(e.type, 'Normal');
      assert.deepEqual([e.involvedObject.kind, e.involvedObject.name], ['ReplicaSet', 'web']);
      assert.equal(e.source?.component, 'replicaset-controller');
    }
    // Steady: no more pods than asked for.
    assert.equal((await pods(ns)).length, 3);
  });

  it('defaults replicas to 1', async () => {
    const ns = await namespace();
    startManager();
    await createRS(ns, 'one', undefined);
    await untilStatus(ns, 'one', (s) => s.readyReplicas === 1);
    assert.equal((await pods(ns)).length, 1);
  });

  it('scales up and down with kubectl scale and with an update, recording SuccessfulDelete', async () => {
    const ns = await namespace();
    startManager();
    await createRS(ns, 'web', 2);
    await untilLivePods(ns, 2, running);
    await scale(ns, 'web', 5);
    await untilLivePods(ns, 5, running);
    await untilStatus(
      ns,
      'web',
      (s, rs) => s.readyReplicas === 5 && s.observedGeneration === rs.metadata.generation,
    );

    const rs = await getRS(ns, 'web');
    await api.client.update(resources.replicasets, { ...rs, spec: { ...rs.spec, replicas: 1 } });
    await until('1 pod left', async () => ((await pods(ns)).length === 1 ? true : undefined));
    const got = await untilStatus(ns, 'web', (s) => s.replicas === 1);
    assert.equal(got.status?.observedGeneration, got.metadata.generation);
    const deleted = await until('4 SuccessfulDelete events', async () => {
      const evs = await events(ns, 'SuccessfulDelete');
      return evs.length === 4 ? evs : undefined;
    });
    for (const e of deleted) assert.match(e.message ?? '', /^Deleted pod: web-[a-z0-9]{5}$/);

    await scale(ns, 'web', 0);
    await until('no pods', async () => ((await pods(ns)).length === 0 ? true : undefined));
    await untilStatus(ns, 'web', (s) => s.replicas === 0);
  });

  it('replaces a deleted pod at once, while the old one is still terminating', async () => {
    const ns = await namespace();
    startManager();
    // A finalizer from the template keeps a deleted pod terminating (deletionTimestamp set,
    // still stored) after the kubelet has confirmed the delete.
    const hold = 'example.com/hold';
    await createRS(ns, 'web', 2, {
      template: {
        metadata: { labels: { app: 'web' }, finalizers: [hold] },
        spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
      },
    });
    const [victim, other] = await untilLivePods(ns, 2, running);
    assert.deepEqual(victim!.metadata.finalizers, [hold]);
    await api.client.delete(resources.pods, ns, victim!.metadata.name!);
    const now = await untilLivePods(ns, 2, (p) => p.metadata.name !== victim!.metadata.name && running(p));
    assert.ok(now.some((p) => p.metadata.name === other!.metadata.name));
    const old = await api.client.get<Pod>(resources.pods, ns, victim!.metadata.name!);
    assert.ok(old.metadata.deletionTimestamp, 'the old pod is still there, terminating');
    await untilStatus(ns, 'web', (s) => s.replicas === 2 && s.readyReplicas === 2);
    assert.equal((await livePods(ns)).length, 2);
    for (const p of await pods(ns))
      await api.client.patch(resources.pods, ns, p.metadata.name!, 'merge', {
        metadata: { finalizers: null },
      });
  });

  it('scales down not-ready pods before ready ones', async () => {
    const ns = await namespace();
    startManager();
    await createRS(ns, 'web', 3);
    const ps = await untilLivePods(ns, 3, (p) => running(p) && isPodReady(p));
    // First the status that has seen all three Ready, so that the next check cannot be
    // met by an older status from before the third became Ready.
    await untilStatus(ns, 'web', (s) => s.readyReplicas === 3);
    const notReady = ps[1]!;
    await setPodReady(api.client, notReady, false);
    // The controller's cache has seen it once its status says so.
    await untilStatus(ns, 'web', (s) => s.readyReplicas === 2 && s.replicas === 3);
    await scale(ns, 'web', 2);
    const left = await untilLivePods(ns, 2);
    assert.deepEqual(
      left.map((p) => p.metadata.name).sort(),
      ps
        .filter((p) => p !== notReady)
        .map((p) => p.metadata.name)
        .sort(),
    );
  });

  it('scales down unscheduled pods before scheduled ones', async () => {
    const ns = await namespace();
    startManager();
    await createRS(ns, 'web', 2);
    const scheduled = await untilLivePods(ns, 2, running);
    binder.shouldBind = (p) => p.metadata.namespace !== ns;
    await scale(ns, 'web', 3);
    const [pending] = await untilLivePods(ns, 1, (p) => !p.spec.nodeName);
    await untilStatus(ns, 'web', (s) => s.replicas === 3);
    await scale(ns, 'web', 2);
    await until('the unscheduled pod gone', async () =>
      (await pods(ns)).some((p) => p.metadata.name === pending!.metadata.name) ? undefined : true,
    );
    assert.deepEqual(
      (await livePods(ns)).map((p) => p.metadata.name).sort(),
      scheduled.map((p) => p.metadata.name).sort(),
    );
  });

  it('adopts a matching orphan and releases a pod whose labels stop matching', async () => {
    const ns = await namespace();
    const orphan = await api.client.create<Pod>(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'orphan', namespace: ns, labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
    });
    startManager();
    const rs = await createRS(ns, 'web', 2);
    const adopted = await until('orphan adopted', async () => {
      const p = await api.client.get<Pod>(resources.pods, ns, 'orphan');
      return controllerOf(p)?.uid === rs.metadata.uid ? p : undefined;
    });
    assert.equal(adopted.metadata.uid, orphan.metadata.uid);
    await untilLivePods(ns, 2, running);
    const got = await untilStatus(ns, 'web', (s) => s.readyReplicas === 2);
    assert.equal(got.status?.fullyLabeledReplicas, 1, 'the orphan lacks the template label tier=web');
    assert.equal((await pods(ns)).length, 2, 'one pod created, not two');

    // Relabel the adopted pod out of the selector: released, and replaced.
    await api.client.patch(resources.pods, ns, 'orphan', 'merge', { metadata: { labels: { app: 'other' } } });
    await until('orphan released', async () => {
      const p = await api.client.get<Pod>(resources.pods, ns, 'orphan');
      return (p.metadata.ownerReferences ?? []).length === 0 ? true : undefined;
    });
    const owned = await untilLivePods(ns, 2, (p) => controllerOf(p)?.uid === rs.metadata.uid && running(p));
    assert.ok(owned.every((p) => p.metadata.name !== 'orphan'));
    assert.equal((await pods(ns)).length, 3);
  });

  it('counts available replicas only after minReadySeconds, and updates them without further pod events', async () => {
    const ns = await namespace();
    const minReadySeconds = 2;
    // Every status the controller writes, with when we saw it.
    const seen: Array<{ at: number; available: number }> = [];
    const stream = await api.client.watch<ReplicaSet>(resources.replicasets, { namespace: ns });
    const watching = (async () => {
      for await (const ev of stream) {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED')
          seen.push({ at: Date.now(), available: ev.object.status?.availableReplicas ?? 0 });
      }
    })();
    try {
      startManager();
      await createRS(ns, 'web', 2, { minReadySeconds });
      await untilStatus(ns, 'web', (s) => s.readyReplicas === 2, 'ready');
      const rs = await untilStatus(ns, 'web', (s) => s.availableReplicas === 2, 'available');
      assert.equal(rs.status?.readyReplicas, 2);
      // The check below covers every status up to the one that counts both available only
      // once the watch has seen that one.
      await until('the watch to see availableReplicas 2', async () =>
        seen.some((s) => s.available === 2) ? true : undefined,
      );
      // No status ever counted a pod available before it had been Ready minReadySeconds.
      const readySince = (await pods(ns)).map((p) =>
        Date.parse(getCondition(p.status?.conditions, 'Ready')!.lastTransitionTime!),
      );
      for (const s of seen) {
        const couldBe = readySince.filter((t) => t + minReadySeconds * 1000 <= s.at).length;
        assert.ok(s.available <= couldBe, `available ${s.available} at ${s.at}, at most ${couldBe}`);
      }
    } finally {
      stream.stop();
      await watching;
    }
  });

  it('sets ReplicaFailure and records FailedCreate while creates fail, and clears it when they succeed', async () => {
    const ns = await namespace();
    const client = new TestClient({ server: api.url });
    client.failPodCreates = 'exceeded quota: compute, requested: pods=1, used: pods=0, limited: pods=0';
    startManager(client);
    try {
      await createRS(ns, 'web', 3);
      const failing = await untilStatus(
        ns,
        'web',
        (s) => getCondition(s.conditions, 'ReplicaFailure') !== undefined,
        'ReplicaFailure',
      );
      const cond = getCondition(failing.status?.conditions, 'ReplicaFailure')!;
      assert.equal(cond.status, 'True');
      assert.equal(cond.reason, 'FailedCreate');
      assert.match(cond.message ?? '', /^pods "web-" is forbidden: exceeded quota/);
      const failed = await until('a FailedCreate event', async () => {
        const evs = await events(ns, 'FailedCreate');
        return evs.length > 0 ? evs : undefined;
      });
      assert.equal(failed[0]!.type, 'Warning');
      assert.equal(failed[0]!.message, `Error creating: ${cond.message}`);
      assert.equal(failing.status?.replicas, 0);

      client.failPodCreates = undefined;
      await untilLivePods(ns, 3, running);
      await untilStatus(
        ns,
        'web',
        (s) => s.readyReplicas === 3 && getCondition(s.conditions, 'ReplicaFailure') === undefined,
        'recovered',
      );
    } finally {
      client.close();
    }
  });

  it('does not over-create while the pod informer lags behind its own creates', async () => {
    const ns = await namespace();
    const client = new TestClient({ server: api.url });
    let controller: ReplicaSetController | undefined;
    startManager(client, (ctx) => (controller = new ReplicaSetController(ctx)));
    try {
      client.hold();
      await createRS(ns, 'web', 3);
      await until('3 pods created', async () => ((await pods(ns)).length === 3 ? true : undefined));
      // More syncs on the stale cache: a spec change (generation 2) and its status writes.
      await api.client.patch(resources.replicasets, ns, 'web', 'merge', { spec: { minReadySeconds: 1 } });
      await untilStatus(ns, 'web', (s) => s.observedGeneration === 2, 'generation 2 observed');
      assert.equal((await pods(ns)).length, 3, 'the second sync created nothing');
      assert.equal(controller!.expectations.getExpectations(`${ns}/web`)?.add, 3);
      assert.equal(client.podCreates, 3);

      client.release();
      await untilLivePods(ns, 3, running);
      await untilStatus(ns, 'web', (s) => s.readyReplicas === 3);
      assert.equal((await pods(ns)).length, 3);
      assert.equal(client.podCreates, 3);
      assert.equal(controller!.expectations.satisfiedExpectations(`${ns}/web`), true);
    } finally {
      client.release();
      client.close();
    }
  });

  it('creates at most burstReplicas pods per sync', async () => {
    const ns = await namespace();
    const client = new TestClient({ server: api.url });
    startManager(client, (ctx) => new ReplicaSetController(ctx, { burstReplicas: 2 }));
    try {
      client.hold();
      await createRS(ns, 'web', 5);
      await untilStatus(ns, 'web', (s) => s.observedGeneration === 1, 'first sync');
      assert.equal((await pods(ns)).length, 2);
      client.release();
      await untilLivePods(ns, 5, running);
      await untilStatus(ns, 'web', (s) => s.readyReplicas === 5);
    } finally {
      client.release();
      client.close();
    }
  });

  it('leaves pods alone while the ReplicaSet is being deleted, and forgets it once gone', async () => {
    const ns = await namespace();
    let controller: ReplicaSetController | undefined;
    startManager(api.client, (ctx) => (controller = new ReplicaSetController(ctx)));
    await createRS(ns, 'web', 2);
    const [victim] = await untilLivePods(ns, 2, running);
    // Orphan deletion: the registry's orphan finalizer keeps the ReplicaSet, with a
    // deletionTimestamp, until a garbage collector (not running here) lets it go.
    await api.client.delete(resources.replicasets, ns, 'web', { propagationPolicy: 'Orphan' });
    await api.client.delete(resources.pods, ns, victim!.metadata.name!, { gracePeriodSeconds: 0 });
    // The sync that wrote replicas: 1 did not replace the pod (its creates would come first).
    await untilStatus(ns, 'web', (s) => s.replicas === 1, 'replicas 1');
    assert.equal((await pods(ns)).length, 1);
    assert.ok(controller!.expectations.getExpectations(`${ns}/web`));
    await api.client.patch(resources.replicasets, ns, 'web', 'merge', { metadata: { finalizers: null } });
    await until('expectations forgotten', async () =>
      controller!.expectations.getExpectations(`${ns}/web`) === undefined ? true : undefined,
    );
    assert.equal((await livePods(ns)).length, 1);
  });
});

describe('ReplicaSet controller, one reconcile at a time (no workers)', () => {
  let client: TestClient;
  let informers: InformerFactory;
  let controller: ReplicaSetController;
  const recorders: EventRecorder[] = [];
  before(async () => {
    client = new TestClient({ server: api.url });
    informers = new InformerFactory({ client });
    controller = new ReplicaSetController({
      client,
      informers,
      clock: realClock,
      logger: silentLogger,
      config: DEFAULT_CONTROLLERS_CONFIG,
      recorder: (component) => {
        const r = new EventRecorder({ client, component });
        recorders.push(r);
        return r;
      },
    });
    informers.start();
    assert.ok(await informers.waitForCacheSync(10_000));
  });
  after(async () => {
    client.release();
    await informers.shutdown();
    await Promise.all(recorders.map((r) => r.flush()));
    client.close();
  });

  async function cachedRS(ns: string, name: string): Promise<void> {
    const lister = informers.informerFor<ReplicaSet>(resources.replicasets).lister();
    await until('ReplicaSet cached', async () => (lister.get(ns, name) ? true : undefined));
  }

  it('creates in slow-start batches 1, 2, 4 and stops at the first failing batch', async () => {
    const ns = await namespace();
    await createRS(ns, 'web', 10);
    await cachedRS(ns, 'web');
    client.hold();
    client.podCreates = 0;
    client.failPodCreates = 'exceeded quota';
    client.failPodCreatesAfter = 3; // batches 1 and 2 succeed; the batch of 4 fails
    try {
      await assert.rejects(controller.reconcile(`${ns}/web`), /exceeded quota/);
      assert.equal(client.podCreates, 7);
      assert.equal((await pods(ns)).length, 3);
      // Only the 3 created pods are still awaited.
      assert.equal(controller.expectations.getExpectations(`${ns}/web`)?.add, 3);
      const rs = await getRS(ns, 'web');
      assert.equal(getCondition(rs.status?.conditions, 'ReplicaFailure')?.reason, 'FailedCreate');
    } finally {
      client.failPodCreates = undefined;
      client.release();
    }
  });

  it('a second reconcile on a stale cache creates nothing', async () => {
    const ns = await namespace();
    await createRS(ns, 'web', 4);
    await cachedRS(ns, 'web');
    client.hold();
    client.podCreates = 0;
    try {
      await controller.reconcile(`${ns}/web`);
      await controller.reconcile(`${ns}/web`);
      assert.equal(client.podCreates, 4);
      assert.equal((await pods(ns)).length, 4);
    } finally {
      client.release();
    }
  });

  it('creates refused because the namespace is terminating are not failures of the ReplicaSet', async () => {
    const ns = await namespace();
    await createRS(ns, 'web', 2);
    await cachedRS(ns, 'web');
    client.podCreates = 0;
    client.failPodCreates = 'unable to create new content in namespace because it is being terminated';
    client.failPodCreatesCause = 'NamespaceTerminating';
    try {
      await controller.reconcile(`${ns}/web`);
      assert.equal(client.podCreates, 2);
      const rs = await untilStatus(ns, 'web', (s) => s.observedGeneration === 1);
      assert.equal(getCondition(rs.status?.conditions, 'ReplicaFailure'), undefined);
      await Promise.all(recorders.map((r) => r.flush()));
      assert.deepEqual(await events(ns, 'FailedCreate'), []);
    } finally {
      client.failPodCreates = undefined;
      client.failPodCreatesCause = undefined;
    }
  });
});
