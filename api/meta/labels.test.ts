import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  LabelSelector,
  SelectorParseError,
  labelSelectorFromObject,
  labelSelectorFromSet,
  parseLabelSelector,
} from './labels.js';
import type { LabelRequirement, LabelSelectorObject } from './labels.js';

const valueRule =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const nameRule =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const binaryOps = 'in, notin, =, ==, !=, gt, lt';

describe('parseLabelSelector: valid selectors and their canonical strings', () => {
  // [input, canonical toString()] — many from Kubernetes' selector_test.go.
  const cases: [string, string][] = [
    ['', ''],
    ['   ', ''],
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x=', 'x='],
    ['x= ', 'x='],
    ['x=,z= ', 'x=,z='],
    ['x= ,z= ', 'x=,z='],
    ['x==a', 'x==a'],
    ['x==', 'x=='],
    ['!x', '!x'],
    [' ! x ', '!x'],
    ['x>1', 'x>1'],
    ['x>1,z<5', 'x>1,z<5'],
    ['x<10', 'x<10'],
    ['x=a,a=x', 'a=x,x=a'],
    ['a=x,x=a', 'a=x,x=a'],
    ['\rx', 'x'],
    ['x\t,\ny', 'x,y'],
    ['this-is-a-dns.domain.com/key-with-dash', 'this-is-a-dns.domain.com/key-with-dash'],
    [
      'this-is-another-dns.domain.com/key-with-dash in (so,what)',
      'this-is-another-dns.domain.com/key-with-dash in (so,what)',
    ],
    [
      '0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)',
      '0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)',
    ],
    ['foo  in\t (abc)', 'foo in (abc)'],
    ['x notin\n (abc)', 'x notin (abc)'],
    ['x  notin\t\t\t(abc,def)', 'x notin (abc,def)'],
    ['x in (abc,def)', 'x in (abc,def)'],
    ['x in (def,abc)', 'x in (abc,def)'],
    ['x in (abc,)', 'x in (,abc)'],
    ['x in (abc,abc)', 'x in (abc)'],
    ['x in ()', 'x in ()'],
    ['x in ( )', 'x in ()'],
    ['x in (,)', 'x in ()'],
    ['x in (a,,)', 'x in (,a)'],
    ['x in (a,,,)', 'x in (,a)'],
    ['x in (a,,,,,,)', 'x in (,a)'],
    ['x in (a,,a,,a,,a,,)', 'x in (,a)'],
    ['x in (a,,b)', 'x in (,a,b)'],
    ['x notin (abc,,def),bar,z in (),w', 'bar,w,x notin (,abc,def),z in ()'],
    ['x,y in (a)', 'x,y in (a)'],
    ['x notin ( )', 'x notin ()'],
    ['x notin (, a)', 'x notin (,a)'],
    ['a ', 'a'],
    ['a in (x,y,notin, z,in)', 'a in (in,notin,x,y,z)'],
    ['in in (in)', 'in in (in)'],
    ['notin', 'notin'],
    ['notin=in', 'notin=in'],
    ['x in(a)', 'x in (a)'],
    ['app.kubernetes.io/name=web,tier!=db', 'app.kubernetes.io/name=web,tier!=db'],
    [
      'environment in (production, qa),tier notin (frontend, backend),partition,!canary',
      '!canary,environment in (production,qa),partition,tier notin (backend,frontend)',
    ],
    ['x=a,x=b', 'x=a,x=b'],
  ];
  for (const [input, canonical] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(canonical)}`, () => {
      const sel = parseLabelSelector(input);
      assert.equal(sel.toString(), canonical);
      // The canonical form parses back to the same selector.
      assert.equal(parseLabelSelector(sel.toString()).toString(), canonical);
      assert.equal(sel.empty, canonical === '');
      assert.equal(sel.matchesNothing, false);
    });
  }
  it('parses into sorted requirements with sorted, de-duplicated values', () => {
    assert.deepEqual(parseLabelSelector('z in (b,a,b), !y, x').requirements, [
      { key: 'x', operator: 'exists', values: [] },
      { key: 'y', operator: '!', values: [] },
      { key: 'z', operator: 'in', values: ['a', 'b'] },
    ]);
    assert.deepEqual(parseLabelSelector('a!=1,b==2,c>3,d<4,e=').requirements, [
      { key: 'a', operator: '!=', values: ['1'] },
      { key: 'b', operator: '==', values: ['2'] },
      { key: 'c', operator: 'gt', values: ['3'] },
      { key: 'd', operator: 'lt', values: ['4'] },
      { key: 'e', operator: '=', values: [''] },
    ]);
  });
});

describe('parseLabelSelector: errors carry Kubernetes messages', () => {
  // [input, exact message, position of the offending token]
  const cases: [string, string, number | undefined][] = [
    ['x,,y', "found ',', expected: identifier after ','", 2],
    [',x,y', "found ',', expected: !, identifier, or 'end of string'", 0],
    ['a in (xyz),', "found '', expected: identifier after ','", 11],
    ['x,', "found '', expected: identifier after ','", 2],
    ['(', "found '(', expected: !, identifier, or 'end of string'", 0],
    ['=a', "found '=', expected: !, identifier, or 'end of string'", 0],
    ['a in (xyz)b notin ()', "found 'b', expected: ',' or 'end of string'", 10],
    ['x==a==b', "found '==', expected: ',' or 'end of string'", 4],
    ['!x=a', "found '=', expected: ',' or 'end of string'", 2],
    ['x=a b', "found 'b', expected: ',' or 'end of string'", 4],
    ['x nott in (y)', `unable to parse requirement: found 'nott', expected: ${binaryOps}`, 2],
    ['a (', `unable to parse requirement: found '(', expected: ${binaryOps}`, 2],
    ['a !x', `unable to parse requirement: found '!', expected: ${binaryOps}`, 2],
    ['a in (xyz abc)', "unable to parse requirement: found 'abc', expected: ',' or ')'", 10],
    ['a in (x', "unable to parse requirement: found '', expected: ',' or ')'", 7],
    ['a notin(', "unable to parse requirement: found '', expected: ',', ')' or identifier", 8],
    ['x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier", 6],
    ['x in (a=b)', "unable to parse requirement: found '=', expected: ',' or ')'", 7],
    ['x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier", 8],
    ['x in a', "unable to parse requirement: found 'a' expected: '('", 5],
    ['x=(a)', "unable to parse requirement: found '(', expected: identifier", 2],
    ['x===a', "unable to parse requirement: found '=', expected: identifier", 3],
    ['x=!a', "unable to parse requirement: found '!', expected: identifier", 2],
    ['!', "unable to parse requirement: found '', expected: identifier", 1],
    ['!(a)', "unable to parse requirement: found '(', expected: identifier", 1],
    ['!=a', "found '!=', expected: !, identifier, or 'end of string'", 0],
    ['a_=b', `unable to parse requirement: <nil>: Invalid value: "a_": ${nameRule}`, 0],
    ['x=a||y=b', `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${valueRule}`, 0],
    [
      'x<a',
      "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
      0,
    ],
    [
      `x=${'a'.repeat(64)}`,
      `unable to parse requirement: values[0][x]: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`,
      0,
    ],
    [
      'x in (-a,b_)',
      `unable to parse requirement: [values[0][x]: Invalid value: "-a": ${valueRule}, values[1][x]: Invalid value: "b_": ${valueRule}]`,
      0,
    ],
    ['x>-1', `unable to parse requirement: values[0][x]: Invalid value: "-1": ${valueRule}`, 0],
    [
      `${'k'.repeat(64)}`,
      `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`,
      0,
    ],
  ];
  for (const [input, message, position] of cases) {
    it(`${JSON.stringify(input)}: ${message.slice(0, 70)}`, () => {
      assert.throws(
        () => parseLabelSelector(input),
        (e: unknown) => {
          assert.ok(e instanceof SelectorParseError);
          assert.equal(e.message, message);
          assert.equal(e.selector, input);
          assert.equal(e.position, position);
          return true;
        },
      );
    });
  }
});

describe('LabelSelector.matches', () => {
  const fooBar = { foo: 'bar', baz: 'blah' };
  // [selector, labels, match] — the first block is Kubernetes' TestSelectorMatches.
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['', { x: 'y' }, true],
    ['', undefined, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x', { x: 'z' }, true],
    ['!x', { y: 'z' }, true],
    ['x>1', { x: '2' }, true],
    ['x<1', { x: '0' }, true],
    ['x=z', {}, false],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['x', { y: 'z' }, false],
    ['!x', { x: 'z' }, false],
    ['x>1', { x: '0' }, false],
    ['x<1', { x: '2' }, false],
    ['foo=bar', fooBar, true],
    ['baz=blah', fooBar, true],
    ['foo=bar,baz=blah', fooBar, true],
    ['foo=blah', fooBar, false],
    ['baz=bar', fooBar, false],
    ['foo=bar,foobar=bar,baz=blah', fooBar, false],
    // Set-based requirements (TestRequirementSelectorMatching).
    ['x in (foo),y notin (alpha)', { x: 'foo', y: 'baz' }, true],
    ['x in (foo),y in (alpha)', { x: 'foo', y: 'baz' }, false],
    ['x notin (),y', { y: '' }, true],
    ['!x,y', { y: '' }, true],
    ['x notin (),!y', { y: '' }, false],
    ['x in ()', { y: 'baz' }, false],
    ['x in ()', { x: '' }, true],
    ['x=', { x: '' }, true],
    ['x=', {}, false],
    ['x!=', {}, true],
    ['x!=a', undefined, true],
    ['x notin (a)', undefined, true],
    ['x', undefined, false],
    ['!x', undefined, true],
    ['z>1', { z: '2' }, true],
    ['z>1', { z: 'v2' }, false],
    ['z>1', {}, false],
    ['z<10', { z: '-5' }, true],
    ['z<10', { z: '+5' }, true],
    ['z<10', { z: '007' }, true],
    ['z>1', { z: '99999999999999999999' }, false], // not an int64
    ['z>9223372036854775806', { z: '9223372036854775807' }, true],
    ['env in (prod,staging),tier!=db', { env: 'staging', tier: 'web' }, true],
    ['env in (prod,staging),tier!=db', { env: 'dev', tier: 'web' }, false],
    ['env in (prod,staging),tier!=db', { env: 'prod', tier: 'db' }, false],
    // Keys that are also Object.prototype properties are not labels unless present.
    ['constructor', {}, false],
    ['!toString', {}, true],
    ['hasOwnProperty=x', { hasOwnProperty: 'x' }, true],
  ];
  for (const [sel, labels, want] of cases) {
    it(`${JSON.stringify(sel)} ${want ? 'matches' : 'does not match'} ${JSON.stringify(labels)}`, () => {
      assert.equal(parseLabelSelector(sel).matches(labels), want);
    });
  }
});

describe('labelSelectorFromObject (metav1.LabelSelector)', () => {
  // [name, selector, canonical string | error message, empty, matchesNothing, labels that match, labels that do not]
  type Case = [
    string,
    LabelSelectorObject | null | undefined,
    string,
    boolean,
    boolean,
    Record<string, string>[],
    Record<string, string>[],
  ];
  const cases: Case[] = [
    ['null selects nothing', null, '', false, true, [], [{}, { app: 'web' }]],
    ['undefined selects nothing', undefined, '', false, true, [], [{}]],
    ['{} selects everything', {}, '', true, false, [{}, { app: 'web' }], []],
    ['empty lists select everything', { matchLabels: {}, matchExpressions: [] }, '', true, false, [{}], []],
    [
      'null lists select everything',
      { matchLabels: null, matchExpressions: null },
      '',
      true,
      false,
      [{}],
      [],
    ],
    [
      'matchLabels',
      { matchLabels: { tier: 'web', app: 'shop' } },
      'app=shop,tier=web',
      false,
      false,
      [{ app: 'shop', tier: 'web', extra: 'x' }],
      [{ app: 'shop' }, { app: 'shop', tier: 'db' }],
    ],
    [
      'all four operators',
      {
        matchLabels: { app: 'shop' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'qa'] },
          { key: 'tier', operator: 'NotIn', values: ['db'] },
          { key: 'track', operator: 'Exists' },
          { key: 'canary', operator: 'DoesNotExist', values: [] },
        ],
      },
      'app=shop,!canary,env in (prod,qa),tier notin (db),track',
      false,
      false,
      [{ app: 'shop', env: 'qa', track: 'stable' }],
      [
        { app: 'shop', env: 'qa' },
        { app: 'shop', env: 'dev', track: 's' },
        { app: 'shop', env: 'qa', track: 's', canary: '1' },
      ],
    ],
    [
      'values kept in order but printed sorted',
      { matchExpressions: [{ key: 'env', operator: 'In', values: ['qa', 'prod', 'qa'] }] },
      'env in (prod,qa,qa)',
      false,
      false,
      [{ env: 'prod' }],
      [{}],
    ],
    [
      'unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
      '"Gt" is not a valid label selector operator',
      false,
      false,
      [],
      [],
    ],
    [
      'lowercase operator',
      { matchExpressions: [{ key: 'a', operator: 'in', values: ['1'] }] },
      '"in" is not a valid label selector operator',
      false,
      false,
      [],
      [],
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
      false,
      false,
      [],
      [],
    ],
    [
      'NotIn with empty values',
      { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] },
      "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
      false,
      false,
      [],
      [],
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
      false,
      false,
      [],
      [],
    ],
    [
      'invalid matchLabels key',
      { matchLabels: { 'a b': 'x' } },
      "key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      false,
      false,
      [],
      [],
    ],
    [
      'invalid matchLabels value',
      { matchLabels: { a: '-x' } },
      `values[0][a]: Invalid value: "-x": ${valueRule}`,
      false,
      false,
      [],
      [],
    ],
  ];
  for (const [name, obj, want, empty, nothing, yes, no] of cases) {
    it(name, () => {
      const isError = want.includes('Invalid value') || want.includes('not a valid');
      if (isError) {
        assert.throws(
          () => labelSelectorFromObject(obj),
          (e: unknown) => e instanceof SelectorParseError && e.message === want,
        );
        return;
      }
      const sel = labelSelectorFromObject(obj);
      assert.equal(sel.toString(), want);
      assert.equal(sel.empty, empty);
      assert.equal(sel.matchesNothing, nothing);
      for (const l of yes) assert.equal(sel.matches(l), true, JSON.stringify(l));
      for (const l of no) assert.equal(sel.matches(l), false, JSON.stringify(l));
    });
  }
  it('nothing() ignores added requirements', () => {
    const sel = LabelSelector.nothing().add({ key: 'a', operator: 'exists', values: [] });
    assert.equal(sel.matchesNothing, true);
    assert.equal(sel.matches({ a: 'x' }), false);
  });
});

describe('labelSelectorFromSet (a Service selector)', () => {
  const cases: [Record<string, string> | null | undefined, string, boolean][] = [
    [null, '', true],
    [undefined, '', true],
    [{}, '', true],
    [{ app: 'web' }, 'app=web', false],
    [{ b: '2', a: '1' }, 'a=1,b=2', false],
    [{ a: '' }, 'a=', false],
  ];
  for (const [set, want, empty] of cases) {
    it(`${JSON.stringify(set)} → ${JSON.stringify(want)}`, () => {
      const sel = labelSelectorFromSet(set);
      assert.equal(sel.toString(), want);
      assert.equal(sel.empty, empty);
      assert.equal(sel.matches({ a: '1', b: '2', app: 'web' }), want !== 'a=');
    });
  }
  it('rejects invalid keys', () => {
    assert.throws(() => labelSelectorFromSet({ '-a': 'b' }), SelectorParseError);
  });
});

describe('requirements built directly', () => {
  const bad: [string, LabelRequirement[], string][] = [
    [
      'in with no values',
      [{ key: 'x1', operator: 'in', values: [] }],
      "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      '= with two values',
      [{ key: 'x5', operator: '=', values: ['bar', 'foo'] }],
      'values: Invalid value: ["bar","foo"]: exact-match compatibility requires one single value',
    ],
    [
      'exists with a value',
      [{ key: 'x8', operator: 'exists', values: ['foo'] }],
      'values: Invalid value: ["foo"]: values set must be empty for exists and does not exist',
    ],
    [
      'gt with no value',
      [{ key: 'x13', operator: 'gt', values: [] }],
      "values: Invalid value: []: for 'Gt', 'Lt' operators, exactly one value is required",
    ],
    [
      'gt with a word',
      [{ key: 'x14', operator: 'gt', values: ['bar'] }],
      "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer",
    ],
    ['key too long', [{ key: 'a'.repeat(254), operator: 'exists', values: [] }], 'key: Invalid value:'],
    [
      'value with a space',
      [{ key: 'x17', operator: '=', values: ['a b'] }],
      'values[0][x17]: Invalid value: "a b":',
    ],
    [
      'unknown operator',
      [{ key: 'x18', operator: 'unsupportedOp' as 'in', values: [] }],
      'operator: Unsupported value: "unsupportedOp": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"',
    ],
  ];
  for (const [name, reqs, prefix] of bad) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => LabelSelector.fromRequirements(reqs),
        (e: unknown) => e instanceof SelectorParseError && e.message.startsWith(prefix),
      );
    });
  }
  it('accepts valid ones and sorts them by key, stably', () => {
    const sel = LabelSelector.fromRequirements([
      { key: 'z', operator: 'exists', values: [] },
      { key: 'a', operator: '!=', values: ['2'] },
      { key: 'a', operator: '=', values: ['1'] },
    ]);
    assert.equal(sel.toString(), 'a!=2,a=1,z');
    assert.equal(sel.add({ key: 'm', operator: 'lt', values: ['3'] }).toString(), 'a!=2,a=1,m<3,z');
    assert.equal(JSON.stringify({ s: sel }), '{"s":"a!=2,a=1,z"}');
  });
  it('is immutable', () => {
    const sel = parseLabelSelector('a in (x,y)');
    assert.throws(() =>
      (sel.requirements as LabelRequirement[]).push({ key: 'b', operator: 'exists', values: [] }),
    );
    assert.throws(() => (sel.requirements[0]!.values as string[]).push('z'));
  });
});

describe('requiresExactMatch', () => {
  const cases: [string, string, string | undefined][] = [
    ['', 'x', undefined],
    ['x=a', 'x', 'a'],
    ['x==a', 'x', 'a'],
    ['x in (a)', 'x', 'a'],
    ['x in (a,b)', 'x', undefined],
    ['x!=a', 'x', undefined],
    ['x', 'x', undefined],
    ['y=a', 'x', undefined],
    ['x=', 'x', ''],
    ['a=1,x=b,z', 'x', 'b'],
  ];
  for (const [sel, key, want] of cases) {
    it(`${JSON.stringify(sel)} / ${key} → ${JSON.stringify(want)}`, () => {
      assert.equal(parseLabelSelector(sel).requiresExactMatch(key), want);
    });
  }
});
