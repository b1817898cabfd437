import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../clock.js';
import { DelayingQueue } from './delaying.js';

function setup() {
  const clock = new FakeClock();
  return { clock, q: new DelayingQueue({ clock }) };
}

describe('DelayingQueue', () => {
  it('adds a key once its delay has passed, not before', async () => {
    const { clock, q } = setup();
    q.addAfter('a', 100);
    assert.equal(q.len(), 0);
    assert.equal(q.waitingLen(), 1);
    await clock.advance(99);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1);
    assert.equal(q.waitingLen(), 0);
    assert.equal(await q.get(), 'a');
  });

  const delayCases: Array<{ name: string; adds: Array<[string, number]>; at: Array<[number, string[]]> }> = [
    {
      name: 'zero or negative delay adds at once',
      adds: [
        ['a', 0],
        ['b', -5],
      ],
      at: [[0, ['a', 'b']]],
    },
    {
      name: 'keys come out in order of their due time',
      adds: [
        ['late', 300],
        ['early', 100],
        ['mid', 200],
      ],
      at: [
        [100, ['early']],
        [200, ['early', 'mid']],
        [300, ['early', 'mid', 'late']],
      ],
    },
    {
      name: 'a sooner delay for a waiting key moves it earlier',
      adds: [
        ['a', 500],
        ['a', 100],
      ],
      at: [
        [100, ['a']],
        [500, ['a']],
      ],
    },
    {
      name: 'a later delay for a waiting key is ignored',
      adds: [
        ['a', 100],
        ['a', 500],
      ],
      at: [
        [100, ['a']],
        [600, ['a']],
      ],
    },
  ];
  for (const c of delayCases) {
    it(c.name, async () => {
      const { clock, q } = setup();
      for (const [k, ms] of c.adds) q.addAfter(k, ms);
      const got: string[] = [];
      let t = 0;
      for (const [at, want] of c.at) {
        await clock.advance(at - t);
        t = at;
        while (q.len() > 0) {
          const k = (await q.get())!;
          got.push(k);
          q.done(k);
        }
        assert.deepEqual(got, want, `at ${at} ms`);
      }
    });
  }

  it('a delayed key that is already queued is not queued twice', async () => {
    const { clock, q } = setup();
    q.add('a');
    q.addAfter('a', 10);
    await clock.advance(10);
    assert.equal(q.len(), 1);
  });

  it('shutdown drops waiting keys and ignores new ones', async () => {
    const { clock, q } = setup();
    q.addAfter('a', 10);
    q.shutDown();
    q.addAfter('b', 0);
    q.addAfter('c', 10);
    assert.equal(clock.pendingTimers, 0);
    await clock.advance(20);
    assert.equal(q.len(), 0);
    assert.equal(await q.get(), undefined);
  });
});
