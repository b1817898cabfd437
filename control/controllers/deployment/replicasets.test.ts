import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Deployment, ReplicaSet } from '../../../api/types.js';
import { MAX_REPLICAS_ANNOTATION, DESIRED_REPLICAS_ANNOTATION } from './annotations.js';
import { POD_TEMPLATE_HASH_LABEL } from './hash.js';
import {
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  isSaturated,
  newRSNewReplicas,
  proportionalSizes,
} from './replicasets.js';
import { maxScaledDown } from './rolling.js';

const template = (image: string) => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image }] },
});

function deployment(replicas: number, opts: Partial<Deployment['spec']> = {}): Deployment {
  return {
    metadata: { name: 'web', namespace: 'default', generation: 1 },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: template('v2'),
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      ...opts,
    },
  };
}

function rs(
  name: string,
  replicas: number,
  opts: { image?: string; created?: string; available?: number; max?: number; desired?: number } = {},
): ReplicaSet {
  const annotations: Record<string, string> = {};
  if (opts.max !== undefined) annotations[MAX_REPLICAS_ANNOTATION] = String(opts.max);
  if (opts.desired !== undefined) annotations[DESIRED_REPLICAS_ANNOTATION] = String(opts.desired);
  const t = template(opts.image ?? 'v1');
  const labels: Record<string, string> = { ...t.metadata.labels, [POD_TEMPLATE_HASH_LABEL]: name };
  t.metadata.labels = labels as typeof t.metadata.labels;
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      creationTimestamp: opts.created ?? '2026-01-01T00:00:00Z',
      annotations,
    },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: t },
    status: {
      replicas,
      availableReplicas: opts.available ?? replicas,
      readyReplicas: opts.available ?? replicas,
    },
  };
}

describe('findNewReplicaSet / findOldReplicaSets', () => {
  it('the new one has the template (ignoring the hash label); the oldest wins a tie', () => {
    const old = rs('old', 3, { image: 'v1' });
    const a = rs('a', 1, { image: 'v2', created: '2026-01-01T00:00:05Z' });
    const b = rs('b', 1, { image: 'v2', created: '2026-01-01T00:00:01Z' });
    const d = deployment(3);
    assert.equal(findNewReplicaSet(d, [old, a, b])?.metadata.name, 'b');
    assert.deepEqual(
      findOldReplicaSets(d, [old, a, b]).map((r) => r.metadata.name),
      ['old', 'a'],
    );
    assert.equal(findNewReplicaSet(d, [old]), undefined);
  });
});

describe('newRSNewReplicas', () => {
  const cases: [string, Deployment, ReplicaSet[], number][] = [
    // 5 replicas, surge 2: 5 old + 0 new → new may have 2
    ['first step of 5 with surge 2', deployment(5), [rs('old', 5), rs('new', 0, { image: 'v2' })], 2],
    ['no room above replicas + surge', deployment(5), [rs('old', 5), rs('new', 2, { image: 'v2' })], 2],
    ['room after old scaled down', deployment(5), [rs('old', 3), rs('new', 2, { image: 'v2' })], 4],
    ['never above replicas', deployment(5), [rs('old', 0), rs('new', 4, { image: 'v2' })], 5],
    [
      'Recreate: all at once',
      deployment(5, { strategy: { type: 'Recreate' } }),
      [rs('new', 0, { image: 'v2' })],
      5,
    ],
  ];
  for (const [name, d, all, want] of cases) {
    it(name, () => assert.equal(newRSNewReplicas(d, all, all[all.length - 1]!), want));
  }
});

