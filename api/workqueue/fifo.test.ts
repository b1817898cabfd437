import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Fifo } from './fifo.js';

test('Fifo hands items out in order across compactions and reports its length', () => {
  const fifo = new Fifo<number>();
  assert.equal(fifo.shift(), undefined);
  for (let i = 0; i < 5000; i++) fifo.push(i);
  for (let i = 0; i < 3000; i++) assert.equal(fifo.shift(), i);
  assert.equal(fifo.length, 2000);
  fifo.push(5000);
  assert.equal(fifo.shift(), 3000);
  const rest = fifo.takeAll();
  assert.equal(rest.length, 2000);
  assert.equal(rest[0], 3001);
  assert.equal(rest.at(-1), 5000);
  assert.equal(fifo.length, 0);
  assert.equal(fifo.shift(), undefined);
});
