/**
 * The Deployment controller end to end: the real API server in-process, the deployment and
 * replicaset controllers in a ControllerManager, a FakeKubelet playing one node, a minimal
 * binder standing in for the scheduler, and the real kubectl for apply, set image, rollout
 * status/history/undo/pause/resume/restart.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { InformerFactory } from '../../../api/client/factory.js';
import { resources } from '../../../api/client/resource.js';
import { isPodReady } from '../../../api/podutil.js';
import type { CoreEvent, Deployment, Pod, ReplicaSet } from '../../../api/types.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { FakeKubelet, makeNode, setPodReady } from '../../../test/support/fake-nodes.js';
import { silentLogger } from '../context.js';
import { ControllerManager } from '../manager.js';
import { replicaSetController } from '../replicaset/index.js';
import { FakeBinder } from '../replicaset/test-support.js';
import { makeReplicaSet, until as poll } from '../testing.js';
import { REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION } from './annotations.js';
import { computeHash, POD_TEMPLATE_HASH_LABEL } from './hash.js';
import { deploymentController } from './index.js';

const FIXTURE = readFileSync(
  fileURLToPath(new URL('../../../../shared/fixtures/spring-deployment.yaml', import.meta.url)),
  'utf8',
);
const NS = 'default';
const NAME = 'spring-deployment';

interface Cluster {
  api: TestApi;
  /** Pods of the namespace as an informer sees them, with a hook run on every change. */
  pods: Pod[];
  onPods(check: (pods: Pod[]) => void): void;
  /** A hook run on every change of the namespace's ReplicaSets, with all of them. */
  onReplicaSets(check: (replicaSets: ReplicaSet[]) => void): void;
  stop(): Promise<void>;
}

/** Images whose pods do not become Ready by themselves (the test releases them). */
const notReadyImages = new Set<string>();
let c: Cluster;
before(async () => {
  c = await startCluster((pod) => !notReadyImages.has(imageOf(pod) ?? ''));
});
after(() => c.stop());

/**
 * Starts the API server, the node, the binder, both controllers, and a pod watcher.
 * `ready(pod)`: whether a pod becomes Ready when it starts (default: always).
 */
async function startCluster(ready: (pod: Pod) => boolean = () => true): Promise<Cluster> {
  const api = await startTestApi();
  const kubelet = new FakeKubelet({ client: api.client, nodes: [makeNode('n1')], ready });
  await kubelet.start();
  const binder = new FakeBinder(api.client, ['n1']);
  await binder.start();
  const ac = new AbortController();
  const done = new ControllerManager({
    client: api.client,
    controllers: { deployment: deploymentController, replicaset: replicaSetController },
    logger: silentLogger,
  }).run(ac.signal);
  const watch = new InformerFactory({ client: api.client });
  const podInformer = watch.informerFor<Pod>(resources.pods, { namespace: NS });
  const rsInformer = watch.informerFor<ReplicaSet>(resources.replicasets, { namespace: NS });
  const checks: ((pods: Pod[]) => void)[] = [];
  const rsChecks: ((replicaSets: ReplicaSet[]) => void)[] = [];
  const cl: Cluster = {
    api,
    pods: [],
    onPods: (check) => checks.push(check),
    onReplicaSets: (check) => rsChecks.push(check),
    stop: async () => {
      ac.abort();
      await done;
      await watch.shutdown();
      await binder.stop();
      await kubelet.stop();
      await api.stop();
    },
  };
  const changed = () => {
    cl.pods = podInformer.lister().list();
    for (const check of checks) check(cl.pods);
  };
  podInformer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
  const rsChanged = () => {
    const all = rsInformer.lister().list();
    for (const check of rsChecks) check(all);
  };
  rsInformer.addEventHandler({ onAdd: rsChanged, onUpdate: rsChanged, onDelete: rsChanged });
  watch.start();
  await watch.waitForCacheSync(10_000);
  return cl;
}

/** Polls `f` until it returns something other than undefined; a rollout may take 30 s. */
const until = <T>(what: string, f: () => Promise<T | undefined> | T | undefined, ms = 30_000) =>
  poll(what, f, ms);

const getDeployment = (api: TestApi, name = NAME) =>
  api.client.get<Deployment>(resources.deployments, NS, name);
const listReplicaSets = async (api: TestApi) =>
  (await api.client.list<ReplicaSet>(resources.replicasets, { namespace: NS })).items;
