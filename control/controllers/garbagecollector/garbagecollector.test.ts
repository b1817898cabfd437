// The garbage collector against the real API server (in process), with real kubectl for
// the cascade flags users type, and a fake kubelet where pods run on nodes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject, OwnerReference } from '../../../api/object.js';
import type { Pod, ReplicaSet } from '../../../api/types.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { getIfExists, makeReplicaSet, until, untilGone, useControllers } from '../testing.js';
import { garbageCollectorController } from './index.js';

function ownerRef(owner: KubeObject, extra: Partial<OwnerReference> = {}): OwnerReference {
  return {
    apiVersion: owner.apiVersion!,
    kind: owner.kind!,
    name: owner.metadata!.name!,
    uid: owner.metadata!.uid!,
    ...extra,
  };
}

describe('garbage collector', () => {
  const cluster = useControllers({
    nodes: [makeNode('node-1')],
    controllers: { garbagecollector: garbageCollectorController },
  });
  const ns = 'default';

  async function configMap(name: string, owners: OwnerReference[] = [], extra: KubeObject['metadata'] = {}) {
    return cluster.api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns, ...(owners.length ? { ownerReferences: owners } : {}), ...extra },
      data: { k: name },
    });
  }

  const gone = (ref: typeof resources.configmaps, name: string, namespace: string | undefined = ns) =>
    untilGone(cluster.api.client, ref, namespace, name);
  const get = (name: string) => getIfExists(cluster.api.client, resources.configmaps, ns, name);

  it('background: deleting an owner deletes its dependents', async () => {
    const owner = await configMap('bg-owner');
    await configMap('bg-a', [ownerRef(owner)]);
    await configMap('bg-b', [ownerRef(owner, { controller: true, blockOwnerDeletion: true })]);
    const del = await cluster.api.kubectl('delete', 'configmap', 'bg-owner', '-n', ns);
    assert.equal(del.code, 0, del.stderr);
    await gone(resources.configmaps, 'bg-a');
    await gone(resources.configmaps, 'bg-b');
  });

  it('orphan: kubectl delete --cascade=orphan keeps the dependents without the ownerReference', async () => {
    const owner = await configMap('or-owner');
    const other = await configMap('or-other');
    await configMap('or-a', [ownerRef(owner), ownerRef(other)]);
    await configMap('or-b', [ownerRef(owner, { controller: true })]);
    const del = await cluster.api.kubectl('delete', 'configmap', 'or-owner', '-n', ns, '--cascade=orphan');
    assert.equal(del.code, 0, del.stderr);
    await gone(resources.configmaps, 'or-owner');
    const a = await get('or-a');
    const b = await get('or-b');
    assert.deepEqual(
      a?.metadata?.ownerReferences?.map((r) => r.name),
      ['or-other'],
    );
    assert.ok(b, 'or-b stays');
    assert.deepEqual(b.metadata?.ownerReferences ?? [], []);
  });

  it('foreground: the owner stays terminating until blocking dependents are gone, then goes', async () => {
    const owner = await configMap('fg-owner');
    await configMap('fg-dep', [ownerRef(owner, { blockOwnerDeletion: true })], {
      finalizers: ['example.com/hold'],
    });
    const del = await cluster.api.kubectl(
      'delete',
      'configmap',
      'fg-owner',
      '-n',
      ns,
      '--cascade=foreground',
      '--wait=false',
    );
    assert.equal(del.code, 0, del.stderr);
    // The collector deletes the dependent; its finalizer holds it, and so the owner waits.
    const dep = await until('dependent terminating', async () => {
      const d = await get('fg-dep');
      return d?.metadata?.deletionTimestamp ? d : undefined;
    });
    const waiting = await get('fg-owner');
    assert.ok(waiting?.metadata?.deletionTimestamp, 'owner is terminating');
    assert.deepEqual(waiting?.metadata?.finalizers, ['foregroundDeletion']);
    const get1 = await cluster.api.kubectl('get', 'configmap', 'fg-owner', '-n', ns, '-o', 'name');
    assert.equal(get1.stdout.trim(), 'configmap/fg-owner');
    await cluster.api.client.patch(resources.configmaps, ns, dep.metadata!.name!, 'merge', {
      metadata: { finalizers: null },
    });
    await gone(resources.configmaps, 'fg-dep');
    await gone(resources.configmaps, 'fg-owner');
  });

  it('a dependent with another live owner only loses the reference to the deleted one', async () => {
    const a = await configMap('two-a');
    const b = await configMap('two-b');
    await configMap('two-dep', [ownerRef(a), ownerRef(b)]);
    await cluster.api.client.delete(resources.configmaps, ns, 'two-a');
    const dep = await until('two-dep loses two-a', async () => {
      const d = await get('two-dep');
      return d?.metadata?.ownerReferences?.length === 1 ? d : undefined;
    });
    assert.equal(dep.metadata!.ownerReferences![0]!.uid, b.metadata!.uid);
  });

  it('an ownerReference whose uid is not the live owner (recreated) or that names nothing is collected', async () => {
    const first = await configMap('re-owner');
    await cluster.api.client.delete(resources.configmaps, ns, 're-owner');
    await configMap('re-owner'); // a namesake with another uid
    await configMap('re-dep', [ownerRef(first)]);
    await configMap('never-dep', [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'never-was', uid: '6b7a4c3e-0000-4000-8000-000000000001' },
    ]);
    await gone(resources.configmaps, 're-dep');
    await gone(resources.configmaps, 'never-dep');
    assert.ok(await get('re-owner'), 'the namesake owner is untouched');
  });

  it('references to a kind the API does not serve are ignored; a cluster-scoped owner owns namespaced dependents', async () => {
    await configMap('unknown-dep', [
      {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        name: 'w',
        uid: '6b7a4c3e-0000-4000-8000-000000000002',
      },
    ]);
    const node = await cluster.api.client.get(resources.nodes, undefined, 'node-1');
    const other = await cluster.api.client.create(resources.nodes, makeNode('node-2'));
    await configMap('node-dep', [ownerRef({ ...other, apiVersion: 'v1', kind: 'Node' })]);
    await configMap('node1-dep', [ownerRef({ ...node, apiVersion: 'v1', kind: 'Node' })]);
    await cluster.api.client.delete(resources.nodes, undefined, 'node-2');
    await gone(resources.configmaps, 'node-dep');
    assert.ok(await get('node1-dep'), 'a dependent of a live cluster-scoped owner stays');
    assert.ok(await get('unknown-dep'), 'a dependent of an unknown kind stays');
  });

  it('deleting a ReplicaSet deletes its pods, which the kubelet confirms', async () => {
    const rs = await cluster.api.client.create<ReplicaSet>(
      resources.replicasets,
      makeReplicaSet(ns, 'web', { replicas: 2 }),
    );
    for (const name of ['web-1', 'web-2']) {
      await cluster.api.client.create<Pod>(resources.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: ns,
          labels: { app: 'web' },
          ownerReferences: [ownerRef(rs, { controller: true, blockOwnerDeletion: true })],
        },
        spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] },
      });
    }
    await until('pods running', async () => {
      const pods = await cluster.api.client.list<Pod>(resources.pods, {
        namespace: ns,
        labelSelector: 'app=web',
      });
      return pods.items.every((p) => p.status?.phase === 'Running') ? true : undefined;
    });
    const del = await cluster.api.kubectl('delete', 'replicaset', 'web', '-n', ns);
    assert.equal(del.code, 0, del.stderr);
    await until('pods gone', async () => {
      const pods = await cluster.api.client.list<Pod>(resources.pods, {
        namespace: ns,
        labelSelector: 'app=web',
      });
      return pods.items.length === 0 ? true : undefined;
    });
  });
});
