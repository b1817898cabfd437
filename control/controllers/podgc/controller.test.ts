/**
 * Pod GC against the real API server, its passes driven by a FakeClock: the test advances
 * time by one period and waits for the pass to finish (`passes`), so what each pass did
 * can be checked without sleeping.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { isNotFound } from '../../../api/client/errors.js';
import { waitFor } from '../../../api/client/testing.js';
import { resources } from '../../../api/client/resource.js';
import type { Pod, PodStatus } from '../../../api/types.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { startTestApi } from '../../../test/support/api.js';
import type { TestApi } from '../../../test/support/api.js';
import { silentLogger } from '../context.js';
import { ControllerManager } from '../manager.js';
import { dropFinalizers, makePod } from '../endpoints/testing.js';
import { until } from '../testing.js';
import { PodGCController } from './controller.js';
import { byEvictionAndCreationTimestamp, terminatedPodsToDelete } from './select.js';

let api: TestApi;
let clock: FakeClock;
let gc: PodGCController | undefined;
let ac: AbortController;
let done: Promise<void>;

async function createPod(pod: Pod, status?: PodStatus): Promise<Pod> {
  const created = await api.client.create<Pod>(resources.pods, pod);
  if (!status) return created;
  return api.client.patch<Pod>(
    resources.pods,
    'default',
    pod.metadata.name!,
    'merge',
    { status },
    {
      subresource: 'status',
    },
  );
}

async function exists(name: string): Promise<Pod | undefined> {
  try {
    return await api.client.get<Pod>(resources.pods, 'default', name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Moves the fake clock by one period and waits until the pass it starts has finished. */
async function nextPass(): Promise<void> {
  const target = gc!.passes + 1;
  await clock.advance(20_000);
  await waitFor(`pod GC pass ${target}`, () => gc!.passes >= target);
}

before(async () => {
  api = await startTestApi();
  await api.client.create(resources.nodes, makeNode('node-a'));
  const running: PodStatus = { phase: 'Running', podIP: '10.42.0.9' };
  for (let i = 0; i < 5; i++) {
    await createPod(makePod(`done-${i}`, { job: 'x' }), {
      phase: i === 1 ? 'Failed' : 'Succeeded',
      ...(i === 1 ? { reason: 'Evicted' } : {}),
    });
  }
  await createPod(makePod('keep', { app: 'keep' }), running);
  await createPod(makePod('orphan', { app: 'o' }, { node: 'ghost', finalizers: ['test/hold'] }), running);
  await createPod(makePod('late', { app: 'l' }, { node: 'late-node' }), running);
  const unscheduled = makePod('unsched', { app: 'u' }, { finalizers: ['test/hold'] });
  delete unscheduled.spec.nodeName;
  await createPod(unscheduled);
  await api.client.delete(resources.pods, 'default', 'unsched');

  clock = new FakeClock();
  ac = new AbortController();
  done = new ControllerManager({
    client: api.client,
    controllers: { podgc: (ctx) => (gc = new PodGCController(ctx)) },
    config: { terminatedPodGCThreshold: 2 },
    clock,
    logger: silentLogger,
  }).run(ac.signal);
  await waitFor('first pod GC pass', () => (gc?.passes ?? 0) >= 1, 15_000);
});

after(async () => {
  ac.abort();
  await done;
  await api.stop();
});

describe('Pod GC', () => {
  it('deletes the terminated pods beyond the threshold, evicted first, then oldest', async () => {
    const left = await Promise.all(['done-0', 'done-1', 'done-2', 'done-3', 'done-4'].map(exists));
    assert.deepEqual(
      left.map((p) => p?.metadata.name),
      [undefined, undefined, undefined, 'done-3', 'done-4'],
    );
    assert.ok(await exists('keep'));
  });

  it('marks a terminating unscheduled pod Failed and deletes it with grace 0', async () => {
    const pod = (await exists('unsched'))!;
    assert.equal(pod.status?.phase, 'Failed');
    assert.equal(pod.metadata.deletionGracePeriodSeconds, 0);
    // Only the test's finalizer holds it now.
    await dropFinalizers(api.client, 'unsched');
    await until('unsched gone', async () => !(await exists('unsched')));
  });

  it('deletes pods of a missing node only after the quarantine, re-checking the node', async () => {
    await nextPass(); // t = 20 s: ghost has been missing for 20 s only.
    let orphan = (await exists('orphan'))!;
    assert.equal(orphan.status?.phase, 'Running');
    assert.equal(orphan.metadata.deletionTimestamp, undefined);
    // late-node appears before its quarantine ends: its pod stays.
    await api.client.create(resources.nodes, makeNode('late-node'));
    await nextPass(); // t = 40 s
    orphan = (await exists('orphan'))!;
    assert.equal(orphan.status?.phase, 'Failed');
    assert.ok(orphan.metadata.deletionTimestamp);
    assert.equal(orphan.metadata.deletionGracePeriodSeconds, 0);
    const cond = orphan.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual(
      { status: cond?.status, reason: cond?.reason, message: cond?.message },
      { status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' },
    );
    await dropFinalizers(api.client, 'orphan');
    await until('orphan gone', async () => !(await exists('orphan')));
    assert.equal((await exists('late'))?.status?.phase, 'Running');
    assert.ok(await exists('keep'));
    assert.ok(await exists('done-3'));
    assert.ok(await exists('done-4'));
  });
});

describe('terminatedPodsToDelete', () => {
  const pod = (name: string, created: string, phase: PodStatus['phase'], reason?: string): Pod => ({
    metadata: { name, creationTimestamp: created },
    spec: { containers: [] },
    status: { phase, ...(reason ? { reason } : {}) },
  });
  const pods = [
    pod('new', '2026-01-01T00:00:05Z', 'Succeeded'),
    pod('old', '2026-01-01T00:00:01Z', 'Failed'),
    pod('b-same', '2026-01-01T00:00:03Z', 'Succeeded'),
    pod('a-same', '2026-01-01T00:00:03Z', 'Succeeded'),
    pod('evicted', '2026-01-01T00:00:09Z', 'Failed', 'Evicted'),
    pod('running', '2026-01-01T00:00:00Z', 'Running'),
    pod('pending', '2026-01-01T00:00:00Z', 'Pending'),
  ];
  const cases: [number, string[]][] = [
    [10, []],
    [5, []],
    [4, ['evicted']],
    [2, ['evicted', 'old', 'a-same']],
    [1, ['evicted', 'old', 'a-same', 'b-same']],
    [0, []],
  ];
  for (const [threshold, want] of cases) {
    it(`threshold ${threshold}`, () => {
      assert.deepEqual(
        terminatedPodsToDelete(pods, threshold).map((p) => p.metadata.name),
        want,
      );
    });
  }

  it('orders evicted pods first, then by creation time, then by name', () => {
    const sorted = pods.filter((p) => p.status?.phase !== 'Running').sort(byEvictionAndCreationTimestamp);
    assert.deepEqual(
      sorted.map((p) => p.metadata.name),
      ['evicted', 'pending', 'old', 'a-same', 'b-same', 'new'],
    );
  });
});
