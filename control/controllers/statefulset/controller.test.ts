/**
 * The StatefulSet controller against the real API server, with simulated nodes
 * (FakeKubelet, whose readiness each test holds back per pod) and a FakeBinder for the
 * scheduler. Most tests drive reconcile() themselves, each time once the informer caches
 * have caught up with the server, so "nothing more happened" is checked after real syncs,
 * not after a wait; time is a FakeClock. The last test runs the registered controller
 * under the ControllerManager, as the control process does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventRecorder } from '../../../api/client/events.js';
import { InformerFactory } from '../../../api/client/factory.js';
import { resources } from '../../../api/client/resource.js';
import { FakeClock, realClock } from '../../../api/clock.js';
import { controllerOf, isPodReady } from '../../../api/podutil.js';
import type { PersistentVolumeClaim, Pod, StatefulSet } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { FakeKubelet, makeNode, setPodReady } from '../../../test/support/fake-nodes.js';
import { DEFAULT_CONTROLLERS_CONFIG, silentLogger, type ControllerContext } from '../context.js';
import { ControllerManager } from '../manager.js';
import { FakeBinder } from '../replicaset/test-support.js';
import { getIfExists, until } from '../testing.js';
import { StatefulSetController } from './controller.js';
import type { ControllerRevision } from './history.js';
import { statefulSetController } from './index.js';
import { RealStatefulPodControl, type StatefulPodControl } from './pod-control.js';

let api: TestApi;
let kubelet: FakeKubelet;
let binder: FakeBinder;
let seq = 0;
/** Pods (by `ns/name`) the kubelet runs but keeps not Ready. */
const notReady = new Set<string>();

before(async () => {
  api = await startTestApi();
  kubelet = new FakeKubelet({
    client: api.client,
    nodes: [makeNode('n1'), makeNode('n2')],
    ready: (p) => !notReady.has(`${p.metadata.namespace}/${p.metadata.name}`),
  });
  await kubelet.start();
  binder = new FakeBinder(api.client, ['n1', 'n2']);
  await binder.start();
});
after(async () => {
  await binder.stop();
  await kubelet.stop();
  await api.stop();
});

async function namespace(): Promise<string> {
  const name = `sts-${++seq}`;
  await api.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function makeSet(
  ns: string,
  name: string,
  replicas: number,
  spec: Partial<StatefulSet['spec']> = {},
): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      serviceName: 'svc',
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
      },
      ...spec,
    },
  };
}

/** A StatefulPodControl recording the pods it creates and deletes, in order. */
class RecordingPodControl implements StatefulPodControl {
  readonly created: string[] = [];
  readonly deleted: string[] = [];
  constructor(private readonly real: StatefulPodControl) {}
  async createStatefulPod(set: StatefulSet, pod: Pod): Promise<void> {
    await this.real.createStatefulPod(set, pod);
    this.created.push(pod.metadata.name!);
  }
  createMissingClaims(set: StatefulSet, pod: Pod): Promise<void> {
    return this.real.createMissingClaims(set, pod);
  }
  updateStatefulPod(set: StatefulSet, pod: Pod): Promise<void> {
    return this.real.updateStatefulPod(set, pod);
  }
  async deleteStatefulPod(set: StatefulSet, pod: Pod): Promise<void> {
    await this.real.deleteStatefulPod(set, pod);
    this.deleted.push(pod.metadata.name!);
  }
  claimsMatchRetentionPolicy(set: StatefulSet, pod: Pod): boolean {
    return this.real.claimsMatchRetentionPolicy(set, pod);
  }
  updateClaimsForRetentionPolicy(set: StatefulSet, pod: Pod): Promise<void> {
    return this.real.updateClaimsForRetentionPolicy(set, pod);
  }
}

/** A StatefulSetController whose reconcile the test calls, over its own informers. */
interface Driven {
  ctrl: StatefulSetController;
  pods: RecordingPodControl;
  clock: FakeClock;
  informers: InformerFactory;
  /** Waits until the caches hold what the server holds for `ns`, then reconciles `ns/name` once. */
  sync(ns: string, name: string): Promise<void>;
  /** sync() until `probe` holds (see until()). */
  syncUntil<T>(
    what: string,
    ns: string,
    name: string,
    probe: () => Promise<T | undefined | false>,
  ): Promise<T>;
  stop(): Promise<void>;
}

