import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { Backoff } from './backoff.js';
import { goDuration } from './sync.js';

describe('Backoff (CrashLoopBackOff numbers)', () => {
  it('doubles from 10 s to a ceiling of 300 s', () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      b.next('k', clock.now());
      seen.push(b.get('k'));
    }
    assert.deepEqual(seen, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  });

  it('is in backoff for the delay after the event, then not', async () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
    assert.equal(b.remainingSince('k', clock.now()), 0, 'no entry: no backoff');
    b.next('k', clock.now());
    const crashedAt = clock.now();
    assert.equal(b.remainingSince('k', crashedAt), 10_000);
    await clock.advance(4_000);
    assert.equal(b.remainingSince('k', crashedAt), 6_000);
    await clock.advance(6_000);
    assert.equal(b.remainingSince('k', crashedAt), 0);
  });

  it('resets when the event comes more than 10 minutes (2 × max) after the last update', async () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
    for (let i = 0; i < 4; i++) b.next('k', clock.now());
    assert.equal(b.get('k'), 80_000);
    await clock.advance(599_000);
    b.next('k', clock.now());
    assert.equal(b.get('k'), 160_000, 'ran less than 10 minutes: keeps doubling');
    await clock.advance(600_001);
    assert.equal(b.remainingSince('k', clock.now()), 0, 'an expired entry does not hold back');
    b.next('k', clock.now());
    assert.equal(b.get('k'), 10_000, 'ran more than 10 minutes: back to 10 s');
  });

  it('since the last update (image pulls)', async () => {
    const clock = new FakeClock();
    const b = new Backoff({ clock, initialMs: 10_000, maxMs: 300_000 });
    b.next('img');
    await clock.advance(3_000);
    assert.equal(b.remainingSinceUpdate('img'), 7_000);
    b.resetPrefix('im');
    assert.equal(b.remainingSinceUpdate('img'), 0);
  });

  it('rejects nonsense', () => {
    assert.throws(() => new Backoff({ clock: new FakeClock(), initialMs: 0, maxMs: 1 }), /initialMs/);
  });
});

describe('goDuration', () => {
  for (const [ms, want] of [
    [10_000, '10s'],
    [80_000, '1m20s'],
    [160_000, '2m40s'],
    [300_000, '5m0s'],
  ] as const) {
    it(`${ms} ms → ${want}`, () => assert.equal(goDuration(ms), want));
  }
});