describe('maxScaledDown (how many old replicas may go)', () => {
  const cases: [string, ReplicaSet[], number][] = [
    // 5 replicas, maxUnavailable 1 → minAvailable 4; 5 old + 2 new (none available) → 7 − 4 − 2 = 1
    ['new pods not yet available', [rs('old', 5), rs('new', 2, { image: 'v2', available: 0 })], 1],
    ['new pods available', [rs('old', 5), rs('new', 2, { image: 'v2', available: 2 })], 3],
    ['at the floor', [rs('old', 4), rs('new', 1, { image: 'v2', available: 0 })], 0],
  ];
  for (const [name, all, want] of cases) {
    it(name, () => assert.equal(maxScaledDown(deployment(5), all, all[all.length - 1]!), want));
  }
});

describe('findActiveOrLatest', () => {
  it('the only active ReplicaSet, else the new one, else the newest old one; none when several are active', () => {
    const o1 = rs('o1', 0, { created: '2026-01-01T00:00:01Z' });
    const o2 = rs('o2', 0, { created: '2026-01-01T00:00:02Z' });
    const n = rs('n', 0, { image: 'v2' });
    assert.equal(findActiveOrLatest(n, [o1, o2])?.metadata.name, 'n');
    assert.equal(findActiveOrLatest(undefined, [o1, o2])?.metadata.name, 'o2');
    assert.equal(findActiveOrLatest(n, [rs('o3', 2), o1])?.metadata.name, 'o3');
    assert.equal(findActiveOrLatest(rs('n2', 1), [rs('o3', 2)]), undefined);
    assert.equal(findActiveOrLatest(undefined, []), undefined);
  });
});

describe('isSaturated', () => {
  const cases: [string, ReplicaSet, boolean][] = [
    ['full, annotated, available', rs('n', 5, { desired: 5 }), true],
    ['not all available', rs('n', 5, { desired: 5, available: 4 }), false],
    ['annotation for another size', rs('n', 5, { desired: 4 }), false],
    ['no annotation', rs('n', 5), false],
  ];
  for (const [name, r, want] of cases) it(name, () => assert.equal(isSaturated(deployment(5), r), want));
});

describe('proportionalSizes (scaling mid-rollout)', () => {
  const sizes = (d: Deployment, all: ReplicaSet[]) =>
    Object.fromEntries(proportionalSizes(d, all).map(([r, n]) => [r.metadata.name, n]));
  const cases: [string, Deployment, ReplicaSet[], Record<string, number>][] = [
    // 10 → 20 (max 13 → 25): 12 more shared 8:5, largest first
    [
      'scale up 10 → 20',
      deployment(20),
      [rs('old', 8, { max: 13 }), rs('new', 5, { image: 'v2', max: 13, created: '2026-01-01T00:01:00Z' })],
      { old: 15, new: 10 },
    ],
    // 10 → 5 (max 13 → 7): 6 fewer shared 8:5
    [
      'scale down 10 → 5',
      deployment(5),
      [rs('old', 8, { max: 13 }), rs('new', 5, { image: 'v2', max: 13, created: '2026-01-01T00:01:00Z' })],
      { old: 4, new: 3 },
    ],
    [
      'scale to 0',
      deployment(0),
      [rs('old', 8, { max: 13 }), rs('new', 5, { image: 'v2', max: 13 })],
      { old: 0, new: 0 },
    ],
    // 6 → 7 (max 6 → 7): each fraction rounds to 0, so the one extra goes to the first
    // (equal sizes when growing: newest first; equal timestamps: the last name).
    [
      'rounding leftover to the first',
      deployment(7, {
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      }),
      [rs('a', 2, { max: 6 }), rs('b', 2, { max: 6 }), rs('c', 2, { max: 6 })],
      { a: 2, b: 2, c: 3 },
    ],
  ];
  for (const [name, d, all, want] of cases) {
    it(name, () => {
      const got = sizes(d, all);
      assert.deepEqual(got, want);
      const allowed = (d.spec.replicas ?? 0) > 0 ? Object.values(want).reduce((a, b) => a + b, 0) : 0;
      assert.equal(
        Object.values(got).reduce((a, b) => a + b, 0),
        allowed,
      );
    });
  }
});
