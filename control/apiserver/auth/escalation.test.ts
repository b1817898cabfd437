import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  breakdownRule,
  compactRules,
  escalationMessage,
  formatRule,
  onlyGCFieldsChanged,
  uncoveredRules,
} from './escalation.js';
import type { PolicyRule } from './rbac.js';

describe('RBAC escalation: Covers', () => {
  const r = (verbs: string[], resources: string[], extra: Partial<PolicyRule> = {}): PolicyRule => ({
    apiGroups: [''],
    verbs,
    resources,
    ...extra,
  });

  it('breaks a rule down into one verb, one resource and one name each', () => {
    assert.deepEqual(breakdownRule(r(['get', 'list'], ['pods'], { resourceNames: ['a', 'b'] })), [
      { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['b'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'], resourceNames: ['a'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'], resourceNames: ['b'] },
    ]);
    assert.deepEqual(breakdownRule({ verbs: ['get'], nonResourceURLs: ['/healthz', '/metrics'] }), [
      { nonResourceURLs: ['/healthz'], verbs: ['get'] },
      { nonResourceURLs: ['/metrics'], verbs: ['get'] },
    ]);
  });

  const cases: [string, PolicyRule[], PolicyRule[], PolicyRule[]][] = [
    ['the same rule', [r(['get'], ['pods'])], [r(['get'], ['pods'])], []],
    ['a verb more', [r(['get'], ['pods'])], [r(['get', 'delete'], ['pods'])], [r(['delete'], ['pods'])]],
    [
      '* verbs, groups and resources cover anything',
      [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      [r(['*'], ['secrets']), { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['patch'] }],
      [],
    ],
    [
      'a requested * is covered only by a held *',
      [r(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['pods'])],
      [r(['*'], ['pods'])],
      [r(['*'], ['pods'])],
    ],
    [
      'pods/* is a literal, as in Kubernetes: it covers neither pods/log nor pods',
      [r(['get'], ['pods/*'])],
      [r(['get'], ['pods/log', 'pods', 'pods/*'])],
      [r(['get'], ['pods/log']), r(['get'], ['pods'])],
    ],
    [
      '*/status covers every status',
      [r(['update'], ['*/status'])],
      [r(['update'], ['pods/status', 'nodes/status'])],
      [],
    ],
    [
      'no names held covers any names',
      [r(['get'], ['configmaps'])],
      [r(['get'], ['configmaps'], { resourceNames: ['x'] })],
      [],
    ],
    [
      'held names cover only those names',
      [r(['get'], ['configmaps'], { resourceNames: ['x'] })],
      [r(['get'], ['configmaps'], { resourceNames: ['x', 'y'] })],
      [r(['get'], ['configmaps'], { resourceNames: ['y'] })],
    ],
    [
      'held names do not cover all names',
      [r(['get'], ['configmaps'], { resourceNames: ['x'] })],
      [r(['get'], ['configmaps'])],
      [r(['get'], ['configmaps'])],
    ],
    [
      'another group is not covered',
      [r(['get'], ['deployments'])],
      [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }],
      [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }],
    ],
    [
      'URLs by prefix',
      [{ verbs: ['get'], nonResourceURLs: ['/logs/*'] }],
      [{ verbs: ['get'], nonResourceURLs: ['/logs/a', '/metrics'] }],
      [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
    ],
    [
      'rules split over several held rules',
      [r(['get'], ['pods']), r(['list'], ['pods'])],
      [r(['get', 'list'], ['pods'])],
      [],
    ],
    ['nothing held', [], [r(['get'], ['pods'])], [r(['get'], ['pods'])]],
  ];
  for (const [name, owned, requested, uncovered] of cases) {
    it(name, () => assert.deepEqual(uncoveredRules(owned, requested), uncovered));
  }

  it('merges the uncovered verbs of one resource, as CompactRules', () => {
    assert.deepEqual(
      compactRules([r(['delete'], ['pods']), r(['get'], ['secrets']), r(['watch'], ['pods'])]),
      [r(['delete', 'watch'], ['pods']), r(['get'], ['secrets'])],
    );
    assert.equal(
      escalationMessage(
        { name: 'bob', groups: [] },
        uncoveredRules(
          [r(['get', 'list'], ['pods'])],
          [r(['get', 'delete', 'list', 'watch'], ['pods', 'secrets'])],
        ),
      ),
      'user "bob" (groups=[]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete" "watch"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete" "list" "watch"]}',
    );
  });

  it('treats a change of ownerReferences or finalizers only as no grant', () => {
    const role = {
      metadata: { name: 'x', resourceVersion: '5', labels: { a: 'b' } },
      rules: [r(['get'], ['pods'])],
    };
    assert.ok(
      onlyGCFieldsChanged(
        { ...role, metadata: { ...role.metadata, finalizers: ['f'], resourceVersion: '6' } },
        role,
      ),
    );
    assert.ok(!onlyGCFieldsChanged({ ...role, metadata: { ...role.metadata, labels: { a: 'c' } } }, role));
    assert.ok(!onlyGCFieldsChanged({ ...role, rules: [r(['get'], ['secrets'])] }, role));
  });

  it("words the refusal as Kubernetes' ConfirmNoEscalation", () => {
    assert.equal(
      formatRule(r(['get'], ['pods'], { resourceNames: ['a'] })),
      '{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get"]}',
    );
    assert.equal(
      formatRule({ nonResourceURLs: ['/x'], verbs: ['get'] }),
      '{NonResourceURLs:["/x"], Verbs:["get"]}',
    );
    assert.equal(
      escalationMessage({ name: 'bob', groups: ['a', 'system:authenticated'] }, [r(['get'], ['secrets'])]),
      'user "bob" (groups=["a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
  });
});
