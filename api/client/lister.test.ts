import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLabelSelector, SelectorParseError } from '../meta/labels.js';
import type { KubeObject } from '../object.js';
import { Indexer } from './indexer.js';
import { Lister } from './lister.js';

const obj = (ns: string | undefined, name: string, labels?: Record<string, string>): KubeObject => ({
  metadata: { ...(ns ? { namespace: ns } : {}), name, ...(labels ? { labels } : {}) },
});
const names = (objs: KubeObject[]) => objs.map((o) => o.metadata!.name).sort();

describe('Lister', () => {
  const ix = new Indexer();
  ix.add(obj('a', 'web-1', { app: 'web', tier: 'fe' }));
  ix.add(obj('a', 'db-1', { app: 'db' }));
  ix.add(obj('b', 'web-2', { app: 'web' }));
  ix.add(obj('b', 'plain'));
  const lister = new Lister(ix);

  it('lists everything or by label selector (string or parsed)', () => {
    const cases: [string | undefined, string[]][] = [
      [undefined, ['db-1', 'plain', 'web-1', 'web-2']],
      ['', ['db-1', 'plain', 'web-1', 'web-2']],
      ['app=web', ['web-1', 'web-2']],
      ['app in (web,db),tier!=fe', ['db-1', 'web-2']],
      ['!app', ['plain']],
      ['app=none', []],
    ];
    for (const [sel, want] of cases) {
      assert.deepEqual(names(lister.list(sel)), want, String(sel));
      if (sel !== undefined) assert.deepEqual(names(lister.list(parseLabelSelector(sel))), want, String(sel));
    }
    assert.throws(() => lister.list('app in ('), SelectorParseError);
  });

  it('lists and gets within a namespace', () => {
    assert.deepEqual(names(lister.namespace('a').list()), ['db-1', 'web-1']);
    assert.deepEqual(names(lister.namespace('b').list('app=web')), ['web-2']);
    assert.deepEqual(lister.namespace('c').list(), []);
    assert.equal(lister.namespace('a').get('db-1')?.metadata?.name, 'db-1');
    assert.equal(lister.namespace('b').get('db-1'), undefined);
  });

  it('gets namespaced and cluster-scoped objects', () => {
    assert.equal(lister.get('a', 'web-1')?.metadata?.name, 'web-1');
    assert.equal(lister.get('a', 'web-2'), undefined);
    const nodes = new Indexer();
    nodes.add(obj(undefined, 'node-1'));
    const nodeLister = new Lister(nodes);
    assert.equal(nodeLister.get('node-1')?.metadata?.name, 'node-1');
    assert.equal(nodeLister.get(undefined, 'node-1')?.metadata?.name, 'node-1');
    assert.equal(nodeLister.get('', 'node-1')?.metadata?.name, 'node-1');
  });

  it('a namespace lister works without the namespace index', () => {
    const bare = new Indexer({ indexers: {} });
    bare.add(obj('a', 'x'));
    bare.add(obj('b', 'y'));
    assert.deepEqual(names(new Lister(bare).namespace('b').list()), ['y']);
  });
});