async function driven(): Promise<Driven> {
  const clock = new FakeClock(Date.now());
  const informers = new InformerFactory({ client: api.client });
  const recorder = new EventRecorder({
    client: api.client,
    component: 'statefulset-controller',
    clock: realClock,
  });
  const claims = informers.informerFor<PersistentVolumeClaim>(resources.persistentvolumeclaims);
  const pods = new RecordingPodControl(
    new RealStatefulPodControl({ client: api.client, recorder, claims: claims.lister() }),
  );
  const ctx: ControllerContext = {
    client: api.client,
    informers,
    clock,
    logger: silentLogger,
    config: DEFAULT_CONTROLLERS_CONFIG,
    recorder: () => recorder,
  };
  const ctrl = new StatefulSetController(ctx, { podControl: pods });
  informers.start();
  assert.ok(await informers.waitForCacheSync(10_000));
  const caughtUp = async (ns: string): Promise<boolean> => {
    for (const ref of [
      resources.pods,
      resources.statefulsets,
      resources.controllerrevisions,
      resources.persistentvolumeclaims,
    ]) {
      const served = (await api.client.list(ref, { namespace: ns })).items;
      const cached = informers.informerFor(ref).lister().namespace(ns).list();
      const rv = (xs: { metadata?: { name?: string; resourceVersion?: string } }[]) =>
        xs
          .map((x) => `${x.metadata?.name}@${x.metadata?.resourceVersion}`)
          .sort()
          .join();
      if (rv(served) !== rv(cached)) return false;
    }
    return true;
  };
  const sync = async (ns: string, name: string): Promise<void> => {
    await until(`caches of ${ns} caught up`, () => caughtUp(ns));
    await ctrl.reconcile(`${ns}/${name}`);
  };
  return {
    ctrl,
    pods,
    clock,
    informers,
    sync,
    syncUntil: (what, ns, name, probe) =>
      until(what, async () => {
        await sync(ns, name);
        return probe();
      }),
    stop: async () => {
      await informers.shutdown();
      await recorder.flush(2000);
    },
  };
}

async function livePods(ns: string): Promise<Pod[]> {
  const pods = (await api.client.list<Pod>(resources.pods, { namespace: ns })).items;
  return pods
    .filter((p) => !p.metadata.deletionTimestamp)
    .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
}

const names = (pods: Pod[]) => pods.map((p) => p.metadata.name);
const running = (p: Pod | undefined) => p?.status?.phase === 'Running';
const image = (p: Pod) => p.spec.containers[0]!.image;

async function getSet(ns: string, name: string): Promise<StatefulSet> {
  return api.client.get<StatefulSet>(resources.statefulsets, ns, name);
}

async function allReady(ns: string, n: number): Promise<Pod[] | undefined> {
  const pods = await livePods(ns);
  return pods.length === n && pods.every((p) => running(p) && isPodReady(p)) ? pods : undefined;
}

