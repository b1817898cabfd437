// The cells of a custom resource's table, as the apiextensions-apiserver's tableconvertor
// fills them: the first value a column's JSONPath finds, typed by the column; nothing where
// the path finds nothing or the value is not of the column's type.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../api/object.js';
import { customResourcePrinter } from './printer.js';

const NOW = new Date('2026-01-01T00:10:00Z');

function cell(type: string, jsonPath: string, obj: Record<string, unknown>): unknown {
  const p = customResourcePrinter([{ name: 'C', type, jsonPath }]);
  return p.row({ metadata: { name: 'x' }, ...obj } as KubeObject, NOW).cells[1];
}

describe('customResourcePrinter cells', () => {
  const cases: { name: string; type: string; path: string; obj: Record<string, unknown>; want: unknown }[] = [
    { name: 'an integer', type: 'integer', path: '.spec.n', obj: { spec: { n: 3 } }, want: 3 },
    {
      name: 'a float in an integer column, truncated',
      type: 'integer',
      path: '.spec.n',
      obj: { spec: { n: 2.7 } },
      want: 2,
    },
    {
      name: 'a string in an integer column',
      type: 'integer',
      path: '.spec.n',
      obj: { spec: { n: 'three' } },
      want: '',
    },
    {
      name: 'a string in a boolean column',
      type: 'boolean',
      path: '.spec.b',
      obj: { spec: { b: 'yes' } },
      want: '',
    },
    {
      name: 'a number in a string column',
      type: 'string',
      path: '.spec.n',
      obj: { spec: { n: 1.5 } },
      want: '1.5',
    },
    {
      name: 'an object in a string column, as JSON',
      type: 'string',
      path: '.spec',
      obj: { spec: { b: 1, a: 'x' } },
      want: '{"a":"x","b":1}',
    },
    { name: 'a missing field', type: 'string', path: '.spec.none', obj: { spec: {} }, want: '' },
    { name: 'a null', type: 'integer', path: '.spec.n', obj: { spec: { n: null } }, want: '' },
    {
      name: 'only the first of several values',
      type: 'string',
      path: '.spec.items[*].name',
      obj: { spec: { items: [{ name: 'a' }, { name: 'b' }] } },
      want: 'a',
    },
    {
      name: 'a date',
      type: 'date',
      path: '.spec.t',
      obj: { spec: { t: '2026-01-01T00:00:00Z' } },
      want: '10m',
    },
    {
      name: 'a date that does not parse',
      type: 'date',
      path: '.spec.t',
      obj: { spec: { t: 'yesterday' } },
      want: '<invalid>',
    },
    { name: 'a number in a date column', type: 'date', path: '.spec.t', obj: { spec: { t: 5 } }, want: '' },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(cell(c.type, c.path, c.obj), c.want);
    });
});
