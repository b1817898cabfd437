/**
 * The storage conformance suite: one set of behaviours (etcd v3 semantics, see store.ts)
 * that every backend must show, run unchanged against each by its `*.test.ts`:
 *
 *   runStoreConformance('sqlite', () => SqliteStore.open({ path: join(tmp(), 'state.db') }));
 *
 * Every test gets a fresh store from `makeStore` and closes it afterwards. Tests never
 * assume absolute revisions (a shared etcd has history of its own); they reason about
 * revisions relative to `currentRevision()`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorageError, type StorageErrorCode } from './errors.js';
import type { KeyValue, Store, WatchEvent } from './store.js';

/** Builds a fresh, empty-keyspace store for one test. */
export type StoreFactory = () => Promise<Store>;

const json = (o: unknown): string => JSON.stringify(o);

/** Runs `fn` with a fresh store and always closes it. */
async function withStore(make: StoreFactory, fn: (s: Store) => Promise<void>): Promise<void> {
  const store = await make();
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

/** Asserts that `p` rejects with a StorageError of `code`. */
async function rejectsWith(p: Promise<unknown>, code: StorageErrorCode): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isStorageError(err), `expected StorageError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    return true;
  });
}

/** Collects watch events; `waitFor(n)` resolves once n events arrived, or fails at the deadline. */
class EventSink {
  readonly events: WatchEvent[] = [];
  error: Error | undefined;
  private waiters: (() => void)[] = [];
  readonly handler = {
    onEvents: (evs: WatchEvent[]): void => {
      this.events.push(...evs);
      this.wake();
    },
    onError: (err: Error): void => {
      this.error = err;
      this.wake();
    },
  };

  async waitFor(n: number, deadlineMs = 10_000): Promise<WatchEvent[]> {
    const until = Date.now() + deadlineMs;
    while (this.events.length < n && !this.error) {
      const left = until - Date.now();
      if (left <= 0) assert.fail(`timed out waiting for ${n} watch events; have ${this.events.length}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    if (this.error) throw this.error;
    return this.events;
  }

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }
}

/** Reads every page of a list at one snapshot, applying `between` after each page. */
async function listAllPages(
  store: Store,
  prefix: string,
  limit: number,
  between: (page: number) => Promise<void> = async () => {},
): Promise<{ items: KeyValue[]; revisions: number[] }> {
  const items: KeyValue[] = [];
  const revisions: number[] = [];
  let token: string | undefined;
  let page = 0;
  do {
    const res = await store.list(prefix, token ? { limit, continue: token } : { limit });
    assert.ok(res.items.length <= limit, `page of ${res.items.length} exceeds limit ${limit}`);
    items.push(...res.items);
    revisions.push(res.revision);
    token = res.continue;
    await between(page++);
  } while (token);
  return { items, revisions };
}

