// YAML bodies decoded as go-yaml v2 under sigs.k8s.io/yaml decodes them (yaml-body.ts);
// each expectation is what goyaml.v2's decode.go/resolve.go (sigs.k8s.io/yaml v1.4.0) give.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeYamlBody, parseYamlBody, yamlUnmarshalErrors } from './yaml-body.js';

describe('parseYamlBody (go-yaml v2, YAML 1.1)', () => {
  it('resolves merge keys', () => {
    const doc = 'base: &b {app: web, tier: front}\nlabels:\n  <<: *b\n  tier: back\n';
    assert.deepEqual(parseYamlBody(doc), {
      base: { app: 'web', tier: 'front' },
      labels: { app: 'web', tier: 'back' },
    });
  });

  it('merges in key order: a later merge overrides an earlier key; a list of merges, its first map wins', () => {
    const doc = [
      'a: &a {x: 1, w: 1}',
      'b: &b {x: 2, z: 2}',
      'after: {x: 0, <<: *a}',
      'list: {<<: [*a, *b]}',
      '',
    ].join('\n');
    assert.deepEqual(parseYamlBody(doc), {
      a: { x: 1, w: 1 },
      b: { x: 2, z: 2 },
      after: { x: 1, w: 1 },
      list: { x: 1, w: 1, z: 2 },
    });
  });

  const scalars: [string, unknown][] = [
    ['yes', true],
    ['No', false],
    ['on', true],
    ['OFF', false],
    ['y', true],
    ['N', false],
    ['TRUE', true],
    ['tRue', 'tRue'],
    ['"yes"', 'yes'],
    ["'5'", '5'],
    ['~', null],
    ['Null', null],
    ['"null"', 'null'],
    ['', null],
    ['0777', 511],
    ['0o17', 15],
    ['0x1f', 31],
    ['0b101', 5],
    ['-0x10', -16],
    ['+5', 5],
    ['1_000', 1000],
    ['08', 8],
    ['1e3', 1000],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['-.5', -0.5],
    ['1e400', '1e400'],
    ['0x1p3', '0x1p3'],
    ['1.2.3', '1.2.3'],
    ['2001-12-14', '2001-12-14'],
    ['2001-12-14T21:59:43Z', '2001-12-14T21:59:43Z'],
    ['22:22', '22:22'],
    ['18446744073709551615', 2 ** 64],
    ['!!str 5', '5'],
    ['!!int "5"', 5],
    ['!!float 1', 1],
    ['! 5', '5'],
    ['!custom 5', '5'],
    ['!!binary aGVsbG8=', 'hello'],
    ['|\n  x\n', 'x\n'],
  ];
  for (const [text, want] of scalars) {
    it(`reads ${JSON.stringify(text)} as ${JSON.stringify(want)}`, () => {
      assert.deepEqual(parseYamlBody(`v: ${text}\n`), { v: want });
    });
  }

  it('writes keys as convertToJSONableObject does', () => {
    assert.deepEqual(parseYamlBody('1: a\ntrue: b\n1.5: c\nyes: d\n0x10: e\n'), {
      '1': 'a',
      true: 'd',
      '1.5': 'c',
      '16': 'e',
    });
  });

  it('reads only the first document of a stream', () => {
    assert.deepEqual(parseYamlBody('a: 1\n---\nb: 2\n--- {\n'), { a: 1 });
    assert.equal(parseYamlBody(''), null);
  });

  const refused: [string, string, RegExp][] = [
    ['an unknown alias', 'a: *nope\n', /^yaml: unknown anchor 'nope' referenced$/],
    ['an alias before its anchor', 'a: *x\nb: &x 1\n', /^yaml: unknown anchor 'x' referenced$/],
    ['a bad explicit type', 'a: !!int abc\n', /^yaml: cannot decode !!str `abc` as a !!int$/],
    ['bad base64', 'a: !!binary "a"\n', /^yaml: !!binary value contains invalid base64 data$/],
    [
      'a merge of a scalar',
      'a: {<<: 1}\n',
      /^yaml: map merge requires map or sequence of maps as the value$/,
    ],
    ['a collection key', '? [k]\n: v\n', /^yaml: invalid map key: /],
    ['a null key', '~: v\n', /^unsupported map key of type: <nil>, key: <nil>, value: "v"$/],
    ['malformed text', 'a: b: c\n', /./],
  ];
  for (const [name, text, message] of refused) {
    it(`refuses ${name}`, () => assert.throws(() => parseYamlBody(text), { message }));
  }

  it('refuses excessive aliasing', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++) {
      const prev = String.fromCharCode(97 + i);
      const next = String.fromCharCode(98 + i);
      lines.push(`${next}: &${next} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    }
    assert.throws(() => parseYamlBody(lines.join('\n')), {
      message: /^yaml: document contains excessive aliasing$/,
    });
  });
});

describe('decodeYamlBody strict errors (yaml.UnmarshalStrict)', () => {
  it('keeps the last of repeated keys and reports each repetition at its value line', () => {
    const doc =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: "1"\n  a: "2"\n  b: x\n  a:\n    "3"\n';
    const { value, strictErrors } = decodeYamlBody(doc);
    assert.deepEqual((value as { data: unknown }).data, { a: '3', b: 'x' });
    assert.deepEqual(strictErrors, [
      'line 7: key "a" already set in map',
      'line 10: key "a" already set in map',
    ]);
    assert.equal(
      yamlUnmarshalErrors(strictErrors),
      'yaml: unmarshal errors:\n  line 7: key "a" already set in map\n  line 10: key "a" already set in map',
    );
  });

  it('counts a key a merge already set, as go-yaml v2 does', () => {
    const doc = 'base: &b {app: web, tier: front}\nlabels:\n  <<: *b\n  tier: back\n';
    assert.deepEqual(decodeYamlBody(doc).strictErrors, ['line 4: key "tier" already set in map']);
  });

  it('prints typed keys with %#v', () => {
    assert.deepEqual(decodeYamlBody('1: a\n1: b\nyes: c\ntrue: d\n').strictErrors, [
      'line 2: key 1 already set in map',
      'line 4: key true already set in map',
    ]);
  });

  it('finds repetitions in JSON too (one line)', () => {
    assert.deepEqual(decodeYamlBody('{"a": 1, "b": {"c": 1, "c": 2}}').strictErrors, [
      'line 1: key "c" already set in map',
    ]);
  });

  it('has none for a clean body', () => {
    assert.deepEqual(decodeYamlBody('a: 1\nb: [1, 2]\n').strictErrors, []);
  });
});