const imageOf = (pod: Pod) => pod.spec.containers[0]?.image;
const active = (pods: Pod[]) =>
  pods.filter(
    (p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
  );

async function kubectlOk(api: TestApi, ...args: string[]): Promise<string> {
  const r = await api.kubectl(...args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Waits until the Deployment has rolled out `image` to all its replicas and only those pods remain. */
async function rolledOut(c: Cluster, image: string, replicas = 5, name = NAME): Promise<Deployment> {
  return until(`${name} rolled out ${image}`, async () => {
    const d = await getDeployment(c.api, name);
    const s = d.status;
    const pods = active(c.pods).filter((p) => p.metadata.name?.startsWith(`${name}-`));
    const ok =
      d.spec.template.spec.containers[0]?.image === image &&
      s?.observedGeneration === d.metadata.generation &&
      s?.updatedReplicas === replicas &&
      s?.replicas === replicas &&
      s?.availableReplicas === replicas &&
      pods.length === replicas &&
      pods.every((p) => imageOf(p) === image && isPodReady(p));
    return ok ? d : undefined;
  });
}

/** The controller of `rs` is the Deployment `d`. */
function assertOwnedBy(rs: ReplicaSet, d: Deployment): void {
  const ref = rs.metadata.ownerReferences?.find((r) => r.controller);
  assert.equal(ref?.kind, 'Deployment');
  assert.equal(ref?.uid, d.metadata.uid);
}

describe('spring-deployment: apply, rolling update, history, undo, pause, restart', () => {
  it('spring-deployment.yaml yields one ReplicaSet named by the pod-template-hash and 5 pods', async () => {
    const applied = await c.api.kubectlIn(FIXTURE, 'apply', '-f', '-');
    assert.equal(applied.code, 0, applied.stderr);
    const d = await rolledOut(c, 'spring-server:1.0');
    const rss = await listReplicaSets(c.api);
    assert.equal(rss.length, 1);
    const rs = rss[0]!;
    const hash = rs.metadata.labels?.[POD_TEMPLATE_HASH_LABEL];
    assert.match(hash ?? '', /^[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal(rs.metadata.name, `${NAME}-${hash}`);
    assert.equal(rs.spec.selector.matchLabels?.[POD_TEMPLATE_HASH_LABEL], hash);
    assert.equal(rs.spec.template.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL], hash);
    assert.equal(rs.metadata.labels?.app, 'backend-app');
    assertOwnedBy(rs, d);
    assert.equal(rs.metadata.annotations?.[REVISION_ANNOTATION], '1');
    assert.equal(rs.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '5');
    assert.equal(rs.metadata.annotations?.['deployment.kubernetes.io/max-replicas'], '7');
    assert.equal(d.metadata.annotations?.[REVISION_ANNOTATION], '1');
    assert.equal(active(c.pods).length, 5);
    for (const p of active(c.pods)) assert.equal(p.metadata.labels?.[POD_TEMPLATE_HASH_LABEL], hash);

    const conditions = Object.fromEntries((d.status?.conditions ?? []).map((x) => [x.type, x]));
    assert.equal(conditions.Available?.status, 'True');
    assert.equal(conditions.Available?.reason, 'MinimumReplicasAvailable');
    assert.equal(conditions.Progressing?.status, 'True');
    assert.equal(conditions.Progressing?.reason, 'NewReplicaSetAvailable');
    assert.equal(d.status?.unavailableReplicas ?? 0, 0);
    assert.equal(d.status?.readyReplicas, 5);

    const status = await kubectlOk(c.api, 'rollout', 'status', `deployment/${NAME}`, '--timeout=60s');
    assert.match(status, /deployment "spring-deployment" successfully rolled out/);
    const events = await c.api.client.list<CoreEvent>(resources.events, { namespace: NS });
    assert.ok(
      events.items.some(
        (e) =>
          e.reason === 'ScalingReplicaSet' &&
          e.message === `Scaled up replica set ${rs.metadata.name} from 0 to 5`,
      ),
      'ScalingReplicaSet event',
    );
  });

  it('rolls 1.0 → 1.1 within maxSurge and maxUnavailable while new pods become ready one by one', async () => {
    notReadyImages.add('spring-server:1.1');
    const violations: string[] = [];
    let maxTotal = 0;
    let minAvailable = Infinity;
    // replicas 5, maxSurge 25% → 2 (rounded up), maxUnavailable 25% → 1 (rounded down).
    // The surge bounds the ReplicaSets' replicas, as upstream's NewRSNewReplicas sums their
    // spec: the pods can be one more for a moment, when the new ReplicaSet creates before
    // the old one's controller has deleted the pod its scale-down took away (seen under
    // load: 8 pods), so the pod count is not held to it.
    c.onReplicaSets((replicaSets) => {
      const total = replicaSets
        .filter((rs) => rs.metadata.name?.startsWith(`${NAME}-`))
        .reduce((sum, rs) => sum + (rs.spec.replicas ?? 0), 0);
      if (total > 7) violations.push(`ReplicaSets' replicas sum to ${total}`);
    });
    c.onPods((pods) => {
      const mine = active(pods).filter((p) => p.metadata.name?.startsWith(`${NAME}-`));
      const available = mine.filter(isPodReady).length;
      maxTotal = Math.max(maxTotal, mine.length);
      minAvailable = Math.min(minAvailable, available);
      if (available < 4) violations.push(`${available} available`);
    });
    await kubectlOk(c.api, 'set', 'image', `deployment/${NAME}`, 'spring-container=spring-server:1.1');
    const status = c.api.kubectl('rollout', 'status', `deployment/${NAME}`, '--timeout=60s');
    let released = 0;
    for (;;) {
      const next = await until('a new pod waiting for readiness, or the end of the rollout', async () => {
        const d = await getDeployment(c.api);
        const s = d.status ?? {};
        if (
          s.observedGeneration === d.metadata.generation &&
          s.updatedReplicas === 5 &&
          s.availableReplicas === 5 &&
          s.replicas === 5
        ) {
          return 'done' as const;
        }
        return c.pods.find(
          (p) =>
            imageOf(p) === 'spring-server:1.1' &&
            p.status?.phase === 'Running' &&
            !p.metadata.deletionTimestamp &&
            !isPodReady(p),
        );
      });
      if (next === 'done') break;
      await setPodReady(c.api.client, next, true);
      released++;
      await until('the released pod seen ready', () =>
        c.pods.some((p) => p.metadata.uid === next.metadata.uid && isPodReady(p)) ? true : undefined,
      );
    }
    const r = await status;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /deployment "spring-deployment" successfully rolled out/);
    await rolledOut(c, 'spring-server:1.1');
    notReadyImages.delete('spring-server:1.1');
    assert.deepEqual(violations, []);
    assert.equal(released, 5);
    assert.ok(maxTotal >= 7, `the surge was used (at most ${maxTotal} pods)`);
    assert.equal(minAvailable, 4, 'the unavailability budget was used');

    const rss = await listReplicaSets(c.api);
    assert.equal(rss.length, 2);
    const byImage = Object.fromEntries(rss.map((rs) => [rs.spec.template.spec.containers[0]?.image, rs]));
    assert.equal(byImage['spring-server:1.0']?.spec.replicas, 0);
    assert.equal(byImage['spring-server:1.1']?.spec.replicas, 5);
    assert.equal(byImage['spring-server:1.1']?.metadata.annotations?.[REVISION_ANNOTATION], '2');
    const d = await getDeployment(c.api);
    assert.equal(d.metadata.annotations?.[REVISION_ANNOTATION], '2');
  });

  it("rollout history lists both revisions with their change-cause, and shows a revision's template", async () => {
    await kubectlOk(
      c.api,
      'annotate',
      `deployment/${NAME}`,
      'kubernetes.io/change-cause=image updated to 1.1',
    );
    await until('the change-cause copied to the new ReplicaSet', async () =>
      (await listReplicaSets(c.api)).some(
        (rs) => rs.metadata.annotations?.['kubernetes.io/change-cause'] === 'image updated to 1.1',
      )
        ? true
        : undefined,
    );
    const history = await kubectlOk(c.api, 'rollout', 'history', `deployment/${NAME}`);
    const rows = history
      .split('\n')
      .map((l) => l.trim().split(/\s{2,}/))
      .filter((cols) => /^\d+$/.test(cols[0] ?? ''));
    assert.deepEqual(rows, [
      ['1', '<none>'],
      ['2', 'image updated to 1.1'],
    ]);
    const rev1 = await kubectlOk(c.api, 'rollout', 'history', `deployment/${NAME}`, '--revision=1');
    assert.match(rev1, /Image:\s+spring-server:1\.0/);
    const rev2 = await kubectlOk(c.api, 'rollout', 'history', `deployment/${NAME}`, '--revision=2');
    assert.match(rev2, /Image:\s+spring-server:1\.1/);
  });

  it('rollout undo goes back to 1.0 by reusing the old ReplicaSet as revision 3', async () => {
    const before = await listReplicaSets(c.api);
    const old = before.find((rs) => rs.spec.template.spec.containers[0]?.image === 'spring-server:1.0')!;
    await kubectlOk(c.api, 'rollout', 'undo', `deployment/${NAME}`);
    const d = await rolledOut(c, 'spring-server:1.0');
    const st = await kubectlOk(c.api, 'rollout', 'status', `deployment/${NAME}`, '--timeout=60s');
    assert.match(st, /successfully rolled out/);
    const rss = await listReplicaSets(c.api);
    assert.equal(rss.length, 2, 'no third ReplicaSet');
    const reused = rss.find((rs) => rs.metadata.uid === old.metadata.uid)!;
    assert.equal(reused.spec.replicas, 5);
    assert.equal(reused.metadata.annotations?.[REVISION_ANNOTATION], '3');
    assert.equal(reused.metadata.annotations?.[REVISION_HISTORY_ANNOTATION], '1');
    assert.equal(d.metadata.annotations?.[REVISION_ANNOTATION], '3');
    for (const p of active(c.pods))
      assert.equal(
        p.metadata.labels?.[POD_TEMPLATE_HASH_LABEL],
        old.metadata.labels?.[POD_TEMPLATE_HASH_LABEL],
      );
    const history = await kubectlOk(c.api, 'rollout', 'history', `deployment/${NAME}`);
    assert.match(history, /^2\s+image updated to 1\.1\s*$/m);
    assert.match(history, /^3\s+<none>\s*$/m);
  });

  it('rollout undo --to-revision=2 goes to 1.1 again (revision 4)', async () => {
    await kubectlOk(c.api, 'rollout', 'undo', `deployment/${NAME}`, '--to-revision=2');
    const d = await rolledOut(c, 'spring-server:1.1');
    assert.equal(d.metadata.annotations?.[REVISION_ANNOTATION], '4');
    const rs = (await listReplicaSets(c.api)).find(
      (r) => r.spec.template.spec.containers[0]?.image === 'spring-server:1.1',
    )!;
    assert.equal(rs.metadata.annotations?.[REVISION_ANNOTATION], '4');
    assert.equal(rs.metadata.annotations?.[REVISION_HISTORY_ANNOTATION], '2');
  });

  it('pause holds a template change but not a scale; resume rolls it out', async () => {
    await kubectlOk(c.api, 'rollout', 'pause', `deployment/${NAME}`);
    await kubectlOk(c.api, 'set', 'image', `deployment/${NAME}`, 'spring-container=spring-server:1.2');
    await kubectlOk(c.api, 'scale', `deployment/${NAME}`, '--replicas=6');
    const paused = await until('the paused Deployment observed', async () => {
      const d = await getDeployment(c.api);
      const progressing = d.status?.conditions?.find((x) => x.type === 'Progressing');
      return d.status?.observedGeneration === d.metadata.generation &&
        progressing?.reason === 'DeploymentPaused' &&
        d.status?.replicas === 6
        ? d
        : undefined;
    });
    assert.equal(paused.status?.conditions?.find((x) => x.type === 'Progressing')?.status, 'Unknown');
    const rss = await listReplicaSets(c.api);
    assert.equal(rss.length, 2, 'no ReplicaSet for 1.2 while paused');
    assert.ok(!rss.some((rs) => rs.spec.template.spec.containers[0]?.image === 'spring-server:1.2'));
    assert.equal(
      rss.find((rs) => rs.spec.template.spec.containers[0]?.image === 'spring-server:1.1')?.spec.replicas,
      6,
    );

    await kubectlOk(c.api, 'rollout', 'resume', `deployment/${NAME}`);
    const st = await kubectlOk(c.api, 'rollout', 'status', `deployment/${NAME}`, '--timeout=60s');
    assert.match(st, /successfully rolled out/);
    const d = await rolledOut(c, 'spring-server:1.2', 6);
    assert.equal(d.metadata.annotations?.[REVISION_ANNOTATION], '5');
    const events = await c.api.client.list<CoreEvent>(resources.events, { namespace: NS });
    assert.ok(
      events.items.some(
        (e) => e.reason === 'ScalingReplicaSet' && /^Scaled down replica set /.test(e.message ?? ''),
      ),
    );
  });

  it('rollout restart replaces every pod through a new ReplicaSet', async () => {
    const beforeUids = new Set(active(c.pods).map((p) => p.metadata.uid));
    await kubectlOk(c.api, 'rollout', 'restart', `deployment/${NAME}`);
    const st = await kubectlOk(c.api, 'rollout', 'status', `deployment/${NAME}`, '--timeout=60s');
    assert.match(st, /successfully rolled out/);
    await rolledOut(c, 'spring-server:1.2', 6);
    const pods = await until('all pods replaced', () => {
      const mine = active(c.pods).filter((p) => p.metadata.name?.startsWith(`${NAME}-`));
      return mine.length === 6 && mine.every((p) => !beforeUids.has(p.metadata.uid)) ? mine : undefined;
    });
    for (const p of pods) assert.ok(p.metadata.annotations?.['kubectl.kubernetes.io/restartedAt']);
    const d = await getDeployment(c.api);
    assert.equal(d.metadata.annotations?.[REVISION_ANNOTATION], '6');
  });
});

/** A Deployment manifest (JSON, which kubectl apply takes as well as YAML). */
function manifest(
  name: string,
  image: string,
  spec: Partial<Deployment['spec']> & { replicas: number },
): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image }] },
      },
      ...spec,
    },
  });
}

