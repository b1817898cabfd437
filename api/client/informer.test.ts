import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../object.js';
import { InformerFactory } from './factory.js';
import { fieldIndexFunc } from './indexer.js';
import { DeletedFinalStateUnknown, deletedObject, SharedInformer } from './informer.js';
import type { ResourceEventHandler } from './informer.js';
import { resources } from './resource.js';
import { RestClient } from './rest.js';
import { metaNamespaceKey } from './store.js';
import { stripManagedFields } from './transform.js';
import { FakeClock } from '../clock.js';
import { FakeApi, waitFor } from './testing.js';

const pod = (
  name: string,
  spec: Record<string, unknown> = {},
  labels?: Record<string, string>,
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns', name, ...(labels ? { labels } : {}) },
  spec,
});

/** A handler that writes down what it is told, as short strings. */
function recorder(log: string[], tag = ''): ResourceEventHandler<KubeObject> {
  const rv = (o: KubeObject) => o.metadata!.resourceVersion;
  return {
    onAdd: (o, initial) => log.push(`${tag}add ${o.metadata!.name}@${rv(o)}${initial ? ' initial' : ''}`),
    onUpdate: (a, b) => log.push(`${tag}update ${b.metadata!.name}@${rv(a)}->${rv(b)}`),
    onDelete: (o) =>
      log.push(
        o instanceof DeletedFinalStateUnknown
          ? `${tag}delete ${o.key}@${rv(o.obj)} (final state unknown)`
          : `${tag}delete ${o.metadata!.name}@${rv(o)}`,
      ),
  };
}

function setup(history = 100) {
  const api = new FakeApi(history);
  const clock = new FakeClock(0, { sleepAdvances: true });
  const errors: string[] = [];
  const informer = new SharedInformer<KubeObject>({
    listerWatcher: api,
    name: 'pods',
    clock,
    random: () => 0,
    indexers: { byNode: fieldIndexFunc('spec.nodeName') },
    onError: (err, during) => errors.push(`${during}: ${err.message}`),
  });
  return { api, clock, errors, informer };
}

