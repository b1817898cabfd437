import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  aggregateFieldErrors,
  childPath,
  duplicate,
  fieldErrorBody,
  fieldErrorString,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
  toStatusCauses,
  tooLong,
} from './field-errors.js';
import type { FieldError } from './field-errors.js';

describe('field errors', () => {
  const cases: [string, FieldError, string][] = [
    ['required, no detail', required('metadata.namespace'), 'metadata.namespace: Required value'],
    [
      'required with detail',
      required('metadata.name', 'name or generateName is required'),
      'metadata.name: Required value: name or generateName is required',
    ],
    [
      'invalid string',
      invalid('spec.containers[0].name', 'Foo', 'bad'),
      'spec.containers[0].name: Invalid value: "Foo": bad',
    ],
    [
      'invalid number',
      invalid('spec.replicas', -1, 'must be >= 0'),
      'spec.replicas: Invalid value: -1: must be >= 0',
    ],
    ['invalid boolean', invalid('x', true, 'no'), 'x: Invalid value: true: no'],
    ['invalid list', invalid('x', ['a', 'b'], 'no'), 'x: Invalid value: ["a","b"]: no'],
    ['invalid object', invalid('x', { a: 1 }, 'no'), 'x: Invalid value: {"a":1}: no'],
    ['invalid undefined', invalid('x', undefined, 'no'), 'x: Invalid value: null: no'],
    ['string with quotes', invalid('x', 'a"b', 'no'), 'x: Invalid value: "a\\"b": no'],
    [
      'not supported',
      notSupported('spec.restartPolicy', 'Sometimes', ['Always', 'OnFailure', 'Never']),
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ],
    ['not supported, no list', notSupported('x', 'y', []), 'x: Unsupported value: "y"'],
    ['duplicate', duplicate('spec.ports[1].name', 'http'), 'spec.ports[1].name: Duplicate value: "http"'],
    [
      'too long',
      tooLong('metadata.annotations', 262144),
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ],
    ['too long, one byte', tooLong('x', 1), 'x: Too long: may not be more than 1 byte'],
    ['too long, no limit', tooLong('x', -1), 'x: Too long: value is too long'],
    [
      'forbidden',
      forbidden('metadata.namespace', 'not allowed on this type'),
      'metadata.namespace: Forbidden: not allowed on this type',
    ],
  ];
  for (const [name, err, want] of cases) {
    it(name, () => assert.equal(fieldErrorString(err), want));
  }

  it('builds paths as Kubernetes does', () => {
    assert.equal(childPath('', 'metadata'), 'metadata');
    assert.equal(childPath('metadata', 'name'), 'metadata.name');
    assert.equal(
      childPath(indexPath(childPath('spec', 'template', 'spec', 'containers'), 0), 'name'),
      'spec.template.spec.containers[0].name',
    );
    assert.equal(keyPath('metadata.labels', 'app'), 'metadata.labels[app]');
  });

  it('aggregates like Kubernetes: one as itself, several bracketed, duplicates dropped', () => {
    const e1 = required('a');
    const e2 = invalid('b', 'x', 'bad');
    assert.equal(aggregateFieldErrors([]), '');
    assert.equal(aggregateFieldErrors([e1]), 'a: Required value');
    assert.equal(aggregateFieldErrors([e1, e2, e1]), '[a: Required value, b: Invalid value: "x": bad]');
  });

  it('gives status causes with the body as message', () => {
    assert.deepEqual(toStatusCauses([invalid('metadata.name', 'A', 'bad')]), [
      { reason: 'FieldValueInvalid', message: 'Invalid value: "A": bad', field: 'metadata.name' },
    ]);
    assert.equal(fieldErrorBody(forbidden('x', 'no')), 'Forbidden: no');
  });
});
