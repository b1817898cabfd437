import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deletedObject, type ResourceEventHandler } from '../../api/client/informer.js';
import { resources } from '../../api/client/resource.js';
import { waitFor } from '../../api/client/testing.js';
import type { Node, Pod } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { captureLogger } from '../testing.js';
import { HollowWatches } from './watches.js';

const pod = (name: string, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'k8ts/busybox:1.0' }] },
});

const node = (name: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: { capacity: { cpu: '4', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
});

/** A handler that writes down what it is told, as `<event> <pod>`. */
function recorder(): { handler: ResourceEventHandler<Pod>; events: string[] } {
  const events: string[] = [];
  return {
    events,
    handler: {
      onAdd: (p, initial) => events.push(`${initial ? 'initial' : 'add'} ${p.metadata.name}`),
      onUpdate: (_, p) => events.push(`update ${p.metadata.name}`),
      onDelete: (p) => events.push(`delete ${deletedObject(p).metadata.name}`),
    },
  };
}

describe('HollowWatches', () => {
  let api: TestApi;
  let watches: HollowWatches;
  before(async () => {
    api = await startTestApi();
    for (const n of ['h-0', 'h-1', 'real-node']) await api.client.create(resources.nodes, node(n));
    await api.client.create(resources.pods, pod('early-0', 'h-0'));
    await api.client.create(resources.pods, pod('other', 'real-node'));
    await api.client.create(resources.pods, pod('unbound'));
    watches = new HollowWatches({
      client: api.client,
      nodeNames: new Set(['h-0', 'h-1']),
      logger: captureLogger().logger,
    });
    assert.equal(await watches.start(10_000), true);
  });
  after(async () => {
    await watches.stop();
    await api.stop();
  });

  it('keeps only the pods bound to its nodes, without managedFields, and only its Nodes, cut down', async () => {
    assert.deepEqual(
      watches.pods
        .lister()
        .list()
        .map((p) => p.metadata.name),
      ['early-0'],
    );
    const early = watches.pod('default', 'early-0')!;
    assert.equal(early.spec.containers[0]!.image, 'k8ts/busybox:1.0');
    assert.equal(early.metadata.managedFields, undefined);
    assert.equal(watches.pod('default', 'other'), undefined);
    const nodes = watches.nodes.lister().list();
    assert.deepEqual(nodes.map((n) => n.metadata.name).sort(), ['h-0', 'h-1']);
    assert.deepEqual(Object.keys(nodes[0]!.metadata).sort(), ['name', 'resourceVersion', 'uid']);
    // The whole status: a node's status cycles compare theirs with it.
    const stored = await api.client.get<Node>(resources.nodes, undefined, 'h-0');
    assert.deepEqual(stored.status?.capacity, { cpu: '4', pods: '110' });
    assert.deepEqual(watches.nodes.lister().get('h-0')!.status, stored.status);
  });

  it("gives each node's view its own pods only, from start() on, the pods already bound first", async () => {
    const r0 = recorder();
    const r1 = recorder();
    const v0 = watches.podSourceFor('h-0');
    const v1 = watches.podSourceFor('h-1');
    v0.addEventHandler(r0.handler);
    v1.addEventHandler(r1.handler);
    assert.throws(() => v0.addEventHandler(r0.handler), /one handler only/);
    await api.client.create(resources.pods, pod('before-start-1', 'h-1'));
    await waitFor('the pod in the cache', () => watches.pod('default', 'before-start-1') !== undefined);
    assert.deepEqual([r0.events, r1.events], [[], []], 'nothing before start()');
    v0.start();
    v1.start();
    assert.deepEqual(r0.events, ['initial early-0']);
    assert.deepEqual(r1.events, ['initial before-start-1']);
    assert.equal(await v0.waitForSync(1000, new AbortController().signal), true);

    await api.client.create(resources.pods, pod('later-0', 'h-0'));
    await api.client.create(resources.pods, pod('later-other', 'real-node'));
    await api.client.patch(resources.pods, 'default', 'early-0', 'merge', {
      metadata: { labels: { a: 'b' } },
    });
    await api.client.delete(resources.pods, 'default', 'before-start-1', { gracePeriodSeconds: 0 });
    await waitFor('the events', () => r0.events.length === 3 && r1.events.length === 2);
    assert.deepEqual(r0.events, ['initial early-0', 'add later-0', 'update early-0']);
    assert.deepEqual(r1.events, ['initial before-start-1', 'delete before-start-1']);
    assert.deepEqual(
      v0
        .list()
        .map((p) => p.metadata.name)
        .sort(),
      ['early-0', 'later-0'],
    );
    assert.deepEqual(v1.list(), []);

    await v0.stop();
    await api.client.create(resources.pods, pod('after-stop-0', 'h-0'));
    await waitFor('the pod in the cache', () => watches.pod('default', 'after-stop-0') !== undefined);
    assert.equal(r0.events.length, 3, 'nothing after stop()');
  });

  it('hands each node its Node on every change, and the cached one at once', async () => {
    const seen: string[] = [];
    watches.onNode('h-1', (n) => seen.push(n.spec?.podCIDR ?? '-'));
    assert.deepEqual(seen, ['-']);
    await api.client.patch(resources.nodes, undefined, 'h-1', 'merge', { spec: { podCIDR: '10.42.1.0/24' } });
    await api.client.patch(resources.nodes, undefined, 'real-node', 'merge', {
      spec: { podCIDR: '10.42.9.0/24' },
    });
    await waitFor('the podCIDR', () => seen.length === 2);
    assert.deepEqual(seen, ['-', '10.42.1.0/24']);
  });
});