describe('SharedInformer', () => {
  it('delivers the initial list, then watch events, with the cache already updated', async () => {
    const { api, informer } = setup();
    api.put(pod('a'));
    api.put(pod('b'));
    const log: string[] = [];
    const seenInCache: boolean[] = [];
    informer.addEventHandler(recorder(log));
    informer.addEventHandler({
      onAdd: (o) => seenInCache.push(informer.lister().get('ns', o.metadata!.name!) === o),
      onDelete: (o) =>
        seenInCache.push(informer.lister().get('ns', deletedObject(o).metadata!.name!) === undefined),
    });
    assert.equal(informer.hasSynced(), false);
    informer.start();
    assert.equal(await informer.waitForSync(5_000), true);
    assert.deepEqual(log.sort(), ['add a@2 initial', 'add b@3 initial']);
    log.length = 0;
    api.put(pod('c', { nodeName: 'n1' }));
    api.put(pod('a', { nodeName: 'n1' }));
    api.remove('ns', 'b');
    await waitFor('three events', () => log.length === 3);
    assert.deepEqual(log, ['add c@4', 'update a@2->5', 'delete b@6']);
    assert.deepEqual(seenInCache, [true, true, true, true]);
    assert.deepEqual(
      informer
        .lister()
        .byIndex('byNode', 'n1')
        .map((p) => p.metadata!.name)
        .sort(),
      ['a', 'c'],
    );
    assert.equal(informer.lastSyncResourceVersion, '6');
    await informer.stop();
  });

  it('after a disconnection, a relist reports what changed — deletions as tombstones with the last known state', async () => {
    const { api, clock, informer } = setup();
    for (const n of ['keep', 'gone', 'changed']) api.put(pod(n));
    const log: string[] = [];
    informer.addEventHandler(recorder(log));
    informer.start();
    await informer.waitForSync(5_000);
    log.length = 0;
    // The connection breaks; the reflector waits in its backoff while the world changes
    // and the server forgets the history it would need to catch up.
    await api.until(() => api.watchers.size === 1);
    clock.hold();
    api.breakWatches();
    await waitFor('the backoff', () => clock.held === 1);
    api.remove('ns', 'gone');
    api.put(pod('changed', { x: 1 }));
    api.put(pod('new'));
    api.compact();
    clock.release();
    await waitFor('the relist', () => log.length === 3);
    assert.deepEqual(log, ['update changed@4->6', 'add new@7', 'delete ns/gone@3 (final state unknown)']);
    assert.equal(informer.stats.expired, 1);
    assert.deepEqual(informer.indexer.listKeys().sort(), ['ns/changed', 'ns/keep', 'ns/new']);
    await informer.stop();
  });

  it('transforms every object before caching it (stripManagedFields): listed, added, updated, deleted', async () => {
    const api = new FakeApi(100);
    const informer = new SharedInformer<KubeObject>({
      listerWatcher: api,
      clock: new FakeClock(0, { sleepAdvances: true }),
      random: () => 0,
      transform: stripManagedFields,
    });
    const managed = (name: string): KubeObject => {
      const p = pod(name);
      p.metadata!.managedFields = [{ manager: 'm', operation: 'Update', apiVersion: 'v1' }];
      return p;
    };
    api.put(managed('a'));
    const seen: string[] = [];
    const note = (o: KubeObject) =>
      seen.push(
        `${o.metadata!.name}@${o.metadata!.resourceVersion} ${o.metadata!.managedFields ? 'managed' : 'stripped'}`,
      );
    informer.addEventHandler({
      onAdd: note,
      onUpdate: (_, o) => note(o),
      onDelete: (o) => note(deletedObject(o)),
    });
    informer.start();
    assert.equal(await informer.waitForSync(5_000), true);
    api.put(managed('b'));
    api.put(managed('a'));
    api.remove('ns', 'b');
    await waitFor('four events', () => seen.length === 4);
    assert.deepEqual(seen, ['a@2 stripped', 'b@3 stripped', 'a@4 stripped', 'b@5 stripped']);
    assert.equal(informer.lister().get('ns', 'a')?.metadata?.managedFields, undefined);
    await informer.stop();
  });

  it('gives a late handler the current state first', async () => {
    const { api, informer } = setup();
    api.put(pod('a'));
    informer.start();
    const early: string[] = [];
    const earlyReg = informer.addEventHandler(recorder(early));
    assert.equal(earlyReg.hasSynced(), false);
    await informer.waitForSync(5_000);
    assert.equal(earlyReg.hasSynced(), true);
    const late: string[] = [];
    const reg = informer.addEventHandler(recorder(late));
    assert.deepEqual(late, ['add a@2 initial']);
    assert.equal(reg.hasSynced(), true);
    reg.remove();
    reg.remove();
    api.put(pod('b'));
    await waitFor('add b', () => early.includes('add b@3'));
    assert.deepEqual(late, ['add a@2 initial']);
    await informer.stop();
  });

  it('ignores a DELETED for an object it never had; a throwing handler does not hurt the others', async () => {
    const { api, informer, errors } = setup();
    const log: string[] = [];
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    informer.addEventHandler(recorder(log));
    informer.start();
    await informer.waitForSync(5_000);
    for (const w of api.watchers)
      w.push({
        type: 'DELETED',
        object: { metadata: { namespace: 'ns', name: 'ghost', resourceVersion: '5' } },
      });
    api.put(pod('a'));
    await waitFor('add a', () => log.length === 1);
    assert.deepEqual(log, ['add a@2']);
    assert.deepEqual(errors, ['handler: pods: onAdd handler threw: handler bug']);
    await informer.stop();
  });

  it('resyncs: every cached object again as onUpdate(obj, obj)', async () => {
    const { api, clock, informer } = setup();
    api.put(pod('a'));
    api.put(pod('b'));
    const log: string[] = [];
    informer.addEventHandler(recorder(log), { resyncPeriodMs: 10 });
    const quiet: string[] = [];
    informer.addEventHandler(recorder(quiet));
    informer.start();
    assert.equal(await informer.waitForSync(5_000), true);
    // The resync period runs on the informer's clock: two periods, two resyncs.
    await clock.advance(10);
    await clock.advance(10);
    await waitFor('two resyncs', () => log.filter((l) => l.startsWith('update')).length >= 4);
    assert.ok(log.includes('update a@2->2') && log.includes('update b@3->3'));
    assert.deepEqual(quiet.sort(), ['add a@2 initial', 'add b@3 initial'], 'resync is per handler');
    await informer.stop();
  });

  it('waitForSync gives up at its deadline or when stopped; a stopped informer stays stopped', async () => {
    const { api, clock, informer } = setup();
    api.failLists.push(new Error('down'));
    clock.hold(); // the first list fails, and the backoff after it never ends
    informer.start();
    const deadline = informer.waitForSync(20);
    await clock.advance(20); // the deadline runs on the informer's clock
    assert.equal(await deadline, false);
    const waiting = informer.waitForSync();
    const ac = new AbortController();
    const aborted = informer.waitForSync(undefined, ac.signal);
    ac.abort();
    assert.equal(await aborted, false);
    await informer.stop();
    assert.equal(await waiting, false);
    assert.equal(await informer.waitForSync(), false);
    assert.throws(() => informer.start(), /cannot be restarted/);
    assert.throws(() => informer.addEventHandler({}), /stopped/);
  });
});

describe('InformerFactory', () => {
  it('shares one informer per resource, namespace and selectors', async () => {
    const client = new RestClient({ server: 'http://127.0.0.1:1' });
    const factory = new InformerFactory({ client, namespace: 'team' });
    const pods = factory.informerFor(resources.pods);
    assert.equal(factory.informerFor(resources.pods), pods);
    assert.equal(factory.informerFor(resources.pods, { namespace: 'team' }), pods);
    assert.notEqual(factory.informerFor(resources.pods, { namespace: 'other' }), pods);
    const sel = factory.informerFor(resources.pods, {
      labelSelector: 'b=2,a=1',
      fieldSelector: 'spec.nodeName=n1',
    });
    assert.equal(
      factory.informerFor(resources.pods, { labelSelector: 'a=1, b=2', fieldSelector: 'spec.nodeName==n1' }),
      sel,
    );
    assert.equal(sel.name, 'pods/team labels(a=1,b=2) fields(spec.nodeName=n1)');
    assert.equal(
      factory.informerFor(resources.nodes, { namespace: 'x' }),
      factory.informerFor(resources.nodes),
    );
    const withIndex = factory.informerFor(resources.pods, {
      indexers: { byNode: fieldIndexFunc('spec.nodeName') },
    });
    assert.equal(withIndex, pods);
    assert.ok(pods.indexer.indexNames().includes('byNode'));
    assert.equal(factory.list().length, 4);
    assert.equal(await factory.waitForCacheSync(10), true, 'nothing started: nothing to wait for');
    await factory.shutdown();
    assert.throws(() => factory.informerFor(resources.pods), /shut down/);
    client.close();
  });

  it('keys are usable on workqueues', () => {
    assert.equal(metaNamespaceKey(pod('x')), 'ns/x');
  });
});
