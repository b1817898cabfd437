import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import type { Taint, Toleration } from '../../../api/types.js';
import { EvictionSchedule } from './schedule.js';

const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const notReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
const tol = (key: string, seconds?: number): Toleration => ({
  key,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: seconds,
});

test('EvictionSchedule: untolerated taints evict now', () => {
  const s = new EvictionSchedule();
  assert.deepEqual(s.decide('ns/p', [unreachable], [], 0), { action: 'evict' });
  assert.deepEqual(s.decide('ns/p', [unreachable, notReady], [tol(unreachable.key)], 0), { action: 'evict' });
});

test('EvictionSchedule: tolerationSeconds count from the first decision, by the clock', async () => {
  const clock = new FakeClock(1_000_000);
  const s = new EvictionSchedule();
  const tols = [tol(unreachable.key, 2)];
  assert.deepEqual(s.decide('ns/p', [unreachable], tols, clock.now()), { action: 'wait', fireAt: 1_002_000 });
  await clock.advance(1500);
  assert.deepEqual(s.decide('ns/p', [unreachable], tols, clock.now()), { action: 'wait', fireAt: 1_002_000 });
  await clock.advance(500);
  assert.deepEqual(s.decide('ns/p', [unreachable], tols, clock.now()), { action: 'evict' });
});

test('EvictionSchedule: the smallest tolerationSeconds of the tolerations used wins', () => {
  const s = new EvictionSchedule();
  const tols = [
    tol(unreachable.key, 300),
    tol(notReady.key, 5),
    { operator: 'Exists' as const, tolerationSeconds: 1 },
  ];
  // The catch-all toleration comes last: each taint uses the first toleration that tolerates it.
  assert.deepEqual(s.decide('ns/p', [unreachable, notReady], tols, 0), { action: 'wait', fireAt: 5000 });
});

test('EvictionSchedule: a swapped taint keeps the start time', () => {
  const s = new EvictionSchedule();
  const tols = [tol(unreachable.key, 10), tol(notReady.key, 10)];
  assert.deepEqual(s.decide('ns/p', [notReady], tols, 0), { action: 'wait', fireAt: 10_000 });
  assert.deepEqual(s.decide('ns/p', [unreachable], tols, 4000), { action: 'wait', fireAt: 10_000 });
});

test('EvictionSchedule: tolerated forever, or taints gone, cancels; a later taint starts afresh', () => {
  const s = new EvictionSchedule();
  assert.deepEqual(s.decide('ns/p', [unreachable], [tol(unreachable.key)], 0), {
    action: 'none',
    cancelled: false,
  });
  assert.deepEqual(s.decide('ns/p', [unreachable], [tol(unreachable.key, 3)], 0), {
    action: 'wait',
    fireAt: 3000,
  });
  assert.equal(s.has('ns/p'), true);
  assert.deepEqual(s.decide('ns/p', [], [tol(unreachable.key, 3)], 1000), {
    action: 'none',
    cancelled: true,
  });
  assert.equal(s.has('ns/p'), false);
  assert.deepEqual(s.decide('ns/p', [unreachable], [tol(unreachable.key, 3)], 5000), {
    action: 'wait',
    fireAt: 8000,
  });
  assert.deepEqual(s.decide('ns/p', [unreachable], [tol(unreachable.key)], 6000), {
    action: 'none',
    cancelled: true,
  });
});

test('EvictionSchedule: tolerationSeconds 0 or less evicts now', () => {
  const s = new EvictionSchedule();
  assert.deepEqual(s.decide('ns/p', [unreachable], [tol(unreachable.key, 0)], 0), { action: 'evict' });
  assert.deepEqual(s.decide('ns/q', [unreachable], [tol(unreachable.key, -1)], 0), { action: 'evict' });
});