describe('StatefulSet controller, OrderedReady', () => {
  let d: Driven;
  before(async () => (d = await driven()));
  after(() => d.stop());

  it('creates web-0 first and web-1 only once web-0 is Running and Ready; identity, labels, revision', async () => {
    const ns = await namespace();
    notReady.add(`${ns}/web-0`);
    await api.client.create(resources.statefulsets, makeSet(ns, 'web', 3));
    const web0 = await d.syncUntil('web-0 running, not ready', ns, 'web', async () => {
      const p = (await livePods(ns))[0];
      return running(p) && p;
    });
    // More syncs with web-0 Running but not Ready: nothing else is created.
    for (let i = 0; i < 3; i++) await d.sync(ns, 'web');
    assert.deepEqual(names(await livePods(ns)), ['web-0']);
    assert.deepEqual(d.pods.created, ['web-0']);

    assert.equal(web0.spec.hostname, 'web-0');
    assert.equal(web0.spec.subdomain, 'svc');
    assert.equal(web0.metadata.labels?.['statefulset.kubernetes.io/pod-name'], 'web-0');
    assert.equal(web0.metadata.labels?.['apps.kubernetes.io/pod-index'], '0');
    assert.equal(controllerOf(web0)?.kind, 'StatefulSet');
    const revs = (await api.client.list<ControllerRevision>(resources.controllerrevisions, { namespace: ns }))
      .items;
    assert.equal(revs.length, 1);
    assert.equal(revs[0]!.revision, 1);
    assert.equal(web0.metadata.labels?.['controller-revision-hash'], revs[0]!.metadata.name);
    assert.match(revs[0]!.metadata.name!, /^web-[a-z0-9]+$/);

    notReady.delete(`${ns}/web-0`);
    await setPodReady(api.client, web0, true);
    await d.syncUntil('3 ready pods', ns, 'web', () => allReady(ns, 3));
    assert.deepEqual(d.pods.created, ['web-0', 'web-1', 'web-2']);
    const set = await d.syncUntil('status', ns, 'web', async () => {
      const s = await getSet(ns, 'web');
      return s.status?.readyReplicas === 3 && s;
    });
    assert.equal(set.status?.replicas, 3);
    assert.equal(set.status?.currentRevision, revs[0]!.metadata.name);
    assert.equal(set.status?.updateRevision, revs[0]!.metadata.name);
    assert.equal(set.status?.observedGeneration, set.metadata.generation);
  });

  it('scales 3 → 5 in ordinal order and 5 → 3 from the highest ordinal down, one at a time', async () => {
    const ns = await namespace();
    await api.client.create(resources.statefulsets, makeSet(ns, 'db', 3));
    await d.syncUntil('3 ready', ns, 'db', () => allReady(ns, 3));
    const start = d.pods.created.length;
    await api.client.patch(resources.statefulsets, ns, 'db', 'merge', { spec: { replicas: 5 } });
    const five = await d.syncUntil('5 ready', ns, 'db', () => allReady(ns, 5));
    assert.deepEqual(names(five), ['db-0', 'db-1', 'db-2', 'db-3', 'db-4']);
    assert.deepEqual(d.pods.created.slice(start), ['db-3', 'db-4']);

    const deletedBefore = d.pods.deleted.length;
    await api.client.patch(resources.statefulsets, ns, 'db', 'merge', { spec: { replicas: 3 } });
    const three = await d.syncUntil('3 left', ns, 'db', async () => {
      const pods = (await api.client.list<Pod>(resources.pods, { namespace: ns })).items;
      return pods.length === 3 && pods;
    });
    assert.deepEqual(names(three.sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!))), [
      'db-0',
      'db-1',
      'db-2',
    ]);
    assert.deepEqual(d.pods.deleted.slice(deletedBefore), ['db-4', 'db-3']);
  });

  it('waits for a condemned pod to be gone before deleting the next', async () => {
    const ns = await namespace();
    await api.client.create(resources.statefulsets, makeSet(ns, 'q', 3));
    await d.syncUntil('3 ready', ns, 'q', () => allReady(ns, 3));
    // The kubelet confirms deletions at once; a finalizer keeps q-2 terminating.
    await api.client.patch(resources.pods, ns, 'q-2', 'merge', { metadata: { finalizers: ['test/hold'] } });
    const before = d.pods.deleted.length;
    await api.client.patch(resources.statefulsets, ns, 'q', 'merge', { spec: { replicas: 1 } });
    await d.syncUntil('q-2 terminating', ns, 'q', async () => {
      const p = await getIfExists<Pod>(api.client, resources.pods, ns, 'q-2');
      return !!p?.metadata.deletionTimestamp;
    });
    for (let i = 0; i < 3; i++) await d.sync(ns, 'q');
    assert.deepEqual(d.pods.deleted.slice(before), ['q-2']);
    assert.ok(await getIfExists(api.client, resources.pods, ns, 'q-1'));
    await api.client.patch(resources.pods, ns, 'q-2', 'merge', { metadata: { finalizers: null } });
    await d.syncUntil('only q-0', ns, 'q', async () => {
      const pods = (await api.client.list<Pod>(resources.pods, { namespace: ns })).items;
      return pods.length === 1 && pods[0]!.metadata.name === 'q-0';
    });
    assert.deepEqual(d.pods.deleted.slice(before), ['q-2', 'q-1']);
  });

  it('honours ordinals.start', async () => {
    const ns = await namespace();
    await api.client.create(resources.statefulsets, makeSet(ns, 'o', 2, { ordinals: { start: 5 } }));
    const pods = await d.syncUntil('2 ready', ns, 'o', () => allReady(ns, 2));
    assert.deepEqual(names(pods), ['o-5', 'o-6']);
    assert.equal(pods[0]!.metadata.labels?.['apps.kubernetes.io/pod-index'], '5');
  });

  it('with minReadySeconds, creates the next pod only once the previous one is available (FakeClock)', async () => {
    const ns = await namespace();
    await api.client.create(resources.statefulsets, makeSet(ns, 'm', 2, { minReadySeconds: 30 }));
    await d.syncUntil('m-0 ready', ns, 'm', () => allReady(ns, 1));
    for (let i = 0; i < 3; i++) await d.sync(ns, 'm');
    assert.deepEqual(names(await livePods(ns)), ['m-0']);
    // The kubelet stamps lastTransitionTime with the real time; the fake clock moves past it.
    await d.clock.advance(Date.now() - d.clock.now() + 31_000);
    await d.syncUntil('2 ready', ns, 'm', () => allReady(ns, 2));
  });
});

