import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, realClock } from './clock.js';

describe('realClock', () => {
  it('realClock.sleep resolves early when its signal aborts', async () => {
    const ac = new AbortController();
    const slept = realClock.sleep(3_600_000, ac.signal).then(() => 'woken');
    ac.abort();
    // Liveness, not speed: a sleep the abort did not end would last an hour, and loses the
    // race against a generous deadline.
    let deadline: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      slept,
      new Promise<string>((resolve) => (deadline = setTimeout(() => resolve('still asleep'), 30_000))),
    ]);
    clearTimeout(deadline);
    assert.equal(outcome, 'woken');
    await realClock.sleep(1, AbortSignal.abort());
  });
});

describe('sleeps on a signal', () => {
  it('end together when it aborts, their timers cleared; a sleep that ended is not called again', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const ended: string[] = [];
    const early = clock.sleep(10, ac.signal).then(() => ended.push('early'));
    const sleeps = [1000, 2000, 3000].map((ms) => clock.sleep(ms, ac.signal).then(() => ended.push(`${ms}`)));
    await clock.advance(10);
    await early;
    assert.deepEqual(ended, ['early']);
    assert.equal(clock.pendingTimers, 3);
    ac.abort();
    await Promise.all(sleeps);
    assert.deepEqual(ended, ['early', '1000', '2000', '3000']);
    assert.equal(clock.pendingTimers, 0, 'the aborted sleeps cleared their timers');
    // Sleeps on an aborted signal end at once; on another signal they still wait.
    await clock.sleep(5000, ac.signal);
    const other = new AbortController();
    let otherEnded = false;
    void clock.sleep(5000, other.signal).then(() => (otherEnded = true));
    await clock.advance(4999);
    assert.equal(otherEnded, false);
    await clock.advance(1);
    assert.equal(otherEnded, true);
  });
});

describe('FakeClock', () => {
  it('fires timers and ends sleeps in time order, only when advanced', async () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('timer@300'), 300);
    const cleared = clock.setTimeout(() => fired.push('cleared'), 100);
    clock.clearTimeout(cleared);
    void clock.sleep(200).then(() => fired.push(`sleep@${clock.now()}`));
    await clock.advance(100);
    assert.deepEqual(fired, []);
    await clock.advance(250);
    assert.deepEqual(fired, ['sleep@200', 'timer@300']);
    assert.equal(clock.now(), 350);
    assert.deepEqual(clock.sleeps, [200]);
    assert.equal(clock.pendingTimers, 0);
  });

  it('with sleepAdvances, a sleep moves time itself, and hold() stops sleeps until release()', async () => {
    const clock = new FakeClock(0, { sleepAdvances: true });
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 500);
    await clock.sleep(1_000);
    assert.equal(clock.now(), 1_000);
    assert.deepEqual(fired, [500], 'timers on the way fire');
    clock.hold();
    let woke = false;
    const held = clock.sleep(2_000).then(() => (woke = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(clock.held, 1);
    assert.equal(woke, false);
    clock.release();
    await held;
    assert.equal(clock.now(), 3_000);
    assert.equal(clock.held, 0);
    const ac = new AbortController();
    clock.hold();
    const aborted = clock.sleep(5_000, ac.signal);
    ac.abort();
    await aborted;
    assert.deepEqual(clock.sleeps, [1_000, 2_000, 5_000]);
  });
});
