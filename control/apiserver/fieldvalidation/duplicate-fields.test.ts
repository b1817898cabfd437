// Duplicate fields (duplicate-fields.ts), found in the body's text.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { duplicateFields } from './index.js';
import { SPRING, loadSchemasTimed } from './test-fixtures.js';

before(loadSchemasTimed);

describe('duplicateFields', () => {
  const cases: { name: string; json: string; model?: string; want: string[] }[] = [
    { name: 'none', json: JSON.stringify(SPRING), model: 'V1Deployment', want: [] },
    {
      name: 'struct field',
      json: '{"metadata":{"name":"a","name":"b"}}',
      model: 'V1Deployment',
      want: ['metadata.name'],
    },
    {
      name: 'map key',
      json: '{"metadata":{"labels":{"app":"a","app":"b"}}}',
      model: 'V1Deployment',
      want: ['metadata.labels.app'],
    },
    {
      name: 'in a list',
      json: '{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b","image":"i","name":"c"}]}}}}',
      model: 'V1Deployment',
      want: ['spec.template.spec.containers[1].name'],
    },
    {
      name: 'each once, in document order',
      json: '{"kind":"Deployment","kind":"Deployment","spec":{"replicas":1,"replicas":2,"replicas":3},"kind":"x"}',
      model: 'V1Deployment',
      want: ['kind', 'spec.replicas'],
    },
    {
      name: 'not inside opaque values (fieldsV1) nor unknown fields; unknown keys are not duplicates',
      json: '{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{},"f:a":{}}}]},"foo":{"x":1,"x":2},"foo":1}',
      model: 'V1Deployment',
      want: [],
    },
    {
      name: 'untyped (a merge patch): everywhere',
      json: '{"spec":{"foo":[{"x":1,"x":2}],"foo":1},"metadata":{"fieldsV1":{"a":1,"a":1}}}',
      want: ['spec.foo[0].x', 'spec.foo', 'metadata.fieldsV1.a'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(duplicateFields(c.json, { model: c.model }), c.want);
      const parsed: unknown = JSON.parse(c.json);
      assert.deepEqual(duplicateFields(c.json, { model: c.model, parsed }), c.want, 'with parsed');
    });
  }

  it('counts keys, not strings that look like keys, in the fast check', () => {
    const tricky = JSON.stringify({
      metadata: {
        name: 'a',
        annotations: { note: '{"name": "x", "name": "y"}', 'b\\"': 'c\\":' },
      },
    });
    assert.deepEqual(duplicateFields(tricky, { model: 'V1Deployment' }), []);
    assert.deepEqual(duplicateFields(`${tricky.slice(0, -1)}, "metadata": {}}`, {}), ['metadata']);
  });

  it('requires the schemas only with a model', () => {
    assert.throws(() => duplicateFields('{}', { model: 'V1Nope' }), /no schema for model V1Nope/);
  });
});
