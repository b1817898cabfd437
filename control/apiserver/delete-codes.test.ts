// The codes of a DELETE that does not remove the object at once, as kube-apiserver's
// handlers/delete.go answers them: 200 with the marked object (finalizers, a graceful pod
// delete), and 202 only when the request sent orphanDependents: false.
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
    return { status: res.status, body: (await res.json()) as { metadata?: { deletionTimestamp?: string } } };
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
});
