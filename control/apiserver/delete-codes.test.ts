// The codes of a DELETE that does not remove the object at once, as kube-apiserver's
// handlers/delete.go answers them: 200 with the marked object (finalizers, a graceful pod
// delete), and 202 only when the request sent orphanDependents: false. And the body of a
// delete that removes the object at once (registry Store.finalizeDelete): the object for
// the kinds whose storage sets ReturnDeletedObject, a Status naming it for the others.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

describe('DELETE status codes (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  const held = (name: string) =>
    api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default', finalizers: ['example.com/hold'] },
    });
  const del = async (path: string, body?: object) => {
    const res = await fetch(`${api.url}${path}`, {
      method: 'DELETE',
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return {
      status: res.status,
      body: (await res.json()) as { kind?: string; metadata?: { deletionTimestamp?: string; uid?: string } },
    };
  };

  it('200 for an object a finalizer holds, with its deletionTimestamp', async () => {
    await held('held');
    const res = await del('/api/v1/namespaces/default/configmaps/held');
    assert.equal(res.status, 200);
    assert.ok(res.body.metadata?.deletionTimestamp);
  });

  it('200 for a graceful delete of a pod bound to a node', async () => {
    await api.client.create(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'graceful', namespace: 'default' },
      spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'spring-server:1.0' }] },
    });
    const res = await del('/api/v1/namespaces/default/pods/graceful');
    assert.equal(res.status, 200);
    assert.ok(res.body.metadata?.deletionTimestamp, 'the pod is terminating, not gone');
  });

  it('202 only with orphanDependents: false, in the query or the body', async () => {
    await held('cascade-q');
    assert.equal(
      (await del('/api/v1/namespaces/default/configmaps/cascade-q?orphanDependents=false')).status,
      202,
    );
    await held('cascade-b');
    const body = { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: false };
    assert.equal((await del('/api/v1/namespaces/default/configmaps/cascade-b', body)).status, 202);
  });

  it('200 for an object removed at once, also with orphanDependents: false', async () => {
    await api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'free', namespace: 'default' },
    });
    assert.equal(
      (await del('/api/v1/namespaces/default/configmaps/free?orphanDependents=false')).status,
      200,
    );
  });

  describe('the body of a delete that removes the object at once', () => {
    // Store.finalizeDelete: a Status with the name, the group, the resource (in "kind") and
    // the uid, unless the kind's storage sets ReturnDeletedObject.
    const statusCases: [string, string, Record<string, unknown>][] = [
      ['/api/v1/namespaces/default/configmaps', 'configmaps', { apiVersion: 'v1', kind: 'ConfigMap' }],
      ['/api/v1/namespaces/default/secrets', 'secrets', { apiVersion: 'v1', kind: 'Secret' }],
      [
        '/apis/apps/v1/namespaces/default/deployments',
        'deployments',
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          spec: {
            selector: { matchLabels: { app: 'x' } },
            template: {
              metadata: { labels: { app: 'x' } },
              spec: { containers: [{ name: 'app', image: 'spring-server:1.0' }] },
            },
          },
        },
      ],
    ];
    for (const [path, resource, body] of statusCases) {
      it(`answers a Status for ${resource}`, async () => {
        const name = `now-${resource}`;
        const created = await fetch(`${api.url}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ ...body, metadata: { name } }),
        });
        assert.equal(created.status, 201);
        const uid = ((await created.json()) as { metadata: { uid: string } }).metadata.uid;
        const group = path.startsWith('/apis/') ? path.split('/')[2]! : '';
        for (const dryRun of [true, false]) {
          const res = await del(`${path}/${name}${dryRun ? '?dryRun=All' : ''}`);
          assert.equal(res.status, 200);
          assert.deepEqual(res.body, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            details: { name, ...(group ? { group } : {}), kind: resource, uid },
          });
        }
      });
    }

    it('answers the object for the kinds that return it (a ServiceAccount, a Service)', async () => {
      await api.client.create(resources.serviceaccounts, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'gone', namespace: 'default' },
      });
      const sa = await del('/api/v1/namespaces/default/serviceaccounts/gone');
      assert.equal(sa.status, 200);
      assert.equal(sa.body.kind, 'ServiceAccount');
      await api.client.create(resources.services, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'gone', namespace: 'default' },
        spec: { ports: [{ port: 80 }] },
      });
      const svc = await del('/api/v1/namespaces/default/services/gone');
      assert.equal(svc.status, 200);
      assert.equal(svc.body.kind, 'Service');
    });
  });
});
