import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import type { Attributes } from './authz.js';
import { rbacAuthorizer, ruleAllows, subjectMatches, type PolicyRule, type RbacSource } from './rbac.js';

const alice = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const res = (verb: string, resource: string, extra: Partial<Attributes> = {}): Attributes => ({
  user: alice,
  verb,
  resourceRequest: true,
  group: '',
  resource,
  ...extra,
});

describe('ruleAllows (RBAC rule matching)', () => {
  const cases: [string, PolicyRule, Attributes, boolean][] = [
    ['verb and resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', 'pods'), true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('list', 'pods'), false],
    ['other group', { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, res('get', 'pods'), false],
    ['* verbs', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, res('delete', 'pods'), true],
    [
      '* groups and resources',
      { verbs: ['get'], apiGroups: ['*'], resources: ['*'] },
      res('get', 'deployments', { group: 'apps' }),
      true,
    ],
    [
      'a subresource needs its own entry',
      { verbs: ['patch'], apiGroups: [''], resources: ['pods'] },
      res('patch', 'pods', { subresource: 'status' }),
      false,
    ],
    [
      'pods/status',
      { verbs: ['patch'], apiGroups: [''], resources: ['pods/status'] },
      res('patch', 'pods', { subresource: 'status' }),
      true,
    ],
    [
      'pods/* is a literal, as in Kubernetes: it covers no subresource',
      { verbs: ['patch'], apiGroups: [''], resources: ['pods/*'] },
      res('patch', 'pods', { subresource: 'status' }),
      false,
    ],
    [
      '*/scale',
      { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      res('update', 'deployments', { group: 'apps', subresource: 'scale' }),
      true,
    ],
    [
      '* covers subresources',
      { verbs: ['get'], apiGroups: [''], resources: ['*'] },
      res('get', 'pods', { subresource: 'log' }),
      true,
    ],
    [
      'resourceNames match the name',
      { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('get', 'configmaps', { name: 'a' }),
      true,
    ],
    [
      'resourceNames refuse other names',
      { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('get', 'configmaps', { name: 'b' }),
      false,
    ],
    [
      'resourceNames never match a list',
      { verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('list', 'configmaps'),
      false,
    ],
    [
      'non-resource exact',
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
      { user: alice, verb: 'get', resourceRequest: false, path: '/healthz' },
      true,
    ],
    [
      'non-resource prefix',
      { verbs: ['get'], nonResourceURLs: ['/apis/*'] },
      { user: alice, verb: 'get', resourceRequest: false, path: '/apis/apps/v1' },
      true,
    ],
    [
      'non-resource other path',
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
      { user: alice, verb: 'get', resourceRequest: false, path: '/metrics' },
      false,
    ],
    [
      'resource rule does not match a path',
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { user: alice, verb: 'get', resourceRequest: false, path: '/metrics' },
      false,
    ],
  ];
  for (const [name, rule, attrs, want] of cases) it(name, () => assert.equal(ruleAllows(attrs, rule), want));
});

describe('subjectMatches', () => {
  it('matches users by name, groups by membership, service accounts by their user name', () => {
    assert.ok(subjectMatches({ kind: 'User', name: 'alice' }, alice, 'ns'));
    assert.ok(!subjectMatches({ kind: 'User', name: 'bob' }, alice, 'ns'));
    assert.ok(subjectMatches({ kind: 'Group', name: 'devs' }, alice, 'ns'));
    assert.ok(!subjectMatches({ kind: 'Group', name: 'ops' }, alice, 'ns'));
    const sa = { name: 'system:serviceaccount:ns:builder', groups: [] };
    assert.ok(subjectMatches({ kind: 'ServiceAccount', name: 'builder' }, sa, 'ns'));
    assert.ok(subjectMatches({ kind: 'ServiceAccount', name: 'builder', namespace: 'ns' }, sa, undefined));
    assert.ok(!subjectMatches({ kind: 'ServiceAccount', name: 'builder' }, sa, 'other'));
  });
});

describe('rbacAuthorizer', () => {
  const role = (name: string, rules: PolicyRule[], namespace?: string): KubeObject => ({
    metadata: { name, ...(namespace ? { namespace } : {}) },
    rules,
  });
  const binding = (
    name: string,
    kind: string,
    roleName: string,
    subjects: object[],
    namespace?: string,
  ): KubeObject => ({
    metadata: { name, ...(namespace ? { namespace } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName },
    subjects,
  });
  const src: RbacSource = {
    clusterRoleBindings: () =>
      Promise.resolve([
        binding('view-nodes', 'ClusterRole', 'node-viewer', [{ kind: 'Group', name: 'devs' }]),
      ]),
    roleBindings: (ns) =>
      Promise.resolve(
        ns === 'team'
          ? [
              binding('a', 'Role', 'pod-reader', [{ kind: 'User', name: 'alice' }], 'team'),
              binding('b', 'ClusterRole', 'cm-editor', [{ kind: 'User', name: 'alice' }], 'team'),
              binding('c', 'Role', 'missing', [{ kind: 'User', name: 'alice' }], 'team'),
            ]
          : [],
      ),
    clusterRole: (name) =>
      Promise.resolve(
        name === 'node-viewer'
          ? role(name, [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['nodes'] }])
          : name === 'cm-editor'
            ? role(name, [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'] }])
            : undefined,
      ),
    role: (ns, name) =>
      Promise.resolve(
        ns === 'team' && name === 'pod-reader'
          ? role(name, [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }], ns)
          : undefined,
      ),
  };
  const z = rbacAuthorizer(src);
  const cases: [string, Attributes, 'allow' | 'noOpinion'][] = [
    ['Role in its namespace', res('list', 'pods', { namespace: 'team' }), 'allow'],
    ['Role not in another namespace', res('list', 'pods', { namespace: 'default' }), 'noOpinion'],
    ['Role not across namespaces', res('list', 'pods'), 'noOpinion'],
    ['Role: only its verbs', res('delete', 'pods', { namespace: 'team', name: 'p' }), 'noOpinion'],
    [
      'ClusterRole via RoleBinding: in that namespace',
      res('delete', 'configmaps', { namespace: 'team', name: 'c' }),
      'allow',
    ],
    [
      'ClusterRole via RoleBinding: not elsewhere',
      res('delete', 'configmaps', { namespace: 'x', name: 'c' }),
      'noOpinion',
    ],
    ['ClusterRoleBinding by group: cluster-wide', res('list', 'nodes'), 'allow'],
    ['nothing else', res('create', 'secrets', { namespace: 'team' }), 'noOpinion'],
  ];
  for (const [name, attrs, want] of cases) {
    it(name, async () => assert.equal((await z.authorize(attrs)).decision, want));
  }
  it('another user gets nothing', async () => {
    const bob = { name: 'bob', groups: ['system:authenticated'] };
    assert.equal(
      (await z.authorize({ ...res('list', 'pods', { namespace: 'team' }), user: bob })).decision,
      'noOpinion',
    );
  });
});
