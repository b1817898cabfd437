import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NAMESPACE_CONDITION_TYPES, namespaceConditions, sameConditions } from './conditions.js';
import { contentProblems } from './deleter.js';

describe('namespace conditions', () => {
  it('writes all five, False when fine, keeping transition times while the status holds', () => {
    const first = namespaceConditions(undefined, {}, '2026-01-01T00:00:00Z');
    assert.deepEqual(
      first.map((c) => c.type),
      [...NAMESPACE_CONDITION_TYPES],
    );
    assert.ok(first.every((c) => c.status === 'False' && c.lastTransitionTime === '2026-01-01T00:00:00Z'));
    assert.equal(first[3]!.reason, 'ContentRemoved');
    const second = namespaceConditions(
      first,
      { NamespaceContentRemaining: { reason: 'SomeResourcesRemain', message: 'm' } },
      '2026-01-01T00:00:05Z',
    );
    assert.equal(second[3]!.status, 'True');
    assert.equal(second[3]!.lastTransitionTime, '2026-01-01T00:00:05Z');
    assert.equal(second[0]!.lastTransitionTime, '2026-01-01T00:00:00Z');
    assert.equal(sameConditions(first, second), false);
    assert.equal(
      sameConditions(
        second,
        namespaceConditions(
          second,
          { NamespaceContentRemaining: { reason: 'SomeResourcesRemain', message: 'm' } },
          'later',
        ),
      ),
      true,
    );
  });

  const cases = [
    {
      name: 'nothing left',
      result: { remaining: new Map(), finalizers: new Map(), errors: [], estimateSeconds: 0 },
      want: {},
    },
    {
      name: 'objects and finalizers left, sorted, worded as Kubernetes',
      result: {
        remaining: new Map([
          ['pods.', 2],
          ['configmaps.', 1],
        ]),
        finalizers: new Map([['example.com/hold', 1]]),
        errors: [],
        estimateSeconds: 30,
      },
      want: {
        NamespaceContentRemaining: {
          reason: 'SomeResourcesRemain',
          message:
            'Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances',
        },
        NamespaceFinalizersRemaining: {
          reason: 'SomeFinalizersRemain',
          message:
            'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
        },
      },
    },
    {
      name: 'a failed resource',
      result: { remaining: new Map(), finalizers: new Map(), errors: ['secrets.: boom'], estimateSeconds: 0 },
      want: {
        NamespaceDeletionContentFailure: {
          reason: 'ContentDeletionFailed',
          message: 'Failed to delete all resource types, 1 remaining: secrets.: boom',
        },
      },
    },
  ];
  for (const c of cases) {
    it(`contentProblems: ${c.name}`, () => {
      assert.deepEqual(contentProblems(c.result), c.want);
    });
  }
});
