import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  forbidden,
  privilegedGroupAuthorizer,
  unionAuthorizer,
  type Attributes,
  type Authorizer,
} from './authz.js';

const alice = { name: 'alice', groups: ['system:authenticated'] };

describe('forbidden (the 403 wording of kube-apiserver)', () => {
  const cases: [string, Attributes, string | undefined, string][] = [
    [
      'namespaced, named',
      {
        user: alice,
        verb: 'get',
        resourceRequest: true,
        group: '',
        resource: 'pods',
        namespace: 'default',
        name: 'web',
      },
      undefined,
      'pods "web" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "default"',
    ],
    [
      'collection of a group',
      {
        user: alice,
        verb: 'list',
        resourceRequest: true,
        group: 'apps',
        resource: 'deployments',
        namespace: 'team',
      },
      undefined,
      'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" in the namespace "team"',
    ],
    [
      'cluster scope with a subresource and a reason',
      {
        user: alice,
        verb: 'patch',
        resourceRequest: true,
        group: '',
        resource: 'nodes',
        subresource: 'status',
        name: 'n2',
      },
      'because',
      'nodes "n2" is forbidden: User "alice" cannot patch resource "nodes/status" in API group "" at the cluster scope: because',
    ],
    [
      'a path',
      { user: alice, verb: 'get', resourceRequest: false, path: '/metrics' },
      undefined,
      'forbidden: User "alice" cannot get path "/metrics"',
    ],
  ];
  for (const [name, attrs, reason, message] of cases) {
    it(name, () => {
      const err = forbidden(attrs, reason);
      assert.equal(err.code, 403);
      assert.equal(err.reason, 'Forbidden');
      assert.equal(err.message, message);
    });
  }
});

describe('unionAuthorizer', () => {
  const fixed = (decision: 'allow' | 'deny' | 'noOpinion', reason?: string): Authorizer => ({
    authorize: () => Promise.resolve({ decision, ...(reason ? { reason } : {}) }),
  });
  const attrs: Attributes = { user: alice, verb: 'get', resourceRequest: false, path: '/x' };
  it('takes the first allow or deny; no opinion from all is a refusal with their reasons', async () => {
    assert.equal(
      (await unionAuthorizer(fixed('noOpinion'), fixed('allow'), fixed('deny')).authorize(attrs)).decision,
      'allow',
    );
    assert.equal(
      (await unionAuthorizer(fixed('deny', 'no'), fixed('allow')).authorize(attrs)).decision,
      'deny',
    );
    assert.deepEqual(
      await unionAuthorizer(fixed('noOpinion', 'a'), fixed('noOpinion', 'b')).authorize(attrs),
      {
        decision: 'noOpinion',
        reason: 'a, b',
      },
    );
  });
  it('system:masters may do everything', async () => {
    const admin = { name: 'system:admin', groups: ['system:masters'] };
    assert.equal((await privilegedGroupAuthorizer.authorize({ ...attrs, user: admin })).decision, 'allow');
    assert.equal((await privilegedGroupAuthorizer.authorize(attrs)).decision, 'noOpinion');
  });
});
