/**
 * The disruption controller against the real API server, with a FakeClock (the
 * disruptedPods timeout). The pods are written by the test (Running, Ready, controlled by
 * ReplicaSets or a Deployment's ReplicaSet that no other controller acts on), so the
 * expected status of each budget is exact. The arithmetic alone: budget.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { resources } from '../../../api/client/resource.js';
import { rfc3339, type KubeObject } from '../../../api/object.js';
import { controllerRef } from '../../../api/podutil.js';
import type { PodDisruptionBudget } from '../../../api/policy.js';
import type { CoreEvent, Deployment, Pod, ReplicaSet } from '../../../api/types.js';
import { makeReplicaSet, until, useControllers } from '../testing.js';
import { disruptionController } from './index.js';

const clock = new FakeClock();
const cluster = useControllers({ controllers: { disruption: disruptionController }, clock });
const ns = 'default';

async function replicaSet(name: string, replicas: number, owner?: Deployment): Promise<ReplicaSet> {
  const rs = makeReplicaSet(ns, name, { replicas });
  if (owner) rs.metadata.ownerReferences = [controllerRef(owner)];
  return cluster.api.client.create<ReplicaSet>(resources.replicasets, rs);
}

/** A Running pod of `owner` (labels app=<app>), Ready unless told. */
async function pod(name: string, app: string, owner: KubeObject | undefined, ready = true): Promise<Pod> {
  const created = await cluster.api.client.create<Pod>(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      labels: { app },
      ...(owner ? { ownerReferences: [controllerRef(owner)] } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });
  return cluster.api.client.updateStatus<Pod>(resources.pods, {
    ...created,
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
}

async function budget(name: string, app: string, spec: Partial<PodDisruptionBudget['spec']>) {
  return cluster.api.client.create<PodDisruptionBudget>(resources.poddisruptionbudgets, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: ns },
    spec: { selector: { matchLabels: { app } }, ...spec },
  });
}

const getBudget = (name: string) =>
  cluster.api.client.get<PodDisruptionBudget>(resources.poddisruptionbudgets, ns, name);

/** Waits until the budget's status has the given counters (and observedGeneration = generation). */
function statusOf(name: string, want: Partial<NonNullable<PodDisruptionBudget['status']>>) {
  return until(`${name} status ${JSON.stringify(want)}`, async () => {
    const pdb = await getBudget(name);
    const s = pdb.status;
    if (!s || s.observedGeneration !== pdb.metadata.generation) return false;
    for (const [k, v] of Object.entries(want))
      if (JSON.stringify(s[k as keyof typeof s]) !== JSON.stringify(v)) return false;
    return pdb;
  });
}

const condition = (pdb: PodDisruptionBudget) =>
  pdb.status?.conditions?.find((c) => c.type === 'DisruptionAllowed');

