import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('doubles from 1 s to a 30 s cap, jitter stretching each delay up to the cap', () => {
    const cases: { random: number; want: number[] }[] = [
      { random: 0, want: [1000, 2000, 4000, 8000, 16000, 30000, 30000] },
      { random: 0.5, want: [1500, 3000, 6000, 12000, 24000, 30000, 30000] },
      { random: 0.999, want: [1999, 3998, 7996, 15992, 30000, 30000, 30000] },
    ];
    for (const { random, want } of cases) {
      const b = new Backoff({ random: () => random });
      assert.deepEqual(
        want.map(() => Math.round(b.next())),
        want,
        `random ${random}`,
      );
      assert.equal(b.attempts, want.length);
    }
  });

  it('starts over after reset()', () => {
    const b = new Backoff({ random: () => 0 });
    b.next();
    b.next();
    b.reset();
    assert.equal(b.next(), 1000);
  });

  it('takes other bounds and rejects nonsense', () => {
    const b = new Backoff({ initialMs: 10, maxMs: 35, jitter: 0, factor: 3 });
    assert.deepEqual([b.next(), b.next(), b.next()], [10, 30, 35]);
    assert.throws(() => new Backoff({ initialMs: 0 }), RangeError);
    assert.throws(() => new Backoff({ initialMs: 10, maxMs: 5 }), RangeError);
    assert.throws(() => new Backoff({ factor: 0.5 }), RangeError);
    assert.throws(() => new Backoff({ jitter: -1 }), RangeError);
  });
});