/** Registers the conformance tests for one backend under `describe(name)`. */
export function runStoreConformance(name: string, makeStore: StoreFactory): void {
  const run = (fn: (s: Store) => Promise<void>) => () => withStore(makeStore, fn);

  describe(`Store conformance: ${name}`, () => {
    it(
      'create, get, update and delete advance the revision by exactly one each',
      run(async (s) => {
        const r0 = await s.currentRevision();
        const created = await s.create('/registry/pods/default/a', json({ n: 1 }));
        assert.deepEqual(created, {
          key: '/registry/pods/default/a',
          value: json({ n: 1 }),
          createRevision: r0 + 1,
          modRevision: r0 + 1,
        });
        assert.deepEqual(await s.get('/registry/pods/default/a'), created);
        const updated = await s.update('/registry/pods/default/a', json({ n: 2 }), r0 + 1);
        assert.equal(updated.modRevision, r0 + 2);
        assert.equal(updated.createRevision, r0 + 1);
        const { deleted, revision } = await s.delete('/registry/pods/default/a', r0 + 2);
        assert.deepEqual(deleted, updated);
        assert.equal(revision, r0 + 3);
        assert.equal(await s.currentRevision(), r0 + 3);
        assert.equal(await s.get('/registry/pods/default/a'), undefined);
        // A re-created key starts a new life: a new createRevision.
        const again = await s.create('/registry/pods/default/a', json({ n: 3 }));
        assert.equal(again.createRevision, r0 + 4);
      }),
    );

    it(
      'create of an existing key fails with KeyExists and writes nothing',
      run(async (s) => {
        await s.create('/registry/configmaps/default/x', json({ v: 1 }));
        const rev = await s.currentRevision();
        await rejectsWith(s.create('/registry/configmaps/default/x', json({ v: 2 })), 'KeyExists');
        assert.equal(await s.currentRevision(), rev);
        assert.equal((await s.get('/registry/configmaps/default/x'))?.value, json({ v: 1 }));
      }),
    );

    it(
      'update with a stale revision fails with Conflict carrying the current value; update of a missing key fails with KeyNotFound',
      run(async (s) => {
        const a = await s.create('/registry/configmaps/default/x', json({ v: 1 }));
        const b = await s.update('/registry/configmaps/default/x', json({ v: 2 }), a.modRevision);
        const rev = await s.currentRevision();
        await assert.rejects(
          s.update('/registry/configmaps/default/x', json({ v: 3 }), a.modRevision),
          (err) => {
            assert.ok(isStorageError(err, 'Conflict'));
            assert.deepEqual(err.details.current, b);
            return true;
          },
        );
        await rejectsWith(s.update('/registry/configmaps/default/missing', json({}), 5), 'KeyNotFound');
        assert.equal(await s.currentRevision(), rev);
        assert.equal((await s.get('/registry/configmaps/default/x'))?.value, json({ v: 2 }));
      }),
    );

    it(
      'deleting a missing key fails with KeyNotFound; a stale guarded delete fails with Conflict; neither writes',
      run(async (s) => {
        const rev0 = await s.currentRevision();
        await rejectsWith(s.delete('/registry/pods/default/never'), 'KeyNotFound');
        await rejectsWith(s.delete('/registry/pods/default/never', 3), 'KeyNotFound');
        assert.equal(await s.currentRevision(), rev0);
        const a = await s.create('/registry/pods/default/p', json({}));
        await s.update('/registry/pods/default/p', json({ x: 1 }), a.modRevision);
        const rev1 = await s.currentRevision();
        await rejectsWith(s.delete('/registry/pods/default/p', a.modRevision), 'Conflict');
        assert.equal(await s.currentRevision(), rev1);
        assert.ok(await s.get('/registry/pods/default/p'));
        await s.delete('/registry/pods/default/p');
        await rejectsWith(s.delete('/registry/pods/default/p'), 'KeyNotFound');
      }),
    );

    describe('bad input is rejected with a typed error and writes nothing', () => {
      const cases: { what: string; code: StorageErrorCode; call: (s: Store) => Promise<unknown> }[] = [
        {
          what: 'key outside /registry/',
          code: 'InvalidKey',
          call: (s) => s.create('/pods/default/a', json({})),
        },
        { what: 'empty key', code: 'InvalidKey', call: (s) => s.create('', json({})) },
        { what: 'bare /registry/ key', code: 'InvalidKey', call: (s) => s.create('/registry/', json({})) },
        { what: 'key with NUL', code: 'InvalidKey', call: (s) => s.create('/registry/pods/a\0b', json({})) },
        {
          what: 'non-JSON value',
          code: 'InvalidValue',
          call: (s) => s.create('/registry/pods/default/a', '{not json'),
        },
        {
          what: 'value over 1.5 MiB',
          code: 'InvalidValue',
          call: (s) => s.create('/registry/pods/default/a', json({ d: 'x'.repeat(1.5 * 1024 * 1024) })),
        },
        {
          what: 'lone surrogate in a value',
          code: 'InvalidValue',
          call: (s) => s.create('/registry/pods/default/a', '"\uD800"'),
        },
        {
          what: 'lone surrogate in a key',
          code: 'InvalidKey',
          call: (s) => s.create('/registry/pods/default/a\uDC00', json({})),
        },
        {
          what: 'key over 1 KiB',
          code: 'InvalidKey',
          call: (s) => s.create(`/registry/pods/default/${'k'.repeat(1100)}`, json({})),
        },
        {
          what: 'non-string value',
          code: 'InvalidValue',
          call: (s) => s.create('/registry/pods/default/a', { a: 1 } as unknown as string),
        },
        {
          what: 'non-numeric expected revision',
          code: 'InvalidArgument',
          call: (s) => s.update('/registry/pods/default/seed', json({}), 'abc' as unknown as number),
        },
        {
          what: 'NaN expected revision',
          code: 'InvalidArgument',
          call: (s) => s.update('/registry/pods/default/seed', json({}), Number.NaN),
        },
        {
          what: 'negative expected revision',
          code: 'InvalidArgument',
          call: (s) => s.delete('/registry/pods/default/seed', -1),
        },
        {
          what: 'fractional expected revision',
          code: 'InvalidArgument',
          call: (s) => s.update('/registry/pods/default/seed', json({}), 1.5),
        },
        {
          what: 'list prefix without trailing slash',
          code: 'InvalidKey',
          call: (s) => s.list('/registry/pods'),
        },
        { what: 'list prefix outside /registry/', code: 'InvalidKey', call: (s) => s.list('/other/') },
        {
          what: 'garbage continue token',
          code: 'InvalidArgument',
          call: (s) => s.list('/registry/pods/', { limit: 1, continue: 'garbage!' }),
        },
        {
          what: 'negative limit',
          code: 'InvalidArgument',
          call: (s) => s.list('/registry/pods/', { limit: -1 }),
        },
        {
          what: 'future read revision',
          code: 'FutureRevision',
          call: async (s) =>
            s.get('/registry/pods/default/seed', { revision: (await s.currentRevision()) + 100 }),
        },
      ];
      for (const c of cases) {
        it(
          c.what,
          run(async (s) => {
            const seed = await s.create('/registry/pods/default/seed', json({ seed: true }));
            const rev = await s.currentRevision();
            await rejectsWith(c.call(s), c.code);
            assert.equal(await s.currentRevision(), rev);
            assert.deepEqual((await s.list('/registry/')).items, [seed]);
          }),
        );
      }
    });

    it(
      'concurrent updaters of one revision: exactly one wins, the rest get Conflict',
      run(async (s) => {
        const a = await s.create('/registry/leases/kube-system/lock', json({ holder: '' }));
        const results = await Promise.allSettled(
          Array.from({ length: 32 }, (_, i) =>
            s.update('/registry/leases/kube-system/lock', json({ holder: `w${i}` }), a.modRevision),
          ),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected');
        assert.equal(won.length, 1);
        for (const r of lost) assert.ok(isStorageError(r.reason, 'Conflict'), String(r.reason));
        const final = await s.get('/registry/leases/kube-system/lock');
        assert.deepEqual(final, (won[0] as PromiseFulfilledResult<KeyValue>).value);
      }),
    );

    it(
      'concurrent read-modify-write loops with retry on Conflict lose no increment',
      run(async (s) => {
        const key = '/registry/configmaps/default/counter';
        await s.create(key, json({ n: 0 }));
        const workers = 8;
        const perWorker = 10;
        await Promise.all(
          Array.from({ length: workers }, async () => {
            for (let i = 0; i < perWorker; i++) {
              for (;;) {
                const cur = (await s.get(key))!;
                try {
                  await s.update(
                    key,
                    json({ n: (JSON.parse(cur.value) as { n: number }).n + 1 }),
                    cur.modRevision,
                  );
                  break;
                } catch (err) {
                  if (!isStorageError(err, 'Conflict')) throw err;
                }
              }
            }
          }),
        );
        assert.deepEqual(JSON.parse((await s.get(key))!.value), { n: workers * perWorker });
      }),
    );

    it(
      'get and list at a past revision see the state of that revision',
      run(async (s) => {
        const a1 = await s.create('/registry/pods/ns1/a', json({ v: 'a1' }));
        const b1 = await s.create('/registry/pods/ns1/b', json({ v: 'b1' }));
        const r1 = await s.currentRevision();
        await s.update('/registry/pods/ns1/a', json({ v: 'a2' }), a1.modRevision);
        await s.delete('/registry/pods/ns1/b');
        const c1 = await s.create('/registry/pods/ns1/c', json({ v: 'c1' }));
        const past = await s.list('/registry/pods/ns1/', { revision: r1 });
        assert.equal(past.revision, r1);
        assert.deepEqual(past.items, [a1, b1]);
        assert.deepEqual(await s.get('/registry/pods/ns1/b', { revision: r1 }), b1);
        assert.equal(await s.get('/registry/pods/ns1/c', { revision: r1 }), undefined);
        const now = await s.list('/registry/pods/ns1/');
        assert.deepEqual(
          now.items.map((kv) => kv.value),
          [json({ v: 'a2' }), c1.value],
        );
        assert.equal(now.revision, await s.currentRevision());
      }),
    );

    it(
      'lists are ordered by key and bounded by the prefix',
      run(async (s) => {
        for (const k of [
          '/registry/pods/default-2/z',
          '/registry/pods/default/b',
          '/registry/pods/default/a',
        ]) {
          await s.create(k, json({ k }));
        }
        await s.create('/registry/services/default/a', json({}));
        const res = await s.list('/registry/pods/default/');
        assert.deepEqual(
          res.items.map((kv) => kv.key),
          ['/registry/pods/default/a', '/registry/pods/default/b'],
        );
        const all = await s.list('/registry/pods/');
        assert.deepEqual(
          all.items.map((kv) => kv.key),
          ['/registry/pods/default-2/z', '/registry/pods/default/a', '/registry/pods/default/b'].sort(),
        );
      }),
    );

    it(
      'pagination reads one snapshot while writes continue',
      run(async (s) => {
        const key = (i: number) => `/registry/pods/default/p${String(i).padStart(3, '0')}`;
        for (let i = 0; i < 25; i++) await s.create(key(i), json({ i }));
        const snapshotRev = await s.currentRevision();
        const expected = (await s.list('/registry/pods/default/', { revision: snapshotRev })).items;
        let extra = 100;
        const { items, revisions } = await listAllPages(s, '/registry/pods/default/', 7, async (page) => {
          // Between pages: add keys before and after the cursor, update and delete some.
          await s.create(key(extra++), json({ late: true }));
          await s.create(`/registry/pods/default/a-late-${page}`, json({}));
          const victim = await s.get(key(20 - page));
          if (victim) await s.update(victim.key, json({ changed: true }), victim.modRevision);
          await s.delete(key(page * 3 + 1)).catch(() => {});
        });
        assert.deepEqual(items, expected);
        assert.ok(
          revisions.every((r) => r === snapshotRev),
          `pages read at ${revisions.join(',')}`,
        );
        assert.equal(revisions.length, 4);
      }),
    );

    it(
      'a watch from an old revision replays every later event in order, then goes on live',
      run(async (s) => {
        await s.create('/registry/pods/default/before', json({}));
        const since = await s.currentRevision();
        const a = await s.create('/registry/pods/default/a', json({ v: 1 }));
        await s.create('/registry/services/default/a', json({})); // other prefix: not seen
        const a2 = await s.update('/registry/pods/default/a', json({ v: 2 }), a.modRevision);
        await s.delete('/registry/pods/default/before');
        const sink = new EventSink();
        const w = await s.watch('/registry/pods/', since, sink.handler);
        try {
          await sink.waitFor(3);
          const b = await s.create('/registry/pods/other/b', json({ v: 'b' }));
          await s.delete('/registry/pods/default/a', a2.modRevision);
          const events = await sink.waitFor(5);
          assert.deepEqual(
            events.map((e) => [e.type, e.kv.key, e.kv.modRevision]),
            [
              ['PUT', '/registry/pods/default/a', since + 1],
              ['PUT', '/registry/pods/default/a', since + 3],
              ['DELETE', '/registry/pods/default/before', since + 4],
              ['PUT', '/registry/pods/other/b', b.modRevision],
              ['DELETE', '/registry/pods/default/a', since + 6],
            ],
          );
          assert.equal(events[0]!.prevKv, undefined);
          assert.deepEqual(events[1]!.prevKv, a);
          assert.equal(events[1]!.kv.value, json({ v: 2 }));
          assert.equal(events[2]!.prevKv?.key, '/registry/pods/default/before');
          assert.deepEqual(events[4]!.prevKv, a2);
          assert.equal(sink.events.length, 5);
        } finally {
          w.cancel();
        }
      }),
    );

    it(
      'a watch from revision 0 sees only later events; a cancelled watch sees nothing more',
      run(async (s) => {
        await s.create('/registry/pods/default/old', json({}));
        const sink = new EventSink();
        const w = await s.watch('/registry/pods/', 0, sink.handler);
        const n = await s.create('/registry/pods/default/new', json({}));
        const events = await sink.waitFor(1);
        assert.deepEqual(events[0]!.kv, n);
        w.cancel();
        w.cancel();
        await s.create('/registry/pods/default/after-cancel', json({}));
        // A sentinel watch sees the later write; by then the cancelled one would have too.
        const sentinel = new EventSink();
        const w2 = await s.watch('/registry/pods/', n.modRevision, sentinel.handler);
        await sentinel.waitFor(1);
        w2.cancel();
        assert.equal(sink.events.length, 1);
      }),
    );

    it(
      'a watch from a revision not reached yet sees only the writes after it',
      run(async (s) => {
        const now = await s.currentRevision();
        const sink = new EventSink();
        const w = await s.watch('/registry/pods/', now + 2, sink.handler);
        try {
          await s.create('/registry/pods/default/r1', json({}));
          await s.create('/registry/pods/default/r2', json({}));
          const r3 = await s.create('/registry/pods/default/r3', json({}));
          const events = await sink.waitFor(1);
          assert.deepEqual(
            events.map((e) => e.kv),
            [r3],
          );
        } finally {
          w.cancel();
        }
      }),
    );

    it(
      'many events under concurrent writers arrive in strictly increasing revision order',
      run(async (s) => {
        const since = await s.currentRevision();
        const sink = new EventSink();
        const w = await s.watch('/registry/pods/', since, sink.handler);
        try {
          await Promise.all(
            Array.from({ length: 50 }, (_, i) => s.create(`/registry/pods/default/c${i}`, json({ i }))),
          );
          const events = await sink.waitFor(50);
          const revs = events.map((e) => e.kv.modRevision);
          assert.deepEqual(
            revs,
            Array.from({ length: 50 }, (_, i) => since + 1 + i),
          );
        } finally {
          w.cancel();
        }
      }),
    );

    it(
      'compaction: reads and watches before it fail with Compacted, the state at and after it remains',
      run(async (s) => {
        const a = await s.create('/registry/pods/default/a', json({ v: 1 }));
        await s.create('/registry/pods/default/gone', json({}));
        const old = await s.currentRevision();
        await s.update('/registry/pods/default/a', json({ v: 2 }), a.modRevision);
        await s.delete('/registry/pods/default/gone');
        const keep = await s.create('/registry/pods/default/keep', json({}));
        const at = await s.currentRevision();
        await s.compact(at);
        assert.equal(await s.compactedRevision(), at);
        await s.compact(old); // older than the last compaction: no-op
        assert.equal(await s.compactedRevision(), at);

        await rejectsWith(s.list('/registry/pods/', { revision: old }), 'Compacted');
        await rejectsWith(s.get('/registry/pods/default/a', { revision: old }), 'Compacted');
        await rejectsWith(s.watch('/registry/pods/', old, new EventSink().handler), 'Compacted');
        // A watch needs the state at its start revision (each event carries its previous value).
        await rejectsWith(s.watch('/registry/pods/', at - 1, new EventSink().handler), 'Compacted');

        const now = await s.list('/registry/pods/default/', { revision: at });
        assert.deepEqual(
          now.items.map((kv) => [kv.key, kv.value]),
          [
            ['/registry/pods/default/a', json({ v: 2 })],
            ['/registry/pods/default/keep', keep.value],
          ],
        );
        assert.equal(await s.get('/registry/pods/default/gone'), undefined);
        // Watching from just before the compaction point still works: nothing it needs is gone.
        const sink = new EventSink();
        const w = await s.watch('/registry/pods/', at, sink.handler);
        await s.create('/registry/pods/default/later', json({}));
        await sink.waitFor(1);
        w.cancel();
        await rejectsWith(s.compact((await s.currentRevision()) + 10), 'FutureRevision');
      }),
    );

    it(
      'a continue token whose revision was compacted fails with Compacted',
      run(async (s) => {
        for (let i = 0; i < 4; i++) await s.create(`/registry/pods/default/p${i}`, json({ i }));
        const first = await s.list('/registry/pods/default/', { limit: 2 });
        assert.ok(first.continue);
        await s.create('/registry/pods/default/p9', json({}));
        await s.compact(await s.currentRevision());
        await rejectsWith(
          s.list('/registry/pods/default/', { limit: 2, continue: first.continue }),
          'Compacted',
        );
      }),
    );

    it(
      'values up to 1.5 MiB round-trip through write, read, list and watch',
      run(async (s) => {
        const size = 1.5 * 1024 * 1024;
        const value = json({ data: 'x'.repeat(size - json({ data: '' }).length) });
        assert.equal(Buffer.byteLength(value), size);
        const since = await s.currentRevision();
        const sink = new EventSink();
        const w = await s.watch('/registry/configmaps/', since, sink.handler);
        try {
          const kv = await s.create('/registry/configmaps/default/big', value);
          assert.equal((await s.get(kv.key))?.value, value);
          assert.equal((await s.list('/registry/configmaps/')).items[0]?.value, value);
          const [ev] = await sink.waitFor(1);
          assert.equal(ev!.kv.value, value);
          // Unicode survives too (keys and values are UTF-8 on disk).
          const text = json({ note: '생성할 Pod의 개수 ✓' });
          await s.update(kv.key, text, kv.modRevision);
          assert.equal((await s.get(kv.key))?.value, text);
        } finally {
          w.cancel();
        }
      }),
    );

    it(
      'after close every call fails with Closed, even with a watch open',
      run(async (s) => {
        const sink = new EventSink();
        await s.watch('/registry/pods/', 0, sink.handler);
        await s.close();
        await rejectsWith(s.get('/registry/pods/default/a'), 'Closed');
        await rejectsWith(s.create('/registry/pods/default/a', json({})), 'Closed');
        await s.close(); // idempotent
      }),
    );
  });
}
