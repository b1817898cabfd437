/**
 * Snapshots of the `sqlite` datastore (control/storage/sqlite.ts).
 *
 * Save: SQLite's online backup API through the store's own connection
 * (SqliteStore.backup), a few hundred pages per turn of the event loop, so group commits
 * keep running between steps and a writer waits at most one step; a commit made during
 * the backup is carried into the copy by SQLite itself (same connection), so the copy
 * never restarts and is the state as of its last step. The copy is then switched from WAL
 * to a rollback journal, so the snapshot is one self-contained file (no -wal, no -shm)
 * that `sqlite3` can open read-only.
 *
 * Restore (checkSqliteSnapshot, prepareSqliteRestore): the file is copied next to the
 * target database and checked there — `PRAGMA integrity_check`, the k8ts schema and its
 * version — so a corrupt or truncated snapshot is refused before anything of the data dir
 * is touched. Then, as `etcdutl snapshot restore --bump-revision --mark-compacted` does,
 * the revision is raised by `bumpRevision` and marked compacted: every object keeps its
 * resourceVersion, but a client that saw a later revision than the snapshot (a watch at
 * it, an informer's list) gets 410 Gone and relists, instead of waiting for a revision the
 * restored store would reach with other writes.
 */
import Database from 'better-sqlite3';
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SqliteStore } from '../storage/sqlite.js';
import { SnapshotError } from './errors.js';

/** Pages of 4 KiB per backup step: about 1 MiB, a millisecond or two of copying. */
export const DEFAULT_PAGES_PER_STEP = 256;

/** What a sqlite snapshot holds, read from the file itself. */
export interface SqliteSnapshotInfo {
  /** The store's revision in it: the newest row, or the compact revision when higher. */
  revision: number;
  compactRevision: number;
}

/** The k8ts schema version this code restores (control/storage/sqlite.ts's SCHEMA_VERSION). */
const SCHEMA_VERSION = 1;

/**
 * Copies the open store to `destination` (which must not exist) as a standalone SQLite
 * file in rollback-journal mode, mode 0600; see the top of this file.
 * @returns the revision and compact revision the copy holds.
 * @throws SnapshotError Failed (SQLite's own failures, the store closed meanwhile).
 */
export async function backupSqliteStore(
  store: SqliteStore,
  destination: string,
  pagesPerStep = DEFAULT_PAGES_PER_STEP,
): Promise<SqliteSnapshotInfo> {
  try {
    await store.backup(destination, pagesPerStep);
  } catch (err) {
    rmSync(destination, { force: true });
    throw new SnapshotError('Failed', `sqlite snapshot: ${(err as Error).message}`);
  }
  try {
    chmodSync(destination, 0o600);
    const db = new Database(destination);
    try {
      // The copy's header still says WAL (the source's); one file is what a snapshot is.
      db.pragma('journal_mode = DELETE');
      return readInfo(db);
    } finally {
      db.close();
    }
  } catch (err) {
    rmSync(destination, { force: true });
    throw new SnapshotError('Failed', `sqlite snapshot ${destination}: ${(err as Error).message}`);
  } finally {
    for (const side of ['-wal', '-shm', '-journal']) rmSync(`${destination}${side}`, { force: true });
  }
}

/**
 * Copies the snapshot at `source` to `candidate` (a new file beside the database it will
 * replace), checks it there, and raises its revision by `bumpRevision`, marked compacted;
 * see the top of this file. `candidate` is removed again when the check fails.
 * @returns what the snapshot holds (revision before the bump) and the revision after it.
 * @throws SnapshotError Corrupt when SQLite cannot read it, integrity_check fails, or it
 *   is not a k8ts store of a schema version this k8ts reads.
 */
export function prepareSqliteRestore(
  source: string,
  candidate: string,
  bumpRevision: number,
): SqliteSnapshotInfo & { restoredRevision: number } {
  mkdirSync(dirname(candidate), { recursive: true, mode: 0o700 });
  rmSync(candidate, { force: true });
  copyFileSync(source, candidate);
  chmodSync(candidate, 0o600);
  let db: Database.Database | undefined;
  try {
    db = new Database(candidate, { fileMustExist: true });
    const info = checkOpenSnapshot(db, source);
    const restoredRevision = info.revision + bumpRevision;
    if (bumpRevision > 0)
      db.prepare(`UPDATE meta SET value = ? WHERE name = 'compact_revision'`).run(restoredRevision);
    db.close();
    db = undefined;
    return { ...info, restoredRevision };
  } catch (err) {
    db?.close();
    rmSync(candidate, { force: true });
    for (const side of ['-wal', '-shm', '-journal']) rmSync(`${candidate}${side}`, { force: true });
    if (err instanceof SnapshotError) throw err;
    throw new SnapshotError(
      'Corrupt',
      `snapshot ${source} is not a usable SQLite database (${(err as Error).message}); refusing to restore it`,
    );
  }
}

/**
 * Checks a sqlite snapshot without restoring it: a private copy in `scratchDir` goes
 * through prepareSqliteRestore's checks and is removed.
 * @throws SnapshotError Corrupt (see prepareSqliteRestore).
 */
export function checkSqliteSnapshot(source: string, scratch: string): SqliteSnapshotInfo {
  try {
    return prepareSqliteRestore(source, scratch, 0);
  } finally {
    rmSync(scratch, { force: true });
  }
}

/** integrity_check, the schema, then the revision; the connection is the caller's. */
function checkOpenSnapshot(db: Database.Database, source: string): SqliteSnapshotInfo {
  const problems = db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
  const first = problems.map((r) => r.integrity_check);
  if (!(first.length === 1 && first[0] === 'ok'))
    throw new SnapshotError(
      'Corrupt',
      `snapshot ${source} fails SQLite's integrity_check (${first.slice(0, 3).join('; ')}${first.length > 3 ? `; and ${first.length - 3} more` : ''}); refusing to restore it`,
    );
  const tables = new Set(
    (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map(
      (r) => r.name,
    ),
  );
  if (!tables.has('meta') || !tables.has('log'))
    throw new SnapshotError(
      'Corrupt',
      `snapshot ${source} is a SQLite database but not a k8ts store (no meta and log tables)`,
    );
  const version = db.prepare(`SELECT value FROM meta WHERE name = 'schema_version'`).pluck().get();
  if (version !== SCHEMA_VERSION)
    throw new SnapshotError(
      'Corrupt',
      `snapshot ${source} is a k8ts store of schema version ${String(version)}; this k8ts reads version ${SCHEMA_VERSION}`,
    );
  return readInfo(db);
}

function readInfo(db: Database.Database): SqliteSnapshotInfo {
  const max = (db.prepare('SELECT MAX(revision) FROM log').pluck().get() as number | null) ?? 0;
  const compactRevision =
    (db.prepare(`SELECT value FROM meta WHERE name = 'compact_revision'`).pluck().get() as
      number | undefined) ?? 1;
  return { revision: Math.max(1, max, compactRevision), compactRevision };
}

/** Whether a SQLite database file is held by a running store (its exclusive lock), without waiting. */
export function sqliteFileLocked(path: string): boolean {
  if (!existsSync(path)) return false;
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { fileMustExist: true });
    db.pragma('busy_timeout = 0');
    // As the store opens it: no -shm of ours beside a database another process owns.
    db.pragma('locking_mode = EXCLUSIVE');
    db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    return false;
  } catch (err) {
    return /locked|busy/i.test((err as Error).message);
  } finally {
    db?.close();
  }
}
