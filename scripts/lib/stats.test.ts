import assert from 'node:assert/strict';
import { it } from 'node:test';
import { percentile, table } from './stats.js';

it('percentile uses nearest rank', () => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted on purpose
  assert.equal(percentile(xs, 50), 50);
  assert.equal(percentile(xs, 99), 99);
  assert.equal(percentile(xs, 100), 100);
  assert.equal(percentile([7], 99), 7);
  assert.ok(Number.isNaN(percentile([], 50)));
});

it('table aligns columns', () => {
  assert.equal(
    table([
      ['a', 'bb'],
      ['ccc', 'd'],
    ]),
    '| a   | bb |\n|-----|----|\n| ccc | d  |',
  );
});
