import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeObject, resolveResource } from './request.js';
import { ApiError } from './status.js';

describe('resolveResource', () => {
  const ok: [string, string, string, string | undefined, string | undefined, string | undefined, string][] = [
    // method, path, resource, namespace, name, subresource, verb
    ['GET', '/api/v1/namespaces/default/pods', 'pods', 'default', undefined, undefined, 'list'],
    ['GET', '/api/v1/pods', 'pods', undefined, undefined, undefined, 'list'],
    ['GET', '/api/v1/pods?watch=true', 'pods', undefined, undefined, undefined, 'watch'],
    ['GET', '/api/v1/namespaces/default/pods/web', 'pods', 'default', 'web', undefined, 'get'],
    ['PUT', '/api/v1/namespaces/default/pods/web/status', 'pods', 'default', 'web', 'status', 'update'],
    ['POST', '/api/v1/namespaces/default/pods/web/binding', 'pods', 'default', 'web', 'binding', 'create'],
    ['GET', '/api/v1/namespaces', 'namespaces', undefined, undefined, undefined, 'list'],
    ['GET', '/api/v1/namespaces/kube-system', 'namespaces', undefined, 'kube-system', undefined, 'get'],
    [
      'PUT',
      '/api/v1/namespaces/kube-system/status',
      'namespaces',
      undefined,
      'kube-system',
      'status',
      'update',
    ],
    ['GET', '/api/v1/nodes/n1', 'nodes', undefined, 'n1', undefined, 'get'],
    [
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/web/scale',
      'deployments',
      'default',
      'web',
      'scale',
      'patch',
    ],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/default/deployments',
      'deployments',
      'default',
      undefined,
      undefined,
      'deletecollection',
    ],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/default/deployments/web',
      'deployments',
      'default',
      'web',
      undefined,
      'delete',
    ],
    [
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1',
      'leases',
      'kube-node-lease',
      'n1',
      undefined,
      'get',
    ],
  ];
  for (const [method, path, resource, ns, name, sub, verb] of ok) {
    it(`${method} ${path}`, () => {
      const url = new URL(path, 'http://x');
      const r = resolveResource(method, url.pathname, url.searchParams)!;
      assert.deepEqual(
        [r.resource.resource, r.namespace, r.name, r.subresource, r.verb],
        [resource, ns, name, sub, verb],
      );
    });
  }

  it('leaves non-resource paths alone', () => {
    for (const p of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/healthz']) {
      assert.equal(resolveResource('GET', p, new URLSearchParams()), undefined, p);
    }
  });

  const bad: [string, string, number][] = [
    ['GET', '/api/v1/widgets', 404],
    ['GET', '/apis/nope/v1/things', 404],
    ['GET', '/api/v2/pods', 404],
    ['GET', '/api/v1/namespaces/default/nodes', 404],
    ['GET', '/api/v1/namespaces/default/pods/web/nonsense', 404],
    ['GET', '/api/v1/namespaces/default/pods/web/status/extra', 404],
    ['PUT', '/api/v1/namespaces/default/pods', 405],
    ['PATCH', '/api/v1/namespaces/default/pods', 405],
    ['OPTIONS', '/api/v1/namespaces/default/pods', 405],
    ['DELETE', '/api/v1/namespaces', 405],
  ];
  for (const [method, path, code] of bad) {
    it(`${method} ${path} → ${code}`, () => {
      assert.throws(
        () => resolveResource(method, path, new URLSearchParams()),
        (e) => e instanceof ApiError && e.code === code,
      );
    });
  }
});

describe('decodeObject', () => {
  it('reads JSON and YAML objects', () => {
    assert.deepEqual(decodeObject('{"kind":"Pod"}', 'application/json'), { kind: 'Pod' });
    assert.deepEqual(decodeObject('kind: Pod\nmetadata:\n  name: p # 이름\n', 'application/yaml'), {
      kind: 'Pod',
      metadata: { name: 'p' },
    });
  });
  const bad: [string, string, number][] = [
    ['{"kind":', 'application/json', 400],
    ['kind: [', 'application/yaml', 400],
    ['[1,2]', 'application/json', 400],
    ['"str"', 'application/json', 400],
    ['x', 'application/vnd.kubernetes.protobuf', 400],
    ['x', 'text/plain', 415],
  ];
  for (const [body, type, code] of bad) {
    it(`${type} ${JSON.stringify(body)} → ${code}`, () => {
      assert.throws(
        () => decodeObject(body, type),
        (e) => e instanceof ApiError && e.code === code,
      );
    });
  }
});
