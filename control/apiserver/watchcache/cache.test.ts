import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FakeClock } from '../../../api/clock.js';
import { fieldIndexFunc } from '../../../api/client/indexer.js';
import type { KubeObject } from '../../../api/object.js';
import { StorageError } from '../../storage/errors.js';
import { MemoryStore } from '../../storage/memory.js';
import { SqliteStore } from '../../storage/sqlite.js';
import type { Store } from '../../storage/store.js';
import type { Status } from '../status.js';
import { INITIAL_EVENTS_END_ANNOTATION } from './event.js';
import { deletePod, FlakyStore, pod, putPod, record, waitFor, type Recorder } from './testing.js';
import { WatchCache, type WatchCacheConfig } from './cache.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const backends: { name: string; open(): Promise<Store> }[] = [
  { name: 'memory', open: async () => new MemoryStore() },
  {
    name: 'sqlite',
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'k8ts-watchcache-'));
      dirs.push(dir);
      return SqliteStore.open({ path: join(dir, 'state.db') });
    },
  },
];

async function setup(
  store: Store,
  cfg: Partial<WatchCacheConfig> = {},
): Promise<{ cache: WatchCache; clock: FakeClock }> {
  const clock = new FakeClock();
  const cache = new WatchCache({
    store,
    prefix: '/registry/pods/',
    clock,
    typeMeta: { apiVersion: 'v1', kind: 'Pod' },
    ...cfg,
  });
  await cache.start();
  return { cache, clock };
}

/** Waits until the cache has applied every write up to `revision`. */
const caughtUp = (cache: WatchCache, revision: number) =>
  waitFor(() => cache.revision >= revision, `cache at revision ${revision}`);
const received = (rec: Recorder, n: number) => waitFor(() => rec.events.length >= n, `${n} events`);
/** A full GC, without node's --expose-gc: V8's gc function, exposed to a new context. */
async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // A WeakRef's target stays alive until the job that read it ends.
  await new Promise((r) => setImmediate(r));
  gc();
}
const closed = (rec: Recorder) => waitFor(() => rec.closed !== undefined, 'watch closed');

for (const backend of backends) {
  describe(`WatchCache (${backend.name})`, () => {
    it('sends the initial state for resourceVersion 0 and unset, then live events', async () => {
      const store = await backend.open();
      await putPod(store, pod('b', 'two'));
      await putPod(store, pod('a', 'one'));
      const r3 = await putPod(store, pod('a', 'three'));
      const { cache } = await setup(store);
      try {
        assert.equal(cache.revision, r3);
        const any = record(cache, { sinceRevision: 0 });
        const mostRecent = record(cache, { sinceRevision: undefined });
        const inA = record(cache, { sinceRevision: 0, namespace: 'a' });
        await received(any, 3);
        await received(mostRecent, 3);
        const initial = ['ADDED a/one@3', 'ADDED a/three@4', 'ADDED b/two@2'];
        assert.deepEqual(any.summary(), initial);
        assert.deepEqual(mostRecent.summary(), initial);
        await received(inA, 2);
        assert.deepEqual(inA.summary(), ['ADDED a/one@3', 'ADDED a/three@4']);

        const r5 = await putPod(store, pod('b', 'four'));
        const r6 = await putPod(store, pod('a', 'one', { app: 'web' }));
        const r7 = await deletePod(store, 'a', 'three');
        await received(any, 6);
        await received(inA, 4);
        assert.deepEqual(any.summary().slice(3), [
          `ADDED b/four@${r5}`,
          `MODIFIED a/one@${r6}`,
          `DELETED a/three@${r7}`,
        ]);
        assert.deepEqual(mostRecent.summary(), any.summary());
        assert.deepEqual(inA.summary().slice(2), [`MODIFIED a/one@${r6}`, `DELETED a/three@${r7}`]);
        // A DELETED event carries the object's last state at the deletion's revision.
        const deleted = any.events[5]!;
        assert.equal(deleted.object.metadata?.name, 'three');
        assert.deepEqual(JSON.parse(deleted.json()), { type: 'DELETED', object: deleted.object });
        assert.equal(deleted.line(), deleted.json() + '\n');
        // One encoding per change, shared by every watcher.
        assert.equal(any.events[4], mostRecent.events[4]);
        assert.equal(any.events[4]!.json(), mostRecent.events[4]!.json());
        assert.equal(cache.metrics.watchers, 3);
      } finally {
        cache.stop();
        await store.close();
      }
    });

    it('resumes from a resourceVersion in the buffer with exactly the later changes', async () => {
      const store = await backend.open();
      const { cache } = await setup(store);
      try {
        await putPod(store, pod('ns', 'p1'));
        const r2 = await putPod(store, pod('ns', 'p2'));
        const r3 = await putPod(store, pod('ns', 'p3'));
        const r4 = await putPod(store, pod('ns', 'p1', { v: '2' }));
        await caughtUp(cache, r4);
        const rec = record(cache, { sinceRevision: r2 });
        await received(rec, 2);
        const r5 = await deletePod(store, 'ns', 'p2');
        await received(rec, 3);
        assert.deepEqual(rec.summary(), [`ADDED ns/p3@${r3}`, `MODIFIED ns/p1@${r4}`, `DELETED ns/p2@${r5}`]);
        assert.equal(rec.closed, undefined);
      } finally {
        cache.stop();
        await store.close();
      }
    });
  });
}

