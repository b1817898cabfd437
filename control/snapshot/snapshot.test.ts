/**
 * Snapshots of the sqlite datastore against a real SqliteStore on a real data dir: save
 * (with a writer running), list, delete, prune, restore into a new data dir and in place;
 * what is refused (a truncated or corrupt file, with or without its sidecar; an in-place
 * restore while the store is open or a server answers on the data dir's socket) and that
 * the refusal leaves the data dir as it was; and the scheduler on a FakeClock.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock, flushPromises } from '../../api/clock.js';
import { silentLogger } from '../../api/log.js';
import { isStorageError, openStore, sqlitePath, type KeyValue, type Store } from '../storage/index.js';
import type { SqliteStore } from '../storage/sqlite.js';
import { serveSnapshots, snapshotSocketPath } from './endpoint.js';
import { isSnapshotError } from './errors.js';
import { deleteSnapshot, listSnapshots, metadataPath, pruneSnapshots, readMetadata } from './metadata.js';
import { DEFAULT_BUMP_REVISION, restoreSnapshot } from './restore.js';
import { SnapshotScheduler } from './schedule.js';
import { Snapshotter } from './snapshotter.js';

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
function tempDir(prefix = 'k8ts-snap-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  roots.push(d);
  return d;
}

/** A data dir with a CA-like tls/ and a node-token, as a server leaves them. */
function dataDirWithCredentials(): string {
  const dir = tempDir();
  mkdirSync(join(dir, 'tls'), { mode: 0o700 });
  writeFileSync(join(dir, 'tls', 'server-ca.crt'), 'CA CERT\n', { mode: 0o600 });
  writeFileSync(join(dir, 'tls', 'server-ca.key'), 'CA KEY\n', { mode: 0o600 });
  writeFileSync(join(dir, 'node-token'), 'K10abc::id.secret\n', { mode: 0o600 });
  return dir;
}

async function openSqlite(dataDir: string): Promise<SqliteStore> {
  return (await openStore({ datastore: 'sqlite', dataDir })) as SqliteStore;
}

/** Every key under /registry/ with its revisions and value. */
async function everything(store: Store): Promise<KeyValue[]> {
  return (await store.list('/registry/')).items;
}

