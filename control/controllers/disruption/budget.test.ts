// The disruption controller's arithmetic (budget.ts), table-driven.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodDisruptionBudget } from '../../../api/policy.js';
import type { Pod } from '../../../api/types.js';
import {
  buildDisruptedPodMap,
  countHealthyPods,
  DELETION_TIMEOUT_MS,
  disruptionsAllowed,
  expectedPodCount,
} from './budget.js';

const pdb = (
  spec: PodDisruptionBudget['spec'],
  disruptedPods?: Record<string, string>,
): PodDisruptionBudget => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'b', namespace: 'default' },
  spec,
  ...(disruptedPods
    ? {
        status: {
          disruptedPods,
          disruptionsAllowed: 0,
          currentHealthy: 0,
          desiredHealthy: 0,
          expectedPods: 0,
        },
      }
    : {}),
});

const pod = (name: string, ready = true, terminating = false): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'default',
    ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: { containers: [] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('expectedPodCount', () => {
  const pods = [pod('a'), pod('b'), pod('c')];
  const cases: [
    string,
    PodDisruptionBudget['spec'],
    number,
    { expectedPods: number; desiredHealthy: number },
  ][] = [
    ['minAvailable int: the selected pods', { minAvailable: 2 }, 10, { expectedPods: 3, desiredHealthy: 2 }],
    [
      'minAvailable 50% of scale 3 rounds up',
      { minAvailable: '50%' },
      3,
      { expectedPods: 3, desiredHealthy: 2 },
    ],
    ['minAvailable 100%', { minAvailable: '100%' }, 4, { expectedPods: 4, desiredHealthy: 4 }],
    ['maxUnavailable int', { maxUnavailable: 1 }, 5, { expectedPods: 5, desiredHealthy: 4 }],
    [
      'maxUnavailable 30% of 5 rounds up to 2',
      { maxUnavailable: '30%' },
      5,
      { expectedPods: 5, desiredHealthy: 3 },
    ],
    [
      'maxUnavailable above the scale: 0 desired',
      { maxUnavailable: 7 },
      5,
      { expectedPods: 5, desiredHealthy: 0 },
    ],
    ['neither set', {}, 5, { expectedPods: 0, desiredHealthy: 0 }],
  ];
  for (const [what, spec, scale, want] of cases) {
    it(what, async () => {
      assert.deepEqual(await expectedPodCount(pdb(spec), pods, () => Promise.resolve(scale)), want);
    });
  }
  it('a malformed percentage throws with intstr words', async () => {
    await assert.rejects(
      expectedPodCount(pdb({ maxUnavailable: '5' }), pods, () => Promise.resolve(1)),
      /invalid value for IntOrString: invalid type: string is not a percentage/,
    );
  });
});

describe('disruptionsAllowed', () => {
  const cases: [number, number, number, number][] = [
    [3, 2, 3, 1],
    [2, 2, 3, 0],
    [1, 2, 3, 0],
    [3, 0, 0, 0], // no expected pods: safe until the controller knows better
  ];
  for (const [healthy, desired, expected, want] of cases) {
    it(`healthy ${healthy}, desired ${desired}, expected ${expected} → ${want}`, () => {
      assert.equal(disruptionsAllowed(healthy, desired, expected), want);
    });
  }
});

describe('disruptedPods', () => {
  const t0 = Date.UTC(2026, 0, 1);
  const at = new Date(t0).toISOString().replace('.000', '');
  const pods = [pod('a'), pod('b'), pod('c', true, true), pod('d', false)];
  const budget = pdb({ minAvailable: 1 }, { a: at, c: at, gone: at });

  it('keeps live entries of existing, non-terminating pods and rechecks when the first expires', () => {
    const r = buildDisruptedPodMap(pods, budget, t0 + 1000);
    assert.deepEqual(r.disruptedPods, { a: at });
    assert.deepEqual(r.expired, []);
    assert.equal(r.recheckAtMs, t0 + DELETION_TIMEOUT_MS);
    // a is about to go, c is terminating, d is not ready: only b is healthy.
    assert.equal(countHealthyPods(pods, r.disruptedPods, t0 + 1000), 1);
  });

  it('after 2 minutes the entry has expired and the pod counts again', () => {
    const r = buildDisruptedPodMap(pods, budget, t0 + DELETION_TIMEOUT_MS);
    assert.deepEqual(r.disruptedPods, {});
    assert.deepEqual(r.expired, ['a']);
    assert.equal(r.recheckAtMs, undefined);
    assert.equal(countHealthyPods(pods, r.disruptedPods, t0 + DELETION_TIMEOUT_MS), 2);
  });
});
