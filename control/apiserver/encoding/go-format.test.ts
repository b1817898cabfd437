// Go's quoting and %v (go-format.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoValue, goQuote } from './go-format.js';

describe('Go renderings', () => {
  const quotes: [string, string][] = [
    ['spec.foo', '"spec.foo"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['\n\t\x01\x7f', '"\\n\\t\\x01\\x7f"'],
    ['이름 é', '"이름 é"'],
    ['\u00ad\u2028', '"\\u00ad\\u2028"'],
  ];
  for (const [s, want] of quotes) it(`goQuote(${JSON.stringify(s)})`, () => assert.equal(goQuote(s), want));

  it('formatGoValue prints a decoded patch as %v does', () => {
    assert.equal(
      formatGoValue({ spec: { replicas: 3, foo: 'bar', list: [1, 'a', null, true], f: 1.5 }, a: {} }),
      'map[a:map[] spec:map[f:1.5 foo:bar list:[1 a <nil> true] replicas:3]]',
    );
    assert.equal(
      formatGoValue([0.0001, 0.00001, 123456.5, 1234567.5]),
      '[0.0001 1e-05 123456.5 1.2345675e+06]',
    );
  });
});