describe('WatchCache', () => {
  it('keeps one copy of each repeated short string of its current objects, listed or watched', async () => {
    // 2,000 pods with the same 60 label values of 120 characters: as copies, some 16 MB.
    const LABELS = 60;
    const value = (i: number) => `${'v'.repeat(116)}${String(i).padStart(4, '0')}`;
    const labels = Object.fromEntries(Array.from({ length: LABELS }, (_, i) => [`k${i}`, value(i)]));
    const copies = 2000 * LABELS * (value(0).length + 16);
    // sqlite: the store's values are not on the JS heap, the cache's objects are.
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-watchcache-'));
    dirs.push(dir);
    const store = await SqliteStore.open({ path: join(dir, 'state.db') });
    try {
      for (let i = 0; i < 1000; i++) await putPod(store, pod('ns', `listed-${i}`, labels));
      await collectGarbage();
      const before = process.memoryUsage().heapUsed;
      const { cache } = await setup(store);
      try {
        let revision = 0;
        for (let i = 0; i < 1000; i++) revision = await putPod(store, pod('ns', `watched-${i}`, labels));
        await caughtUp(cache, revision);
        await collectGarbage();
        const grown = process.memoryUsage().heapUsed - before;
        assert.equal(cache.list().items.length, 2000);
        assert.ok(
          grown < copies / 2,
          `the cache grew the heap by ${grown} bytes; the values as copies: ${copies}`,
        );
        for (const name of ['listed-7', 'watched-7'])
          assert.deepEqual(
            cache.get({ namespace: 'ns', name })?.metadata?.labels,
            labels,
            'values unchanged',
          );
      } finally {
        cache.stop();
      }
    } finally {
      await store.close();
    }
  });

  it('keeps the versions in its history packed: a small part of their JSON each', async () => {
    // Pods of one template, as a ReplicaSet makes them: some 3 KB of JSON each, alike but
    // for their names, uids, nodes and times.
    const shared = Object.fromEntries(
      Array.from({ length: 24 }, (_, i) => [`example.com/k${i}`, `value ${i} `.repeat(10)]),
    );
    const version = (i: number, v: number) => ({
      ...pod('ns', `web-${i}`, { app: 'web' }, { nodeName: `node-${(i * 7) % 100}`, v }),
      metadata: {
        name: `web-${i}`,
        namespace: 'ns',
        uid: `${String(i * 7919).padStart(8, '0')}-4f7b-9d6e-${String(i).padStart(12, '0')}`,
        annotations: { ...shared, changed: `2026-12-07T15:${String(v).padStart(2, '0')}:${i % 60}Z` },
      },
    });
    const PODS = 2000;
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-watchcache-'));
    dirs.push(dir);
    const store = await SqliteStore.open({ path: join(dir, 'state.db') });
    const { cache } = await setup(store, { capacity: 3 * PODS });
    try {
      let revision = 0;
      for (let i = 0; i < PODS; i++) revision = await putPod(store, version(i, 0));
      await caughtUp(cache, revision);
      await collectGarbage();
      const before = process.memoryUsage().heapUsed;
      // Two updates of each pod: the first two versions of every pod go to the history.
      let replaced = 0;
      for (const v of [1, 2]) {
        for (let i = 0; i < PODS; i++) {
          replaced += JSON.stringify(version(i, v - 1)).length;
          revision = await putPod(store, version(i, v));
        }
      }
      await caughtUp(cache, revision);
      await collectGarbage();
      const grown = process.memoryUsage().heapUsed - before;
      assert.ok(
        grown < replaced / 3,
        `the history of ${2 * PODS} versions grew the heap by ${grown} bytes; their JSON: ${replaced} characters`,
      );
      // Still all there: a replay from before the updates sends every version.
      const replay = record(cache, { sinceRevision: revision - 2 * PODS });
      await received(replay, 2 * PODS);
      assert.deepEqual(replay.events[0]!.object.metadata?.annotations, version(0, 1).metadata.annotations);
      replay.watcher.stop();
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('replays its packed history exactly as it sent it live, selector changes and deletions included', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store, { capacity: 1000 });
    try {
      const start = cache.revision;
      const filter = (o: KubeObject) => o.metadata?.labels?.tier !== 'off';
      const live = record(cache, { sinceRevision: 0, filter });
      const text = 'ünïcödé ✓ 🚀 "quoted" \\ line\u2028sep '.repeat(30);
      const big = (name: string, tier: string, v: number) =>
        pod('ns', name, { tier }, { note: `${text}${v}`, nodeName: `node-${v}` });
      let revision = 0;
      for (let v = 0; v < 4; v++) {
        for (const name of ['a', 'b', 'c']) {
          revision = await putPod(store, big(name, v % 2 === 1 && name === 'b' ? 'off' : 'on', v));
        }
      }
      revision = await deletePod(store, 'ns', 'c');
      revision = await putPod(store, big('c', 'on', 9));
      await caughtUp(cache, revision);
      const sent = live.events.length;
      await received(live, sent);
      assert.ok(sent >= 13, `${sent} live events`);
      const replay = record(cache, { sinceRevision: start, filter });
      await received(replay, sent);
      assert.deepEqual(
        replay.events.map((e) => e.json()),
        live.events.map((e) => e.json()),
      );
      assert.ok(live.summary().includes(`DELETED ns/b@${start + 5}`), live.summary().join(', '));
      live.watcher.stop();
      replay.watcher.stop();
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('keeps a secondary index (pods by spec.nodeName) through start, changes, moves and deletes', async () => {
    const store = new MemoryStore();
    try {
      await putPod(store, pod('a', 'early', undefined, { nodeName: 'n1' }));
      const { cache } = await setup(store, { indexers: { node: fieldIndexFunc('spec.nodeName') } });
      const names = (node: string) =>
        cache
          .byIndex('node', node)
          .map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)
          .sort();
      assert.deepEqual(names('n1'), ['a/early'], 'indexed from the first list');
      await putPod(store, pod('b', 'later', undefined, { nodeName: 'n1' }));
      await putPod(store, pod('a', 'unbound'));
      let rev = await putPod(store, pod('a', 'other', undefined, { nodeName: 'n2' }));
      await caughtUp(cache, rev);
      assert.deepEqual(names('n1'), ['a/early', 'b/later']);
      assert.deepEqual(names('n2'), ['a/other']);
      assert.deepEqual(names(''), ['a/unbound'], 'unbound pods under the empty name');
      // Bound later, moved (a new value), deleted: each leaves the old value's entry.
      await putPod(store, pod('a', 'unbound', undefined, { nodeName: 'n2' }));
      await putPod(store, pod('b', 'later', undefined, { nodeName: 'n2' }));
      rev = await deletePod(store, 'a', 'early');
      await caughtUp(cache, rev);
      assert.deepEqual(names('n1'), []);
      assert.deepEqual(names('n2'), ['a/other', 'a/unbound', 'b/later']);
      assert.deepEqual(names(''), [], 'no pod left unbound');
      assert.equal(
        (
          cache.byIndex('node', 'n2').find((p) => p.metadata?.name === 'later')?.spec as
            { nodeName?: string } | undefined
        )?.nodeName,
        'n2',
      );
      assert.throws(() => cache.byIndex('nope', 'x'), /no index named nope/);
      cache.stop();
    } finally {
      await store.close();
    }
  });

  it('keeps no decoded object of a replaced or deleted version, only its JSON for replays', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    try {
      // A label-filtered live watcher reads the versions before and after each change.
      const live = record(cache, { sinceRevision: 0, filter: (o) => o.metadata?.labels?.v !== 'x' });
      const r1 = await putPod(store, pod('ns', 'p1', { v: '1' }));
      await putPod(store, pod('ns', 'p2', { v: '1' }));
      await caughtUp(cache, r1 + 1);
      const refs = [
        new WeakRef(cache.get({ namespace: 'ns', name: 'p1' })!),
        new WeakRef(cache.get({ namespace: 'ns', name: 'p2' })!),
      ];
      await putPod(store, pod('ns', 'p1', { v: '2' }));
      const r4 = await deletePod(store, 'ns', 'p2');
      await caughtUp(cache, r4);
      await received(live, 4);
      assert.deepEqual(
        live.events.map((e) => e.type),
        ['ADDED', 'ADDED', 'MODIFIED', 'DELETED'],
      );
      live.events.length = 0;
      await collectGarbage();
      assert.deepEqual(
        refs.map((r) => r.deref() === undefined),
        [true, true],
        'the first versions of p1 and p2 are in the history as JSON only',
      );
      // ...and a filtered replay from r1 still reads them: p1 v2, then p2's deletion.
      const replay = record(cache, { sinceRevision: r1, filter: (o) => o.metadata?.labels?.v !== 'x' });
      await received(replay, 3);
      assert.deepEqual(
        replay.events.map((e) => [e.type, e.object.metadata?.name, e.object.metadata?.labels?.v]),
        [
          ['ADDED', 'p2', '1'],
          ['MODIFIED', 'p1', '2'],
          ['DELETED', 'p2', '1'],
        ],
      );
      assert.equal(replay.events[2]!.object.metadata?.resourceVersion, String(r4));
      live.watcher.stop();
      replay.watcher.stop();
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('with keepDecoded false keeps current objects as JSON too, and serves them the same', async () => {
    const store = new MemoryStore();
    const r0 = await putPod(store, pod('ns', 'listed', { v: '1' }));
    const { cache } = await setup(store, { keepDecoded: false });
    try {
      const selected = (o: KubeObject) => o.metadata?.labels?.v === '1';
      const live = record(cache, { sinceRevision: 0, filter: selected });
      const r1 = await putPod(store, pod('ns', 'p1', { v: '1' }));
      await caughtUp(cache, r1);
      await received(live, 2);
      const refs = [
        cache.get({ namespace: 'ns', name: 'listed' })!,
        cache.get({ namespace: 'ns', name: 'p1' })!,
      ].map((o) => new WeakRef(o));
      assert.deepEqual(
        refs.map((r) => r.deref()?.metadata?.resourceVersion),
        [String(r0), String(r1)],
      );
      live.events.length = 0;
      await collectGarbage();
      assert.deepEqual(
        refs.map((r) => r.deref() === undefined),
        [true, true],
        'no decoded current object is kept',
      );
      // Reads decode again: get, list with a filter, and a selector transition on a watch.
      assert.equal(cache.get({ namespace: 'ns', name: 'p1' })?.metadata?.labels?.v, '1');
      assert.deepEqual(
        cache.list({ filter: selected }).items.map((o) => o.metadata?.name),
        ['listed', 'p1'],
      );
      const r2 = await putPod(store, pod('ns', 'p1', { v: '2' }));
      await received(live, 1);
      assert.deepEqual(
        [
          live.events[0]!.type,
          live.events[0]!.object.metadata?.labels?.v,
          live.events[0]!.object.metadata?.resourceVersion,
        ],
        ['DELETED', '1', String(r2)],
      );
      live.watcher.stop();
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('keeps objects decoded without managedFields; watchers get them all the same, DELETED too', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    try {
      const managed = (v: string): KubeObject => {
        const p = pod('ns', 'p1', { v });
        p.metadata!.managedFields = [
          { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1' },
        ];
        return p;
      };
      const live = record(cache, { sinceRevision: 0 });
      const r1 = await putPod(store, managed('1'));
      await caughtUp(cache, r1);
      assert.equal(cache.get({ namespace: 'ns', name: 'p1' })?.metadata?.managedFields, undefined);
      assert.equal(cache.get({ namespace: 'ns', name: 'p1' })?.metadata?.labels?.v, '1');
      const r2 = await deletePod(store, 'ns', 'p1');
      await received(live, 2);
      const sent = live.events.map((e) => JSON.parse(e.line()) as { type: string; object: KubeObject });
      assert.deepEqual(
        sent.map((e) => [
          e.type,
          e.object.metadata?.resourceVersion,
          e.object.metadata?.managedFields?.[0]?.manager,
        ]),
        [
          ['ADDED', String(r1), 'm'],
          ['DELETED', String(r2), 'm'],
        ],
      );
      live.watcher.stop();
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('keeps no event of a replay or of initial events on the cache once sent', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    try {
      const r1 = await putPod(store, pod('ns', 'p1', { v: '1' }));
      const r2 = await putPod(store, pod('ns', 'p1', { v: '2' }));
      await caughtUp(cache, r2);
      // A replay from r1 reaches the change to the current version; a watch from 0 starts with it.
      const replay = record(cache, { sinceRevision: r1 });
      const initial = record(cache, { sinceRevision: 0 });
      await received(replay, 1);
      await received(initial, 1);
      const sent = [replay.events[0]!, initial.events[0]!];
      assert.deepEqual(
        sent.map((e) => [e.type, e.line().length > 0]),
        [
          ['MODIFIED', true],
          ['ADDED', true],
        ],
      );
      const refs = sent.map((e) => new WeakRef(e));
      replay.events.length = 0;
      initial.events.length = 0;
      sent.length = 0;
      await collectGarbage();
      assert.deepEqual(
        refs.map((r) => r.deref() === undefined),
        [true, true],
        'the events (and their encoded lines) went with the watchers',
      );
      replay.watcher.stop();
      initial.watcher.stop();
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('replays a version a newer one replaced with its own JSON, encoded again', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    try {
      const r1 = await putPod(store, pod('ns', 'p1', { v: '1' }));
      // A live watcher has the first version's line made (and memoized) as it is sent.
      const live = record(cache, { sinceRevision: r1 });
      const r2 = await putPod(store, pod('ns', 'p1', { v: '2' }));
      await received(live, 1);
      const first = live.events[0]!.line();
      const r3 = await putPod(store, pod('ns', 'p1', { v: '3' }));
      await caughtUp(cache, r3);
      // v2 is history now, its encodings released; a replay from r1 gets v2, then v3.
      const replay = record(cache, { sinceRevision: r1 });
      await received(replay, 2);
      const lines = replay.events.map((e) => JSON.parse(e.line()) as { type: string; object: KubeObject });
      assert.deepEqual(
        lines.map((l) => [l.type, l.object.metadata?.labels?.v, l.object.metadata?.resourceVersion]),
        [
          ['MODIFIED', '2', String(r2)],
          ['MODIFIED', '3', String(r3)],
        ],
      );
      assert.equal(first, replay.events[0]!.line(), 'the same line as the live watcher sent');
      live.watcher.stop();
      replay.watcher.stop();
    } finally {
      cache.stop();
      await store.close();
    }
  });

  it('answers a resourceVersion older than the buffer with one 410 Expired ERROR', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store, { capacity: 3 });
    const revs: number[] = [];
    for (let i = 0; i < 6; i++) revs.push(await putPod(store, pod('ns', `p${i}`)));
    await caughtUp(cache, revs[5]!);
    // The buffer holds the last 3 changes: resuming from the 3rd-last-but-one works ...
    const ok = record(cache, { sinceRevision: revs[2] });
    await received(ok, 3);
    assert.deepEqual(
      ok.summary(),
      revs.slice(3).map((r, i) => `ADDED ns/p${i + 3}@${r}`),
    );
    // ... one change earlier does not.
    const old = record(cache, { sinceRevision: revs[1] });
    await closed(old);
    assert.equal(old.closed, 'expired');
    assert.equal(old.events.length, 1);
    const status = old.events[0]!.object as unknown as Status;
    assert.equal(old.events[0]!.type, 'ERROR');
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, 410);
    assert.equal(status.reason, 'Expired');
    assert.equal(status.message, `too old resource version: ${revs[1]} (${revs[2]})`);
    assert.equal(cache.metrics.watchersExpired, 1);
    assert.equal(cache.metrics.watchers, 1);
    cache.stop();
  });

  it('accepts a resourceVersion newer than the cache and sends only later changes', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    await putPod(store, pod('ns', 'p1'));
    const future = (await store.currentRevision()) + 2;
    const rec = record(cache, { sinceRevision: future });
    await putPod(store, pod('ns', 'p2'));
    await putPod(store, pod('ns', 'p3'));
    const r = await putPod(store, pod('ns', 'p4'));
    await received(rec, 1);
    assert.deepEqual(rec.summary(), [`ADDED ns/p4@${r}`]);
    cache.stop();
  });

  it('turns selector transitions into ADDED and DELETED events', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    const web = (o: KubeObject) => o.metadata?.labels?.app === 'web';
    const rec = record(cache, { sinceRevision: 0, filter: web });
    await putPod(store, pod('ns', 'p', { app: 'db' }));
    const r2 = await putPod(store, pod('ns', 'p', { app: 'web' }));
    const r3 = await putPod(store, pod('ns', 'p', { app: 'web' }, { image: 'v2' }));
    const r4 = await putPod(store, pod('ns', 'p', { app: 'db' }, { image: 'v2' }));
    const r5 = await deletePod(store, 'ns', 'p');
    await caughtUp(cache, r5);
    assert.deepEqual(rec.summary(), [`ADDED ns/p@${r2}`, `MODIFIED ns/p@${r3}`, `DELETED ns/p@${r4}`]);
    // The DELETED object is the last state that matched, at the revision of the change.
    assert.equal(rec.events[2]!.object.metadata?.labels?.app, 'web');
    const all = record(cache, { sinceRevision: r2 - 1, filter: web });
    await received(all, 3);
    assert.deepEqual(all.summary(), rec.summary());
    cache.stop();
  });

  it('sends bookmarks about every minute and before the deadline, only when asked', async () => {
    const store = new MemoryStore();
    const { cache, clock } = await setup(store, { bookmarkIntervalMs: 60_000 });
    const none = () => false;
    const withBookmarks = record(cache, { sinceRevision: 0, filter: none, allowBookmarks: true });
    const without = record(cache, { sinceRevision: 0, filter: none });
    const short = record(cache, { sinceRevision: 0, filter: none, allowBookmarks: true, timeoutMs: 10_000 });
    await waitFor(() => withBookmarks.watcher.state === 'live' && short.watcher.state === 'live', 'live');
    await putPod(store, pod('ns', 'a'));
    const r2 = await putPod(store, pod('ns', 'b'));
    await caughtUp(cache, r2);
    assert.equal(withBookmarks.events.length, 0);
    await clock.advance(8_000);
    assert.deepEqual(short.summary(), [`BOOKMARK @${r2}`]);
    assert.equal(withBookmarks.events.length, 0);
    await clock.advance(52_000);
    assert.deepEqual(withBookmarks.summary(), [`BOOKMARK @${r2}`]);
    assert.deepEqual(withBookmarks.events[0]!.object, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { resourceVersion: String(r2) },
    });
    // Nothing new: the next tick has nothing to tell.
    await clock.advance(60_000);
    assert.equal(withBookmarks.events.length, 1);
    const r3 = await putPod(store, pod('ns', 'c'));
    await caughtUp(cache, r3);
    await clock.advance(60_000);
    assert.deepEqual(withBookmarks.summary(), [`BOOKMARK @${r2}`, `BOOKMARK @${r3}`]);
    assert.equal(without.events.length, 0);
    assert.equal(short.events.length, 1, 'no bookmarks past the deadline');
    assert.equal(cache.metrics.bookmarksSent, 3);
    cache.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('ends the initial events of sendInitialEvents with an annotated bookmark', async () => {
    const store = new MemoryStore();
    await putPod(store, pod('ns', 'a'));
    const r = await putPod(store, pod('ns', 'b'));
    const { cache } = await setup(store);
    for (const sinceRevision of [undefined, 0, r]) {
      const rec = record(cache, { sinceRevision, sendInitialEvents: true, allowBookmarks: true });
      await received(rec, 3);
      assert.deepEqual(rec.summary(), ['ADDED ns/a@2', `ADDED ns/b@${r}`, `BOOKMARK @${r}`]);
      assert.equal(rec.events[2]!.object.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION], 'true');
    }
    const noState = record(cache, { sinceRevision: 0, sendInitialEvents: false });
    const r3 = await putPod(store, pod('ns', 'c'));
    await received(noState, 1);
    assert.deepEqual(noState.summary(), [`ADDED ns/c@${r3}`]);
    cache.stop();
  });

  it('gives up waiting for a resourceVersion the cache does not reach with 504', async () => {
    const store = new MemoryStore();
    const { cache, clock } = await setup(store);
    const rec = record(cache, { sinceRevision: 100, sendInitialEvents: true, allowBookmarks: true });
    await waitFor(() => clock.pendingTimers > 0, 'freshness timer');
    await clock.advance(3_000);
    await closed(rec);
    assert.equal(rec.closed, 'error');
    const status = rec.events[0]!.object as unknown as Status;
    assert.equal(status.code, 504);
    assert.equal(status.reason, 'Timeout');
    assert.equal(status.message, `Timeout: Too large resource version: 100, current: ${cache.revision}`);
    assert.deepEqual(status.details?.causes, [
      { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
    ]);
    // A wait that is satisfied in time resolves.
    const target = cache.revision + 1;
    const fresh = cache.waitUntilFresh(target);
    await putPod(store, pod('ns', 'x'));
    await fresh;
    cache.stop();
  });

  it('closes a slow watcher while a fast one keeps receiving', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store, { maxPendingPerWatcher: 5 });
    const fast = record(cache, { sinceRevision: 0 });
    const slow = record(cache, { sinceRevision: 0, onEvent: () => false });
    const paused = record(cache, { sinceRevision: 0, onEvent: () => false });
    await waitFor(() => fast.watcher.state === 'live' && slow.watcher.state === 'live', 'live');
    // `paused` takes one event, then pauses; it resumes before falling too far behind.
    let last = 0;
    for (let i = 0; i < 4; i++) last = await putPod(store, pod('ns', `p${i}`));
    await caughtUp(cache, last);
    assert.equal(paused.watcher.pending, 3);
    paused.watcher.resume();
    assert.equal(paused.events.length, 2, 'each delivery may pause it again');
    while (paused.watcher.pending > 0) paused.watcher.resume();
    for (let i = 4; i < 20; i++) last = await putPod(store, pod('ns', `p${i}`));
    await caughtUp(cache, last);
    assert.equal(slow.closed, 'too slow');
    assert.equal(slow.events.length, 1);
    assert.equal(paused.closed, 'too slow');
    assert.equal(fast.closed, undefined);
    assert.equal(fast.events.length, 20);
    assert.deepEqual(
      fast.events.map((e) => e.object.metadata?.name),
      Array.from({ length: 20 }, (_, i) => `p${i}`),
    );
    assert.equal(cache.metrics.watchersClosedSlow, 2);
    assert.equal(cache.metrics.watchers, 1);
    cache.stop();
  });

  it('holds back a bookmark that falls due during replay until the replay is done', async () => {
    const store = new MemoryStore();
    await putPod(store, pod('ns', 'a'));
    await putPod(store, pod('ns', 'b'));
    const r3 = await putPod(store, pod('other', 'c'));
    const { cache, clock } = await setup(store);
    let pauseOnce = true;
    const rec = record(cache, {
      sinceRevision: 0,
      namespace: 'ns',
      allowBookmarks: true,
      onEvent: () => {
        if (!pauseOnce) return;
        pauseOnce = false;
        return false;
      },
    });
    await received(rec, 1);
    assert.equal(rec.watcher.state, 'replaying');
    await clock.advance(60_000);
    assert.equal(rec.events.length, 1);
    rec.watcher.resume();
    assert.equal(rec.watcher.state, 'live');
    assert.deepEqual(rec.summary(), ['ADDED ns/a@2', 'ADDED ns/b@3', `BOOKMARK @${r3}`]);
    cache.stop();
  });

  it('closes a watcher whose replay falls too far behind the live stream', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 5; i++) await putPod(store, pod('ns', `old${i}`));
    const { cache } = await setup(store, { maxPendingPerWatcher: 2 });
    const rec = record(cache, { sinceRevision: 0, onEvent: () => false });
    await received(rec, 1);
    let last = 0;
    for (let i = 0; i < 2; i++) last = await putPod(store, pod('ns', `new${i}`));
    await caughtUp(cache, last);
    assert.equal(rec.closed, undefined, 'owing 2 changes is within the limit');
    last = await putPod(store, pod('ns', 'new2'));
    await caughtUp(cache, last);
    assert.equal(rec.closed, 'too slow');
    assert.equal(cache.metrics.watchersClosedSlow, 1);
    cache.stop();
  });

  it('closes a watcher whose handler throws, and no other', async () => {
    const errors: unknown[] = [];
    const store = new MemoryStore();
    const { cache } = await setup(store, { onError: (e) => errors.push(e) });
    const bad = record(cache, {
      sinceRevision: 0,
      onEvent: () => {
        throw new Error('boom');
      },
    });
    const good = record(cache, { sinceRevision: 0 });
    const r = await putPod(store, pod('ns', 'a'));
    await caughtUp(cache, r);
    assert.equal(bad.closed, 'handler failed');
    assert.equal(good.events.length, 1);
    assert.equal(errors.length, 1);
    cache.stop();
  });

  it('reconnects after a store watch failure without disturbing its watchers', async () => {
    const store = new FlakyStore(new MemoryStore());
    const { cache, clock } = await setup(store);
    const rec = record(cache, { sinceRevision: 0 });
    const r1 = await putPod(store, pod('ns', 'a'));
    await caughtUp(cache, r1);
    store.breakWatches(new StorageError('Unavailable', 'etcd went away'));
    const r2 = await putPod(store, pod('ns', 'b'));
    const r3 = await putPod(store, pod('ns', 'a', { x: 'y' }));
    assert.equal(cache.revision, r1);
    await clock.advance(1_000);
    await caughtUp(cache, r3);
    assert.deepEqual(rec.summary(), [`ADDED ns/a@${r1}`, `ADDED ns/b@${r2}`, `MODIFIED ns/a@${r3}`]);
    assert.equal(rec.closed, undefined);
    assert.equal(cache.metrics.storeWatchErrors, 1);
    assert.equal(cache.metrics.resyncs, 0);
    assert.equal(store.watchCalls, 2);
    cache.stop();
  });

  it('relists after compaction and ends the watchers it cannot continue with 410', async () => {
    const store = new FlakyStore(new MemoryStore());
    const { cache, clock } = await setup(store);
    await putPod(store, pod('ns', 'a'));
    const r1 = await putPod(store, pod('ns', 'b'));
    await caughtUp(cache, r1);
    const live = record(cache, { sinceRevision: 0 });
    const future = record(cache, { sinceRevision: r1 + 100 });
    await received(live, 2);
    store.breakWatches(new StorageError('Unavailable', 'etcd went away'));
    await deletePod(store, 'ns', 'a');
    await putPod(store, pod('ns', 'c'));
    const r4 = await putPod(store, pod('ns', 'd'));
    await store.compact(r4);
    await clock.advance(1_000);
    await waitFor(() => cache.metrics.resyncs === 1 && cache.ready, 'resync');
    assert.equal(cache.revision, r4);
    await closed(live);
    assert.equal(live.closed, 'expired');
    assert.deepEqual(live.summary().slice(-1), ['ERROR 410']);
    assert.equal(
      (live.events.at(-1)!.object as unknown as Status).message,
      `too old resource version: ${r1} (${r4})`,
    );
    assert.equal(future.closed, undefined, 'a watcher past the relist is continued');
    assert.deepEqual(
      cache.list().items.map((o) => o.metadata?.name),
      ['b', 'c', 'd'],
    );
    // New watches are served from the new state, and live events flow again.
    const fresh = record(cache, { sinceRevision: 0 });
    await received(fresh, 3);
    const r5 = await putPod(store, pod('ns', 'e'));
    await received(fresh, 4);
    assert.deepEqual(fresh.summary().at(-1), `ADDED ns/e@${r5}`);
    assert.equal(cache.metrics.storeWatchErrors, 2);
    cache.stop();
  });

  it('stops with its store: watchers are closed', async () => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    const rec = record(cache, { sinceRevision: 0 });
    await waitFor(() => rec.watcher.state === 'live', 'live');
    await store.close();
    await closed(rec);
    assert.equal(rec.closed, 'cache stopped');
    assert.equal(cache.ready, false);
    const late = record(cache, { sinceRevision: 0 });
    await closed(late);
    assert.equal((late.events[0]!.object as unknown as Status).code, 503);
  });

  it('lists and gets from the cache', async () => {
    const store = new MemoryStore();
    const cache = new WatchCache({ store, prefix: '/registry/pods/' });
    assert.throws(() => cache.list(), { code: 503 });
    await putPod(store, pod('b', 'x', { app: 'web' }));
    await putPod(store, pod('a', 'y', { app: 'web' }));
    const r = await putPod(store, pod('a', 'z'));
    await cache.start();
    assert.deepEqual(
      cache.list().items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`),
      ['a/y', 'a/z', 'b/x'],
    );
    const web = cache.list({ filter: (o) => o.metadata?.labels?.app === 'web', namespace: 'a' });
    assert.deepEqual(
      web.items.map((o) => o.metadata?.name),
      ['y'],
    );
    assert.equal(web.revision, r);
    assert.equal(cache.get({ namespace: 'a', name: 'z' })?.metadata?.resourceVersion, String(r));
    assert.equal(cache.get({ namespace: 'a', name: 'nope' }), undefined);
    cache.stop();
  });

  it('rejects bad config and a bad resourceVersion', () => {
    const store = new MemoryStore();
    assert.throws(() => new WatchCache({ store, prefix: '/pods/' }), /prefix/);
    assert.throws(() => new WatchCache({ store, prefix: '/registry/pods/', capacity: 0 }), /capacity/);
    const cache = new WatchCache({ store, prefix: '/registry/pods/' });
    assert.throws(() => cache.watch({ sinceRevision: -1, onEvent: () => {}, onClose: () => {} }), {
      code: 400,
    });
  });

  it('serves 1,000 watchers of one resource, each receiving every event in order', async (t) => {
    const store = new MemoryStore();
    const { cache } = await setup(store);
    const WATCHERS = 1000;
    const EVENTS = 200;
    const seen: number[][] = Array.from({ length: WATCHERS }, () => []);
    let lastArrival = 0;
    const watchers = Array.from({ length: WATCHERS }, (_, i) =>
      cache.watch({
        sinceRevision: 0,
        onEvent: (ev) => {
          ev.line(); // what the HTTP layer writes: encoded once, shared
          seen[i]!.push(Number(ev.object.metadata!.resourceVersion));
          if (i === WATCHERS - 1) lastArrival = performance.now();
        },
        onClose: () => assert.fail('no watcher should close'),
      }),
    );
    await waitFor(() => watchers.every((w) => w.state === 'live'), 'all live');
    const latencies: number[] = [];
    const revisions: number[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const start = performance.now();
      const rev = await putPod(store, pod(`ns${i % 10}`, `p${i % 50}`, { i: String(i) }));
      revisions.push(rev);
      await waitFor(() => seen[WATCHERS - 1]!.length === i + 1, `event ${i}`);
      latencies.push(lastArrival - start);
    }
    for (const s of seen) assert.deepEqual(s, revisions);
    assert.equal(cache.metrics.eventsDispatched, WATCHERS * EVENTS);
    latencies.sort((a, b) => a - b);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    t.diagnostic(
      `${WATCHERS} watchers x ${EVENTS} events: write-to-last-watcher latency p50 ${p(0.5).toFixed(2)} ms, ` +
        `p99 ${p(0.99).toFixed(2)} ms, max ${p(1).toFixed(2)} ms`,
    );
    cache.stop();
  });
});
