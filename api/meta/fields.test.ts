import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  FieldSelector,
  SelectorParseError,
  escapeFieldValue,
  fieldLabelNotSupportedMessage,
  parseFieldSelector,
  unescapeFieldValue,
} from './fields.js';
import type { FieldRequirement } from './fields.js';

const getter =
  (fields: Record<string, string>) =>
  (f: string): string | undefined =>
    Object.hasOwn(fields, f) ? fields[f] : undefined;

/** One requirement, as parseFieldSelector returns it. */
const req = (field: string, operator: FieldRequirement['operator'], value: string): FieldRequirement => ({
  field,
  operator,
  value,
});

describe('parseFieldSelector: valid selectors', () => {
  // [input, toString(), requirements] — the first ones from Kubernetes' fields/selector_test.go.
  const cases: [string, string, FieldRequirement[]][] = [
    ['', '', []],
    ['x=a,y=b,z=c', 'x=a,y=b,z=c', [req('x', '=', 'a'), req('y', '=', 'b'), req('z', '=', 'c')]],
    ['x!=a,y=b', 'x!=a,y=b', [req('x', '!=', 'a'), req('y', '=', 'b')]],
    ['x=a||y\\=b', 'x=a||y\\=b', [req('x', '=', 'a||y=b')]],
    ['x=a\\=\\=b', 'x=a\\=\\=b', [req('x', '=', 'a==b')]],
    ['x==a', 'x=a', [req('x', '=', 'a')]],
    ['x=', 'x=', [req('x', '=', '')]],
    ['x!=', 'x!=', [req('x', '!=', '')]],
    ['=a', '=a', [req('', '=', 'a')]],
    ['x=a,a=x', 'a=x,x=a', [req('a', '=', 'x'), req('x', '=', 'a')]],
    ['spec.nodeName=node-1', 'spec.nodeName=node-1', [req('spec.nodeName', '=', 'node-1')]],
    [
      'status.phase!=Succeeded,status.phase!=Failed',
      'status.phase!=Failed,status.phase!=Succeeded',
      [req('status.phase', '!=', 'Failed'), req('status.phase', '!=', 'Succeeded')],
    ],
    ['a=b,', 'a=b', [req('a', '=', 'b')]],
    [',a=b', 'a=b', [req('a', '=', 'b')]],
    ['a=b,,c=d', 'a=b,c=d', [req('a', '=', 'b'), req('c', '=', 'd')]],
    // Terms sort by their raw text: '2' (0x32) sorts before '=' (0x3d).
    ['k=\\,,k2=v2', 'k2=v2,k=\\,', [req('k2', '=', 'v2'), req('k', '=', ',')]],
    ['k=\\\\,k2=v2', 'k2=v2,k=\\\\', [req('k2', '=', 'v2'), req('k', '=', '\\')]],
    ['k=\\\\\\,,kk=v2', 'k=\\\\\\,,kk=v2', [req('k', '=', '\\,'), req('kk', '=', 'v2')]],
    // No whitespace trimming: the spaces belong to the field and the value.
    [' a = b ', ' a = b ', [req(' a ', '=', ' b ')]],
    // The first operator wins; `!=` is checked before `==` before `=` at each position.
    ['a!=b', 'a!=b', [req('a', '!=', 'b')]],
    ['a=!b', 'a=!b', [req('a', '=', '!b')]],
    ['함=수,목=록', '목=록,함=수', [req('목', '=', '록'), req('함', '=', '수')]],
  ];
  for (const [input, str, reqs] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(str)}`, () => {
      const sel = parseFieldSelector(input);
      assert.deepEqual(sel.requirements, reqs);
      assert.equal(sel.toString(), str);
      assert.equal(sel.empty, reqs.length === 0);
      assert.deepEqual(parseFieldSelector(sel.toString()).requirements, reqs);
    });
  }
});

describe('parseFieldSelector: errors', () => {
  const cases: [string, string][] = [
    ['x', "invalid selector: 'x'; can't understand 'x'"],
    ['x=a,b', "invalid selector: 'x=a,b'; can't understand 'b'"],
    ['x in (a)', "invalid selector: 'x in (a)'; can't understand 'x in (a)'"],
    ['x in (a,b,c)', "invalid selector: 'x in (a,b,c)'; can't understand 'b'"],
    ['x=a||y=b', 'invalid field selector: unescaped character in value: ='],
    ['x==a==b', 'invalid field selector: unescaped character in value: ='],
    ['x=a=', 'invalid field selector: unescaped character in value: ='],
    ['a!==b', 'invalid field selector: unescaped character in value: ='],
    ['k=\\a', 'invalid field selector: invalid escape sequence: \\a'],
    ['k=\\', 'invalid field selector: invalid escape sequence: \\'],
    ['k=\\\\\\', 'invalid field selector: invalid escape sequence: \\'],
  ];
  for (const [input, message] of cases) {
    it(`${JSON.stringify(input)}: ${message}`, () => {
      assert.throws(
        () => parseFieldSelector(input),
        (e: unknown) => e instanceof SelectorParseError && e.message === message && e.selector === input,
      );
    });
  }
});

describe('escapeFieldValue / unescapeFieldValue', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['a', 'a'],
    ['=', '\\='],
    [',', '\\,'],
    ['\\', '\\\\'],
    ['\\=\\,\\', '\\\\\\=\\\\\\,\\\\'],
    ['a=b,c', 'a\\=b\\,c'],
    ['수', '수'],
  ];
  for (const [raw, escaped] of cases) {
    it(`${JSON.stringify(raw)} ⇄ ${JSON.stringify(escaped)}`, () => {
      assert.equal(escapeFieldValue(raw), escaped);
      assert.equal(unescapeFieldValue(escaped), raw);
    });
  }
  for (const bad of ['\\', '\\\\\\', '\\a', 'a,b', 'a=b']) {
    it(`rejects ${JSON.stringify(bad)}`, () =>
      assert.throws(() => unescapeFieldValue(bad), SelectorParseError));
  }
});

describe('FieldSelector.matches', () => {
  const pod = {
    'metadata.name': 'web-1',
    'spec.nodeName': 'node-1',
    'status.phase': 'Running',
    complex: '=value\\,\\',
  };
  // [selector, fields, match] — includes Kubernetes' TestSelectorMatches.
  const cases: [string, Record<string, string>, boolean][] = [
    ['', { x: 'y' }, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['spec.nodeName=node-1', pod, true],
    ['spec.nodeName=node-2', pod, false],
    ['spec.nodeName==node-1', pod, true],
    ['spec.nodeName!=node-1', pod, false],
    ['spec.nodeName=node-1,status.phase!=Succeeded', pod, true],
    ['spec.nodeName=node-1,status.phase=Pending', pod, false],
    ['complex=\\=value\\\\\\,\\\\', pod, true],
    // A missing field reads as '' (unscheduled pods: spec.nodeName=).
    ['spec.nodeName=', {}, true],
    ['spec.nodeName!=', {}, false],
    ['spec.nodeName=', pod, false],
    ['missing=x', pod, false],
    ['missing!=x', pod, true],
  ];
  for (const [sel, fields, want] of cases) {
    it(`${JSON.stringify(sel)} ${want ? 'matches' : 'does not match'}`, () => {
      assert.equal(parseFieldSelector(sel).matches(getter(fields)), want);
    });
  }
  it('everything() and nothing()', () => {
    assert.equal(
      FieldSelector.everything().matches(() => 'x'),
      true,
    );
    assert.equal(FieldSelector.everything().empty, true);
    assert.equal(
      FieldSelector.nothing().matches(() => 'x'),
      false,
    );
    assert.equal(FieldSelector.nothing().empty, false);
    assert.equal(FieldSelector.nothing().toString(), '');
  });
});

describe('fields and unsupported fields', () => {
  const supported = ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase'];
  const cases: [string, string[], string | undefined][] = [
    ['', [], undefined],
    ['spec.nodeName=n', ['spec.nodeName'], undefined],
    ['status.phase!=a,status.phase!=b', ['status.phase'], undefined],
    ['spec.nodeName=n,spec.foo=x', ['spec.foo', 'spec.nodeName'], 'spec.foo'],
    ['foo=bar', ['foo'], 'foo'],
    ['metadata.name=a,zzz=b,aaa=c', ['aaa', 'metadata.name', 'zzz'], 'aaa'],
  ];
  for (const [sel, fields, bad] of cases) {
    it(`${JSON.stringify(sel)} refers to ${JSON.stringify(fields)}`, () => {
      const s = parseFieldSelector(sel);
      assert.deepEqual(s.fields, fields);
      assert.equal(s.unsupportedField(supported), bad);
    });
  }
  it('words the BadRequest as Kubernetes', () => {
    assert.equal(fieldLabelNotSupportedMessage('spec.foo'), 'field label not supported: spec.foo');
  });
});

describe('requiresExactMatch', () => {
  const cases: [string, string, string | undefined][] = [
    ['', 'test', undefined],
    ['a=b', 'test', undefined],
    ['test=b', 'test', 'b'],
    ['test=', 'test', ''],
    ['test!=b', 'test', undefined],
    ['a=x,test=b', 'test', 'b'],
    ['spec.nodeName=node-1,status.phase!=Failed', 'spec.nodeName', 'node-1'],
  ];
  for (const [sel, field, want] of cases) {
    it(`${JSON.stringify(sel)} / ${field} → ${JSON.stringify(want)}`, () => {
      assert.equal(parseFieldSelector(sel).requiresExactMatch(field), want);
    });
  }
});

describe('transform (cases from Kubernetes TestTransform)', () => {
  const identity = (f: string, v: string): [string, string] => [f, v];
  const cases: [string, string, (f: string, v: string) => [string, string], string, boolean][] = [
    ['empty selector', '', identity, '', true],
    ['no-op transform', 'a=b,c=d', identity, 'a=b,c=d', false],
    ['transform one field', 'a=b,c=d', (f, v) => (f === 'a' ? ['e', 'f'] : [f, v]), 'e=f,c=d', false],
    ['remove field to make empty', 'a=b', () => ['', ''], '', true],
    ['remove only one field', 'a=b,c=d,e=f', (f, v) => (f === 'c' ? ['', ''] : [f, v]), 'a=b,e=f', false],
    ['keeps the operator', 'a!=b', (_f, v) => ['metadata.name', v], 'metadata.name!=b', false],
  ];
  for (const [name, sel, fn, want, empty] of cases) {
    it(name, () => {
      const out = parseFieldSelector(sel).transform(fn);
      assert.equal(out.toString(), want);
      assert.equal(out.empty, empty);
    });
  }
  it('propagates errors', () => {
    assert.throws(
      () =>
        parseFieldSelector('a=b').transform(() => {
          throw new Error('field label not supported: a');
        }),
      /field label not supported: a/,
    );
  });
});

describe('FieldSelector.fromSet', () => {
  const cases: [Record<string, string> | null | undefined, string, boolean][] = [
    [null, '', true],
    [undefined, '', true],
    [{}, '', true],
    [{ 'spec.nodeName': 'n1' }, 'spec.nodeName=n1', false],
    [{ a: 'x,y' }, 'a=x\\,y', false],
  ];
  for (const [set, want, empty] of cases) {
    it(`${JSON.stringify(set)} → ${JSON.stringify(want)}`, () => {
      const s = FieldSelector.fromSet(set);
      assert.equal(s.toString(), want);
      assert.equal(s.empty, empty);
      assert.equal(JSON.stringify(s), JSON.stringify(want));
    });
  }
  it('matches exactly the set', () => {
    const s = FieldSelector.fromSet({ foo: 'bar', baz: 'blah' });
    assert.equal(s.matches(getter({ foo: 'bar', baz: 'blah', x: 'y' })), true);
    assert.equal(s.matches(getter({ foo: '=blah', baz: 'blah' })), false);
  });
});
