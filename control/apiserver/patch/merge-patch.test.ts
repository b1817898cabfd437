// RFC 7386's examples (Appendix A) through mergePatch, and its inputs left as they were.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergePatch } from './merge-patch.js';

const cases: [unknown, unknown, unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe('mergePatch', () => {
  cases.forEach(([target, patch, want], i) => {
    it(`RFC 7386 example ${i + 1}: ${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
      const t = structuredClone(target);
      const p = structuredClone(patch);
      assert.deepEqual(mergePatch(t, p), want);
      assert.deepEqual(t, target, 'the target was modified');
      assert.deepEqual(p, patch, 'the patch was modified');
    });
  });

  it('merges several levels deep into a copy that shares nothing with the target', () => {
    const target = { status: { phase: 'Pending', conditions: [{ type: 'Ready' }], nested: { x: { y: 1 } } } };
    const out = mergePatch(target, {
      status: { phase: 'Running', nested: { x: { z: 2 } } },
    }) as typeof target;
    assert.deepEqual(out, {
      status: { phase: 'Running', conditions: [{ type: 'Ready' }], nested: { x: { y: 1, z: 2 } } },
    });
    assert.notEqual(out.status.conditions, target.status.conditions);
    assert.notEqual(out.status.nested.x, target.status.nested.x);
    assert.equal(target.status.phase, 'Pending');
  });
});
