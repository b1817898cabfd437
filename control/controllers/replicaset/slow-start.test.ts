import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slowStartBatch } from './slow-start.js';

describe('slowStartBatch', () => {
  const cases: Array<{
    name: string;
    count: number;
    initial: number;
    /** 1-based call numbers that fail. */
    failOn: number[];
    successes: number;
    calls: number;
    batches: number[];
  }> = [
    { name: 'zero calls', count: 0, initial: 1, failOn: [], successes: 0, calls: 0, batches: [] },
    {
      name: 'all succeed: 1, 2, 4, rest',
      count: 10,
      initial: 1,
      failOn: [],
      successes: 10,
      calls: 10,
      batches: [1, 2, 4, 3],
    },
    {
      name: 'first call fails: nothing more',
      count: 10,
      initial: 1,
      failOn: [1],
      successes: 0,
      calls: 1,
      batches: [1],
    },
    {
      name: 'a failure in the third batch stops after it',
      count: 10,
      initial: 1,
      failOn: [5],
      successes: 6,
      calls: 7,
      batches: [1, 2, 4],
    },
    {
      name: 'two failures in one batch',
      count: 10,
      initial: 1,
      failOn: [2, 3],
      successes: 1,
      calls: 3,
      batches: [1, 2],
    },
    { name: 'a larger start', count: 5, initial: 2, failOn: [], successes: 5, calls: 5, batches: [2, 3] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      let calls = 0;
      let inFlight = 0;
      const batches: number[] = [];
      let current = 0;
      const res = await slowStartBatch(c.count, c.initial, async () => {
        const n = ++calls;
        // Calls of one batch start together: record how many are in flight at once.
        if (inFlight === 0) batches.push((current = 0));
        inFlight++;
        batches[batches.length - 1] = ++current;
        await new Promise((r) => setImmediate(r));
        inFlight--;
        if (c.failOn.includes(n)) throw new Error(`call ${n} failed`);
      });
      assert.equal(res.successes, c.successes);
      assert.equal(calls, c.calls);
      assert.deepEqual(batches, c.batches);
      if (c.failOn.length > 0) assert.match(String((res.error as Error).message), /failed/);
      else assert.equal(res.error, undefined);
    });
  }

  it('rejects a bad initial batch size', async () => {
    await assert.rejects(
      slowStartBatch(1, 0, async () => {}),
      /initialBatchSize must be a positive integer/,
    );
  });
});