describe('StatefulSet controller, Parallel and updates', () => {
  let d: Driven;
  before(async () => (d = await driven()));
  after(() => d.stop());

  it('Parallel creates every pod without waiting for readiness, and deletes all condemned at once', async () => {
    const ns = await namespace();
    for (const n of ['p-0', 'p-1', 'p-2']) notReady.add(`${ns}/${n}`);
    await api.client.create(resources.statefulsets, makeSet(ns, 'p', 3, { podManagementPolicy: 'Parallel' }));
    await d.sync(ns, 'p');
    assert.deepEqual(names(await livePods(ns)), ['p-0', 'p-1', 'p-2']);
    // None ready: readyReplicas is omitempty in Kubernetes' StatefulSetStatus (left out),
    // availableReplicas is not (0).
    const set = await getSet(ns, 'p');
    assert.equal(set.status?.replicas, 3);
    assert.equal(set.status?.readyReplicas, undefined);
    assert.equal(set.status?.availableReplicas, 0);
    await until('all running', async () => (await livePods(ns)).every(running));
    await api.client.patch(resources.statefulsets, ns, 'p', 'merge', { spec: { replicas: 0 } });
    const before = d.pods.deleted.length;
    await d.sync(ns, 'p');
    assert.deepEqual(d.pods.deleted.slice(before), ['p-2', 'p-1', 'p-0']);
  });

  it('RollingUpdate with partition 1 updates from the highest ordinal down and keeps web-0', async () => {
    const ns = await namespace();
    await api.client.create(
      resources.statefulsets,
      makeSet(ns, 'r', 3, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }),
    );
    await d.syncUntil('3 ready', ns, 'r', () => allReady(ns, 3));
    const before = d.pods.deleted.length;
    await api.client.patch(resources.statefulsets, ns, 'r', 'strategic', {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.26' }] } } },
    });
    const pods = await d.syncUntil('r-1 and r-2 updated', ns, 'r', async () => {
      const ps = await allReady(ns, 3);
      return ps && image(ps[1]!) === 'nginx:1.26' && image(ps[2]!) === 'nginx:1.26' && ps;
    });
    for (let i = 0; i < 3; i++) await d.sync(ns, 'r');
    assert.equal(image((await livePods(ns))[0]!), 'nginx:1.25');
    assert.deepEqual(d.pods.deleted.slice(before), ['r-2', 'r-1']);
    const set = await getSet(ns, 'r');
    assert.equal(set.status?.updatedReplicas, 2);
    assert.equal(set.status?.currentReplicas, 1);
    assert.notEqual(set.status?.currentRevision, set.status?.updateRevision);
    assert.equal(pods[2]!.metadata.labels?.['controller-revision-hash'], set.status?.updateRevision);

    // Partition 0 finishes the rollout; the update revision becomes current.
    await api.client.patch(resources.statefulsets, ns, 'r', 'merge', {
      spec: { updateStrategy: { rollingUpdate: { partition: 0 } } },
    });
    const done = await d.syncUntil('rollout complete', ns, 'r', async () => {
      const s = await getSet(ns, 'r');
      return s.status?.currentRevision === s.status?.updateRevision && s.status?.updatedReplicas === 3 && s;
    });
    assert.equal(done.status?.currentReplicas, 3);
    assert.equal(image((await livePods(ns))[0]!), 'nginx:1.26');
    const revs = (await api.client.list<ControllerRevision>(resources.controllerrevisions, { namespace: ns }))
      .items;
    assert.deepEqual(revs.map((r) => r.revision).sort(), [1, 2]);

    // Back to the first template (rollout undo): revision 1 is reused as number 3.
    await api.client.patch(resources.statefulsets, ns, 'r', 'strategic', {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } } },
    });
    await d.syncUntil('rolled back', ns, 'r', async () => {
      const ps = await allReady(ns, 3);
      return ps?.every((p) => image(p) === 'nginx:1.25');
    });
    const after = (
      await api.client.list<ControllerRevision>(resources.controllerrevisions, { namespace: ns })
    ).items;
    assert.deepEqual(after.map((r) => r.revision).sort(), [2, 3]);
  });

  it('maxUnavailable 2 deletes two old pods at once', async () => {
    const ns = await namespace();
    await api.client.create(
      resources.statefulsets,
      makeSet(ns, 'u', 3, {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 2 } },
      }),
    );
    await d.syncUntil('3 ready', ns, 'u', () => allReady(ns, 3));
    await api.client.patch(resources.statefulsets, ns, 'u', 'strategic', {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.26' }] } } },
    });
    const before = d.pods.deleted.length;
    await d.syncUntil('revision seen', ns, 'u', async () => d.pods.deleted.length > before);
    assert.deepEqual(d.pods.deleted.slice(before), ['u-2', 'u-1']);
  });

  it('OnDelete updates a pod only when it is deleted', async () => {
    const ns = await namespace();
    await api.client.create(
      resources.statefulsets,
      makeSet(ns, 'od', 2, { updateStrategy: { type: 'OnDelete' } }),
    );
    await d.syncUntil('2 ready', ns, 'od', () => allReady(ns, 2));
    await api.client.patch(resources.statefulsets, ns, 'od', 'strategic', {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.26' }] } } },
    });
    const before = d.pods.deleted.length;
    await d.syncUntil('update revision in status', ns, 'od', async () => {
      const s = await getSet(ns, 'od');
      return s.status?.updateRevision !== s.status?.currentRevision;
    });
    for (let i = 0; i < 3; i++) await d.sync(ns, 'od');
    assert.equal(d.pods.deleted.length, before);
    assert.deepEqual((await livePods(ns)).map(image), ['nginx:1.25', 'nginx:1.25']);
    await api.client.delete(resources.pods, ns, 'od-1');
    const pods = await d.syncUntil('od-1 recreated', ns, 'od', async () => {
      const ps = await allReady(ns, 2);
      return ps && image(ps[1]!) === 'nginx:1.26' && ps;
    });
    assert.equal(image(pods[0]!), 'nginx:1.25');
  });
});

