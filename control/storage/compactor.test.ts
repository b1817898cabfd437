import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Compactor } from './compactor.js';
import { isStorageError } from './errors.js';
import { MemoryStore } from './memory.js';

it('compacts at the revision seen one interval earlier, leaving one interval of history', async () => {
  const store = new MemoryStore();
  let fire: () => void = () => {};
  const c = new Compactor({
    store,
    intervalMs: 1000,
    setInterval: (fn) => ((fire = fn), {}),
    clearInterval: () => {},
  });
  c.start();
  const a = await store.create('/registry/pods/default/a', '{"v":1}');
  fire();
  await c.tick(); // joins the tick in flight: records revision a.modRevision, compacts nothing
  assert.equal(await store.compactedRevision(), 1);
  const b = await store.update('/registry/pods/default/a', '{"v":2}', a.modRevision);
  await c.tick();
  assert.equal(await store.compactedRevision(), a.modRevision);
  // History from the previous interval is still there ...
  assert.equal((await store.get(a.key, { revision: a.modRevision }))?.value, '{"v":1}');
  await store.update(a.key, '{"v":3}', b.modRevision);
  await c.tick();
  // ... and anything older than it is gone.
  await assert.rejects(store.get(a.key, { revision: a.modRevision }), (e) => isStorageError(e, 'Compacted'));
  assert.equal(await store.compactedRevision(), b.modRevision);
  await c.stop();
  await store.close();
});

it('reports failures and carries on', async () => {
  const store = new MemoryStore();
  const errors: unknown[] = [];
  const c = new Compactor({ store, onError: (e) => errors.push(e) });
  await c.tick();
  await store.close();
  await c.tick();
  assert.equal(errors.length, 1);
  assert.ok(isStorageError(errors[0], 'Closed'));
});

it('refuses a non-positive interval with a clear message', () => {
  assert.throws(
    () => new Compactor({ store: new MemoryStore(), intervalMs: 0 }),
    /intervalMs must be a positive/,
  );
});
