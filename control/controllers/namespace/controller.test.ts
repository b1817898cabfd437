// The namespace controller (with the garbage collector, as kube-controller-manager runs
// them) against the real API server in process, real kubectl, and a fake kubelet that
// confirms the graceful deletion of pods on its node.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import type { Namespace, Pod } from '../../../api/types.js';
import { makeNode } from '../../../test/support/fake-nodes.js';
import { garbageCollectorController } from '../garbagecollector/index.js';
import { getIfExists, until as poll, useControllers } from '../testing.js';
import { namespaceController } from './index.js';

/** Polls until `check` returns a value; the deletions here take up to 20 s. */
const until = <T>(what: string, check: () => Promise<T | undefined>) => poll(what, check, 20_000);

describe('namespace controller', () => {
  const cluster = useControllers({
    nodes: [makeNode('node-1')],
    controllers: { garbagecollector: garbageCollectorController, namespace: namespaceController },
  });

  async function ok(...args: string[]): Promise<string> {
    const r = await cluster.api.kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  const namespace = (name: string) =>
    getIfExists<Namespace>(cluster.api.client, resources.namespaces, undefined, name);

  const manifest = (ns: string) =>
    [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain', namespace: ns }, data: { a: 'b' } },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold'] },
        data: { a: 'b' },
      },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns }, stringData: { k: 'v' } },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: ns },
        spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: ns },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'runner', namespace: ns, labels: { app: 'web' } },
        spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] },
      },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n');

  it('kubectl delete ns: Terminating, creating in it is forbidden, content goes, then the namespace', async () => {
    const apply = await cluster.api.kubectlIn(manifest('team'), 'apply', '-f', '-');
    assert.equal(apply.code, 0, apply.stderr);
    await until('pod running', async () => {
      const p = await cluster.api.client.get<Pod>(resources.pods, 'team', 'runner');
      return p.status?.phase === 'Running' ? true : undefined;
    });

    assert.match(await ok('delete', 'namespace', 'team', '--wait=false'), /namespace "team" deleted/);
    assert.match(await ok('get', 'namespace', 'team', '--no-headers'), /^team\s+Terminating\s/);

    const create = await cluster.api.kubectl(
      'create',
      'configmap',
      'late',
      '-n',
      'team',
      '--from-literal=a=b',
    );
    assert.notEqual(create.code, 0);
    assert.match(
      create.stderr,
      /configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated/,
    );

    // Everything goes but the object a finalizer holds; the conditions say why (the
    // controller writes them on each pass, so wait for the pass that found only it).
    const ns = await until('a pass that found only the held ConfigMap', async () => {
      const n = await namespace('team');
      const remaining = n?.status?.conditions?.find((c) => c.type === 'NamespaceContentRemaining');
      return remaining?.message === 'Some resources are remaining: configmaps. has 1 resource instances'
        ? n
        : undefined;
    });
    assert.deepEqual(
      (await cluster.api.client.list(resources.configmaps, { namespace: 'team' })).items.map(
        (c) => c.metadata?.name,
      ),
      ['held'],
    );
    for (const r of [
      resources.pods,
      resources.deployments,
      resources.replicasets,
      resources.services,
      resources.secrets,
    ])
      assert.deepEqual((await cluster.api.client.list(r, { namespace: 'team' })).items, [], r.resource);
    const conditions = Object.fromEntries(ns!.status!.conditions!.map((c) => [c.type, c]));
    assert.equal(
      conditions.NamespaceContentRemaining!.message,
      'Some resources are remaining: configmaps. has 1 resource instances',
    );
    assert.equal(conditions.NamespaceFinalizersRemaining!.status, 'True');
    assert.equal(
      conditions.NamespaceFinalizersRemaining!.message,
      'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    );
    assert.equal(conditions.NamespaceDeletionDiscoveryFailure!.status, 'False');
    assert.equal(conditions.NamespaceDeletionContentFailure!.status, 'False');
    assert.deepEqual(ns!.spec?.finalizers, ['kubernetes']);

    await cluster.api.client.patch(resources.configmaps, 'team', 'held', 'merge', {
      metadata: { finalizers: null },
    });
    await until('namespace gone', async () => ((await namespace('team')) === undefined ? true : undefined));
    const get = await cluster.api.kubectl('get', 'namespace', 'team');
    assert.notEqual(get.code, 0);
    assert.match(get.stderr, /namespaces "team" not found/);
  });

  it('kubectl delete ns waits until the namespace is gone', async () => {
    await ok('create', 'namespace', 'quick');
    await ok('create', 'configmap', 'c', '-n', 'quick', '--from-literal=a=b');
    await ok('delete', 'namespace', 'quick', '--timeout=30s');
    assert.equal(await namespace('quick'), undefined);
  });

  it('the system namespaces cannot be deleted', async () => {
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      const r = await cluster.api.kubectl('delete', 'namespace', name, '--wait=false');
      assert.notEqual(r.code, 0, name);
      assert.match(r.stderr, /this namespace may not be deleted/, name);
      const ns = await namespace(name);
      assert.equal(ns?.metadata.deletionTimestamp, undefined, name);
      assert.equal(ns?.status?.phase, 'Active', name);
    }
  });

  it('a namespace without the kubernetes finalizer is left to others (only marked Terminating)', async () => {
    await ok('create', 'namespace', 'other');
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'other' },
    };
    await cluster.api.client.create(resources.configmaps, cm);
    // Another finalizer keeps it; the namespace controller's own goes right away.
    const ns = (await namespace('other'))!;
    await cluster.api.client.update(
      resources.namespaces,
      { ...ns, spec: { finalizers: ['example.com/other', 'kubernetes'] } },
      { subresource: 'finalize' },
    );
    await ok('delete', 'namespace', 'other', '--wait=false');
    const left = await until('kubernetes finalizer removed', async () => {
      const n = await namespace('other');
      return n?.spec?.finalizers?.length === 1 ? n : undefined;
    });
    assert.deepEqual(left.spec?.finalizers, ['example.com/other']);
    assert.equal(
      (await cluster.api.client.list(resources.configmaps, { namespace: 'other' })).items.length,
      0,
    );
    await cluster.api.client.update(
      resources.namespaces,
      { ...left, spec: { finalizers: [] } },
      { subresource: 'finalize' },
    );
    assert.equal(await namespace('other'), undefined);
  });
});