async function apply(json: string): Promise<void> {
  const r = await c.api.kubectlIn(json, 'apply', '-f', '-');
  assert.equal(r.code, 0, r.stderr);
}

const replicaSetsOf = async (name: string) =>
  (await listReplicaSets(c.api)).filter((rs) => rs.metadata.name?.startsWith(`${name}-`));

describe('other strategies and settings', () => {
  it('Recreate never runs old and new pods together', async () => {
    await apply(manifest('recreate', 'r:1', { replicas: 3, strategy: { type: 'Recreate' } }));
    await rolledOut(c, 'r:1', 3, 'recreate');
    const mixed: string[] = [];
    let sawNone = false;
    c.onPods((pods) => {
      // Every pod that exists and has not finished, terminating ones included.
      const mine = pods.filter(
        (p) =>
          p.metadata.name?.startsWith('recreate-') &&
          p.status?.phase !== 'Succeeded' &&
          p.status?.phase !== 'Failed',
      );
      const images = new Set(mine.map(imageOf));
      if (images.size > 1) mixed.push([...images].join('+'));
      if (mine.length === 0) sawNone = true;
    });
    await kubectlOk(c.api, 'set', 'image', 'deployment/recreate', 'c=r:2');
    await rolledOut(c, 'r:2', 3, 'recreate');
    assert.deepEqual(mixed, []);
    assert.ok(sawNone, 'all old pods were gone before new ones came');
  });

  it('revisionHistoryLimit keeps only that many old ReplicaSets', async () => {
    await apply(manifest('history', 'h:1', { replicas: 1, revisionHistoryLimit: 1 }));
    await rolledOut(c, 'h:1', 1, 'history');
    for (const image of ['h:2', 'h:3']) {
      await kubectlOk(c.api, 'set', 'image', 'deployment/history', `c=${image}`);
      await rolledOut(c, image, 1, 'history');
    }
    const left = await until('old ReplicaSets cleaned up', async () => {
      const rss = await replicaSetsOf('history');
      return rss.length === 2 ? rss : undefined;
    });
    assert.deepEqual(left.map((rs) => rs.spec.template.spec.containers[0]?.image).sort(), ['h:2', 'h:3']);
  });

  it('a Deployment scaled mid-rollout shares the new replicas out in proportion', async () => {
    notReadyImages.add('p:never');
    // maxUnavailable 0: no old pod goes while the new ones are unavailable, so the
    // sizes below are where the rollout rests, not a passing state.
    const strategy = { type: 'RollingUpdate' as const, rollingUpdate: { maxSurge: 3, maxUnavailable: 0 } };
    await apply(manifest('prop', 'p:1', { replicas: 10, strategy }));
    await rolledOut(c, 'p:1', 10, 'prop');
    await kubectlOk(c.api, 'set', 'image', 'deployment/prop', 'c=p:never');
    const sizes = async () =>
      Object.fromEntries(
        (await replicaSetsOf('prop')).map((rs) => [
          rs.spec.template.spec.containers[0]?.image,
          rs.spec.replicas,
        ]),
      );
    let last = {};
    const expect = async (what: string, old: number, neu: number) =>
      until(what, async () => {
        const s = (last = await sizes());
        return s['p:1'] === old && s['p:never'] === neu ? true : undefined;
      }).catch((err: Error) => assert.fail(`${err.message}; sizes ${JSON.stringify(last)}`));
    // maxSurge 3: the new ReplicaSet gets 3 (never available), the old one keeps 10.
    await expect('the rollout stuck at old 10 / new 3', 10, 3);
    await kubectlOk(c.api, 'scale', 'deployment/prop', '--replicas=20');
    // Room: 20 + 3 − 13 = 10, shared by scaling each size by 23/13 (new max / old max):
    // old 10·23/13 ≈ 18 (+8), new 3·23/13 ≈ 5 (+2).
    await expect('proportional sizes', 18, 5);
    for (const rs of await replicaSetsOf('prop')) {
      assert.equal(rs.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '20');
      assert.equal(rs.metadata.annotations?.['deployment.kubernetes.io/max-replicas'], '23');
    }
  });

  it('reports ProgressDeadlineExceeded when new pods never become ready, and rollout status fails', async () => {
    notReadyImages.add('s:never');
    await apply(manifest('stuck', 's:never', { replicas: 2, progressDeadlineSeconds: 2 }));
    const d = await until('ProgressDeadlineExceeded', async () => {
      const x = await getDeployment(c.api, 'stuck');
      const p = x.status?.conditions?.find((cond) => cond.type === 'Progressing');
      return p?.reason === 'ProgressDeadlineExceeded' ? x : undefined;
    });
    const progressing = d.status?.conditions?.find((x) => x.type === 'Progressing');
    assert.equal(progressing?.status, 'False');
    assert.match(progressing?.message ?? '', /has timed out progressing/);
    const available = d.status?.conditions?.find((x) => x.type === 'Available');
    assert.equal(available?.status, 'False');
    assert.equal(available?.reason, 'MinimumReplicasUnavailable');
    const r = await c.api.kubectl('rollout', 'status', 'deployment/stuck', '--timeout=30s');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /deployment "stuck" exceeded its progress deadline/);
  });

  it('on a name collision with a foreign ReplicaSet, bumps collisionCount and hashes again', async () => {
    // Paused, the Deployment gets no ReplicaSet yet, and its template is the defaulted one the controller hashes.
    await apply(manifest('collide', 'x:1', { replicas: 1, paused: true }));
    const d = await until('the paused Deployment observed', async () => {
      const x = await getDeployment(c.api, 'collide');
      return x.status?.observedGeneration === x.metadata.generation ? x : undefined;
    });
    const taken = `collide-${computeHash(d.spec.template)}`;
    await c.api.client.create<ReplicaSet>(
      resources.replicasets,
      makeReplicaSet(NS, taken, {
        replicas: 0,
        app: 'someone-else',
        labels: { app: 'someone-else' },
        image: 'other',
      }),
    );
    await kubectlOk(c.api, 'rollout', 'resume', 'deployment/collide');
    const done = await rolledOut(c, 'x:1', 1, 'collide');
    assert.equal(done.status?.collisionCount, 1);
    const mine = (await replicaSetsOf('collide')).filter((rs) => rs.metadata.name !== taken);
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.metadata.name, `collide-${computeHash(d.spec.template, 1)}`);
    const foreign = await c.api.client.get<ReplicaSet>(resources.replicasets, NS, taken);
    assert.equal(foreign.metadata.ownerReferences, undefined, 'the foreign ReplicaSet is left alone');
  });

  it('adopts an orphan ReplicaSet that has its template instead of creating one', async () => {
    await apply(manifest('adopt', 'a:1', { replicas: 2, paused: true }));
    const d = await until('the paused Deployment observed', async () => {
      const x = await getDeployment(c.api, 'adopt');
      return x.status?.observedGeneration === x.metadata.generation ? x : undefined;
    });
    // An orphan with the Deployment's template, as a deleted-with-orphan Deployment leaves behind.
    const template = structuredClone(d.spec.template);
    template.metadata = {
      ...template.metadata,
      labels: { app: 'adopt', [POD_TEMPLATE_HASH_LABEL]: 'orphan' },
    };
    await c.api.client.create<ReplicaSet>(resources.replicasets, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'adopt-orphan', namespace: NS, labels: template.metadata.labels! },
      spec: { replicas: 2, selector: { matchLabels: template.metadata.labels! }, template },
    });
    await kubectlOk(c.api, 'rollout', 'resume', 'deployment/adopt');
    await rolledOut(c, 'a:1', 2, 'adopt');
    const rss = await replicaSetsOf('adopt');
    assert.deepEqual(
      rss.map((rs) => rs.metadata.name),
      ['adopt-orphan'],
    );
    assertOwnedBy(rss[0]!, d);
    assert.equal(rss[0]!.metadata.annotations?.[REVISION_ANNOTATION], '1');
  });
});