describe('StatefulSet controller, volumeClaimTemplates', () => {
  let d: Driven;
  before(async () => (d = await driven()));
  after(() => d.stop());

  const withClaims = (
    ns: string,
    name: string,
    replicas: number,
    policy?: StatefulSet['spec']['persistentVolumeClaimRetentionPolicy'],
  ) =>
    makeSet(ns, name, replicas, {
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            { name: 'c', image: 'nginx:1.25', volumeMounts: [{ name: 'www', mountPath: '/data' }] },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'www' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
      ...(policy ? { persistentVolumeClaimRetentionPolicy: policy } : {}),
    });

  const claim = (ns: string, name: string) =>
    getIfExists<PersistentVolumeClaim>(api.client, resources.persistentvolumeclaims, ns, name);

  it('creates www-<set>-<ordinal> before each pod, mounts it, and retains it on scale-down', async () => {
    const ns = await namespace();
    await api.client.create(resources.statefulsets, withClaims(ns, 'web', 2));
    const pods = await d.syncUntil('2 ready', ns, 'web', () => allReady(ns, 2));
    for (const [i, p] of pods.entries()) {
      const c = await claim(ns, `www-web-${i}`);
      assert.ok(c, `www-web-${i}`);
      assert.equal(c.status?.phase, 'Pending');
      assert.equal(c.metadata.labels?.app, 'web');
      assert.deepEqual(c.metadata.ownerReferences ?? [], []);
      const vol = (p.spec.volumes as { name: string; persistentVolumeClaim?: { claimName: string } }[]).find(
        (v) => v.name === 'www',
      );
      assert.equal(vol?.persistentVolumeClaim?.claimName, `www-web-${i}`);
    }
    await api.client.patch(resources.statefulsets, ns, 'web', 'merge', { spec: { replicas: 1 } });
    await d.syncUntil(
      'web-1 gone',
      ns,
      'web',
      async () => (await getIfExists(api.client, resources.pods, ns, 'web-1')) === undefined,
    );
    const kept = await claim(ns, 'www-web-1');
    assert.ok(kept, 'www-web-1 is retained');
    assert.deepEqual(kept.metadata.ownerReferences ?? [], []);
  });

  it('whenDeleted Delete owns the claims by the set; whenScaled Delete hands a condemned pod its claim', async () => {
    const ns = await namespace();
    const created = await api.client.create<StatefulSet>(
      resources.statefulsets,
      withClaims(ns, 'del', 2, { whenDeleted: 'Delete', whenScaled: 'Delete' }),
    );
    await d.syncUntil('2 ready', ns, 'del', () => allReady(ns, 2));
    const c0 = await d.syncUntil('www-del-0 owned by the set', ns, 'del', async () => {
      const c = await claim(ns, 'www-del-0');
      return c?.metadata.ownerReferences?.some((r) => r.uid === created.metadata.uid) && c;
    });
    assert.equal(c0.metadata.ownerReferences?.length, 1);
    const pod1 = await api.client.get<Pod>(resources.pods, ns, 'del-1');
    await api.client.patch(resources.statefulsets, ns, 'del', 'merge', { spec: { replicas: 1 } });
    const c1 = await d.syncUntil('www-del-1 owned by its pod', ns, 'del', async () => {
      const c = await claim(ns, 'www-del-1');
      return c?.metadata.ownerReferences?.some((r) => r.uid === pod1.metadata.uid) && c;
    });
    assert.deepEqual(
      c1.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}`),
      ['Pod/del-1'],
    );
  });
});

describe('StatefulSet controller under the ControllerManager', () => {
  let stop: () => Promise<void>;
  before(() => {
    const ac = new AbortController();
    const done = new ControllerManager({
      client: api.client,
      controllers: { statefulset: statefulSetController },
      logger: silentLogger,
    }).run(ac.signal);
    stop = async () => {
      ac.abort();
      await done;
    };
  });
  after(() => stop());

  it('brings a set to 3 ready pods by itself, scales it to 5 and back to 3', async () => {
    const ns = await namespace();
    await api.client.create(resources.statefulsets, makeSet(ns, 'auto', 3));
    await until('3 ready', () => allReady(ns, 3));
    await api.client.patch(resources.statefulsets, ns, 'auto', 'merge', { spec: { replicas: 5 } });
    assert.deepEqual(names(await until('5 ready', () => allReady(ns, 5))), [
      'auto-0',
      'auto-1',
      'auto-2',
      'auto-3',
      'auto-4',
    ]);
    await api.client.patch(resources.statefulsets, ns, 'auto', 'merge', { spec: { replicas: 3 } });
    await until(
      '3 pods',
      async () => (await api.client.list(resources.pods, { namespace: ns })).items.length === 3,
    );
    const set = await until('status', async () => {
      const s = await getSet(ns, 'auto');
      return s.status?.replicas === 3 && s.status.readyReplicas === 3 && s;
    });
    assert.equal(set.status?.availableReplicas, 3);
  });
});
