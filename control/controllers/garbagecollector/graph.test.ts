import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, OwnerReference } from '../../../api/object.js';
import { DependencyGraph, partitionDependents, referencesDiffs } from './graph.js';

function cm(
  name: string,
  uid: string,
  owners: OwnerReference[] = [],
  extra: KubeObject['metadata'] = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', uid, ownerReferences: owners, ...extra },
  };
}

function ref(name: string, uid: string, block = false): OwnerReference {
  return { apiVersion: 'v1', kind: 'ConfigMap', name, uid, ...(block ? { blockOwnerDeletion: true } : {}) };
}

describe('DependencyGraph', () => {
  it('a dependent seen before its owner creates a virtual owner, which is checked', () => {
    const g = new DependencyGraph();
    const actions = g.process({ type: 'add', obj: cm('dep', 'd1', [ref('owner', 'o1')]) });
    assert.deepEqual(actions, { attemptToDelete: ['o1'], attemptToOrphan: [] });
    const owner = g.node('o1')!;
    assert.equal(owner.virtual, true);
    assert.deepEqual(owner.identity, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'owner',
      uid: 'o1',
      namespace: 'ns',
    });
    assert.deepEqual(
      [...owner.dependents].map((d) => d.identity.uid),
      ['d1'],
    );
    // The informer delivers the owner: it becomes observed, nothing to do.
    assert.deepEqual(g.process({ type: 'add', obj: cm('owner', 'o1') }), {
      attemptToDelete: [],
      attemptToOrphan: [],
    });
    assert.equal(g.node('o1')!.virtual, false);
  });

  it('an owner observed under other coordinates than a dependent names sends that dependent to attemptToDelete', () => {
    const g = new DependencyGraph();
    g.process({ type: 'add', obj: cm('dep', 'd1', [ref('old-name', 'o1')]) });
    const actions = g.process({ type: 'add', obj: cm('owner', 'o1') });
    assert.deepEqual(actions.attemptToDelete, ['d1']);
    assert.equal(g.node('o1')!.identity.name, 'owner');
  });

  it('deleting an owner enqueues its dependents; a virtual delete of an absent owner removes it', () => {
    const g = new DependencyGraph();
    g.process({ type: 'add', obj: cm('owner', 'o1') });
    g.process({ type: 'add', obj: cm('a', 'a1', [ref('owner', 'o1')]) });
    g.process({ type: 'add', obj: cm('b', 'b1', [ref('owner', 'o1')]) });
    const actions = g.process({ type: 'delete', obj: cm('owner', 'o1') });
    assert.deepEqual(actions.attemptToDelete.sort(), ['a1', 'b1']);
    assert.equal(g.node('o1'), undefined);

    const v = new DependencyGraph();
    v.process({ type: 'add', obj: cm('dep', 'd1', [ref('ghost', 'g1')]) });
    const identity = v.node('g1')!.identity;
    assert.deepEqual(v.process({ type: 'delete', obj: {}, virtual: identity }).attemptToDelete, ['d1']);
    assert.equal(v.node('g1'), undefined);
  });

  it('a virtual delete under coordinates a real node does not have leaves the node', () => {
    const g = new DependencyGraph();
    g.process({ type: 'add', obj: cm('owner', 'o1') });
    g.process({ type: 'add', obj: cm('good', 'd1', [ref('owner', 'o1')]) });
    g.process({ type: 'add', obj: cm('bad', 'd2', [ref('wrong', 'o1')]) });
    const actions = g.process({
      type: 'delete',
      obj: {},
      virtual: { apiVersion: 'v1', kind: 'ConfigMap', name: 'wrong', uid: 'o1', namespace: 'ns' },
    });
    assert.deepEqual(actions.attemptToDelete, ['d2']);
    assert.ok(g.node('o1'));
  });

  const deleting = { deletionTimestamp: '2026-01-01T00:00:00Z' };
  const cases: {
    name: string;
    finalizers: string[];
    want: { attemptToDelete: string[]; attemptToOrphan: string[] };
  }[] = [
    {
      name: 'orphan finalizer → attemptToOrphan',
      finalizers: ['orphan'],
      want: { attemptToDelete: [], attemptToOrphan: ['o1'] },
    },
    {
      name: 'foregroundDeletion finalizer → dependents and the owner to attemptToDelete',
      finalizers: ['foregroundDeletion'],
      want: { attemptToDelete: ['d1', 'o1'], attemptToOrphan: [] },
    },
    {
      name: 'other finalizers → nothing',
      finalizers: ['example.com/x'],
      want: { attemptToDelete: [], attemptToOrphan: [] },
    },
  ];
  for (const c of cases) {
    it(`an owner that starts being deleted with ${c.name}`, () => {
      const g = new DependencyGraph();
      const owner = cm('owner', 'o1');
      g.process({ type: 'add', obj: owner });
      g.process({ type: 'add', obj: cm('dep', 'd1', [ref('owner', 'o1', true)]) });
      const marked = cm('owner', 'o1', [], { ...deleting, finalizers: c.finalizers });
      assert.deepEqual(g.process({ type: 'update', oldObj: owner, obj: marked }), c.want);
      // The same state again (a resync) is no new transition.
      assert.deepEqual(g.process({ type: 'update', oldObj: marked, obj: marked }), {
        attemptToDelete: [],
        attemptToOrphan: [],
      });
    });
  }

  it('foreground: blocking dependents hold the owner; losing the block or the dependent re-enqueues it', () => {
    const g = new DependencyGraph();
    g.process({
      type: 'add',
      obj: cm('owner', 'o1', [], { ...deleting, finalizers: ['foregroundDeletion'] }),
    });
    const dep = cm('dep', 'd1', [ref('owner', 'o1', true)]);
    g.process({ type: 'add', obj: dep });
    const owner = g.node('o1')!;
    assert.equal(owner.deletingDependents, true);
    assert.deepEqual(
      owner.blockingDependents().map((d) => d.identity.uid),
      ['d1'],
    );
    const unblocked = cm('dep', 'd1', [ref('owner', 'o1', false)]);
    assert.deepEqual(g.process({ type: 'update', oldObj: dep, obj: unblocked }).attemptToDelete, ['o1']);
    assert.deepEqual(owner.blockingDependents(), []);
    assert.deepEqual(g.process({ type: 'delete', obj: unblocked }).attemptToDelete, ['o1']);
    assert.equal(owner.dependents.size, 0);
  });

  it('losing an ownerReference removes the dependent from that owner only', () => {
    const g = new DependencyGraph();
    g.process({ type: 'add', obj: cm('a', 'o1') });
    g.process({ type: 'add', obj: cm('b', 'o2') });
    const dep = cm('dep', 'd1', [ref('a', 'o1'), ref('b', 'o2')]);
    g.process({ type: 'add', obj: dep });
    g.process({ type: 'update', oldObj: dep, obj: cm('dep', 'd1', [ref('b', 'o2')]) });
    assert.equal(g.node('o1')!.dependents.size, 0);
    assert.equal(g.node('o2')!.dependents.size, 1);
  });
});

