/**
 * The `sqlite` backend, the embedded default: one database file owned by this process,
 * in the manner of kine (k3s' etcd shim over SQL). Same semantics as the others (see
 * store.ts); a write is acknowledged only after its transaction is durable.
 *
 * Schema: one append-only `log` table holds every write, one row per revision (a value or
 * a tombstone), plus a tiny `meta` table (schema version, compact revision):
 *
 *   log(revision INTEGER PRIMARY KEY, key, create_revision, prev_revision, deleted, value)
 *   index log_key_revision (key, revision)
 *
 * - The state at revision R is, per key, its row with the largest revision <= R, unless
 *   that row is a tombstone. The current revision is max(log.revision), floored by the
 *   compact revision and by 1 (an empty store is at 1, its first write gets 2, as etcd).
 * - `prev_revision` is the modRevision of the value a write replaced (NULL for a create),
 *   so a watch event's `prevKv` is one primary-key lookup away.
 * - Compaction at C deletes the rows that nothing at revision >= C can see (see compact()).
 *   It never deletes a row with revision >= C, so the log always holds every revision from
 *   max(C, 2) to the current one, with no gap, and the revision never goes backwards.
 *
 * Writes are group-committed: create/update/delete calls are validated, queued, and on
 * the next turn of the event loop every queued op runs in ONE transaction (one fsync with
 * synchronous=FULL), each doing its own compare-and-swap against the state including the
 * earlier ops of the same batch. Each caller gets its own result or error; committed
 * events are then published to the in-process WatchHub in revision order.
 *
 * better-sqlite3 is synchronous: a commit (and its fsync) blocks the event loop for its
 * duration; group commit is what keeps that cost per batch rather than per write.
 * The database is opened with `locking_mode=EXCLUSIVE`, so a second process cannot open
 * the same file while this one has it (the revision counter and the watchers live here).
 */
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StorageError } from './errors.js';
import { LogStructuredStore } from './log-structured.js';
import type { RevisionLog } from './log-structured.js';
import type { KeyValue, WatchEvent } from './store.js';
import { prefixEnd } from './validate.js';

