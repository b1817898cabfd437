/**
 * ApiServer.sharedObject and informerTransform: the informers of the control process keep
 * the watch cache's copy of an object (frozen) when they decoded that very version, and
 * their own copy without managedFields when not.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { InformerFactory } from '../../api/client/factory.js';
import { resources } from '../../api/client/resource.js';
import type { KubeObject } from '../../api/object.js';
import type { ConfigMap } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { until } from '../../test/support/wait.js';

let api: TestApi;
before(async () => {
  api = await startTestApi();
});
after(() => api.stop());

const configMap = (data: Record<string, string>): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'shared', namespace: 'default' },
  data,
});

test('two in-process informers hold the one frozen copy of the watch cache, version after version', async () => {
  const created = await api.client.create(resources.configmaps, configMap({ v: '1' }));
  const factories = [1, 2].map(
    () => new InformerFactory({ client: api.client, transform: api.server.informerTransform }),
  );
  const informers = factories.map((f) => f.informerFor<ConfigMap>(resources.configmaps));
  for (const f of factories) f.start();
  for (const f of factories) assert.equal(await f.waitForCacheSync(10_000), true);
  const get = () => informers.map((i) => i.lister().namespace('default').get('shared'));
  try {
    // The informers' list came from the store, at the cache's version.
    await until('both informers share a copy', async () => {
      const [a, b] = get();
      return a !== undefined && a === b ? true : undefined;
    });
    let [a] = get();
    assert.equal(a!.metadata?.resourceVersion, created.metadata!.resourceVersion);
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a!.data) && Object.isFrozen(a!.metadata));
    assert.equal(
      a!.metadata?.managedFields,
      undefined,
      'the cache keeps its objects decoded without managedFields',
    );
    assert.throws(() => {
      (a!.data as Record<string, string>).v = 'changed';
    }, TypeError);
    // A watch event of a newer version: shared again.
    const updated = await api.client.update(resources.configmaps, { ...created, data: { v: '2' } });
    await until('both informers at the update', async () => {
      const [x, y] = get();
      return x?.metadata?.resourceVersion === updated.metadata!.resourceVersion && x === y ? true : undefined;
    });
    [a] = get();
    assert.equal(a!.data?.v, '2');
    assert.ok(Object.isFrozen(a));
  } finally {
    for (const f of factories) await f.shutdown();
    await api.client.delete(resources.configmaps, 'default', 'shared');
  }
});

test('a version the cache does not hold stays the client own copy, without managedFields', async () => {
  const created = await api.client.create(resources.configmaps, configMap({ v: '1' }));
  try {
    await until('the cache has it', async () => api.server.sharedObject(resources.configmaps, created));
    const stale: KubeObject = structuredClone(created);
    stale.metadata!.resourceVersion = '1';
    assert.equal(api.server.sharedObject(resources.configmaps, stale), undefined);
    const own = api.server.informerTransform(stale, resources.configmaps);
    assert.equal(own, stale);
    assert.equal(own.metadata?.managedFields, undefined);
    assert.ok(!Object.isFrozen(own));
    const otherUid: KubeObject = { ...structuredClone(created), metadata: { ...created.metadata, uid: 'x' } };
    assert.equal(api.server.sharedObject(resources.configmaps, otherUid), undefined);
  } finally {
    await api.client.delete(resources.configmaps, 'default', 'shared');
  }
});

test('Events are kept as JSON only: an informer of them keeps its own copy', async () => {
  const ev: KubeObject = await api.client.create(resources.events, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e1', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
    reason: 'Test',
    message: 'kept as JSON',
  } as KubeObject);
  const ac = new AbortController();
  try {
    // A watch from resourceVersion 0 is served from the cache's state: once it shows e1, the cache holds it.
    const stream = await api.client.watch<KubeObject>(resources.events, {
      namespace: 'default',
      resourceVersion: '0',
      signal: ac.signal,
    });
    for await (const e of stream) if (e.type === 'ADDED' && e.object.metadata?.name === 'e1') break;
    const own = structuredClone(ev);
    assert.equal(api.server.sharedObject(resources.events, own), undefined);
    assert.equal(api.server.informerTransform(own, resources.events), own);
  } finally {
    ac.abort();
    await api.client.delete(resources.events, 'default', 'e1');
  }
});
