import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
// Tests may read the API server's table; run-time code in api/ may not.
import { findResource } from '../../control/apiserver/resources.js';
import { apiVersionOf, resourcePath, resources } from './resource.js';

describe('resources', () => {
  it('agree with the API server resource table', () => {
    for (const [name, ref] of Object.entries(resources)) {
      const served = findResource(ref.group, ref.version, ref.resource);
      assert.ok(served, `${name} is served`);
      assert.equal(ref.kind, served.kind, name);
      assert.equal(ref.namespaced, served.namespaced, name);
    }
  });

  it('apiVersionOf', () => {
    assert.equal(apiVersionOf(resources.pods), 'v1');
    assert.equal(apiVersionOf(resources.deployments), 'apps/v1');
  });

  it('resourcePath', () => {
    const cases: [Parameters<typeof resourcePath>, string][] = [
      [[resources.pods], '/api/v1/pods'],
      [[resources.pods, 'default'], '/api/v1/namespaces/default/pods'],
      [[resources.pods, 'default', 'web-0'], '/api/v1/namespaces/default/pods/web-0'],
      [[resources.pods, 'default', 'web-0', 'status'], '/api/v1/namespaces/default/pods/web-0/status'],
      [[resources.nodes, 'ignored', 'n1'], '/api/v1/nodes/n1'],
      [[resources.replicasets, 'x', 'rs'], '/apis/apps/v1/namespaces/x/replicasets/rs'],
      [
        [resources.leases, 'kube-node-lease'],
        '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      ],
      [[resources.configmaps, 'a b', 'c/d'], '/api/v1/namespaces/a%20b/configmaps/c%2Fd'],
    ];
    for (const [args, want] of cases) assert.equal(resourcePath(...args), want);
    assert.throws(() => resourcePath(resources.pods, 'default', undefined, 'status'));
  });
});
