import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flushPromises } from '../clock.js';
import { WorkQueue } from './queue.js';

/** Gets every key queued right now (done() each at once), in order. */
async function drainNow(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const k = (await q.get())!;
    out.push(k);
    q.done(k);
  }
  return out;
}

describe('WorkQueue', () => {
  const fifoCases: Array<{ name: string; adds: string[]; want: string[] }> = [
    { name: 'FIFO order', adds: ['a', 'b', 'c'], want: ['a', 'b', 'c'] },
    { name: 'dedup keeps the first position', adds: ['a', 'b', 'a', 'c', 'b'], want: ['a', 'b', 'c'] },
    { name: 'one key many times', adds: ['x', 'x', 'x'], want: ['x'] },
    { name: 'nothing', adds: [], want: [] },
  ];
  for (const c of fifoCases) {
    it(c.name, async () => {
      const q = new WorkQueue();
      for (const k of c.adds) q.add(k);
      assert.equal(q.len(), c.want.length);
      assert.deepEqual(await drainNow(q), c.want);
    });
  }

  it('get() waits for an add and hands keys to waiting workers in order', async () => {
    const q = new WorkQueue();
    const first = q.get();
    const second = q.get();
    q.add('a');
    q.add('b');
    assert.equal(await first, 'a');
    assert.equal(await second, 'b');
    assert.equal(q.len(), 0);
  });

  it('never hands out a key that is processing; adding it marks it dirty for after done()', async () => {
    const q = new WorkQueue();
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'a processing key is not queued again while processing');
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await flushPromises();
    assert.equal(second, undefined, 'no second worker gets "a" while the first has it');
    q.done('a');
    await flushPromises();
    assert.equal(second, 'a', 'the dirty key is queued again by done()');
    q.done('a');
    assert.equal(q.len(), 0, 'the two adds while processing coalesced into one more run');
  });

  it('a dirty key goes to the back of the queue on done()', async () => {
    const q = new WorkQueue();
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    q.add('b');
    q.done('a');
    assert.deepEqual(await drainNow(q), ['b', 'a']);
  });

  it('done() of a key that is not processing changes nothing', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.done('a');
    q.done('zzz');
    assert.deepEqual(await drainNow(q), ['a']);
  });

  it('concurrent workers never process one key at once, and every add is seen after it was made', async () => {
    const q = new WorkQueue();
    const inFlight = new Set<string>();
    const version = new Map<string, number>();
    const seen = new Map<string, number>();
    let overlaps = 0;
    const worker = async () => {
      for (;;) {
        const k = await q.get();
        if (k === undefined) return;
        if (inFlight.has(k)) overlaps++;
        inFlight.add(k);
        const v = version.get(k) ?? 0;
        await flushPromises();
        seen.set(k, v);
        inFlight.delete(k);
        q.done(k);
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    for (let i = 0; i < 200; i++) {
      const k = `k${i % 5}`;
      version.set(k, i);
      q.add(k);
      if (i % 3 === 0) await flushPromises();
    }
    await q.shutDownWithDrain();
    q.shutDown();
    await Promise.all(workers);
    assert.equal(overlaps, 0);
    for (const [k, v] of version) assert.equal(seen.get(k), v, `${k} was reconciled after its last add`);
  });

  describe('shutdown', () => {
    it('ignores adds, still hands out what was queued, then resolves undefined', async () => {
      const q = new WorkQueue();
      q.add('a');
      q.add('b');
      q.shutDown();
      q.add('c');
      assert.equal(q.shuttingDown(), true);
      assert.deepEqual(await drainNow(q), ['a', 'b']);
      assert.equal(await q.get(), undefined);
    });

    it('wakes waiting workers with undefined', async () => {
      const q = new WorkQueue();
      const waiting = [q.get(), q.get()];
      q.shutDown();
      assert.deepEqual(await Promise.all(waiting), [undefined, undefined]);
    });

    it('re-queues a key made dirty before shutdown when it is done', async () => {
      const q = new WorkQueue();
      q.add('a');
      assert.equal(await q.get(), 'a');
      q.add('a');
      q.shutDown();
      q.done('a');
      assert.equal(await q.get(), 'a');
      q.done('a');
      assert.equal(await q.get(), undefined);
    });

    it('shutDownWithDrain() resolves only when queued and processing keys are all done', async () => {
      const q = new WorkQueue();
      q.add('a');
      q.add('b');
      assert.equal(await q.get(), 'a');
      let drained = false;
      const drain = q.shutDownWithDrain().then(() => (drained = true));
      await flushPromises();
      assert.equal(drained, false, '"a" is processing, "b" queued');
      q.done('a');
      await flushPromises();
      assert.equal(drained, false, '"b" still queued');
      assert.equal(await q.get(), 'b');
      await flushPromises();
      assert.equal(drained, false, '"b" processing');
      q.done('b');
      await drain;
      assert.equal(await q.get(), undefined);
    });

    it('shutDownWithDrain() of an idle queue resolves at once; shutDown() ends a pending drain', async () => {
      // Resolution is checked by flag, not awaited: a drain that never ends fails here
      // instead of hanging the run.
      const idle = new WorkQueue();
      let idleDrained = false;
      void idle.shutDownWithDrain().then(() => (idleDrained = true));
      await flushPromises();
      assert.equal(idleDrained, true, 'an idle queue has nothing to drain');
      assert.equal(await idle.get(), undefined);

      const q = new WorkQueue();
      q.add('a');
      assert.equal(await q.get(), 'a');
      let drained = false;
      void q.shutDownWithDrain().then(() => (drained = true));
      await flushPromises();
      assert.equal(drained, false, '"a" is processing');
      q.shutDown();
      await flushPromises();
      assert.equal(drained, true, 'shutDown() ends the drain, though "a" is not done');
    });
  });
});
