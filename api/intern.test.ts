/** StringTable (intern.ts): values unchanged, the table bounded, long strings left alone. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringTable } from './intern.js';

describe('StringTable', () => {
  it('replaces string values at any depth in place, leaving every value equal', () => {
    const table = new StringTable();
    const text = '{"a":"x","b":["y",{"c":"x","d":[["z"]]}],"n":1,"t":true,"u":null,"__proto__":"p"}';
    const obj = JSON.parse(text) as unknown;
    assert.equal(table.internValues(obj), obj);
    assert.deepEqual(obj, JSON.parse(text));
    assert.equal(JSON.stringify(obj), text);
    assert.equal(Object.getPrototypeOf(obj), Object.prototype);
    assert.equal(table.size, 4, 'x, y, z and p');
  });

  it('starts afresh when full and leaves strings over maxLength out', () => {
    const table = new StringTable(3, 4);
    for (const s of ['a', 'b', 'c']) table.get(s);
    assert.equal(table.size, 3);
    assert.equal(table.get('d'), 'd');
    assert.equal(table.size, 1, 'a full table starts afresh');
    assert.equal(table.get('long string'), 'long string');
    assert.equal(table.size, 1, 'too long: not kept');
  });
});
