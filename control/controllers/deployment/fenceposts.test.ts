import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Deployment } from '../../../api/types.js';
import type { IntOrPercent } from './fenceposts.js';
import { maxSurge, maxUnavailable, resolveFenceposts, scaledValueFromIntOrPercent } from './fenceposts.js';

describe('scaledValueFromIntOrPercent', () => {
  const cases: [IntOrPercent, number, boolean, number][] = [
    [3, 10, true, 3],
    ['25%', 5, true, 2],
    ['25%', 5, false, 1],
    ['25%', 4, true, 1],
    ['25%', 4, false, 1],
    ['50%', 3, true, 2],
    ['50%', 3, false, 1],
    ['0%', 10, true, 0],
    ['100%', 7, false, 7],
    ['25%', 0, true, 0],
  ];
  for (const [v, total, up, want] of cases) {
    it(`${JSON.stringify(v)} of ${total} rounded ${up ? 'up' : 'down'} is ${want}`, () => {
      assert.equal(scaledValueFromIntOrPercent(v, total, up), want);
    });
  }
  it('refuses a string that is not a percentage', () => {
    assert.throws(() => scaledValueFromIntOrPercent('5', 10, true), /not a percentage/);
    assert.throws(() => scaledValueFromIntOrPercent('2.5%', 10, true), /not a percentage/);
  });
});

describe('resolveFenceposts', () => {
  const cases: [IntOrPercent | undefined, IntOrPercent | undefined, number, [number, number]][] = [
    ['25%', '25%', 5, [2, 1]],
    ['25%', '25%', 10, [3, 2]],
    ['25%', '25%', 1, [1, 0]],
    [0, '25%', 3, [0, 1]], // both resolve to 0: maxUnavailable becomes 1
    [0, 0, 4, [0, 1]],
    [1, 0, 4, [1, 0]],
    [undefined, undefined, 4, [0, 1]],
  ];
  for (const [s, u, n, want] of cases) {
    it(`maxSurge ${JSON.stringify(s)}, maxUnavailable ${JSON.stringify(u)} of ${n} → ${want.join('/')}`, () => {
      assert.deepEqual(resolveFenceposts(s, u, n), want);
    });
  }
});

describe('maxSurge / maxUnavailable of a Deployment', () => {
  const deployment = (replicas: number, strategy: Deployment['spec']['strategy']): Deployment => ({
    metadata: { name: 'd' },
    spec: {
      replicas,
      selector: {},
      template: { spec: { containers: [] } },
      ...(strategy ? { strategy } : {}),
    },
  });
  const cases: [string, Deployment, number, number][] = [
    ['defaults (25%/25%) of 5', deployment(5, undefined), 2, 1],
    ['Recreate', deployment(5, { type: 'Recreate' }), 0, 0],
    [
      '0 replicas',
      deployment(0, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } }),
      1,
      0,
    ],
    [
      'maxUnavailable above replicas is capped',
      deployment(2, { rollingUpdate: { maxSurge: 0, maxUnavailable: 5 } }),
      0,
      2,
    ],
  ];
  for (const [name, d, surge, unavailable] of cases) {
    it(name, () => {
      assert.equal(maxSurge(d), surge);
      assert.equal(maxUnavailable(d), unavailable);
    });
  }
});