describe('referencesDiffs and partitionDependents', () => {
  it('tells added, removed and changed references apart by uid', () => {
    const d = referencesDiffs([ref('a', '1'), ref('b', '2')], [ref('b', '2', true), ref('c', '3')]);
    assert.deepEqual(
      d.added.map((r) => r.uid),
      ['3'],
    );
    assert.deepEqual(
      d.removed.map((r) => r.uid),
      ['1'],
    );
    assert.deepEqual(
      d.changed.map((c) => c.new.uid),
      ['2'],
    );
  });

  it('a dependent in another namespace never matches a namespaced owner', () => {
    const g = new DependencyGraph();
    g.process({ type: 'add', obj: cm('dep', 'd1', [ref('owner', 'o1')]) });
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o1' };
    const same = partitionDependents(g.node('o1')!.dependents, { ...owner, namespace: 'ns' });
    assert.deepEqual([same.matching.length, same.nonmatching.length], [1, 0]);
    const other = partitionDependents(g.node('o1')!.dependents, { ...owner, namespace: 'elsewhere' });
    assert.deepEqual([other.matching.length, other.nonmatching.length], [0, 1]);
    const cluster = partitionDependents(g.node('o1')!.dependents, { ...owner, namespace: '' });
    assert.deepEqual([cluster.matching.length, cluster.nonmatching.length], [1, 0]);
  });
});