/** Some objects (ConfigMaps, Secrets), an update and a delete: a store with history. */
async function populate(store: Store, n: number): Promise<void> {
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    writes.push(
      store.create(`/registry/configmaps/default/cm-${i}`, JSON.stringify({ data: { i: String(i) } })),
    );
    writes.push(
      store.create(
        `/registry/secrets/default/s-${i}`,
        JSON.stringify({ kind: 'Secret', data: { password: Buffer.from(`pw-${i}`).toString('base64') } }),
      ),
    );
  }
  await Promise.all(writes);
  const kv = await store.get('/registry/configmaps/default/cm-0');
  await store.update(
    '/registry/configmaps/default/cm-0',
    JSON.stringify({ data: { i: 'changed' } }),
    kv!.modRevision,
  );
  await store.delete('/registry/configmaps/default/cm-1');
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('sqlite snapshots', () => {
  it('saves online, lists, and restores into a new data dir with the same objects, resourceVersions and Secrets', async () => {
    const dataDir = dataDirWithCredentials();
    const store = await openSqlite(dataDir);
    await populate(store, 200);
    const snapshotter = new Snapshotter({
      source: { datastore: 'sqlite', store },
      dataDir,
      nodeName: 'node-a',
    });
    // A writer keeps going while the snapshot is taken: it is online.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) await store.create(`/registry/pods/default/during-${written++}`, '{}');
    })();
    const saved = await snapshotter.save();
    writing = false;
    await writer;
    assert.ok(written > 0, 'writes went on during the save');
    assert.match(saved.name, /^on-demand-node-a-\d+$/);
    assert.equal(saved.datastore, 'sqlite');
    const path = join(dataDir, 'snapshots', saved.name);
    assert.equal(statSync(path).size, saved.size);
    assert.equal(sha(path), saved.sha256);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(dataDir, 'snapshots')).mode & 0o777, 0o700);
    assert.ok(!existsSync(`${path}-wal`) && !existsSync(`${path}.partial`), 'one self-contained file');
    assert.deepEqual(Object.keys(saved.files).sort(), [
      'node-token',
      'tls/server-ca.crt',
      'tls/server-ca.key',
    ]);
    assert.equal(readMetadata(path)?.sha256, saved.sha256);

    const listed = listSnapshots(snapshotter.snapshotDir);
    assert.deepEqual(
      listed.map((s) => [s.name, s.size, s.datastore]),
      [[saved.name, saved.size, 'sqlite']],
    );

    // What the snapshot holds is the store as of its revision, read at that revision.
    const expected = (await store.list('/registry/', { revision: saved.revision })).items;
    await store.close();

    const target = tempDir('k8ts-snap-target-');
    const result = await restoreSnapshot({ snapshot: path, dataDir: target, bumpRevision: 0 });
    assert.equal(result.revision, saved.revision);
    assert.deepEqual(result.files.sort(), ['node-token', 'tls/server-ca.crt', 'tls/server-ca.key']);
    assert.equal(readFileSync(join(target, 'tls', 'server-ca.key'), 'utf8'), 'CA KEY\n');
    assert.equal(statSync(join(target, 'tls', 'server-ca.key')).mode & 0o777, 0o600);
    assert.equal(statSync(join(target, 'tls')).mode & 0o777, 0o700);
    const restored = await openSqlite(target);
    try {
      assert.equal(await restored.currentRevision(), saved.revision);
      const items = await everything(restored);
      assert.deepEqual(items, expected);
      const secret = await restored.get('/registry/secrets/default/s-7');
      assert.equal(
        Buffer.from(
          (JSON.parse(secret!.value) as { data: { password: string } }).data.password,
          'base64',
        ).toString(),
        'pw-7',
      );
      assert.equal(await restored.get('/registry/configmaps/default/cm-1'), undefined, 'the delete is in it');
    } finally {
      await restored.close();
    }
  });

  it('raises the restored revision by the bump and marks it compacted: same resourceVersions, older watches get Compacted', async () => {
    const dataDir = dataDirWithCredentials();
    const store = await openSqlite(dataDir);
    await populate(store, 20);
    const snapshotter = new Snapshotter({ source: { datastore: 'sqlite', store }, dataDir, nodeName: 'n' });
    const saved = await snapshotter.save('before-upgrade');
    const before = await everything(store);
    await store.close();
    const target = tempDir();
    const result = await restoreSnapshot({
      snapshot: join(snapshotter.snapshotDir, saved.name),
      dataDir: target,
    });
    assert.equal(result.restoredRevision, saved.revision + DEFAULT_BUMP_REVISION);
    const restored = await openSqlite(target);
    try {
      assert.equal(await restored.currentRevision(), saved.revision + DEFAULT_BUMP_REVISION);
      assert.equal(await restored.compactedRevision(), saved.revision + DEFAULT_BUMP_REVISION);
      assert.deepEqual(
        await everything(restored),
        before,
        'every object keeps its modRevision (resourceVersion)',
      );
      await assert.rejects(
        restored.watch('/registry/', saved.revision + 5, { onEvents() {}, onError() {} }),
        (err) => isStorageError(err, 'Compacted'),
      );
      const next = await restored.create('/registry/configmaps/default/after', '{}');
      assert.equal(next.modRevision, saved.revision + DEFAULT_BUMP_REVISION + 1);
    } finally {
      await restored.close();
    }
  });

  it('restores by name in place when no server holds the data dir, moving the old database aside', async () => {
    const dataDir = dataDirWithCredentials();
    const store = await openSqlite(dataDir);
    await populate(store, 5);
    const snapshotter = new Snapshotter({ source: { datastore: 'sqlite', store }, dataDir, nodeName: 'n' });
    const saved = await snapshotter.save();
    const atSnapshot = await everything(store);
    await store.create('/registry/configmaps/default/after-snapshot', '{}');
    await store.close();
    writeFileSync(join(dataDir, 'tls', 'server-ca.crt'), 'ANOTHER CA\n');

    const clock = new FakeClock(Date.UTC(2026, 5, 1));
    const result = await restoreSnapshot({ snapshot: saved.name, dataDir, bumpRevision: 0, clock });
    const aside = join(dataDir, 'db', `old-${Math.floor(clock.now() / 1000)}`);
    assert.equal(result.asideDir, aside);
    assert.ok(existsSync(join(aside, 'state.db')), 'the old database is kept aside');
    assert.equal(readFileSync(join(aside, 'tls', 'server-ca.crt'), 'utf8'), 'ANOTHER CA\n');
    assert.equal(readFileSync(join(dataDir, 'tls', 'server-ca.crt'), 'utf8'), 'CA CERT\n');
    assert.deepEqual(result.files, ['tls/server-ca.crt'], 'only what differed is written');
    const restored = await openSqlite(dataDir);
    try {
      assert.deepEqual(await everything(restored), atSnapshot);
    } finally {
      await restored.close();
    }
  });

  it('refuses an in-place restore while the store is open (the server holds its lock), and while a server answers on the socket', async () => {
    const dataDir = dataDirWithCredentials();
    const store = await openSqlite(dataDir);
    await populate(store, 5);
    const snapshotter = new Snapshotter({ source: { datastore: 'sqlite', store }, dataDir, nodeName: 'n' });
    const saved = await snapshotter.save();
    const path = join(snapshotter.snapshotDir, saved.name);
    await store.create('/registry/configmaps/default/after-snapshot', '{}');
    const before = await everything(store);
    await assert.rejects(restoreSnapshot({ snapshot: path, dataDir }), (err) => {
      assert.ok(isSnapshotError(err, 'ServerRunning'), String(err));
      assert.match(err.message, /locked by a running k8ts server; stop it before restoring in place/);
      return true;
    });
    const endpoint = await serveSnapshots({
      socketPath: snapshotSocketPath(dataDir),
      snapshotter,
      logger: silentLogger(),
    });
    assert.ok(endpoint);
    try {
      await assert.rejects(restoreSnapshot({ snapshot: path, dataDir }), (err) => {
        assert.ok(isSnapshotError(err, 'ServerRunning'), String(err));
        assert.match(err.message, /a k8ts server is running on .* \(it answers on .*snapshot\.sock\)/);
        return true;
      });
    } finally {
      await endpoint.close();
    }
    assert.deepEqual(await everything(store), before, 'the open store goes on as it was');
    await store.close();
    const reopened = await openSqlite(dataDir);
    try {
      assert.deepEqual(await everything(reopened), before, 'the database was not touched');
    } finally {
      await reopened.close();
    }
    assert.ok(
      !readdirSync(join(dataDir, 'db')).some((f) => f.startsWith('old-') || f.endsWith('.restoring')),
    );
  });

  describe('refuses a damaged snapshot and leaves the data dir as it was', () => {
    const cases: {
      name: string;
      damage: (path: string) => void;
      sidecar: boolean;
      code: string;
      message: RegExp;
    }[] = [
      {
        name: 'truncated, with its sidecar',
        damage: (p) => truncateSync(p, Math.floor(statSync(p).size / 2)),
        sidecar: true,
        code: 'Truncated',
        message: /is \d+ bytes but its metadata says \d+: it is truncated; refusing to restore it/,
      },
      {
        name: 'a byte changed, with its sidecar',
        damage: flipByte,
        sidecar: true,
        code: 'Corrupt',
        message: /has sha256 [0-9a-f]{64} but its metadata says [0-9a-f]{64}: it is corrupt/,
      },
      {
        name: 'truncated, without a sidecar',
        damage: (p) => truncateSync(p, Math.floor(statSync(p).size / 2)),
        sidecar: false,
        code: 'Corrupt',
        message: /(fails SQLite's integrity_check|is not a usable SQLite database).*refusing to restore it/,
      },
      {
        name: 'not a snapshot at all',
        damage: (p) => writeFileSync(p, 'hello'),
        sidecar: false,
        code: 'Corrupt',
        message: /is neither a SQLite database nor an etcd snapshot/,
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const dataDir = dataDirWithCredentials();
        const store = await openSqlite(dataDir);
        await populate(store, 300);
        const snapshotter = new Snapshotter({
          source: { datastore: 'sqlite', store },
          dataDir,
          nodeName: 'n',
        });
        const saved = await snapshotter.save();
        await store.close();
        const copy = join(tempDir(), saved.name);
        copyFileSync(join(snapshotter.snapshotDir, saved.name), copy);
        if (c.sidecar)
          copyFileSync(metadataPath(join(snapshotter.snapshotDir, saved.name)), metadataPath(copy));
        c.damage(copy);
        writeFileSync(join(dataDir, 'tls', 'server-ca.crt'), 'CURRENT CA\n');
        const dbBefore = sha(sqlitePath(dataDir));
        await assert.rejects(restoreSnapshot({ snapshot: copy, dataDir }), (err) => {
          assert.ok(isSnapshotError(err, c.code as 'Corrupt'), `${String(err)}`);
          assert.match(err.message, c.message);
          return true;
        });
        assert.equal(sha(sqlitePath(dataDir)), dbBefore);
        assert.equal(readFileSync(join(dataDir, 'tls', 'server-ca.crt'), 'utf8'), 'CURRENT CA\n');
        assert.deepEqual(readdirSync(join(dataDir, 'db')).sort(), ['state.db']);
      });
    }
  });

  it('deletes and prunes by base name, newest kept, other names untouched', async () => {
    const dataDir = dataDirWithCredentials();
    const store = await openSqlite(dataDir);
    await populate(store, 3);
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const snapshotter = new Snapshotter({
      source: { datastore: 'sqlite', store },
      dataDir,
      nodeName: 'n',
      clock,
    });
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      names.push((await snapshotter.save('scheduled')).name);
      await clock.advance(3600_000);
    }
    const onDemand = (await snapshotter.save()).name;
    await assert.rejects(snapshotter.save(), (err) => isSnapshotError(err, 'Exists'));
    await store.close();
    const dir = snapshotter.snapshotDir;
    assert.deepEqual(
      listSnapshots(dir).map((s) => s.name),
      [onDemand, ...[...names].reverse()],
      'newest first',
    );
    assert.deepEqual(pruneSnapshots(dir, 'scheduled', 2), [names[1], names[0]]);
    assert.deepEqual(
      listSnapshots(dir).map((s) => s.name),
      [onDemand, names[3], names[2]],
    );
    assert.ok(!existsSync(metadataPath(join(dir, names[0]!))), 'the sidecar goes with it');
    deleteSnapshot(dir, names[3]!);
    assert.throws(
      () => deleteSnapshot(dir, names[3]!),
      (err) => isSnapshotError(err, 'NotFound'),
    );
    assert.throws(
      () => deleteSnapshot(dir, '../db/state.db'),
      (err) => isSnapshotError(err, 'Invalid'),
    );
    assert.throws(
      () => pruneSnapshots(dir, 'scheduled', 0),
      (err) => isSnapshotError(err, 'Invalid'),
    );
    assert.deepEqual(
      listSnapshots(dir).map((s) => s.name),
      [onDemand, names[2]],
    );
  });

  it('takes scheduled snapshots at the cron times and keeps the retention', async () => {
    const dataDir = dataDirWithCredentials();
    const store = await openSqlite(dataDir);
    await populate(store, 3);
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 11, 0, 0));
    const snapshotter = new Snapshotter({
      source: { datastore: 'sqlite', store },
      dataDir,
      nodeName: 'n',
      clock,
    });
    const saved: string[] = [];
    let waiting: (() => void) | undefined;
    const scheduler = new SnapshotScheduler({
      snapshotter,
      schedule: '0 */12 * * *',
      retention: 2,
      timeZone: 'UTC',
      clock,
      logger: silentLogger(),
      onSnapshot: (m) => {
        saved.push(m.name);
        waiting?.();
      },
    });
    assert.equal(scheduler.nextTime().toISOString(), '2026-01-01T12:00:00.000Z');
    scheduler.start();
    const nextSnapshot = () => new Promise<void>((resolve) => (waiting = resolve));
    try {
      await clock.advance(59 * 60_000);
      await flushPromises();
      assert.equal(saved.length, 0, 'not before 12:00');
      for (let i = 0; i < 3; i++) {
        const taken = nextSnapshot();
        await clock.advance(12 * 3600_000);
        await taken;
      }
    } finally {
      await scheduler.stop();
      await store.close();
    }
    const at = (h: string) => `scheduled-n-${Date.parse(h) / 1000}`;
    assert.deepEqual(saved, [
      at('2026-01-01T12:00:00Z'),
      at('2026-01-02T00:00:00Z'),
      at('2026-01-02T12:00:00Z'),
    ]);
    assert.deepEqual(
      listSnapshots(snapshotter.snapshotDir).map((s) => s.name),
      [saved[2], saved[1]],
    );
  });

  it('refuses a schedule that does not parse and a retention below 1', () => {
    const snapshotter = { save: () => Promise.reject(new Error('no')), prune: () => Promise.resolve([]) };
    assert.throws(
      () => new SnapshotScheduler({ snapshotter, schedule: '0 */12 * *', logger: silentLogger() }),
      (err) => isSnapshotError(err, 'Invalid') && /snapshot schedule "0 \*\/12 \* \*"/.test(err.message),
    );
    assert.throws(
      () => new SnapshotScheduler({ snapshotter, retention: 0, logger: silentLogger() }),
      (err) => isSnapshotError(err, 'Invalid'),
    );
  });
});

function flipByte(path: string): void {
  const buf = readFileSync(path);
  const i = Math.floor(buf.length / 2);
  buf[i] = buf[i]! ^ 0xff;
  writeFileSync(path, buf);
}
