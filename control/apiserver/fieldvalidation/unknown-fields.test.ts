// Unknown fields (unknown-fields.ts): found by path, dropped, at most MAX_STRICT_ERRORS.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { MAX_STRICT_ERRORS, pruneUnknownFields } from './index.js';
import {
  SPRING,
  at,
  clone,
  container,
  loadSchemasTimed,
  podSpec,
  typicalDeployment,
} from './test-fixtures.js';
import type { Json } from './test-fixtures.js';
import { RESOURCES } from '../resources.js';

before(loadSchemasTimed);

describe('pruneUnknownFields', () => {
  it('finds nothing in spring-deployment.yaml and leaves it unchanged', () => {
    const d = clone(SPRING);
    assert.deepEqual(pruneUnknownFields('V1Deployment', d), []);
    assert.deepEqual(d, SPRING);
  });

  it('finds nothing in a typical stored Deployment (maps, quantities, IntOrString, FieldsV1, status)', () => {
    const d = typicalDeployment();
    const before = clone(d);
    assert.deepEqual(pruneUnknownFields('V1Deployment', d), []);
    assert.deepEqual(d, before);
  });

  interface Case {
    name: string;
    model?: string;
    /** The object without typos; SPRING by default. */
    base?: () => Json;
    /** Adds what is valid (kept). */
    valid?: (o: Json) => void;
    /** Adds the unknown fields (removed). */
    typo?: (o: Json) => void;
    want: string[];
  }

  const cases: Case[] = [
    { name: 'top level', typo: (o) => (o.foo = 1), want: ['foo'] },
    { name: 'apiVersion, kind and metadata are known at the top', want: [] },
    { name: 'field names are case-sensitive', typo: (o) => (o.Spec = {}), want: ['Spec'] },
    { name: 'metadata', typo: (o) => (at(o, 'metadata').nmae = 'x'), want: ['metadata.nmae'] },
    { name: 'spec', typo: (o) => (at(o, 'spec').foo = 'bar'), want: ['spec.foo'] },
    {
      name: 'spec.selector (a LabelSelector)',
      typo: (o) => (at(o, 'spec', 'selector').matchLabel = { app: 'x' }),
      want: ['spec.selector.matchLabel'],
    },
    {
      name: 'template.spec',
      typo: (o) => (podSpec(o).restartPolicyy = 'Always'),
      want: ['spec.template.spec.restartPolicyy'],
    },
    {
      name: 'containers[0]',
      typo: (o) => (container(o).imagePullPolcy = 'Always'),
      want: ['spec.template.spec.containers[0].imagePullPolcy'],
    },
    {
      name: 'containers[1]',
      valid: (o) => (podSpec(o).containers as Json[]).push({ name: 'sidecar', image: 'busybox' }),
      typo: (o) => (container(o, 1).imagee = 'busybox:1'),
      want: ['spec.template.spec.containers[1].imagee'],
    },
    {
      name: 'ports[0]',
      typo: (o) => (at(container(o), 'ports', 0).containerPortt = 80),
      want: ['spec.template.spec.containers[0].ports[0].containerPortt'],
    },
    {
      name: 'metadata.labels is a map: any key',
      valid: (o) => {
        at(o, 'metadata').labels = { app: 'x', 'example.com/anything': 'y', imagePullPolcy: 'z' };
        at(o, 'spec', 'template', 'metadata', 'labels')['tier'] = 'web';
        at(o, 'metadata').annotations = { 'what/ever': '1' };
      },
      want: [],
    },
    {
      name: 'resources.limits is a map of quantities: any key, strings or numbers',
      valid: (o) =>
        (container(o).resources = {
          limits: { cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': 1 },
          requests: { cpu: 0.5 },
        }),
      typo: (o) => (at(container(o), 'resources').limitss = { cpu: '1' }),
      want: ['spec.template.spec.containers[0].resources.limitss'],
    },
    {
      name: 'managedFields[].fieldsV1 is free-form; the entry itself is not',
      valid: (o) =>
        (at(o, 'metadata').managedFields = [
          {
            manager: 'kubectl',
            operation: 'Apply',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:anything': { '.': {} } }, whatever: [1, 2] },
          },
        ]),
      typo: (o) => (at(o, 'metadata', 'managedFields', 0).managerr = 'x'),
      want: ['metadata.managedFields[0].managerr'],
    },
    {
      name: 'IntOrString takes integers and strings',
      valid: (o) => {
        at(o, 'spec').strategy = { rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } };
        container(o).readinessProbe = { httpGet: { port: 'http', path: '/' } };
        container(o).livenessProbe = { tcpSocket: { port: 8080 } };
      },
      want: [],
    },
    {
      name: 'an unknown field is reported once, not looked into',
      typo: (o) => (container(o).securityContextt = { runAsUser: 1, bogus: { deeper: true } }),
      want: ['spec.template.spec.containers[0].securityContextt'],
    },
    {
      name: 'several, in document order',
      typo: (o) => {
        at(o, 'metadata').a = 1; // metadata comes before spec in the fixture
        container(o).b = 2;
        at(o, 'spec').c = 3; // appended after template
        o.d = 4;
      },
      want: ['metadata.a', 'spec.template.spec.containers[0].b', 'spec.c', 'd'],
    },
    {
      name: 'status',
      valid: (o) => (o.status = { replicas: 1, conditions: [{ type: 'Available', status: 'True' }] }),
      typo: (o) => (at(o, 'status', 'conditions', 0).reasonn = 'x'),
      want: ['status.conditions[0].reasonn'],
    },
    {
      name: 'null values and values of the wrong type are not unknown fields',
      valid: (o) => {
        podSpec(o).nodeSelector = null;
        podSpec(o).volumes = 'not a list';
        at(o, 'spec').replicas = 'five';
        at(o, 'spec').strategy = [{ type: 'Recreate' }];
      },
      want: [],
    },
    {
      name: 'a map of structs (volumes[].projected, env[].valueFrom) checks each struct',
      valid: (o) =>
        (container(o).env = [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }]),
      typo: (o) => (at(container(o), 'env', 0, 'valueFrom', 'configMapKeyRef').optinal = true),
      want: ['spec.template.spec.containers[0].env[0].valueFrom.configMapKeyRef.optinal'],
    },
    {
      name: 'Pod',
      model: 'V1Pod',
      base: () => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      }),
      typo: (o) => (at(o, 'spec', 'containers', 0).envv = []),
      want: ['spec.containers[0].envv'],
    },
    {
      name: 'Service (targetPort is IntOrString)',
      model: 'V1Service',
      base: () => ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: { type: 'NodePort', ports: [{ port: 80, targetPort: 'http', nodePort: 30080 }] },
      }),
      typo: (o) => (at(o, 'spec').tpye = 'ClusterIP'),
      want: ['spec.tpye'],
    },
    {
      name: 'ConfigMap (data is a map; there is no spec)',
      model: 'V1ConfigMap',
      base: () => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c' },
        data: { 'application.yaml': 'a: 1', spec: 'fine here' },
      }),
      typo: (o) => (o.spec = { data: 1 }),
      want: ['spec'],
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const expected = c.base ? c.base() : clone(SPRING);
      c.valid?.(expected);
      const input = clone(expected);
      c.typo?.(input);
      assert.deepEqual(pruneUnknownFields(c.model ?? 'V1Deployment', input), c.want);
      assert.deepEqual(input, expected, 'after pruning only the unknown fields are gone');
    });
  }

  it(`reports at most ${MAX_STRICT_ERRORS} but removes them all`, () => {
    const d = clone(SPRING);
    for (let i = 0; i < 150; i++) d[`extra${i}`] = i;
    const found = pruneUnknownFields('V1Deployment', d);
    assert.equal(found.length, MAX_STRICT_ERRORS);
    assert.equal(found[0], 'extra0');
    assert.deepEqual(d, SPRING);
  });

  it('a non-object has no fields', () => {
    assert.deepEqual(pruneUnknownFields('V1Deployment', null), []);
    assert.deepEqual(pruneUnknownFields('V1Deployment', 'x'), []);
  });

  it('has a schema for every served kind and the subresource kinds', () => {
    for (const model of [...RESOURCES.map((r) => r.model), 'V1Scale', 'V1Binding', 'V1Eviction']) {
      const obj = { apiVersion: 'v1', kind: 'X', metadata: { name: 'n' }, bogus: 1 };
      assert.deepEqual(pruneUnknownFields(model, obj), ['bogus'], model);
    }
  });

  it('refuses a model it has no schema for', () => {
    assert.throws(() => pruneUnknownFields('V1NoSuchThing', {}), /no schema for model V1NoSuchThing/);
  });
});
