// The status codes of create, update, patch and deletecollection, as kube-apiserver's
// endpoints/handlers (create.go, update.go, patch.go, delete.go) answer them, and which
// kinds a PUT to a missing name creates (each registry strategy's AllowCreateOnUpdate:
// true for Services, Endpoints, Events, Leases and the four RBAC kinds; false else).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

interface Answer {
  status: number;
  body: {
    kind?: string;
    reason?: string;
    metadata?: { name?: string; deletionTimestamp?: string };
    spec?: { clusterIP?: string };
    items?: { metadata?: { name?: string } }[];
  };
}

describe('status codes of create, update, patch and deletecollection (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  const send = async (method: string, path: string, body?: object, type = 'application/json') => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: body ? { 'Content-Type': type } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  };
  const configMap = (name: string, labels?: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels },
  });
  const service = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { ports: [{ port: 80 }], selector: { app: name } },
  });

  it('POST: 201 with the created object, and 409 AlreadyExists for a taken name', async () => {
    const created = await send('POST', '/api/v1/namespaces/default/configmaps', configMap('c1'));
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata?.name, 'c1');
    const again = await send('POST', '/api/v1/namespaces/default/configmaps', configMap('c1'));
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'AlreadyExists');
  });

  it('PUT: 200 for an existing object; 404 for a missing one of a kind that does not allow create on update', async () => {
    await api.client.create(resources.configmaps, configMap('u1'));
    const put = await send('PUT', '/api/v1/namespaces/default/configmaps/u1', configMap('u1', { a: 'b' }));
    assert.equal(put.status, 200);
    const missing = await send(
      'PUT',
      '/api/v1/namespaces/default/configmaps/u-missing',
      configMap('u-missing'),
    );
    assert.equal(missing.status, 404);
    assert.equal(missing.body.reason, 'NotFound');
  });

  it('PUT to a missing Service creates it: 201, with a cluster IP allocated', async () => {
    const put = await send('PUT', '/api/v1/namespaces/default/services/put-svc', service('put-svc'));
    assert.equal(put.status, 201, JSON.stringify(put.body));
    assert.match(put.body.spec?.clusterIP ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    const again = await send('PUT', '/api/v1/namespaces/default/services/put-svc', {
      ...service('put-svc'),
      spec: { ...service('put-svc').spec, clusterIP: put.body.spec?.clusterIP },
    });
    assert.equal(again.status, 200);
  });

  it('PUT to a missing Role, ClusterRole, RoleBinding or ClusterRoleBinding creates it: 201', async () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const rule = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }];
    const cases: [string, object][] = [
      [
        `${rbac}/namespaces/default/roles/put-role`,
        { kind: 'Role', metadata: { name: 'put-role' }, rules: rule },
      ],
      [`${rbac}/clusterroles/put-cr`, { kind: 'ClusterRole', metadata: { name: 'put-cr' }, rules: rule }],
      [
        `${rbac}/namespaces/default/rolebindings/put-rb`,
        {
          kind: 'RoleBinding',
          metadata: { name: 'put-rb' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'put-role' },
          subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
        },
      ],
      [
        `${rbac}/clusterrolebindings/put-crb`,
        {
          kind: 'ClusterRoleBinding',
          metadata: { name: 'put-crb' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'put-cr' },
          subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
        },
      ],
    ];
    for (const [path, body] of cases) {
      const put = await send('PUT', path, { apiVersion: 'rbac.authorization.k8s.io/v1', ...body });
      assert.equal(put.status, 201, `${path}: ${JSON.stringify(put.body)}`);
    }
  });

  it('PATCH: 200 for an existing object; 404 for a missing one (json, merge, strategic); apply creates with 201', async () => {
    await api.client.create(resources.configmaps, configMap('p1'));
    const merge = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/p1',
      { data: { k: 'v' } },
      'application/merge-patch+json',
    );
    assert.equal(merge.status, 200);
    for (const [type, body] of [
      ['application/merge-patch+json', { data: { k: 'v' } }],
      ['application/strategic-merge-patch+json', { data: { k: 'v' } }],
      ['application/json-patch+json', [{ op: 'add', path: '/data', value: { k: 'v' } }]],
    ] as const) {
      // A Service allows create on update, yet a patch of a missing one is still 404.
      const missing = await send('PATCH', '/api/v1/namespaces/default/services/p-missing', body, type);
      assert.equal(missing.status, 404, type);
    }
    const path = '/api/v1/namespaces/default/configmaps/p-applied?fieldManager=test';
    const applied = await send('PATCH', path, configMap('p-applied'), 'application/apply-patch+yaml');
    assert.equal(applied.status, 201);
    const reapplied = await send(
      'PATCH',
      path,
      configMap('p-applied', { a: 'b' }),
      'application/apply-patch+yaml',
    );
    assert.equal(reapplied.status, 200);
  });

  it('DELETE of a collection: 200 with the list of what it deleted', async () => {
    await api.client.create(resources.configmaps, configMap('dc1', { set: 'dc' }));
    await api.client.create(resources.configmaps, configMap('dc2', { set: 'dc' }));
    const res = await send('DELETE', '/api/v1/namespaces/default/configmaps?labelSelector=set%3Ddc');
    assert.equal(res.status, 200);
    assert.equal(res.body.kind, 'ConfigMapList');
    assert.deepEqual(res.body.items?.map((i) => i.metadata?.name).sort(), ['dc1', 'dc2']);
    const left = await api.client.list(resources.configmaps, {
      namespace: 'default',
      labelSelector: 'set=dc',
    });
    assert.equal(left.items.length, 0);
  });
});

describe('refusals of a write whose URL and body disagree (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
    await api.client.create(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'm1', namespace: 'default' },
    });
  });
  after(() => api.stop());

  const send = async (method: string, path: string, body: object) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { reason?: string; message?: string } };
  };

  it('PUT: 400 BadRequest when the name in the body is not the name on the URL', async () => {
    const r = await send('PUT', '/api/v1/namespaces/default/configmaps/m1', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'other', namespace: 'default' },
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal(r.body.message, 'the name of the object (other) does not match the name on the URL (m1)');
  });

  it('POST and PUT: 400 BadRequest when the namespace in the body is not the one on the URL', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm1', namespace: 'kube-system' } };
    for (const [method, path] of [
      ['POST', '/api/v1/namespaces/default/configmaps'],
      ['PUT', '/api/v1/namespaces/default/configmaps/m1'],
    ] as const) {
      const r = await send(method, path, body);
      assert.equal(r.status, 400, method);
      assert.equal(r.body.reason, 'BadRequest', method);
      assert.equal(
        r.body.message,
        'the namespace of the provided object does not match the namespace sent on the request',
        method,
      );
    }
  });

  it('POST to a named object is 405 MethodNotAllowed', async () => {
    const r = await send('POST', '/api/v1/namespaces/default/configmaps/m1', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'm1' },
    });
    assert.equal(r.status, 405);
    assert.equal(r.body.reason, 'MethodNotAllowed');
  });
});
