import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringInterner } from './intern.js';

describe('StringInterner', () => {
  it('leaves every value as it was, deeply, in objects and arrays', () => {
    const interner = new StringInterner();
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
    const a = interner.internAll(make());
    const b = interner.internAll(make());
    assert.deepEqual(a, make());
    assert.deepEqual(b, make());
  });

  it('gives the first copy of a value for later ones, and stays within maxEntries', () => {
    const interner = new StringInterner(3, 10);
    const first = ['ab', 'c'].join('');
    assert.equal(interner.string(first), first);
    assert.equal(interner.string(['a', 'bc'].join('')), 'abc');
    for (const s of ['d', 'e', 'f', 'g']) interner.string(s);
    assert.ok((interner as unknown as { table: Map<string, string> }).table.size <= 3);
    assert.equal(interner.string('a long string'), 'a long string', 'longer than maxLength: as it is');
  });
});
