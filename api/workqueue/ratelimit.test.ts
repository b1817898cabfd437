import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../clock.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from './ratelimit.js';

describe('ItemExponentialFailureRateLimiter', () => {
  it('follows client-go defaults: 5 ms doubling, capped at 1000 s', () => {
    const r = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const got = Array.from({ length: 21 }, () => r.when('a'));
    // prettier-ignore
    const want = [
      5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480, 40960, 81920,
      163840, 327680, 655360, 1_000_000, 1_000_000, 1_000_000,
    ];
    assert.deepEqual(got, want);
    assert.equal(r.numRequeues('a'), 21);
  });

  it('never overflows past the cap after very many failures', () => {
    const r = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 2000; i++) last = r.when('a');
    assert.equal(last, 1_000_000);
  });

  it('tracks keys separately; forget() starts a key over', () => {
    const r = new ItemExponentialFailureRateLimiter(1, 1000);
    assert.deepEqual([r.when('a'), r.when('a'), r.when('b'), r.when('a')], [1, 2, 1, 4]);
    assert.deepEqual([r.numRequeues('a'), r.numRequeues('b'), r.numRequeues('c')], [3, 1, 0]);
    r.forget('a');
    assert.equal(r.numRequeues('a'), 0);
    assert.equal(r.when('a'), 1);
    assert.equal(r.numRequeues('b'), 1);
  });

  const bad: Array<[number, number]> = [
    [0, 10],
    [-1, 10],
    [10, 5],
    [Number.NaN, 10],
  ];
  for (const [base, max] of bad) {
    it(`rejects base ${base}, max ${max}`, () => {
      assert.throws(() => new ItemExponentialFailureRateLimiter(base, max), /exponential rate limiter/);
    });
  }
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces retries by 1/qps, borrowing from the future', () => {
    const clock = new FakeClock();
    const r = new BucketRateLimiter({ qps: 10, burst: 100, clock });
    const burst = Array.from({ length: 100 }, (_, i) => r.when(`k${i}`));
    assert.ok(burst.every((d) => d === 0));
    assert.deepEqual([r.when('x'), r.when('y'), r.when('z')], [100, 200, 300]);
  });

  it('refills at qps up to the burst size', async () => {
    const clock = new FakeClock();
    const r = new BucketRateLimiter({ qps: 10, burst: 3, clock });
    // Each step: advance the clock, take one token; the delay it gets.
    const steps: Array<[number, number]> = [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 100], // empty: borrows the token due in 100 ms
      [0, 200],
      [300, 0], // 3 tokens came back, 2 were owed
      [0, 100],
      [10_000, 0], // a long quiet spell refills only up to the burst
      [0, 0],
      [0, 0],
      [0, 100],
    ];
    for (const [i, [advance, want]] of steps.entries()) {
      await clock.advance(advance);
      assert.ok(Math.abs(r.when('k') - want) < 1e-6, `step ${i}: want ${want}`);
    }
    assert.equal(r.numRequeues('k'), 0);
  });

  it('rejects a bad bucket', () => {
    assert.throws(() => new BucketRateLimiter({ qps: 0, burst: 1 }), /qps > 0/);
    assert.throws(() => new BucketRateLimiter({ qps: 1, burst: 0 }), /burst >= 1/);
  });
});

describe('MaxOfRateLimiter / defaultControllerRateLimiter', () => {
  it('takes the longest delay and the largest count; forget() forgets everywhere', () => {
    const a = new ItemExponentialFailureRateLimiter(1, 1000);
    const b = new ItemExponentialFailureRateLimiter(10, 15);
    const r = new MaxOfRateLimiter(a, b);
    assert.deepEqual([r.when('k'), r.when('k'), r.when('k')], [10, 15, 15]);
    assert.equal(r.when('k'), 15);
    assert.equal(r.when('k'), 16);
    assert.equal(r.numRequeues('k'), 5);
    r.forget('k');
    assert.equal(a.numRequeues('k'), 0);
    assert.equal(b.numRequeues('k'), 0);
  });

  it('default: per-key backoff until the overall bucket (10 qps, burst 100) runs dry', () => {
    const clock = new FakeClock();
    const r = defaultControllerRateLimiter(clock);
    // 100 distinct keys failing once each: 5 ms (their own backoff), the bucket absorbs them.
    for (let i = 0; i < 100; i++) assert.equal(r.when(`k${i}`), 5);
    // The 101st failure overall waits for the bucket: 100 ms beats its own 5 ms.
    assert.equal(r.when('k100'), 100);
    // A key that has failed often is held back by its own backoff.
    const hot = Array.from({ length: 3 }, () => r.when('k0'));
    assert.deepEqual(
      hot,
      [200, 300, 400].map((bucket, i) => Math.max(bucket, 5 * 2 ** (i + 1))),
    );
    assert.equal(r.numRequeues('k0'), 4);
  });
});