/** The layout this code reads and writes; a newer file is refused rather than misread. */
const SCHEMA_VERSION = 1;
/** Rows examined per compaction transaction, so writers get a turn in between. */
const COMPACT_CHUNK = 1000;
/** Backup steps between early flushes of the copy (see SqliteLog.backup). */
const FLUSH_EVERY_STEPS = 4;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log (
  revision        INTEGER PRIMARY KEY,
  key             TEXT NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision   INTEGER,
  deleted         INTEGER NOT NULL,
  value           TEXT
);
CREATE INDEX IF NOT EXISTS log_key_revision ON log (key, revision);
INSERT OR IGNORE INTO meta (name, value) VALUES ('schema_version', ${SCHEMA_VERSION}), ('compact_revision', 1);
`;

/** How `open` places and syncs the database. */
export interface SqliteStoreOptions {
  /** The database file; its parent directory is created if missing. */
  path: string;
  /**
   * `FULL` (default): every commit is fsynced, so an acknowledged write survives kill -9
   * and power loss. `NORMAL`: survives kill -9 only (WAL is synced at checkpoints).
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** Milliseconds to wait for the file's lock at open (another process may be letting go). Default 5000. */
  busyTimeoutMs?: number;
}

/** Counters for tests and metrics: transactions that wrote something, and rows written. */
export interface SqliteStoreStats {
  readonly commits: number;
  readonly writes: number;
}

interface VersionRow {
  revision: number;
  create_revision: number;
  deleted: number;
  value: string | null;
}

interface ListRow {
  key: string;
  revision: number;
  create_revision: number;
  value: string;
}

/** One row of the `log` table, as `SELECT *` reads it (see the schema above). */
export interface LogRow {
  revision: number;
  key: string;
  create_revision: number;
  prev_revision: number | null;
  deleted: number;
  value: string | null;
}

interface EventRow extends LogRow {
  prev_create_revision: number | null;
  prev_value: string | null;
}

interface SweepRow {
  revision: number;
  dead: number;
}

/**
 * The rows of one SQLite file (see the top of this file): reads are single statements
 * against the committed log, a transaction is a SQLite transaction.
 */
class SqliteLog implements RevisionLog {
  compacted: number;
  /** Transactions that wrote something, and rows written (SqliteStore.stats). */
  readonly counters = { commits: 0, writes: 0 };
  private closed = false;
  /** The compaction in progress, if any: compactions run one at a time. */
  private compacting: Promise<void> = Promise.resolve();
  /** Rows appended in the transaction under way. */
  private appended = 0;
  private readonly stmt: ReturnType<typeof prepareStatements>;

  constructor(private readonly db: Database.Database) {
    this.stmt = prepareStatements(db);
    this.compacted = this.stmt.getMeta.get('compact_revision') ?? 1;
  }

  headRevision(): number {
    return Math.max(1, this.compacted, this.stmt.maxRevision.get() ?? 0);
  }

  at(key: string, rev: number): KeyValue | undefined {
    const row = this.stmt.at.get(key, rev);
    if (!row || row.deleted) return undefined;
    return { key, value: row.value!, createRevision: row.create_revision, modRevision: row.revision };
  }

  range(start: string, end: string, rev: number, limit: number): KeyValue[] {
    return this.stmt.list.all({ start, end, rev, limit }).map((r) => ({
      key: r.key,
      value: r.value,
      createRevision: r.create_revision,
      modRevision: r.revision,
    }));
  }

  /** The rows after `since` under `prefix`, each event's prevKv from the row at prev_revision. */
  after(prefix: string, since: number): WatchEvent[] {
    return this.stmt.events.all({ since, start: prefix, end: prefixEnd(prefix) }).map(toEvent);
  }

  /** One SQLite transaction (one fsync with synchronous=FULL); counted when it wrote rows. */
  transaction(fn: () => void): void {
    this.appended = 0;
    this.db.transaction(fn)();
    if (this.appended === 0) return;
    this.counters.commits++;
    this.counters.writes += this.appended;
  }

  append(event: WatchEvent): void {
    const { kv, prevKv } = event;
    if (event.type === 'DELETE') {
      this.stmt.insert.run(kv.modRevision, kv.key, 0, prevKv!.modRevision, 1, null);
    } else {
      this.stmt.insert.run(
        kv.modRevision,
        kv.key,
        kv.createRevision,
        prevKv?.modRevision ?? null,
        0,
        kv.value,
      );
    }
    this.appended++;
  }

  /**
   * Records the compact revision first (reads below it fail with Compacted from then on),
   * then deletes, in transactions of COMPACT_CHUNK rows so writers are not held up, every
   * row below `revision` that no read or watch at `revision` or later can reach:
   * tombstones, and versions superseded by a later row that is itself below `revision`.
   * Versions superseded exactly at `revision` stay (the `prevKv` of the event at
   * `revision`, which a watch can no longer start early enough to replay since watches
   * need the state at their start; they cost one row per key changed at `revision`). As
   * etcd's, the sweep goes in batches; rows a crash leaves behind are hidden by later rows
   * of their key and go with the next compaction. Compactions run one at a time.
   * @throws StorageError Closed (closed while sweeping), Unavailable (disk error).
   */
  compact(revision: number): Promise<void> {
    const run = this.compacting.then(() => this.compactNow(revision));
    this.compacting = run.catch(() => {});
    return run;
  }

  /**
   * Copies the database to `destination` (a new file) with SQLite's online backup API,
   * `pagesPerStep` pages per turn of the event loop, so group commits run between steps.
   * The backup reads through this connection, so a commit made meanwhile is carried into
   * the copy by SQLite itself (the backup never restarts) and the copy is the state as of
   * its last step. Every few steps the copy written so far is fdatasync'ed from libuv's
   * thread pool: the last step's commit, which SQLite fsyncs on the event loop, then has
   * only the destination's page cache (16 MiB in this build) left to write, whatever the
   * database's size.
   * @returns the number of pages copied.
   * @throws StorageError Closed, Unavailable (SQLite's own failures, e.g. a full disk).
   */
  async backup(destination: string, pagesPerStep: number): Promise<number> {
    this.checkOpen();
    let steps = 0;
    let flushing: Promise<void> | undefined;
    const flush = async () => {
      const fh = await open(destination, 'r');
      try {
        await fh.datasync();
      } finally {
        await fh.close();
      }
    };
    try {
      const done = await this.db.backup(destination, {
        progress: () => {
          if (++steps % FLUSH_EVERY_STEPS === 0 && !flushing)
            flushing = flush()
              .catch(() => {}) // only an early flush; SQLite's own commit syncs what counts
              .finally(() => (flushing = undefined));
          return pagesPerStep;
        },
      });
      return done.totalPages;
    } catch (err) {
      throw new StorageError('Unavailable', `sqlite backup to ${destination}: ${(err as Error).message}`);
    } finally {
      await flushing;
    }
  }

  /** Closes the database (checkpointing the WAL). */
  close(): void {
    this.closed = true;
    this.db.close();
  }

  private async compactNow(revision: number): Promise<void> {
    this.checkOpen();
    if (revision <= this.compacted) return;
    this.sql(() => this.stmt.setMeta.run({ name: 'compact_revision', value: revision }));
    this.compacted = revision;
    const sweep = this.db.transaction((from: number): SweepRow[] => {
      const rows = this.stmt.sweep.all({ from, c: revision, n: COMPACT_CHUNK });
      for (const r of rows) if (r.dead) this.stmt.deleteRow.run(r.revision);
      return rows;
    });
    // Ascending revision order matters: a key's tombstone goes only together with or
    // after the older rows it hides, so a crash between chunks never resurrects a value.
    let from = 0;
    for (;;) {
      const rows = this.sql(() => sweep(from));
      if (rows.length < COMPACT_CHUNK) return;
      from = rows[rows.length - 1]!.revision + 1;
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.checkOpen();
    }
  }

  /** Runs database work, reporting a failure of SQLite itself (I/O, corruption) as Unavailable. */
  private sql<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof StorageError) throw err;
      throw new StorageError('Unavailable', `sqlite: ${(err as Error).message}`);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new StorageError('Closed', 'store closed');
  }
}

/**
 * The store over one SQLite file (see the top of this file): the shared log-structured
 * layer (log-structured.ts) over SqliteLog, group-committed. Reads run synchronously
 * against the committed log; writes resolve once their group commit is durable. Besides
 * the errors in store.ts, every call can fail with Closed after close(), and with
 * Unavailable when SQLite itself fails (I/O error, full disk).
 */
export class SqliteStore extends LogStructuredStore {
  readonly backend = 'sqlite' as const;

  private constructor(private readonly rows: SqliteLog) {
    super(rows, { groupCommit: true });
  }

  /**
   * Opens (creating if needed) the store in the database file `opts.path` (mode 0600, its
   * WAL too; a directory it creates 0700): WAL journal,
   * `synchronous` FULL unless told otherwise, an exclusive lock on the file for as long as
   * the store is open. The revision and compact revision carry over from the file.
   * @throws StorageError InvalidArgument (bad options), Unavailable (the file cannot be
   *   opened or locked, is not a k8ts store, or has a newer schema version).
   */
  static async open(opts: SqliteStoreOptions): Promise<SqliteStore> {
    const path = opts?.path;
    if (typeof path !== 'string' || path === '') {
      throw new StorageError('InvalidArgument', 'sqlite store: path must be a non-empty file path');
    }
    const synchronous = opts.synchronous ?? 'FULL';
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
      throw new StorageError('InvalidArgument', `sqlite store: synchronous must be FULL or NORMAL`);
    }
    const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new StorageError('InvalidArgument', 'sqlite store: busyTimeoutMs must be a non-negative integer');
    }
    let db: Database.Database | undefined;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // Owner-only before sqlite writes a byte (it holds every Secret), also for a file an
      // older k8ts left with the umask's 0644; sqlite gives its -wal the file's mode.
      closeSync(openSync(path, 'a', 0o600));
      chmodSync(path, 0o600);
      if (existsSync(`${path}-wal`)) chmodSync(`${path}-wal`, 0o600);
      db = new Database(path);
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      // Before the first access: the lock is then held until close, and WAL keeps its
      // index in this process's memory instead of a shared -shm file.
      db.pragma('locking_mode = EXCLUSIVE');
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new Error(`journal_mode is ${String(mode)}, not wal`);
      db.pragma(`synchronous = ${synchronous}`);
      db.exec(`BEGIN IMMEDIATE; ${SCHEMA} COMMIT;`);
      const version = db
        .prepare<[], { value: number }>(`SELECT value FROM meta WHERE name = 'schema_version'`)
        .get()?.value;
      if (version !== SCHEMA_VERSION) {
        throw new Error(`schema version ${String(version)}; this k8ts reads version ${SCHEMA_VERSION}`);
      }
      return new SqliteStore(new SqliteLog(db));
    } catch (err) {
      if (db?.inTransaction) db.exec('ROLLBACK');
      db?.close();
      if (err instanceof StorageError) throw err;
      throw new StorageError('Unavailable', `sqlite store ${path}: ${(err as Error).message}`);
    }
  }

  /**
   * An online copy of the database as a standalone SQLite file at `destination` (a new
   * file), made `pagesPerStep` pages (default 256, of 4 KiB) per turn of the event loop so
   * that writers wait at most one step, and the last step at most one flush of the copy's
   * page cache; see SqliteLog.backup. What control/snapshot/ saves for the sqlite datastore.
   * @returns the number of pages copied.
   * @throws StorageError Closed, Unavailable.
   */
  backup(destination: string, pagesPerStep = 256): Promise<number> {
    return this.rows.backup(destination, pagesPerStep);
  }

  /** Commits and rows written since open (a copy; for tests and metrics). */
  get stats(): SqliteStoreStats {
    return { ...this.rows.counters };
  }
}

function toEvent(r: EventRow): WatchEvent {
  const prevKv: KeyValue | undefined =
    r.prev_revision !== null && r.prev_value !== null
      ? {
          key: r.key,
          value: r.prev_value,
          createRevision: r.prev_create_revision!,
          modRevision: r.prev_revision,
        }
      : undefined;
  const kv: KeyValue = r.deleted
    ? { key: r.key, value: '', createRevision: 0, modRevision: r.revision }
    : { key: r.key, value: r.value!, createRevision: r.create_revision, modRevision: r.revision };
  const type = r.deleted ? 'DELETE' : 'PUT';
  return prevKv ? { type, kv, prevKv } : { type, kv };
}

/** Every statement the store runs, prepared once. */
function prepareStatements(db: Database.Database) {
  return {
    getMeta: db.prepare<[string], number>('SELECT value FROM meta WHERE name = ?').pluck(),
    setMeta: db.prepare<[{ name: string; value: number }]>(
      'UPDATE meta SET value = :value WHERE name = :name',
    ),
    maxRevision: db.prepare<[], number | null>('SELECT MAX(revision) FROM log').pluck(),
    at: db.prepare<[string, number], VersionRow>(
      `SELECT revision, create_revision, deleted, value FROM log
       WHERE key = ? AND revision <= ? ORDER BY revision DESC LIMIT 1`,
    ),
    // Per key in [start, end), its newest row at or below rev, unless a tombstone; in key
    // order, so that the scan walks the (key, revision) index and stops at the limit.
    list: db.prepare<[{ start: string; end: string; rev: number; limit: number }], ListRow>(
      `SELECT l.key, l.revision, l.create_revision, l.value FROM log AS l
       WHERE l.key >= :start AND l.key < :end AND l.revision <= :rev
         AND NOT EXISTS (SELECT 1 FROM log AS n
                         WHERE n.key = l.key AND n.revision > l.revision AND n.revision <= :rev)
         AND l.deleted = 0
       ORDER BY l.key LIMIT :limit`,
    ),
    // Every write after `since` under the prefix, with the value it replaced. The unary +
    // keeps the planner on the revision range (cost ~ events since, which compaction
    // bounds) rather than a sort of the prefix's whole history.
    events: db.prepare<[{ since: number; start: string; end: string }], EventRow>(
      `SELECT l.revision, l.key, l.create_revision, l.prev_revision, l.deleted, l.value,
              p.create_revision AS prev_create_revision, p.value AS prev_value
       FROM log AS l LEFT JOIN log AS p ON p.revision = l.prev_revision
       WHERE l.revision > :since AND +l.key >= :start AND +l.key < :end
       ORDER BY l.revision`,
    ),
    insert: db.prepare<[number, string, number, number | null, number, string | null]>(
      `INSERT INTO log (revision, key, create_revision, prev_revision, deleted, value)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    // Rows below the compaction point c, from `from` on, each marked dead when nothing at
    // revision >= c can see it: a tombstone, or a version superseded below c.
    sweep: db.prepare<[{ from: number; c: number; n: number }], SweepRow>(
      `SELECT l.revision,
              (l.deleted = 1 OR EXISTS (SELECT 1 FROM log AS n
                                        WHERE n.key = l.key AND n.revision > l.revision
                                          AND n.revision < :c)) AS dead
       FROM log AS l WHERE l.revision >= :from AND l.revision < :c
       ORDER BY l.revision LIMIT :n`,
    ),
    deleteRow: db.prepare<[number]>('DELETE FROM log WHERE revision = ?'),
  };
}