describe('disruption controller', () => {
  it('minAvailable as a percentage of the ReplicaSet scale: expectedPods 4, desiredHealthy ⌈50%·4⌉, one unready pod', async () => {
    const rs = await replicaSet('pct', 4);
    for (let i = 0; i < 4; i++) await pod(`pct-${i}`, 'pct', rs, i !== 3);
    await budget('pct', 'pct', { minAvailable: '50%' });
    const pdb = await statusOf('pct', {
      expectedPods: 4,
      desiredHealthy: 2,
      currentHealthy: 3,
      disruptionsAllowed: 1,
    });
    assert.equal(condition(pdb)?.status, 'True');
    assert.equal(condition(pdb)?.reason, 'SufficientPods');
  });

  it('maxUnavailable counts the Deployment of a ReplicaSet, not the ReplicaSet', async () => {
    const d = await cluster.api.client.create<Deployment>(resources.deployments, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'dep', namespace: ns },
      spec: {
        replicas: 5,
        selector: { matchLabels: { app: 'dep' } },
        template: {
          metadata: { labels: { app: 'dep' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    const rs = await replicaSet('dep-rs', 3, d);
    for (let i = 0; i < 3; i++) await pod(`dep-${i}`, 'dep', rs);
    await budget('dep', 'dep', { maxUnavailable: '40%' });
    // 5 expected, ⌈40%·5⌉ = 2 may be unavailable: 3 desired, 3 healthy, none allowed.
    const pdb = await statusOf('dep', {
      expectedPods: 5,
      desiredHealthy: 3,
      currentHealthy: 3,
      disruptionsAllowed: 0,
    });
    assert.equal(condition(pdb)?.reason, 'InsufficientPods');
    // Another ready pod makes room for one disruption.
    await pod('dep-3', 'dep', rs);
    await statusOf('dep', { currentHealthy: 4, disruptionsAllowed: 1 });
  });

  it('maxUnavailable over a StatefulSet counts its spec.replicas', async () => {
    const sts = await cluster.api.client.create<KubeObject>(resources.statefulsets, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: ns },
      spec: {
        replicas: 3,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    await pod('db-0', 'db', sts);
    await pod('db-1', 'db', sts);
    await budget('db', 'db', { maxUnavailable: 1 });
    // 3 expected (the third not yet there), 2 desired, 2 healthy: nothing may go.
    await statusOf('db', { expectedPods: 3, desiredHealthy: 2, currentHealthy: 2, disruptionsAllowed: 0 });
  });

  it('minAvailable as an integer counts the selected pods, managed or not', async () => {
    await pod('int-0', 'int', undefined);
    await pod('int-1', 'int', undefined);
    await budget('int', 'int', { minAvailable: 1 });
    await statusOf('int', { expectedPods: 2, desiredHealthy: 1, currentHealthy: 2, disruptionsAllowed: 1 });
  });

  it('a pod in disruptedPods is not healthy for 2 minutes; after that the entry goes and a NotDeleted event is recorded', async () => {
    const rs = await replicaSet('held', 2);
    await pod('held-0', 'held', rs);
    await pod('held-1', 'held', rs);
    await budget('held', 'held', { minAvailable: 1 });
    const first = await statusOf('held', { currentHealthy: 2, disruptionsAllowed: 1 });
    // What the Eviction API writes when it allows one: held-0 is about to go.
    await cluster.api.client.updateStatus<PodDisruptionBudget>(resources.poddisruptionbudgets, {
      ...first,
      status: {
        ...first.status!,
        disruptionsAllowed: 0,
        disruptedPods: { 'held-0': rfc3339(new Date(clock.now())) },
      },
    });
    const held = await statusOf('held', { currentHealthy: 1, disruptionsAllowed: 0 });
    assert.deepEqual(Object.keys(held.status?.disruptedPods ?? {}), ['held-0']);
    // held-0 was never deleted: 2 minutes later it counts again.
    await clock.advance(2 * 60 * 1000);
    const after = await statusOf('held', { currentHealthy: 2, disruptionsAllowed: 1 });
    assert.equal(after.status?.disruptedPods, undefined);
    await until('NotDeleted event', async () => {
      const events = await cluster.api.client.list<CoreEvent>(resources.events, { namespace: ns });
      return events.items.some(
        (e) => e.reason === 'NotDeleted' && (e.involvedObject as { name?: string }).name === 'held-0',
      );
    });
  });

  it('a DisruptionTarget condition left on a pod that was not deleted is set back to False after 2 minutes', async () => {
    const p = await pod('stale-0', 'stale', undefined);
    await cluster.api.client.updateStatus<Pod>(resources.pods, {
      ...p,
      status: {
        ...p.status,
        conditions: [
          ...(p.status?.conditions ?? []),
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'EvictionByEvictionAPI',
            message: 'Eviction API: evicting',
            lastTransitionTime: rfc3339(new Date(clock.now())),
          },
        ],
      },
    });
    const target = async () =>
      (await cluster.api.client.get<Pod>(resources.pods, ns, 'stale-0')).status?.conditions?.find(
        (c) => c.type === 'DisruptionTarget',
      );
    // The controller has seen the pod (its stale check is queued) once a PDB over it is synced.
    await budget('stale', 'stale', { minAvailable: 1 });
    await statusOf('stale', { currentHealthy: 1 });
    assert.equal((await target())?.status, 'True', 'not stale yet');
    await clock.advance(2 * 60 * 1000);
    await until('DisruptionTarget False', async () =>
      (await target())?.status === 'False' ? true : undefined,
    );
  });

  it('a pod whose controller cannot be found fails the sync: no disruptions, DisruptionAllowed False/SyncFailed', async () => {
    const ghost = await replicaSet('ghost', 1);
    await pod('ghost-0', 'ghost', ghost);
    await cluster.api.client.delete(resources.replicasets, ns, 'ghost');
    await budget('ghost', 'ghost', { maxUnavailable: 1 });
    const pdb = await until('SyncFailed', async () => {
      const p = await getBudget('ghost');
      return condition(p)?.reason === 'SyncFailed' ? p : false;
    });
    assert.equal(pdb.status?.disruptionsAllowed, 0);
    assert.equal(condition(pdb)?.status, 'False');
    assert.equal(condition(pdb)?.message, 'found no controllers for pod "ghost-0"');
  });
});
