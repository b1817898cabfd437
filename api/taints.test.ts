import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  findMatchingUntoleratedTaint,
  getMatchingTolerations,
  minTolerationSeconds,
  taintMatches,
  tolerationToleratesTaint,
} from './taints.js';
import type { Taint, Toleration } from './types.js';

const noExec: Taint = { key: 'k', value: 'v', effect: 'NoExecute' };

const toleratesCases: { name: string; toleration: Toleration; taint: Taint; want: boolean }[] = [
  {
    name: 'Equal, same key/value/effect',
    toleration: { key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute' },
    taint: noExec,
    want: true,
  },
  {
    name: 'Equal, other value',
    toleration: { key: 'k', operator: 'Equal', value: 'w', effect: 'NoExecute' },
    taint: noExec,
    want: false,
  },
  { name: 'omitted operator means Equal', toleration: { key: 'k', value: 'v' }, taint: noExec, want: true },
  { name: 'omitted operator, other value', toleration: { key: 'k', value: 'x' }, taint: noExec, want: false },
  {
    name: 'Equal, no value vs taint without value',
    toleration: { key: 'k', operator: 'Equal' },
    taint: { key: 'k', effect: 'NoSchedule' },
    want: true,
  },
  {
    name: 'Equal, no value vs taint with value',
    toleration: { key: 'k', operator: 'Equal' },
    taint: noExec,
    want: false,
  },
  {
    name: 'Exists ignores the value',
    toleration: { key: 'k', operator: 'Exists' },
    taint: noExec,
    want: true,
  },
  { name: 'Exists, other key', toleration: { key: 'j', operator: 'Exists' }, taint: noExec, want: false },
  {
    name: 'empty key with Exists tolerates everything',
    toleration: { operator: 'Exists' },
    taint: noExec,
    want: true,
  },
  {
    name: 'empty key with Exists and effect: that effect only',
    toleration: { operator: 'Exists', effect: 'NoSchedule' },
    taint: noExec,
    want: false,
  },
  {
    name: 'empty effect matches every effect',
    toleration: { key: 'k', operator: 'Exists', effect: '' },
    taint: noExec,
    want: true,
  },
  {
    name: 'other effect',
    toleration: { key: 'k', operator: 'Exists', effect: 'NoSchedule' },
    taint: noExec,
    want: false,
  },
  {
    name: 'PreferNoSchedule toleration vs NoSchedule taint',
    toleration: { key: 'k', operator: 'Exists', effect: 'PreferNoSchedule' },
    taint: { key: 'k', effect: 'NoSchedule' },
    want: false,
  },
  {
    name: 'empty key with Equal and empty value matches a taint with empty key only',
    toleration: { operator: 'Equal' },
    taint: noExec,
    want: false,
  },
  {
    name: 'unknown operator tolerates nothing',
    toleration: { key: 'k', operator: 'Gt' as 'Exists', value: 'v' },
    taint: noExec,
    want: false,
  },
];

for (const c of toleratesCases) {
  test(`tolerationToleratesTaint: ${c.name}`, () => {
    assert.equal(tolerationToleratesTaint(c.toleration, c.taint), c.want);
  });
}

test('findMatchingUntoleratedTaint returns the first untolerated taint that passes the filter', () => {
  const taints: Taint[] = [
    { key: 'a', effect: 'NoSchedule' },
    { key: 'b', effect: 'PreferNoSchedule' },
    { key: 'c', effect: 'NoExecute' },
  ];
  assert.deepEqual(findMatchingUntoleratedTaint(taints, []), taints[0]);
  assert.deepEqual(findMatchingUntoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }]), taints[1]);
  const hard = (t: Taint) => t.effect === 'NoSchedule' || t.effect === 'NoExecute';
  assert.deepEqual(findMatchingUntoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }], hard), taints[2]);
  assert.equal(
    findMatchingUntoleratedTaint(
      taints,
      [
        { key: 'a', operator: 'Exists' },
        { key: 'c', operator: 'Exists' },
      ],
      hard,
    ),
    undefined,
  );
  assert.equal(findMatchingUntoleratedTaint(undefined, undefined), undefined);
  assert.equal(findMatchingUntoleratedTaint(taints, [{ operator: 'Exists' }]), undefined);
});

test('getMatchingTolerations: first tolerating toleration per taint; any untolerated taint means none', () => {
  const t1: Taint = { key: 'x', effect: 'NoExecute' };
  const t2: Taint = { key: 'y', effect: 'NoExecute' };
  const tolX: Toleration = { key: 'x', operator: 'Exists', tolerationSeconds: 10 };
  const tolAll: Toleration = { operator: 'Exists', tolerationSeconds: 20 };
  assert.deepEqual(getMatchingTolerations([], [tolX]), { allTolerated: true, used: [] });
  assert.deepEqual(getMatchingTolerations(undefined, undefined), { allTolerated: true, used: [] });
  assert.deepEqual(getMatchingTolerations([t1], []), { allTolerated: false, used: [] });
  assert.deepEqual(getMatchingTolerations([t1, t2], [tolX]), { allTolerated: false, used: [] });
  assert.deepEqual(getMatchingTolerations([t1, t2], [tolX, tolAll]), {
    allTolerated: true,
    used: [tolX, tolAll],
  });
  assert.deepEqual(getMatchingTolerations([t1, t2], [tolAll, tolX]), {
    allTolerated: true,
    used: [tolAll, tolAll],
  });
});

const minCases: { name: string; tolerations: Toleration[]; want: number }[] = [
  { name: 'no tolerations: evict now', tolerations: [], want: 0 },
  { name: 'no tolerationSeconds: forever', tolerations: [{ operator: 'Exists' }], want: Infinity },
  {
    name: 'smallest wins',
    tolerations: [{ tolerationSeconds: 300 }, { operator: 'Exists' }, { tolerationSeconds: 2 }],
    want: 2,
  },
  { name: 'zero: evict now', tolerations: [{ tolerationSeconds: 300 }, { tolerationSeconds: 0 }], want: 0 },
  { name: 'negative: evict now', tolerations: [{ tolerationSeconds: -5 }], want: 0 },
];
for (const c of minCases) {
  test(`minTolerationSeconds: ${c.name}`, () => {
    assert.equal(minTolerationSeconds(c.tolerations), c.want);
  });
}

test('taintMatches compares key and effect, not value', () => {
  assert.equal(
    taintMatches(
      { key: 'a', value: '1', effect: 'NoExecute' },
      { key: 'a', value: '2', effect: 'NoExecute' },
    ),
    true,
  );
  assert.equal(taintMatches({ key: 'a', effect: 'NoExecute' }, { key: 'a', effect: 'NoSchedule' }), false);
  assert.equal(taintMatches({ key: 'a', effect: 'NoExecute' }, { key: 'b', effect: 'NoExecute' }), false);
});
