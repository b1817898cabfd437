import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventBuffer } from './buffer.js';
import { CacheEvent, CachedObject } from './event.js';

function change(revision: number, recordTime = 0): CacheEvent {
  const obj = new CachedObject(`/registry/pods/ns/p${revision}`, 'ns', revision, { metadata: { name: 'p' } });
  return new CacheEvent('PUT', obj.key, 'ns', revision, obj, undefined, recordTime);
}

describe('EventBuffer', () => {
  it('keeps the newest events, raising its floor as it evicts', () => {
    const b = new EventBuffer({ capacity: 3 });
    b.reset(10);
    assert.equal(b.floor, 10);
    for (const r of [11, 13, 14]) b.push(change(r));
    assert.deepEqual([b.start, b.end, b.size, b.floor], [0, 3, 3, 10]);
    b.push(change(17));
    assert.deepEqual([b.start, b.end, b.floor], [1, 4, 11]);
    assert.equal(b.at(1).revision, 13);
    assert.throws(() => b.at(0), /outside/);
    b.push(change(18));
    assert.equal(b.floor, 13);
  });

  it('finds the first event after a revision', () => {
    const b = new EventBuffer({ capacity: 4 });
    for (const r of [2, 3, 5, 8, 9, 12]) b.push(change(r));
    // Holds 5, 8, 9, 12 at positions 2..5.
    const cases: [number, number][] = [
      [3, 2],
      [4, 2],
      [5, 3],
      [8, 4],
      [11, 5],
      [12, 6],
      [99, 6],
    ];
    for (const [rev, pos] of cases) assert.equal(b.firstAfter(rev), pos, `after ${rev}`);
  });

  it('empties on reset without reusing positions', () => {
    const b = new EventBuffer({ capacity: 4 });
    for (const r of [2, 3, 4]) b.push(change(r));
    b.reset(20);
    assert.deepEqual([b.start, b.end, b.size, b.floor], [3, 3, 0, 20]);
    b.push(change(21));
    assert.equal(b.at(3).revision, 21);
    assert.equal(b.firstAfter(20), 3);
  });

  it('doubles while full of fresh events, up to its maximum', () => {
    const b = new EventBuffer({ minCapacity: 2, maxCapacity: 8, freshMs: 1000 });
    for (let r = 1; r <= 20; r++) b.push(change(r, r));
    assert.equal(b.capacity, 8);
    assert.equal(b.size, 8);
    assert.equal(b.at(b.start).revision, 13);
    assert.equal(b.floor, 12);
  });

  it('halves when its newest quarter is already stale, down to its minimum', () => {
    const b = new EventBuffer({ minCapacity: 2, maxCapacity: 8, freshMs: 1000 });
    for (let r = 1; r <= 8; r++) b.push(change(r, 0));
    assert.equal(b.capacity, 8);
    b.push(change(9, 5000));
    assert.equal(b.capacity, 4);
    assert.deepEqual(
      Array.from({ length: b.size }, (_, i) => b.at(b.start + i).revision),
      [6, 7, 8, 9],
    );
    assert.equal(b.floor, 5);
  });

  it('rejects bad capacities', () => {
    assert.throws(() => new EventBuffer({ capacity: 0 }), /capacity/);
    assert.throws(() => new EventBuffer({ minCapacity: 10, maxCapacity: 5 }), /larger/);
  });
});
