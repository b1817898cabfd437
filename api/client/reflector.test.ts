import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../object.js';
import { ApiStatusError } from './errors.js';
import { Reflector, VeryShortWatchError } from './reflector.js';
import type { ReflectorOptions, ReflectorStore } from './reflector.js';
import { FakeClock } from '../clock.js';
import { FakeApi, waitFor } from './testing.js';

const pod = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns', name },
  ...extra,
});

/** A ReflectorStore that writes down every call. */
class RecordingStore implements ReflectorStore<KubeObject> {
  readonly log: string[] = [];
  readonly replaced: KubeObject[][] = [];
  replace(items: KubeObject[], rv: string): void {
    this.replaced.push(items);
    this.log.push(`replace ${items.length} @${rv}`);
  }
  add(o: KubeObject): void {
    this.log.push(`add ${o.metadata!.name} @${o.metadata!.resourceVersion}`);
  }
  update(o: KubeObject): void {
    this.log.push(`update ${o.metadata!.name} @${o.metadata!.resourceVersion}`);
  }
  delete(o: KubeObject): void {
    this.log.push(`delete ${o.metadata!.name} @${o.metadata!.resourceVersion}`);
  }
  bookmark(rv: string): void {
    this.log.push(`bookmark @${rv}`);
  }
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

function setup(opts: Partial<ReflectorOptions<KubeObject>> & { history?: number } = {}) {
  const api = new FakeApi(opts.history ?? 100);
  const store = new RecordingStore();
  const clock = new FakeClock(0, { sleepAdvances: true });
  const errors: string[] = [];
  const reflector = new Reflector<KubeObject>({
    listerWatcher: api,
    store,
    clock,
    random: () => 0,
    onError: (err, during) => errors.push(`${during}: ${err.message}`),
    ...opts,
  });
  const ac = new AbortController();
  let done: Promise<void> | undefined;
  return {
    api,
    store,
    clock,
    errors,
    reflector,
    start: () => (done = reflector.run(ac.signal)),
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

describe('Reflector', () => {
  it('lists in pages of 500, then watches from the list resourceVersion with bookmarks and a 5–10 min timeout', async () => {
    const t = setup({ typeMeta: { apiVersion: 'v1', kind: 'Pod' }, random: () => 0.5 });
    for (let i = 0; i < 1201; i++) t.api.put(pod(`p${i}`));
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    assert.deepEqual(
      t.api.listCalls.map((c) => [c.limit, c.continue]),
      [
        [500, undefined],
        [500, '1202:500'],
        [500, '1202:1000'],
      ],
    );
    assert.deepEqual(t.store.log, ['replace 1201 @1202']);
    assert.ok(
      t.store.replaced[0]!.every((p) => p.kind === 'Pod' && p.apiVersion === 'v1'),
      'typeMeta filled in',
    );
    const w = t.api.watchCalls[0]!;
    assert.equal(w.resourceVersion, '1202');
    assert.equal(w.allowWatchBookmarks, true);
    assert.equal(w.timeoutSeconds, 450);
    assert.equal(t.reflector.lastSyncResourceVersion, '1202');
    await t.stop();
    for (const random of [0, 0.999]) {
      const u = setup({ random: () => random });
      u.start();
      await u.api.until(() => u.api.watchCalls.length === 1);
      const s = u.api.watchCalls[0]!.timeoutSeconds;
      assert.ok(s >= 300 && s < 600, `${s}`);
      await u.stop();
    }
  });

  it('applies watch events in order, bookmarks advance the resourceVersion, and an ended watch resumes from it', async () => {
    const t = setup();
    t.api.put(pod('a'));
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    t.api.put(pod('b'));
    t.api.put(pod('a', { spec: { x: 1 } }));
    t.api.remove('ns', 'b');
    t.api.bookmark();
    await waitFor('the events', () => t.store.log.length === 5);
    assert.deepEqual(t.store.log, ['replace 1 @2', 'add b @3', 'update a @4', 'delete b @5', 'bookmark @5']);
    t.api.revision = 9; // other resources' writes move the global revision
    t.api.bookmark();
    await waitFor('the bookmark', () => t.reflector.lastSyncResourceVersion === '9');
    t.api.endWatches();
    await t.api.until(() => t.api.watchCalls.length === 2);
    assert.equal(t.api.watchCalls[1]!.resourceVersion, '9');
    assert.equal(t.api.listCalls.length, 1, 'no relist');
    assert.deepEqual(t.clock.sleeps, [], 'no backoff');
    await t.stop();
  });

  for (const expiredAs of ['http', 'event'] as const) {
    it(`relists at once when the watch is answered 410 (${expiredAs})`, async () => {
      const t = setup({ history: 3 });
      t.api.expiredAs = expiredAs;
      t.start();
      await t.api.until(() => t.api.watchCalls.length === 1);
      t.api.put(pod('a'));
      await waitFor('add a', () => t.store.log.includes('add a @2'));
      t.api.breakWatches();
      for (let i = 0; i < 5; i++) t.api.put(pod(`x${i}`)); // more changes than the history holds
      // The broken watch is retried after a backoff; the retry gets 410; the relist follows.
      await t.api.until(() => t.api.listCalls.length === 2 && t.api.watchCalls.length === 3);
      assert.equal(t.api.watchCalls[1]!.resourceVersion, '2');
      assert.equal(t.api.watchCalls[2]!.resourceVersion, '7');
      assert.deepEqual(t.store.log.slice(-1), ['replace 6 @7']);
      assert.equal(t.reflector.stats.expired, 1);
      assert.equal(t.clock.sleeps.length, 1, 'one backoff, for the broken connection only');
      await t.stop();
    });
  }

  it('backs off 1 s doubling to 30 s while the server is down, and starts over once a watch works', async () => {
    const t = setup();
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    for (let i = 0; i < 7; i++) t.api.failWatches.push(refused());
    t.api.breakWatches(refused());
    await t.api.until(() => t.api.watchCalls.length === 9);
    assert.deepEqual(t.clock.sleeps, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    assert.equal(
      t.api.listCalls.length,
      1,
      'a refused connection is retried as a watch from the same resourceVersion',
    );
    assert.ok(t.api.watchCalls.every((w) => w.resourceVersion === '1'));
    t.api.put(pod('back'));
    await waitFor('add back', () => t.store.log.includes('add back @2'));
    t.api.breakWatches();
    await t.api.until(() => t.api.watchCalls.length === 10);
    assert.equal(t.clock.sleeps.at(-1), 1000, 'reset after a working watch');
    assert.match(t.errors[0]!, /^watch: connect ECONNREFUSED/);
    assert.equal(t.reflector.stats.failures, 9);
    await t.stop();
  });

  it('jitters the backoff', async () => {
    const t = setup({ random: () => 0.5 });
    t.api.failLists.push(refused(), refused(), refused());
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    assert.deepEqual(t.clock.sleeps, [1500, 3000, 6000]);
    await t.stop();
  });

  it('retries a failed list with backoff, and a continue token that expired with one full list', async () => {
    const t = setup({ pageSize: 2 });
    for (let i = 0; i < 5; i++) t.api.put(pod(`p${i}`));
    t.api.failLists.push(new ApiStatusError({ code: 500, reason: 'InternalError', message: 'etcd down' }));
    t.api.failLists.push(() => undefined); // first page fine
    t.api.failLists.push((o) =>
      o.continue
        ? new ApiStatusError({ code: 410, reason: 'Expired', message: 'continue too old' })
        : undefined,
    );
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    assert.deepEqual(
      t.api.listCalls.map((c) => [c.limit, c.continue]),
      [
        [2, undefined], // 500
        [2, undefined],
        [2, '6:2'], // 410
        [undefined, undefined], // the full list
      ],
    );
    assert.deepEqual(t.store.log, ['replace 5 @6']);
    assert.deepEqual(t.clock.sleeps, [1000]);
    assert.deepEqual(t.errors, ['list: etcd down']);
    await t.stop();
  });

  it('treats a watch that ends at once without events as a failure', async () => {
    const t = setup();
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    t.api.endWatches();
    await t.api.until(() => t.api.watchCalls.length === 2);
    assert.deepEqual(t.clock.sleeps, [1000]);
    assert.ok(t.reflector.stats.lastError instanceof VeryShortWatchError);
    // A quiet watch that lasted is fine.
    await t.clock.advance(5_000);
    t.api.endWatches();
    await t.api.until(() => t.api.watchCalls.length === 3);
    assert.deepEqual(t.clock.sleeps, [1000]);
    await t.stop();
  });

  it('waits before relisting when a fresh list is answered 410 again', async () => {
    const t = setup();
    t.api.failWatches.push(new ApiStatusError({ code: 410, reason: 'Gone', message: 'gone' }));
    t.start();
    await t.api.until(() => t.api.listCalls.length === 2 && t.api.watchCalls.length === 2);
    assert.deepEqual(t.clock.sleeps, [1000]);
    await t.stop();
  });

  it('an ERROR event other than 410 is a failure: back off, then watch again from the same resourceVersion', async () => {
    const t = setup();
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    for (const w of t.api.watchers) {
      w.push({
        type: 'ERROR',
        object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' },
      });
    }
    await t.api.until(() => t.api.watchCalls.length === 2);
    assert.equal(t.api.watchCalls[1]!.resourceVersion, '1');
    assert.deepEqual(t.clock.sleeps, [1000]);
    assert.deepEqual(t.errors, ['watch: boom']);
    await t.stop();
  });

  it('stops promptly from a watch or a backoff, and refuses to run twice', async () => {
    const t = setup();
    t.start();
    await t.api.until(() => t.api.watchCalls.length === 1);
    await assert.rejects(t.reflector.run(new AbortController().signal), /already running/);
    await t.stop();
    assert.ok([...t.api.watchers].every((w) => w.stopped));

    const u = setup();
    u.clock.hold();
    u.api.failLists.push(refused());
    u.start();
    await waitFor('the backoff', () => u.clock.held === 1);
    await u.stop();
  });
});
