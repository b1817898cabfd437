import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod, PodPhase } from '../../../api/types.js';
import {
  deletesBefore,
  getPodsToDelete,
  podDeletionCost,
  POD_DELETION_COST_ANNOTATION,
  ranksByRelatedPodsOnSameNode,
} from './pods-to-delete.js';

interface PodSpecForTest {
  name?: string;
  uid?: string;
  node?: string;
  phase?: PodPhase;
  ready?: boolean;
  readySince?: string;
  restarts?: number;
  created?: string;
  cost?: string;
  deleting?: boolean;
}

function pod(s: PodSpecForTest): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: s.name ?? 'p',
      namespace: 'default',
      uid: s.uid ?? s.name ?? 'uid',
      creationTimestamp: s.created ?? '2026-01-01T00:00:00Z',
      ...(s.cost !== undefined ? { annotations: { [POD_DELETION_COST_ANNOTATION]: s.cost } } : {}),
      ...(s.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: s.node, containers: [{ name: 'c' }] },
    status: {
      phase: s.phase ?? 'Running',
      conditions: [
        {
          type: 'Ready',
          status: s.ready === false ? 'False' : 'True',
          lastTransitionTime: s.readySince ?? '2026-01-01T00:00:00Z',
        },
      ],
      containerStatuses: [
        { name: 'c', ready: s.ready !== false, restartCount: s.restarts ?? 0, image: '', imageID: '' },
      ],
    },
  };
}

describe('deletesBefore (ActivePodsWithRanks order)', () => {
  const base: PodSpecForTest = { node: 'n1' };
  const cases: Array<{ name: string; a: PodSpecForTest; b: PodSpecForTest; rankA?: number; rankB?: number }> =
    [
      {
        name: 'unscheduled before scheduled',
        a: { node: '' },
        b: { ...base, phase: 'Pending', ready: false },
      },
      { name: 'Pending before Unknown', a: { ...base, phase: 'Pending' }, b: { ...base, phase: 'Unknown' } },
      { name: 'Unknown before Running', a: { ...base, phase: 'Unknown' }, b: { ...base, phase: 'Running' } },
      {
        name: 'not ready before ready',
        a: { ...base, ready: false },
        b: { ...base, ready: true, restarts: 9 },
      },
      {
        name: 'lower deletion cost before higher',
        a: { ...base, cost: '-5' },
        b: { ...base, cost: '10' },
        rankA: 1,
        rankB: 9,
      },
      {
        name: 'more colocated pods (rank) before fewer',
        a: { ...base, readySince: '2026-01-01T00:00:00Z' },
        b: { ...base, readySince: '2026-01-01T01:00:00Z' },
        rankA: 3,
        rankB: 1,
      },
      {
        name: 'ready for less time before more',
        a: { ...base, readySince: '2026-01-01T01:00:00Z' },
        b: { ...base, readySince: '2026-01-01T00:00:00Z', restarts: 5 },
      },
      { name: 'more restarts before fewer', a: { ...base, restarts: 3 }, b: { ...base, restarts: 1 } },
      {
        name: 'newer before older',
        a: { ...base, created: '2026-01-01T00:00:10Z' },
        b: { ...base, created: '2026-01-01T00:00:05Z' },
      },
    ];
  for (const c of cases) {
    it(c.name, () => {
      const a = pod({ name: 'a', ...c.a });
      const b = pod({ name: 'b', ...c.b });
      assert.equal(deletesBefore(a, c.rankA ?? 0, b, c.rankB ?? 0), true, 'a first');
      assert.equal(deletesBefore(b, c.rankB ?? 0, a, c.rankA ?? 0), false, 'not b first');
    });
  }

  it('equal pods: neither first', () => {
    const a = pod({ name: 'a', node: 'n1' });
    assert.equal(deletesBefore(a, 0, pod({ name: 'b', node: 'n1' }), 0), false);
  });

  it('with now, times in the same log2 bucket are ordered by uid; different buckets by age', () => {
    const now = Date.parse('2026-01-01T10:00:00Z');
    // 100 s and 110 s old: both floor(log2(ns)) = 36.
    const older = pod({ name: 'older', uid: 'a-uid', node: 'n1', created: '2026-01-01T09:58:10Z' });
    const newer = pod({ name: 'newer', uid: 'z-uid', node: 'n1', created: '2026-01-01T09:58:20Z' });
    assert.equal(deletesBefore(older, 0, newer, 0, now), true, 'same bucket: smaller uid first');
    assert.equal(deletesBefore(newer, 0, older, 0), true, 'exact comparison: newer first');
    // 10 s old versus 100 s old: different buckets, the younger goes first.
    const young = pod({ name: 'young', uid: 'z', node: 'n1', created: '2026-01-01T09:59:50Z' });
    assert.equal(deletesBefore(young, 0, older, 0, now), true);
  });
});

describe('podDeletionCost', () => {
  const cases: Array<[string | undefined, number]> = [
    [undefined, 0],
    ['100', 100],
    ['-7', -7],
    ['+3', 3],
    ['abc', 0],
    ['1.5', 0],
    ['2147483648', 0],
    ['-2147483648', -2147483648],
  ];
  for (const [v, want] of cases) {
    it(`${String(v)} → ${want}`, () => assert.equal(podDeletionCost(pod({ cost: v })), want));
  }
});

describe('getPodsToDelete', () => {
  it('ranks by active related pods on the same node', () => {
    const pods = [pod({ name: 'a', node: 'n1' }), pod({ name: 'b', node: 'n2' })];
    const related = [...pods, pod({ name: 'c', node: 'n1' }), pod({ name: 'd', node: 'n2', deleting: true })];
    assert.deepEqual(ranksByRelatedPodsOnSameNode(pods, related), [2, 1]);
  });

  it('picks the diff pods that should go first, without touching its input', () => {
    const pods = [
      pod({ name: 'ready-old', node: 'n1', readySince: '2026-01-01T00:00:00Z' }),
      pod({ name: 'unscheduled', node: '', phase: 'Pending', ready: false }),
      pod({ name: 'not-ready', node: 'n2', ready: false }),
      pod({ name: 'ready-new', node: 'n2', readySince: '2026-01-01T05:00:00Z' }),
    ];
    const names = pods.map((p) => p.metadata.name);
    const chosen = getPodsToDelete(pods, pods, 3);
    assert.deepEqual(
      chosen.map((p) => p.metadata.name),
      ['unscheduled', 'not-ready', 'ready-new'],
    );
    assert.deepEqual(
      pods.map((p) => p.metadata.name),
      names,
    );
  });

  it('returns all of them when all must go', () => {
    const pods = [pod({ name: 'a' }), pod({ name: 'b' })];
    assert.equal(getPodsToDelete(pods, pods, 5).length, 2);
  });
});
