// encoding/json's syntax errors and SimpleMetaFactory.Interpret's type error (go-json.ts),
// each expectation in Go's words for the same input.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goJsonSyntaxError, goTypeMetaError, summarizeData } from './go-json.js';

describe('goJsonSyntaxError (encoding/json checkValid)', () => {
  const cases: [string, string | undefined][] = [
    ['{"a": [1, 2.5e-3, true, false, null, "x\\u00e9\\n"]}', undefined],
    ['  "s"  ', undefined],
    ['', 'unexpected end of JSON input'],
    ['{', 'unexpected end of JSON input'],
    // eof() steps a space, so a cut literal is a bad character, as Go says it.
    ['tru', "invalid character ' ' in literal true (expecting 'e')"],
    ['-', "invalid character ' ' in numeric literal"],
    ['"ab', 'unexpected end of JSON input'],
    ['apiVersion: v1', "invalid character 'a' looking for beginning of value"],
    ['{"a": }', "invalid character '}' looking for beginning of value"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
    ['[1 2]', "invalid character '2' after array element"],
    ['{1:2}', "invalid character '1' looking for beginning of object key string"],
    ['"a\\qb"', "invalid character 'q' in string escape code"],
    ['"\\u12G4"', "invalid character 'G' in \\u hexadecimal character escape"],
    ['"a\nb"', "invalid character '\\n' in string literal"],
    ['01', "invalid character '1' after top-level value"],
    ['-x', "invalid character 'x' in numeric literal"],
    ['1.x', "invalid character 'x' after decimal point in numeric literal"],
    ['1ex', "invalid character 'x' in exponent of numeric literal"],
    ['trUe', "invalid character 'U' in literal true (expecting 'u')"],
    ['nul1', "invalid character '1' in literal null (expecting 'l')"],
    ['{} x', "invalid character 'x' after top-level value"],
    ["'a'", "invalid character '\\'' looking for beginning of value"],
    ['\ufeff{}', "invalid character 'ï' looking for beginning of value"],
  ];
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} → ${want ?? 'valid'}`, () => assert.equal(goJsonSyntaxError(input), want));
  }
});

describe('goTypeMetaError and summarizeData', () => {
  it('refuses what cannot hold apiVersion and kind; null and objects are fine', () => {
    assert.equal(
      goTypeMetaError([]),
      'json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
    );
    assert.match(goTypeMetaError('x')!, /^json: cannot unmarshal string into/);
    assert.match(goTypeMetaError(5)!, /^json: cannot unmarshal number into/);
    assert.equal(goTypeMetaError(null), undefined);
    assert.equal(goTypeMetaError({}), undefined);
  });

  it('summarizes a body as the handlers do', () => {
    assert.equal(summarizeData(''), '<empty>');
    assert.equal(summarizeData('{"a":1}'), '{"a":1}');
    assert.equal(summarizeData('ab'), '6162');
    assert.equal(summarizeData('x'.repeat(31)), `${'78'.repeat(30)} ...`);
  });
});
