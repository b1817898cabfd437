import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorString } from '../../../../api/meta/field-errors.js';
import {
  applyDefaults,
  pruneUnknownFields,
  validateCustomResource,
  validateStructuralSchema,
  type JSONSchemaProps,
} from './index.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';

function obj(spec: Record<string, JSONSchemaProps>, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps {
  return { type: 'object', properties: { spec: { type: 'object', properties: spec, ...extra } } };
}

describe('validateStructuralSchema', () => {
  const cases: { name: string; schema: JSONSchemaProps; want: string[] }[] = [
    { name: 'a structural schema', schema: obj({ replicas: { type: 'integer', default: 1 } }), want: [] },
    {
      name: 'root without type',
      schema: { properties: {} },
      want: [`${P}.type: Required value: must not be empty at the root`],
    },
    {
      name: 'root not object',
      schema: { type: 'string' },
      want: [`${P}.type: Invalid value: "string": must be object at the root`],
    },
    {
      name: 'field without type',
      schema: obj({ a: {} }),
      want: [
        `${P}.properties[spec].properties[a].type: Required value: must not be empty for specified object fields`,
      ],
    },
    {
      name: 'array without items, items without type',
      schema: obj({ a: { type: 'array' }, b: { type: 'array', items: {} } }),
      want: [
        `${P}.properties[spec].properties[a].items: Required value: must be specified`,
        `${P}.properties[spec].properties[b].items.type: Required value: must not be empty for specified array items`,
      ],
    },
    {
      name: 'int-or-string and preserve-unknown-fields need no type',
      schema: obj({
        a: { 'x-kubernetes-int-or-string': true },
        b: { 'x-kubernetes-preserve-unknown-fields': true },
      }),
      want: [],
    },
    {
      name: 'metadata beyond name',
      schema: {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      },
      want: [
        `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    },
    {
      name: 'metadata name restriction allowed',
      schema: {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } } },
      },
      want: [],
    },
    {
      name: 'additionalProperties with properties',
      schema: obj({
        a: {
          type: 'object',
          properties: { x: { type: 'string' } },
          additionalProperties: { type: 'string' },
        },
      }),
      want: [
        `${P}.properties[spec].properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      ],
    },
    {
      name: 'forbidden keywords',
      schema: obj({
        a: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        b: { type: 'string', $ref: '#/x' },
      }),
      want: [
        `${P}.properties[spec].properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
        `${P}.properties[spec].properties[b].$ref: Forbidden: $ref is not supported`,
      ],
    },
    {
      name: 'unknown type',
      schema: obj({ a: { type: 'int' } }),
      want: [
        `${P}.properties[spec].properties[a].type: Unsupported value: "int": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      ],
    },
    {
      name: 'type in anyOf is not structural',
      schema: obj({ a: { type: 'string', anyOf: [{ type: 'string' }, { pattern: 'x' }] } }),
      want: [`${P}.properties[spec].properties[a].anyOf[0].type: Forbidden: must be empty to be structural`],
    },
    {
      name: 'the int-or-string anyOf pattern is allowed',
      schema: obj({
        a: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      }),
      want: [],
    },
    {
      name: 'value validation naming an unknown property',
      schema: {
        type: 'object',
        properties: { spec: { type: 'object' } },
        allOf: [{ properties: { status: { required: ['x'] } } }],
      },
      want: [
        `${P}.properties[status]: Required value: because it is defined in ${P}.allOf[0].properties[status]`,
      ],
    },
    {
      name: 'list-type map without keys',
      schema: obj({ a: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object' } } }),
      want: [
        `${P}.properties[spec].properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      ],
    },
    {
      name: 'list-type on a non-array, unknown list-type',
      schema: obj({
        a: { type: 'string', 'x-kubernetes-list-type': 'set' },
        b: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' },
      }),
      want: [
        `${P}.properties[spec].properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
        `${P}.properties[spec].properties[b].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
      ],
    },
    {
      name: 'list map key neither required nor defaulted',
      schema: obj({
        a: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' } } },
        },
      }),
      want: [
        `${P}.properties[spec].properties[a].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      ],
    },
    {
      name: 'embedded resource without properties',
      schema: obj({ a: { type: 'object', 'x-kubernetes-embedded-resource': true } }),
      want: [
        `${P}.properties[spec].properties[a].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      ],
    },
    {
      name: 'default of the wrong type',
      schema: obj({ replicas: { type: 'integer', default: 'one' } }),
      want: [
        `${P}.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"`,
      ],
    },
    {
      name: 'default with unknown fields',
      schema: obj({
        a: { type: 'object', properties: { x: { type: 'string' } }, default: { x: 'a', y: 'b' } },
      }),
      want: [
        `${P}.properties[spec].properties[a].default: Invalid value: {"x":"a","y":"b"}: must not have unknown fields`,
      ],
    },
    {
      name: 'default in top-level metadata',
      schema: { type: 'object', properties: { metadata: { type: 'object', default: {} } } },
      want: [`${P}.properties[metadata].default: Forbidden: must not be set in top-level metadata`],
    },
    {
      name: 'an RE2 pattern with an identity escape compiles',
      schema: obj({ a: { type: 'string', pattern: '^a\\_b$' } }),
      want: [],
    },
    {
      name: 'x-kubernetes-validations refused',
      schema: obj({}, { 'x-kubernetes-validations': [{ rule: 'self.a > 0' }] }),
      want: [
        `${P}.properties[spec].x-kubernetes-validations: Invalid value: ["self.a > 0"]: CEL validation rules are not supported by k8ts; remove x-kubernetes-validations`,
      ],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(validateStructuralSchema(c.schema, P).map(fieldErrorString), c.want);
    });
});

describe('validateCustomResource', () => {
  const base = { apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'a' } };
  const cases: { name: string; schema: JSONSchemaProps; spec: unknown; want: string[] }[] = [
    {
      name: 'type',
      schema: obj({ replicas: { type: 'integer', minimum: 1 } }),
      spec: { replicas: 'x' },
      want: [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      ],
    },
    { name: 'number accepts an integer', schema: obj({ a: { type: 'number' } }), spec: { a: 3 }, want: [] },
    {
      name: 'required',
      schema: obj({ a: { type: 'string' } }, { required: ['a'] }),
      spec: {},
      want: ['spec.a: Required value'],
    },
    {
      name: 'enum',
      schema: obj({ a: { type: 'string', enum: ['a', 'b'] } }),
      spec: { a: 'x' },
      want: ['spec.a: Unsupported value: "x": supported values: "a", "b"'],
    },
    {
      name: 'pattern, minLength, maxLength',
      schema: obj({
        a: { type: 'string', pattern: '^[a-z]+$' },
        b: { type: 'string', minLength: 3 },
        c: { type: 'string', maxLength: 2 },
      }),
      spec: { a: 'A', b: 'x', c: 'xyz' },
      want: [
        `spec.a: Invalid value: "A": spec.a in body should match '^[a-z]+$'`,
        'spec.b: Invalid value: "x": spec.b in body should be at least 3 chars long',
        'spec.c: Too long: may not be more than 2 bytes',
      ],
    },
    {
      name: 'minimum, exclusiveMaximum, multipleOf',
      schema: obj({
        a: { type: 'integer', minimum: 1 },
        b: { type: 'integer', maximum: 5, exclusiveMaximum: true },
        c: { type: 'integer', multipleOf: 2 },
      }),
      spec: { a: 0, b: 5, c: 3 },
      want: [
        'spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1',
        'spec.b: Invalid value: 5: spec.b in body should be less than 5',
        'spec.c: Invalid value: 3: spec.c in body should be a multiple of 2',
      ],
    },
    {
      name: 'minItems, minProperties',
      schema: obj({
        a: { type: 'array', items: { type: 'string' }, minItems: 1 },
        b: { type: 'object', minProperties: 1 },
      }),
      spec: { a: [], b: {} },
      want: [
        'spec.a: Invalid value: 0: spec.a in body should have at least 1 items',
        'spec.b: Invalid value: 0: spec.b in body should have at least 1 properties',
      ],
    },
    {
      name: 'nullable',
      schema: obj({ a: { type: 'string', nullable: true }, b: { type: 'string' } }),
      spec: { a: null, b: null },
      want: ['spec.b: Invalid value: "null": spec.b in body must be of type string: "null"'],
    },
    {
      name: 'int-or-string',
      schema: obj({ a: { 'x-kubernetes-int-or-string': true } }),
      spec: { a: true },
      want: ['spec.a: Invalid value: "boolean": spec.a in body must be of type integer,string: "boolean"'],
    },
    {
      name: 'formats',
      schema: obj({
        u: { type: 'string', format: 'uuid' },
        d: { type: 'string', format: 'date-time' },
        i: { type: 'string', format: 'ipv4' },
        ok: { type: 'string', format: 'hostname' },
      }),
      spec: { u: 'abc', d: '2024-13-01T00:00:00Z', i: '::1', ok: 'example.com' },
      want: [
        'spec.u: Invalid value: "abc": spec.u in body must be of type uuid: "abc"',
        'spec.d: Invalid value: "2024-13-01T00:00:00Z": spec.d in body must be of type date-time: "2024-13-01T00:00:00Z"',
        'spec.i: Invalid value: "::1": spec.i in body must be of type ipv4: "::1"',
      ],
    },
    {
      name: 'items and additionalProperties paths',
      schema: obj({
        a: { type: 'array', items: { type: 'integer' } },
        m: { type: 'object', additionalProperties: { type: 'integer' } },
      }),
      spec: { a: [1, 'x'], m: { k: 'v' } },
      want: [
        'spec.a[1]: Invalid value: "string": spec.a[1] in body must be of type integer: "string"',
        'spec.m.k: Invalid value: "string": spec.m.k in body must be of type integer: "string"',
      ],
    },
    {
      name: 'anyOf',
      schema: obj({ a: { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] } }),
      spec: { a: 'c' },
      want: [
        '<nil>: Invalid value: "": "spec.a" must validate at least one schema (anyOf)',
        `spec.a: Invalid value: "c": spec.a in body should match '^a'`,
      ],
    },
    {
      name: 'list-type set and map',
      schema: obj({
        s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        m: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        },
      }),
      spec: { s: ['a', 'b', 'a'], m: [{ name: 'x' }, { name: 'x' }] },
      want: ['spec.s[2]: Duplicate value: "a"', 'spec.m[1]: Duplicate value: {"name":"x"}'],
    },
    {
      name: 'embedded resource',
      schema: obj({
        t: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
      }),
      spec: { t: { metadata: { name: 'a/b' } } },
      want: [
        'spec.t.apiVersion: Required value',
        'spec.t.kind: Required value',
        'spec.t.metadata.name: Invalid value: "a/b": may not contain \'/\'',
      ],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(
        validateCustomResource(c.schema, { ...base, spec: c.spec }).map(fieldErrorString),
        c.want,
      );
    });
});

