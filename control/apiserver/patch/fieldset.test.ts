import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldSet, keyElement, pathString, valueElement } from './fieldset.js';
import { loadModels } from '../openapi/index.js';

// The patch schemas come from the client-node models the OpenAPI catalog loads.
await loadModels();

const container = keyElement({ name: 'c' });

describe('FieldSet', () => {
  it('round-trips FieldsV1, with "." for members that have children', () => {
    const fieldsV1 = {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} },
            },
          },
        },
      },
    };
    const set = FieldSet.fromFieldsV1(fieldsV1);
    assert.equal(set.has(['f:metadata', 'f:labels']), true);
    assert.equal(set.has(['f:metadata']), false);
    assert.equal(set.has(['f:spec', 'f:template', 'f:spec', 'f:containers', container]), true);
    assert.deepEqual(set.toFieldsV1(), fieldsV1);
  });

  it('sorts path elements as structured-merge-diff: fields, keys, values, indexes', () => {
    const set = FieldSet.of(['i:10'], ['i:2'], ['v:"a"'], ['k:{"a":1}'], ['f:z'], ['f:a']);
    assert.deepEqual(Object.keys(set.toFieldsV1()), ['f:a', 'f:z', 'k:{"a":1}', 'v:"a"', 'i:2', 'i:10']);
  });

  it('refuses FieldsV1 that is not a tree of path elements', () => {
    assert.throws(() => FieldSet.fromFieldsV1({ spec: {} }), /unexpected FieldsV1 key/);
    assert.throws(() => FieldSet.fromFieldsV1({ 'f:spec': 1 }), /must be a JSON object/);
  });

  it('computes union, difference and intersection on member paths', () => {
    const a = FieldSet.of(['f:spec', 'f:replicas'], ['f:spec', 'f:paused']);
    const b = FieldSet.of(['f:spec', 'f:replicas'], ['f:metadata', 'f:labels', 'f:x']);
    assert.deepEqual(a.intersection(b).paths(), [['f:spec', 'f:replicas']]);
    assert.deepEqual(a.difference(b).paths(), [['f:spec', 'f:paused']]);
    assert.deepEqual(a.union(b).paths(), [
      ['f:metadata', 'f:labels', 'f:x'],
      ['f:spec', 'f:paused'],
      ['f:spec', 'f:replicas'],
    ]);
    assert.equal(a.difference(a).empty(), true);
  });

  it('lists a node own members before its subtrees', () => {
    const set = FieldSet.of(
      ['f:spec', 'f:template', 'f:x'],
      ['f:spec', 'f:replicas'],
      ['f:spec', 'f:template'],
    );
    assert.deepEqual(set.paths(), [
      ['f:spec', 'f:replicas'],
      ['f:spec', 'f:template'],
      ['f:spec', 'f:template', 'f:x'],
    ]);
  });

  it('prints paths as conflicts name them', () => {
    const cases: [string[], string][] = [
      [['f:spec', 'f:replicas'], '.spec.replicas'],
      [['f:spec', 'f:containers', container, 'f:image'], '.spec.containers[name="c"].image'],
      [
        ['f:ports', keyElement({ protocol: 'TCP', containerPort: 8080 })],
        '.ports[containerPort=8080,protocol="TCP"]',
      ],
      [['f:metadata', 'f:finalizers', valueElement('x')], '.metadata.finalizers[="x"]'],
      [['f:args', 'i:3'], '.args[3]'],
    ];
    for (const [path, text] of cases) assert.equal(pathString(path), text);
  });
});
