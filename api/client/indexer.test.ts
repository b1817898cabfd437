import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../object.js';
import { fieldIndexFunc, IndexNotFoundError, Indexer, NAMESPACE_INDEX } from './indexer.js';
import { KeyError, keyOf, metaNamespaceKey, splitMetaNamespaceKey } from './store.js';

const pod = (ns: string, name: string, nodeName?: string, rv = '1'): KubeObject => ({
  metadata: { namespace: ns, name, resourceVersion: rv },
  spec: nodeName === undefined ? {} : { nodeName },
});
const names = (objs: KubeObject[]) => objs.map((o) => o.metadata!.name).sort();

describe('keys', () => {
  it('metaNamespaceKey and splitMetaNamespaceKey', () => {
    assert.equal(metaNamespaceKey(pod('ns', 'a')), 'ns/a');
    assert.equal(metaNamespaceKey({ metadata: { name: 'node-1' } }), 'node-1');
    assert.throws(() => metaNamespaceKey({ metadata: {} }), KeyError);
    assert.deepEqual(splitMetaNamespaceKey('ns/a'), { namespace: 'ns', name: 'a' });
    assert.deepEqual(splitMetaNamespaceKey('node-1'), { namespace: '', name: 'node-1' });
    for (const bad of ['', 'a/b/c', 'ns/']) assert.throws(() => splitMetaNamespaceKey(bad), KeyError, bad);
    assert.equal(keyOf('', 'n'), 'n');
    assert.equal(keyOf(undefined, 'n'), 'n');
    assert.equal(keyOf('ns', 'n'), 'ns/n');
  });
});

describe('Indexer', () => {
  it('stores by key and indexes by namespace', () => {
    const ix = new Indexer();
    ix.add(pod('a', 'p1'));
    ix.add(pod('a', 'p2'));
    ix.add(pod('b', 'p1'));
    assert.equal(ix.size, 3);
    assert.deepEqual(ix.listKeys().sort(), ['a/p1', 'a/p2', 'b/p1']);
    assert.deepEqual(names(ix.byIndex(NAMESPACE_INDEX, 'a')), ['p1', 'p2']);
    assert.deepEqual(ix.indexKeys(NAMESPACE_INDEX, 'b'), ['b/p1']);
    assert.deepEqual(ix.byIndex(NAMESPACE_INDEX, 'c'), []);
    assert.deepEqual(ix.listIndexFuncValues(NAMESPACE_INDEX).sort(), ['a', 'b']);
    ix.delete(pod('b', 'p1'));
    assert.deepEqual(ix.listIndexFuncValues(NAMESPACE_INDEX), ['a']);
    assert.equal(ix.getByKey('b/p1'), undefined);
    ix.delete(pod('b', 'p1')); // missing: no error
  });

  it('moves an updated object between index values (spec.nodeName)', () => {
    const ix = new Indexer({ indexers: { byNode: fieldIndexFunc('spec.nodeName') } });
    ix.add(pod('d', 'p1'));
    ix.add(pod('d', 'p2', 'n1'));
    assert.deepEqual(names(ix.byIndex('byNode', '')), ['p1'], 'unbound pods sit under ""');
    ix.update(pod('d', 'p1', 'n1', '2'));
    assert.deepEqual(names(ix.byIndex('byNode', 'n1')), ['p1', 'p2']);
    assert.deepEqual(ix.byIndex('byNode', ''), []);
    ix.update(pod('d', 'p2', 'n2', '3'));
    assert.deepEqual(names(ix.byIndex('byNode', 'n1')), ['p1']);
    assert.equal(ix.getByKey('d/p2')!.metadata!.resourceVersion, '3');
    assert.throws(() => ix.byIndex(NAMESPACE_INDEX, 'd'), IndexNotFoundError, 'only the given indexers');
  });

  it('multi-valued indexes, index(), replace() and late indexers', () => {
    const byLabel = (o: KubeObject) => Object.entries(o.metadata?.labels ?? {}).map(([k, v]) => `${k}=${v}`);
    const ix = new Indexer();
    ix.add({ metadata: { namespace: 'x', name: 'a', labels: { app: 'web', tier: 'fe' } } });
    ix.add({ metadata: { namespace: 'x', name: 'b', labels: { app: 'web' } } });
    ix.add({ metadata: { namespace: 'x', name: 'c', labels: { tier: 'fe' } } });
    ix.addIndexers({ byLabel }); // built from what is stored
    ix.addIndexers({ byLabel }); // the same function again: no-op
    assert.throws(() => ix.addIndexers({ byLabel: () => [] }), /already exists/);
    assert.deepEqual(names(ix.byIndex('byLabel', 'app=web')), ['a', 'b']);
    assert.deepEqual(names(ix.index('byLabel', ix.getByKey('x/a')!)), ['a', 'b', 'c']);
    ix.replace([{ metadata: { namespace: 'y', name: 'd', labels: { app: 'web' } } }]);
    assert.deepEqual(ix.listKeys(), ['y/d']);
    assert.deepEqual(names(ix.byIndex('byLabel', 'app=web')), ['d']);
    assert.deepEqual(ix.byIndex('byLabel', 'tier=fe'), []);
    assert.deepEqual(ix.byIndex(NAMESPACE_INDEX, 'x'), []);
    assert.throws(() => ix.byIndex('nope', 'v'), IndexNotFoundError);
  });

  it('leaves the store unchanged when an index function throws', () => {
    const ix = new Indexer<KubeObject>({
      indexers: {
        boom: (o) => {
          if (o.metadata?.name === 'bad') throw new Error('boom');
          return ['v'];
        },
      },
    });
    ix.add(pod('n', 'good'));
    assert.throws(() => ix.add(pod('n', 'bad')), /boom/);
    assert.throws(() => ix.replace([pod('n', 'bad')]), /boom/);
    assert.deepEqual(ix.listKeys(), ['n/good']);
    assert.deepEqual(ix.indexKeys('boom', 'v'), ['n/good']);
  });
});
