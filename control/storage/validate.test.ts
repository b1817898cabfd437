// checkValue: what every backend refuses, and the values jsonValue made, which are JSON by
// construction and are not parsed again to be checked.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { isStorageError } from './errors.js';
import { checkValue, jsonValue, MAX_VALUE_BYTES } from './validate.js';

const refused = (value: unknown) =>
  assert.throws(
    () => checkValue(value),
    (err: unknown) => isStorageError(err, 'InvalidValue'),
  );

describe('checkValue', () => {
  it('refuses non-strings, non-JSON, lone surrogates and values over the limit', () => {
    refused({ a: 1 });
    refused('{not json');
    refused('"\uD800"');
    refused(JSON.stringify({ d: 'x'.repeat(MAX_VALUE_BYTES) }));
    checkValue('{"a":1}');
  });

  it('does not parse a value jsonValue made, once; still checks its size; parses any other', () => {
    const obj = { kind: 'Pod', metadata: { name: 'p', annotations: { a: '\uD800 escaped' } } };
    const value = jsonValue(obj);
    assert.deepEqual(JSON.parse(value), obj);
    const parse = mock.method(JSON, 'parse');
    try {
      checkValue(value);
      assert.equal(parse.mock.callCount(), 0, 'a value jsonValue made was parsed');
      // Once checked it is forgotten: written again, it is parsed again.
      checkValue(value);
      assert.equal(parse.mock.callCount(), 1);
      checkValue(JSON.stringify(obj).replace('"p"', '"q"'));
      assert.equal(parse.mock.callCount(), 2);
    } finally {
      parse.mock.restore();
    }
    refused(jsonValue({ d: 'x'.repeat(MAX_VALUE_BYTES) }));
  });
});
