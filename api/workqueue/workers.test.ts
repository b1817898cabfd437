import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, flushPromises } from '../clock.js';
import { RateLimitingQueue } from './rateLimited.js';
import { ItemExponentialFailureRateLimiter } from './ratelimit.js';
import { runWorkers } from './workers.js';

describe('RateLimitingQueue', () => {
  it('addRateLimited() waits as the limiter says; forget() resets the backoff', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    q.addRateLimited('a');
    assert.equal(q.numRequeues('a'), 1);
    await clock.advance(4);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1, 'first retry after 5 ms');
    q.done((await q.get())!);
    q.addRateLimited('a');
    await clock.advance(9);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1, 'second retry after 10 ms');
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
  });

  it('ignores addRateLimited() after shutdown', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    q.shutDown();
    q.addRateLimited('a');
    assert.equal(q.numRequeues('a'), 0);
    assert.equal(clock.pendingTimers, 0);
  });
});

describe('runWorkers', () => {
  it('retries a failing key with backoff, then forgets it once reconcile succeeds', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    const attempts: Array<[string, number]> = [];
    const errors: Array<[string, string, number]> = [];
    const start = clock.now();
    const done = runWorkers(
      q,
      2,
      async (key) => {
        attempts.push([key, clock.now() - start]);
        if (attempts.filter(([k]) => k === key).length <= 3) throw new Error(`boom ${attempts.length}`);
      },
      { onError: (err, key, requeues) => errors.push([key, (err as Error).message, requeues]) },
    );
    q.add('a');
    await clock.advance(1000);
    // Attempts at 0, then after 5, 10 and 20 ms more of backoff.
    assert.deepEqual(attempts, [
      ['a', 0],
      ['a', 5],
      ['a', 15],
      ['a', 35],
    ]);
    assert.deepEqual(errors, [
      ['a', 'boom 1', 0],
      ['a', 'boom 2', 1],
      ['a', 'boom 3', 2],
    ]);
    assert.equal(q.numRequeues('a'), 0, 'forgotten after success');
    q.shutDown();
    await done;
  });

  it('never runs reconcile for one key twice at once, and catches up on adds made meanwhile', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    const running = new Set<string>();
    const runs = new Map<string, number>();
    let overlaps = 0;
    const release: Array<() => void> = [];
    const done = runWorkers(q, 4, async (key) => {
      if (running.has(key)) overlaps++;
      running.add(key);
      runs.set(key, (runs.get(key) ?? 0) + 1);
      await new Promise<void>((r) => release.push(r));
      running.delete(key);
    });
    q.add('a');
    q.add('b');
    await flushPromises();
    assert.deepEqual([...running].sort(), ['a', 'b']);
    q.add('a');
    q.add('a');
    await flushPromises();
    assert.equal(runs.get('a'), 1, 'the second add waits for the first run to finish');
    while (release.length > 0) {
      release.shift()!();
      await flushPromises();
    }
    assert.equal(overlaps, 0);
    assert.deepEqual(Object.fromEntries(runs), { a: 2, b: 1 });
    q.shutDown();
    await done;
  });

  it('a custom limiter and an onError that throws do not lose the retry', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter(1000, 1000),
    });
    let calls = 0;
    const done = runWorkers(
      q,
      1,
      async () => {
        calls++;
        if (calls === 1) throw new Error('first');
      },
      {
        onError: () => {
          throw new Error('handler bug');
        },
      },
    );
    q.add('a');
    await clock.advance(999);
    assert.equal(calls, 1);
    await clock.advance(1);
    assert.equal(calls, 2);
    q.shutDown();
    await done;
  });

  it('resolves once the queue shuts down; processing keys finish first', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    let finished = 0;
    let exited = false;
    const done = runWorkers(q, 3, async () => {
      await flushPromises();
      finished++;
    }).then(() => (exited = true));
    q.add('a');
    q.add('b');
    await flushPromises();
    assert.equal(finished, 0, 'both keys are still processing');
    await q.shutDownWithDrain();
    await done;
    assert.equal(finished, 2);
    assert.equal(exited, true);
  });

  it('rejects a bad worker count', async () => {
    await assert.rejects(
      runWorkers(new RateLimitingQueue(), 0, async () => {}),
      /n must be an integer/,
    );
  });
});
