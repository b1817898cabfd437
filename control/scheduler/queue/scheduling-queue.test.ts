/** The scheduling queue on a FakeClock: order, backoff, moves on events, the periodic flushes. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { ActionType, events } from '../framework/events.js';
import { testPod } from '../testing/fixtures.js';
import { SchedulingQueue } from './scheduling-queue.js';
import type { QueuedPodInfo } from './scheduling-queue.js';

function newQueue(clock = new FakeClock()) {
  const eventsByPlugin = new Map([
    ['NodeResourcesFit', [{ resource: 'Pod' as const, actionType: ActionType.Delete, label: 'fit' }]],
    [
      'TaintToleration',
      [{ resource: 'Node' as const, actionType: ActionType.Add | ActionType.UpdateNodeTaint, label: 'tt' }],
    ],
  ]);
  return { clock, q: new SchedulingQueue({ clock, eventsByPlugin }) };
}

function fail(q: SchedulingQueue, qpi: QueuedPodInfo, plugins: string[]) {
  return q.addUnschedulableIfNotPresent(
    { ...qpi, unschedulablePlugins: new Set(plugins) },
    q.schedulingCycle,
  );
}

describe('SchedulingQueue', () => {
  it('pops by priority, then first in first out', async () => {
    const { q, clock } = newQueue();
    q.add(testPod('low-1', { priority: 0 }));
    await clock.advance(1);
    q.add(testPod('high', { priority: 100 }));
    await clock.advance(1);
    q.add(testPod('low-2', { priority: 0 }));
    const order = [q.tryPop(), q.tryPop(), q.tryPop()].map((p) => p?.pod.metadata.name);
    assert.deepEqual(order, ['high', 'low-1', 'low-2']);
    assert.equal(q.tryPop(), undefined);
  });

  it('pop() waits for a pod and resolves undefined on close', async () => {
    const { q } = newQueue();
    const waiting = q.pop();
    q.add(testPod('late'));
    assert.equal((await waiting)?.pod.metadata.name, 'late');
    const never = q.pop();
    q.close();
    assert.equal(await never, undefined);
  });

  it('backoff: 1 s after the first attempt, doubling, capped at 10 s', () => {
    const { q } = newQueue();
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => q.backoffDuration(n)),
      [1000, 2000, 4000, 8000, 10_000, 10_000],
    );
  });

  it('an errored pod waits in backoffQ and comes back when its backoff expires', async () => {
    const { q, clock } = newQueue();
    q.run();
    q.add(testPod('p'));
    const first = q.tryPop()!;
    assert.equal(first.attempts, 1);
    assert.equal(fail(q, first, []), 'backoffQ');
    await clock.advance(999);
    assert.equal(q.whereIs(first.key), 'backoffQ');
    await clock.advance(1001); // the 1 s flush after expiry
    assert.equal(q.whereIs(first.key), 'activeQ');
    const second = q.tryPop()!;
    assert.equal(second.attempts, 2);
    fail(q, second, []);
    await clock.advance(1000);
    assert.equal(q.whereIs(second.key), 'backoffQ', 'second backoff is 2 s');
    await clock.advance(1000);
    assert.equal(q.whereIs(second.key), 'activeQ');
    q.close();
  });

  it('unschedulable pods move only on events their plugins registered for', async () => {
    const { q, clock } = newQueue();
    q.add(testPod('cpu'));
    q.add(testPod('taint'));
    const cpu = q.tryPop()!;
    const taint = q.tryPop()!;
    // Both attempts end after no move request: they go to unschedulablePods.
    assert.equal(fail(q, cpu, ['NodeResourcesFit']), 'unschedulablePods');
    assert.equal(fail(q, taint, ['TaintToleration']), 'unschedulablePods');
    await clock.advance(5000); // past their backoff
    q.moveAllToActiveOrBackoffQueue(events.nodeAdd);
    assert.equal(q.whereIs(cpu.key), 'unschedulablePods');
    assert.equal(q.whereIs(taint.key), 'activeQ');
    q.moveAllToActiveOrBackoffQueue(events.assignedPodDelete);
    assert.equal(q.whereIs(cpu.key), 'activeQ');
  });

  it('a pod still backing off moves to backoffQ, not activeQ', () => {
    const { q } = newQueue();
    q.add(testPod('p'));
    const p = q.tryPop()!;
    fail(q, p, ['NodeResourcesFit']);
    q.moveAllToActiveOrBackoffQueue(events.assignedPodDelete);
    assert.equal(q.whereIs(p.key), 'backoffQ');
  });

  it('a failure after a move request during the attempt goes to backoffQ', () => {
    const { q } = newQueue();
    q.add(testPod('p'));
    const p = q.tryPop()!;
    const cycle = q.schedulingCycle;
    q.moveAllToActiveOrBackoffQueue(events.nodeAdd); // happens while p is in flight
    assert.equal(
      q.addUnschedulableIfNotPresent({ ...p, unschedulablePlugins: new Set(['TaintToleration']) }, cycle),
      'backoffQ',
    );
  });

  it('unschedulable pods are retried after 60 s anyway (flushed every 30 s)', async () => {
    const { q, clock } = newQueue();
    q.run();
    q.add(testPod('p'));
    const p = q.tryPop()!;
    fail(q, p, ['NodeResourcesFit']);
    await clock.advance(59_000);
    assert.equal(q.whereIs(p.key), 'unschedulablePods');
    await clock.advance(31_000);
    assert.equal(q.whereIs(p.key), 'activeQ');
    q.close();
  });

  it('an update of an unschedulable pod moves it only when its spec or labels changed', async () => {
    const { q, clock } = newQueue();
    const pod = testPod('p');
    q.add(pod);
    const p = q.tryPop()!;
    fail(q, p, ['NodeResourcesFit']);
    await clock.advance(2000);
    q.update(pod, { ...pod, status: { phase: 'Pending' } });
    assert.equal(q.whereIs(p.key), 'unschedulablePods');
    q.update(pod, { ...pod, metadata: { ...pod.metadata, labels: { a: 'b' } } });
    assert.equal(q.whereIs(p.key), 'activeQ');
  });

  it('delete removes a pod from any queue; in-flight pods are not re-added by updates', () => {
    const { q } = newQueue();
    const pod = testPod('p');
    q.add(pod);
    const p = q.tryPop()!;
    q.update(pod, pod);
    assert.equal(q.whereIs(p.key), undefined);
    fail(q, p, ['NodeResourcesFit']);
    q.delete(pod);
    assert.equal(q.whereIs(p.key), undefined);
  });
});
