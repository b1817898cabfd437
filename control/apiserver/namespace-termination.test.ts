// The API server's half of namespace deletion, with no controller running: DELETE marks
// the namespace Terminating and keeps it while spec.finalizers (or metadata.finalizers)
// are left; namespaces/NAME/finalize changes only spec.finalizers and removes a terminating
// namespace that has none left (Kubernetes' namespace REST Delete and finalize store).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

interface Ns {
  metadata: {
    name: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    resourceVersion?: string;
  };
  spec?: { finalizers?: string[] };
  status?: { phase?: string };
}

describe('namespace termination (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  async function call(method: string, path: string, body?: unknown) {
    const r = await fetch(api.url + path, {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { code: r.status, body: (await r.json()) as Record<string, unknown> };
  }
  const ns = (name: string) => call('GET', `/api/v1/namespaces/${name}`);
  const create = (name: string, extra: Record<string, unknown> = {}) =>
    call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...extra } });

  it('DELETE answers 200 with the namespace Terminating; the kubernetes finalizer keeps it', async () => {
    await create('t1');
    const del = await call('DELETE', '/api/v1/namespaces/t1');
    assert.equal(del.code, 200);
    const obj = del.body as unknown as Ns;
    assert.ok(obj.metadata.deletionTimestamp);
    assert.equal(obj.status?.phase, 'Terminating');
    assert.deepEqual(obj.spec?.finalizers, ['kubernetes']);
    // Again: still there, still 200.
    assert.equal((await call('DELETE', '/api/v1/namespaces/t1')).code, 200);
    assert.equal((await ns('t1')).code, 200);
  });

  it('creating in a terminating namespace is 403 with the NamespaceTerminating cause; updates still work', async () => {
    await create('t2');
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
    assert.equal((await call('POST', '/api/v1/namespaces/t2/configmaps', cm)).code, 201);
    await call('DELETE', '/api/v1/namespaces/t2');
    const r = await call('POST', '/api/v1/namespaces/t2/configmaps', { ...cm, metadata: { name: 'd' } });
    assert.equal(r.code, 403);
    assert.equal(r.body.reason, 'Forbidden');
    assert.equal(
      r.body.message,
      'configmaps "d" is forbidden: unable to create new content in namespace t2 because it is being terminated',
    );
    assert.deepEqual((r.body.details as { causes: unknown[] }).causes, [
      {
        reason: 'NamespaceTerminating',
        message: 'namespace t2 is being terminated',
        field: 'metadata.namespace',
      },
    ]);
    const patched = await fetch(`${api.url}/api/v1/namespaces/t2/configmaps/c`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { a: '2' } }),
    });
    assert.equal(patched.status, 200);
  });

  it('finalize changes only spec.finalizers; with none left (and no metadata finalizers) the namespace goes', async () => {
    await create('t3', { finalizers: ['example.com/meta'] });
    await call('DELETE', '/api/v1/namespaces/t3');
    const cur = (await ns('t3')).body as unknown as Ns;
    const put = await call('PUT', '/api/v1/namespaces/t3/finalize', {
      ...cur,
      metadata: { ...cur.metadata, labels: { sneaky: 'yes' } },
      spec: { finalizers: [] },
      status: { phase: 'Active' },
    });
    assert.equal(put.code, 200, JSON.stringify(put.body));
    const after1 = (await ns('t3')).body as unknown as Ns;
    assert.deepEqual(after1.spec?.finalizers ?? [], []);
    assert.equal(after1.metadata.labels?.sneaky, undefined, 'labels do not change through finalize');
    assert.equal(after1.status?.phase, 'Terminating');
    // The metadata finalizer still holds it; removing that removes the namespace.
    const patched = await fetch(`${api.url}/api/v1/namespaces/t3`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { finalizers: null } }),
    });
    assert.equal(patched.status, 200);
    assert.equal((await ns('t3')).code, 404);
  });

  it('a finalize with a stale resourceVersion is 409; a bad finalizer name 422', async () => {
    await create('t4');
    const cur = (await ns('t4')).body as unknown as Ns;
    await call('DELETE', '/api/v1/namespaces/t4');
    assert.equal(
      (await call('PUT', '/api/v1/namespaces/t4/finalize', { ...cur, spec: { finalizers: [] } })).code,
      409,
    );
    const fresh = (await ns('t4')).body as unknown as Ns;
    const bad = await call('PUT', '/api/v1/namespaces/t4/finalize', {
      ...fresh,
      spec: { finalizers: ['cleanup'] },
    });
    assert.equal(bad.code, 422);
    assert.equal(
      (await call('PUT', '/api/v1/namespaces/t4/finalize', { ...fresh, spec: { finalizers: [] } })).code,
      200,
    );
    assert.equal((await ns('t4')).code, 404);
  });

  it('a namespace finalized before its deletion is removed at once by DELETE', async () => {
    await create('t5');
    const cur = (await ns('t5')).body as unknown as Ns;
    assert.equal(
      (await call('PUT', '/api/v1/namespaces/t5/finalize', { ...cur, spec: { finalizers: [] } })).code,
      200,
    );
    assert.equal((await ns('t5')).code, 200, 'not being deleted: stays');
    assert.equal((await call('DELETE', '/api/v1/namespaces/t5')).code, 200);
    assert.equal((await ns('t5')).code, 404);
  });

  it('finalize is update-only; discovery lists namespaces/finalize', async () => {
    await create('t6');
    assert.equal((await call('GET', '/api/v1/namespaces/t6/finalize')).code, 405);
    const list = await call('GET', '/api/v1');
    const entry = (list.body.resources as { name: string; verbs: string[] }[]).find(
      (r) => r.name === 'namespaces/finalize',
    );
    assert.deepEqual(entry?.verbs, ['update']);
  });

  it('the system namespaces cannot be deleted', async () => {
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      const r = await call('DELETE', `/api/v1/namespaces/${name}`);
      assert.equal(r.code, 403, name);
      assert.equal(r.body.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`);
      assert.equal(((await ns(name)).body as unknown as Ns).metadata.deletionTimestamp, undefined);
    }
  });
});
