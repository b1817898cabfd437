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

describe("StringTable, as the hollow nodes' pod watch uses it", () => {
  it('leaves every value as it was, deeply, in objects and arrays', () => {
    const interner = new StringTable();
    const make = () => ({
      metadata: {
        name: 'web-1',
        labels: { app: 'web' },
        ownerReferences: [{ kind: 'ReplicaSet', controller: true }],
      },
      spec: {
        containers: [
          { image: 'k8ts/busybox:1.0', command: ['sleep', '3600'], ports: [{ containerPort: 80 }] },
        ],
      },
      status: { phase: 'Running', podIP: null, conditions: [] as unknown[] },
      long: 'x'.repeat(500),
    });
    const a = interner.internValues(make());
    const b = interner.internValues(make());
    assert.deepEqual(a, make());
    assert.deepEqual(b, make());
  });

  it('gives the first copy of a value for later ones, and stays within maxEntries', () => {
    const interner = new StringTable(3, 10);
    const first = ['ab', 'c'].join('');
    assert.equal(interner.get(first), first);
    assert.equal(interner.get(['a', 'bc'].join('')), 'abc');
    for (const s of ['d', 'e', 'f', 'g']) interner.get(s);
    assert.ok(interner.size <= 3);
    assert.equal(interner.get('a long string'), 'a long string', 'longer than maxLength: as it is');
  });
});
