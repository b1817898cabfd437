import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runStoreConformance } from './conformance.js';
import { isStorageError } from './errors.js';
import { SqliteStore } from './sqlite.js';
import type { WatchEvent } from './store.js';

const dirs: string[] = [];
/** A database path in a fresh temp dir (a subdirectory that does not exist yet, so open must create it). */
function tmpPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'k8ts-sqlite-'));
  dirs.push(dir);
  return join(dir, 'data', 'state.db');
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const json = (o: unknown): string => JSON.stringify(o);

/** Every row of the log, in revision order, read with a plain connection (the store must be closed). */
function logRows(path: string): { revision: number; key: string; deleted: number }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT revision, key, deleted FROM log ORDER BY revision').all() as {
      revision: number;
      key: string;
      deleted: number;
    }[];
  } finally {
    db.close();
  }
}

runStoreConformance('sqlite', () => SqliteStore.open({ path: tmpPath() }));

describe('SqliteStore', () => {
  it('reopening keeps data, revision, compact revision and history', async () => {
    const path = tmpPath();
    let s = await SqliteStore.open({ path });
    const a = await s.create('/registry/pods/default/a', json({ v: 1 }));
    const a2 = await s.update(a.key, json({ v: 2 }), a.modRevision);
    await s.create('/registry/pods/default/b', json({ v: 'b' }));
    await s.compact(a2.modRevision);
    const gone = await s.create('/registry/pods/default/gone', json({}));
    await s.delete(gone.key);
    const rev = await s.currentRevision();
    const before = await s.list('/registry/pods/', { revision: a2.modRevision });
    await s.close();

    s = await SqliteStore.open({ path });
    try {
      assert.equal(await s.currentRevision(), rev);
      assert.equal(await s.compactedRevision(), a2.modRevision);
      assert.deepEqual(await s.get(a.key), a2);
      assert.deepEqual(await s.list('/registry/pods/', { revision: a2.modRevision }), before);
      assert.equal(await s.get(gone.key), undefined);
      await assert.rejects(s.get(a.key, { revision: a.modRevision }), (e) => isStorageError(e, 'Compacted'));
      // The history after the compaction point replays with previous values.
      const events = await collect(s, '/registry/pods/', a2.modRevision, 3);
      assert.deepEqual(
        events.map((e) => [e.type, e.kv.key, e.kv.modRevision, e.prevKv?.modRevision]),
        [
          ['PUT', '/registry/pods/default/b', a2.modRevision + 1, undefined],
          ['PUT', gone.key, gone.modRevision, undefined],
          ['DELETE', gone.key, rev, gone.modRevision],
        ],
      );
      const next = await s.create('/registry/pods/default/c', json({}));
      assert.equal(next.modRevision, rev + 1);
    } finally {
      await s.close();
    }
  });

  it('the revision never goes backwards, even when compaction removed every row of the latest key', async () => {
    const path = tmpPath();
    let s = await SqliteStore.open({ path });
    const x = await s.create('/registry/pods/default/x', json({}));
    const { revision } = await s.delete(x.key);
    await s.compact(revision);
    await s.close();
    s = await SqliteStore.open({ path });
    try {
      assert.equal(await s.currentRevision(), revision);
      assert.equal(await s.compactedRevision(), revision);
      assert.equal((await s.create(x.key, json({}))).modRevision, revision + 1);
    } finally {
      await s.close();
    }
  });

  it('compaction deletes superseded versions and tombstones, keeping the log contiguous from the compaction point', async () => {
    const path = tmpPath();
    const s = await SqliteStore.open({ path, synchronous: 'NORMAL' });
    let kv = await s.create('/registry/leases/kube-system/l', json({ n: 0 }));
    // More versions than one compaction chunk, so the sweep runs in several transactions.
    for (let n = 1; n <= 2500; n++) kv = await s.update(kv.key, json({ n }), kv.modRevision);
    const dead = await s.create('/registry/pods/default/dead', json({}));
    await s.delete(dead.key);
    const kept = await s.create('/registry/pods/default/kept', json({}));
    const last = await s.update(kv.key, json({ n: 'last' }), kv.modRevision);
    const c = await s.currentRevision();
    await s.compact(c);
    assert.deepEqual(await s.get(kv.key), last);
    assert.deepEqual(await s.get(kept.key), kept);
    await s.close();
    // Left: the newest lease version (at c) and the one it replaced (the prevKv of the event
    // at c), and `kept`. The whole life of `dead` is gone.
    assert.deepEqual(
      logRows(path).map((r) => [r.revision, r.key]),
      [
        [kv.modRevision, kv.key],
        [kept.modRevision, kept.key],
        [last.modRevision, kv.key],
      ],
    );
  });

  it('a watch from a revision not reached yet sees only the events after it', async () => {
    const s = await SqliteStore.open({ path: tmpPath() });
    try {
      const r0 = await s.currentRevision();
      const collecting = collect(s, '/registry/pods/', r0 + 2, 1);
      for (let i = 1; i <= 3; i++) await s.create(`/registry/pods/default/p${i}`, json({ i }));
      const events = await collecting;
      assert.deepEqual(
        events.map((e) => [e.kv.key, e.kv.modRevision]),
        [['/registry/pods/default/p3', r0 + 3]],
      );
    } finally {
      await s.close();
    }
  });

  it('a second process cannot open a store that is open', async () => {
    const path = tmpPath();
    const s = await SqliteStore.open({ path });
    try {
      await assert.rejects(SqliteStore.open({ path, busyTimeoutMs: 50 }), (e) =>
        isStorageError(e, 'Unavailable'),
      );
    } finally {
      await s.close();
    }
    await (await SqliteStore.open({ path })).close();
  });

  describe('group commit', () => {
    it('64 concurrent creates share a handful of transactions and get consecutive revisions', async () => {
      const s = await SqliteStore.open({ path: tmpPath() });
      try {
        const r0 = await s.currentRevision();
        const before = s.stats;
        const created = await Promise.all(
          Array.from({ length: 64 }, (_, i) => s.create(`/registry/pods/default/p${i}`, json({ i }))),
        );
        const after = s.stats;
        assert.equal(after.writes - before.writes, 64);
        assert.ok(
          after.commits - before.commits <= 2,
          `${after.commits - before.commits} commits for 64 writes`,
        );
        assert.deepEqual(
          created.map((kv) => kv.modRevision).sort((a, b) => a - b),
          Array.from({ length: 64 }, (_, i) => r0 + 1 + i),
        );
        assert.equal(await s.currentRevision(), r0 + 64);
      } finally {
        await s.close();
      }
    });

    it('an op refused inside a batch fails alone; the ops around it commit, seeing each other', async () => {
      const s = await SqliteStore.open({ path: tmpPath() });
      try {
        const a = await s.create('/registry/pods/default/a', json({ v: 1 }));
        const before = s.stats;
        const results = await Promise.allSettled([
          s.create('/registry/pods/default/b', json({ v: 1 })),
          s.create('/registry/pods/default/a', json({ v: 'dup' })), // KeyExists
          s.update('/registry/pods/default/a', json({ v: 2 }), a.modRevision),
          s.update('/registry/pods/default/a', json({ v: 3 }), a.modRevision), // Conflict: the op before won
          s.delete('/registry/pods/default/b'), // sees the create earlier in the batch
          s.update('/registry/pods/default/b', json({}), a.modRevision + 1), // KeyNotFound: just deleted
          s.create('/registry/pods/default/b', json({ v: 'again' })),
        ]);
        assert.equal(s.stats.commits - before.commits, 1);
        const codes = results.map((r) =>
          r.status === 'fulfilled' ? 'ok' : (r.reason as { code: string }).code,
        );
        assert.deepEqual(codes, ['ok', 'KeyExists', 'ok', 'Conflict', 'ok', 'KeyNotFound', 'ok']);
        const r = a.modRevision;
        const ok = <T>(i: number) => (results[i] as PromiseFulfilledResult<T>).value;
        assert.equal(ok<{ modRevision: number }>(0).modRevision, r + 1);
        assert.equal(ok<{ modRevision: number }>(2).modRevision, r + 2);
        assert.deepEqual(ok<{ revision: number; deleted: unknown }>(4), {
          deleted: ok(0),
          revision: r + 3,
        });
        const again = ok<{ createRevision: number; modRevision: number }>(6);
        assert.equal(again.modRevision, r + 4);
        assert.equal(again.createRevision, r + 4);
        const conflict = (results[3] as PromiseRejectedResult).reason as { details: { current: unknown } };
        assert.deepEqual(conflict.details.current, ok(2));
        assert.equal(await s.currentRevision(), r + 4);
      } finally {
        await s.close();
      }
    });

    it('bad input is refused before queueing and never reaches a transaction', async () => {
      const s = await SqliteStore.open({ path: tmpPath() });
      try {
        const before = s.stats;
        const bad = [
          s.create('/nope', json({})),
          s.create('/registry/pods/default/a', '{'),
          s.update('/registry/pods/default/a', json({}), 0),
        ];
        const good = s.create('/registry/pods/default/a', json({}));
        for (const p of bad) await assert.rejects(p, (e) => isStorageError(e));
        await good;
        assert.deepEqual(s.stats, { commits: before.commits + 1, writes: before.writes + 1 });
      } finally {
        await s.close();
      }
    });

    it('a transaction that fails as a whole fails every op in it with Unavailable and writes nothing', async () => {
      const path = tmpPath();
      await (await SqliteStore.open({ path })).close();
      // Stand-in for a disk error: the database itself refuses one of the inserts.
      const raw = new Database(path);
      raw.exec(`CREATE TRIGGER boom BEFORE INSERT ON log WHEN NEW.key = '/registry/pods/default/boom'
                BEGIN SELECT RAISE(ABORT, 'simulated I/O error'); END`);
      raw.close();
      const s = await SqliteStore.open({ path });
      try {
        const r0 = await s.currentRevision();
        const results = await Promise.allSettled([
          s.create('/registry/pods/default/a', json({})),
          s.create('/registry/pods/default/boom', json({})),
          s.create('/registry/pods/default/c', json({})),
        ]);
        for (const r of results) {
          assert.equal(r.status, 'rejected');
          assert.ok(isStorageError(r.reason, 'Unavailable'), String(r.reason));
        }
        assert.equal(await s.currentRevision(), r0);
        assert.deepEqual((await s.list('/registry/')).items, []);
        // The store carries on: the next batch commits at the revision the failed one would have used.
        assert.equal((await s.create('/registry/pods/default/a', json({}))).modRevision, r0 + 1);
      } finally {
        await s.close();
      }
    });

    it('close commits the writes already queued', async () => {
      const path = tmpPath();
      const s = await SqliteStore.open({ path });
      const pending = s.create('/registry/pods/default/late', json({}));
      await s.close();
      const kv = await pending;
      const again = await SqliteStore.open({ path });
      try {
        assert.deepEqual(await again.get(kv.key), kv);
      } finally {
        await again.close();
      }
    });
  });
});

/** Watches from `since` until `n` events arrived (10 s deadline). */
async function collect(s: SqliteStore, prefix: string, since: number, n: number): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  let settle: (err?: Error) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    settle = (err) => (err ? reject(err) : resolve());
  });
  const w = await s.watch(prefix, since, {
    onEvents: (evs) => {
      events.push(...evs);
      if (events.length >= n) settle();
    },
    onError: (err) => settle(err),
  });
  const timer = setTimeout(() => settle(new Error(`timed out: ${events.length} of ${n} events`)), 10_000);
  try {
    await done;
  } finally {
    clearTimeout(timer);
    w.cancel();
  }
  return events;
}