describe('applyDefaults', () => {
  it('fills defaults at every level, in arrays and additionalProperties, and nulls of non-nullable fields', () => {
    const schema = obj({
      replicas: { type: 'integer', default: 1 },
      tmpl: { type: 'object', default: {}, properties: { image: { type: 'string', default: 'nginx' } } },
      ports: {
        type: 'array',
        items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' } } },
      },
      env: {
        type: 'object',
        additionalProperties: { type: 'object', properties: { v: { type: 'string', default: 'x' } } },
      },
      gone: { type: 'string' },
      keep: { type: 'string', nullable: true },
      nulled: { type: 'integer', default: 5 },
    });
    const o: Record<string, unknown> = {
      spec: { ports: [{}], env: { A: {} }, gone: null, keep: null, nulled: null },
    };
    applyDefaults(schema, o);
    assert.deepEqual(o.spec, {
      replicas: 1,
      tmpl: { image: 'nginx' },
      ports: [{ protocol: 'TCP' }],
      env: { A: { v: 'x' } },
      keep: null,
      nulled: 5,
    });
  });
});

describe('pruneUnknownFields', () => {
  it('removes undeclared fields and returns their paths; keeps apiVersion/kind/metadata and preserved subtrees', () => {
    const schema = obj({
      items: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
      free: {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        properties: { typed: { type: 'object', properties: {} } },
      },
      emb: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        properties: { spec: { type: 'object' } },
      },
    });
    const o = {
      apiVersion: 'x.io/v1',
      kind: 'X',
      metadata: { name: 'a' },
      spec: {
        foo: 1,
        items: [{ a: 'x', bar: 2 }],
        free: { anything: true, typed: { drop: 1 } },
        emb: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {}, extra: 1 },
      },
      status: {},
    };
    const removed = pruneUnknownFields(schema, o);
    assert.deepEqual(removed, [
      'spec.emb.extra',
      'spec.foo',
      'spec.free.typed.drop',
      'spec.items[0].bar',
      'status',
    ]);
    assert.deepEqual(o.spec, {
      items: [{ a: 'x' }],
      free: { anything: true, typed: {} },
      emb: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {} },
    });
    assert.equal(o.kind, 'X');
  });
});
