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
import { dirname } from 'node:path';
import { decodeContinue, encodeContinue } from './continue.js';
import { StorageError } from './errors.js';
import type { KeyValue, ListOptions, ListResult, Store, Watch, WatchEvent, WatchHandler } from './store.js';
import {
  checkKey,
  checkPrefix,
  checkRevision,
  checkValue,
  prefixEnd,
  readRevision,
  watchStart,
  checkCompactRevision,
} from './validate.js';
import { WatchHub } from './watch-hub.js';

/** The layout this code reads and writes; a newer file is refused rather than misread. */
const SCHEMA_VERSION = 1;
/** At most this many queued writes share one transaction; the rest go in the next one. */
const MAX_BATCH = 1024;
/** Rows examined per compaction transaction, so writers get a turn in between. */
const COMPACT_CHUNK = 1000;

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

type WriteOp =
  | { kind: 'create'; key: string; value: string }
  | { kind: 'update'; key: string; value: string; expected: number }
  | { kind: 'delete'; key: string; expected: number | undefined };

/** A validated write waiting for the next group commit; it resolves with its own event. */
interface QueuedWrite {
  op: WriteOp;
  resolve: (event: WatchEvent) => void;
  reject: (err: StorageError) => void;
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

interface EventRow {
  revision: number;
  key: string;
  create_revision: number;
  prev_revision: number | null;
  deleted: number;
  value: string | null;
  prev_create_revision: number | null;
  prev_value: string | null;
}

interface SweepRow {
  revision: number;
  dead: number;
}

/**
 * The store over one SQLite file (see the top of this file). Reads run synchronously
 * against the committed log; writes resolve once their group commit is durable. Besides
 * the errors in store.ts, every call can fail with Closed after close(), and with
 * Unavailable when SQLite itself fails (I/O error, full disk).
 */
export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  /** The revision of the latest committed write (1 when empty). */
  private revision: number;
  private compacted: number;
  private closed = false;
  private queue: QueuedWrite[] = [];
  private flushScheduled = false;
  /** The compaction in progress, if any: compactions run one at a time. */
  private compacting: Promise<void> = Promise.resolve();
  private readonly counters = { commits: 0, writes: 0 };
  private readonly hub = new WatchHub();
  private readonly stmt: ReturnType<typeof prepareStatements>;

  private constructor(private readonly db: Database.Database) {
    this.stmt = prepareStatements(db);
    this.compacted = this.stmt.getMeta.get('compact_revision') ?? 1;
    this.revision = Math.max(1, this.compacted, this.stmt.maxRevision.get() ?? 0);
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
      return new SqliteStore(db);
    } catch (err) {
      if (db?.inTransaction) db.exec('ROLLBACK');
      db?.close();
      if (err instanceof StorageError) throw err;
      throw new StorageError('Unavailable', `sqlite store ${path}: ${(err as Error).message}`);
    }
  }

  /** Commits and rows written since open (a copy; for tests and metrics). */
  get stats(): SqliteStoreStats {
    return { ...this.counters };
  }

  async currentRevision(): Promise<number> {
    this.checkOpen();
    return this.revision;
  }

  async compactedRevision(): Promise<number> {
    this.checkOpen();
    return this.compacted;
  }

  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | undefined> {
    this.checkOpen();
    checkKey(key);
    const rev = this.readRevision(opts.revision);
    return this.sql(() => this.at(key, rev));
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkOpen();
    checkPrefix(prefix);
    let start = prefix;
    let rev: number;
    if (opts.continue) {
      const point = decodeContinue(opts.continue, prefix);
      rev = this.readRevision(point.revision);
      start = point.startKey;
    } else {
      rev = this.readRevision(opts.revision);
    }
    const limit = opts.limit ?? 0;
    checkRevision(limit, 'limit', true);
    // One row more than asked for tells whether another page follows, and where it starts.
    const rows = this.sql(() =>
      this.stmt.list.all({ start, end: prefixEnd(prefix), rev, limit: limit > 0 ? limit + 1 : -1 }),
    );
    const items = rows.map((r) => ({
      key: r.key,
      value: r.value,
      createRevision: r.create_revision,
      modRevision: r.revision,
    }));
    if (limit > 0 && items.length > limit) {
      const next = items.pop()!;
      return { items, revision: rev, continue: encodeContinue({ revision: rev, startKey: next.key }) };
    }
    return { items, revision: rev };
  }

  /**
   * Validates, then queues the write for the next group commit (see commitBatch); resolves
   * once the transaction holding it is committed (fsynced with synchronous=FULL).
   * Errors as store.ts, plus Unavailable when the transaction fails as a whole.
   */
  async create(key: string, value: string): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    return (await this.enqueue({ kind: 'create', key, value })).kv;
  }

  /** Group-committed like create(); errors as store.ts, plus Unavailable. */
  async update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    checkRevision(expectedModRevision, 'expected modRevision');
    return (await this.enqueue({ kind: 'update', key, value, expected: expectedModRevision })).kv;
  }

  /** Group-committed like create(): appends a tombstone row; errors as store.ts, plus Unavailable. */
  async delete(key: string, expectedModRevision?: number): Promise<{ deleted: KeyValue; revision: number }> {
    this.checkOpen();
    checkKey(key);
    if (expectedModRevision !== undefined) checkRevision(expectedModRevision, 'expected modRevision');
    const event = await this.enqueue({ kind: 'delete', key, expected: expectedModRevision });
    return { deleted: event.prevKv!, revision: event.kv.modRevision };
  }

  /**
   * As store.ts: replays the log rows after `sinceRevision` under `prefix` (prevKv from
   * the row at prev_revision), then goes on live through the in-process WatchHub.
   * Compacted when sinceRevision < compactedRevision(), exactly as memory.ts.
   */
  async watch(prefix: string, sinceRevision: number, handler: WatchHandler): Promise<Watch> {
    this.checkOpen();
    checkPrefix(prefix);
    const since = watchStart(sinceRevision, this.revision, this.compacted);
    // Replay and registration in one synchronous step: commits (which publish) cannot
    // run in between, so the live stream starts exactly where the replay ends.
    if (since >= this.revision) return this.hub.add(prefix, since, handler, []);
    const replay = this.sql(() =>
      this.stmt.events.all({ since, start: prefix, end: prefixEnd(prefix) }).map(toEvent),
    );
    return this.hub.add(prefix, since, handler, replay);
  }

  /**
   * Discards history older than `revision` (see store.ts). Records the compact revision
   * first (reads below it fail with Compacted from then on), then deletes, in
   * transactions of COMPACT_CHUNK rows so writers are not held up, every row below
   * `revision` that no read or watch at `revision` or later can reach: tombstones, and
   * versions superseded by a later row that is itself below `revision`. Versions
   * superseded exactly at `revision` stay (the `prevKv` of the event at `revision`, which
   * a watch can no longer start early enough to replay since watches need the state at
   * their start; they cost one row per key changed at `revision`). As etcd's, the sweep goes in batches; rows a crash
   * leaves behind are hidden by later rows of their key and go with the next compaction.
   * @throws StorageError InvalidArgument, FutureRevision, Closed (closed while
   *   sweeping), Unavailable (disk error).
   */
  async compact(revision: number): Promise<void> {
    this.checkOpen();
    checkCompactRevision(revision, this.revision);
    const run = this.compacting.then(() => this.compactNow(revision));
    this.compacting = run.catch(() => {});
    return run;
  }

  /**
   * Ends the store: writes already queued are committed (their callers get their
   * results), watches end with Closed, the database is closed (checkpointing the WAL).
   * Later calls fail with Closed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    while (this.queue.length > 0) this.commitBatch(this.queue.splice(0, MAX_BATCH));
    this.closed = true;
    this.hub.failAll(new StorageError('Closed', 'store closed'));
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

  private enqueue(op: WriteOp): Promise<WatchEvent> {
    return new Promise<WatchEvent>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Commits one batch of queued writes; schedules another turn for any left over. */
  private flush(): void {
    this.flushScheduled = false;
    if (this.closed || this.queue.length === 0) return;
    this.commitBatch(this.queue.splice(0, MAX_BATCH));
    if (this.queue.length > 0 && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * Runs `batch` in one transaction. Each op's compare-and-swap sees the ops before it in
   * the batch; a refused op writes nothing and gets its own error. Results are handed out
   * only after COMMIT; if the transaction fails, every op in it fails with Unavailable and
   * nothing is written.
   */
  private commitBatch(batch: QueuedWrite[]): void {
    const outcomes: (WatchEvent | StorageError)[] = [];
    let revision = this.revision;
    const apply = this.db.transaction(() => {
      // Keys written earlier in this batch: their value now, or undefined once deleted.
      const written = new Map<string, KeyValue | undefined>();
      for (const { op } of batch) {
        const current = written.has(op.key) ? written.get(op.key) : this.at(op.key, this.revision);
        const refusal = refuse(op, current);
        if (refusal) {
          outcomes.push(refusal);
          continue;
        }
        revision++;
        if (op.kind === 'delete') {
          this.stmt.insert.run(revision, op.key, 0, current!.modRevision, 1, null);
          written.set(op.key, undefined);
          outcomes.push({
            type: 'DELETE',
            kv: { key: op.key, value: '', createRevision: 0, modRevision: revision },
            prevKv: current!,
          });
        } else {
          const kv: KeyValue = {
            key: op.key,
            value: op.value,
            createRevision: current ? current.createRevision : revision,
            modRevision: revision,
          };
          this.stmt.insert.run(
            revision,
            op.key,
            kv.createRevision,
            current?.modRevision ?? null,
            0,
            op.value,
          );
          written.set(op.key, kv);
          outcomes.push(current ? { type: 'PUT', kv, prevKv: current } : { type: 'PUT', kv });
        }
      }
    });
    try {
      apply();
    } catch (err) {
      const message = `sqlite commit failed: ${(err as Error).message}`;
      for (const w of batch) w.reject(new StorageError('Unavailable', message));
      return;
    }
    const events: WatchEvent[] = [];
    for (const [i, w] of batch.entries()) {
      const outcome = outcomes[i]!;
      if (outcome instanceof StorageError) {
        w.reject(outcome);
      } else {
        events.push(outcome);
        w.resolve(outcome);
      }
    }
    if (events.length === 0) return;
    this.revision = revision;
    this.counters.commits++;
    this.counters.writes += events.length;
    this.hub.publish(events);
  }

  /** The key as of revision `rev`, or undefined if absent or deleted then. */
  private at(key: string, rev: number): KeyValue | undefined {
    const row = this.stmt.at.get(key, rev);
    if (!row || row.deleted) return undefined;
    return { key, value: row.value!, createRevision: row.create_revision, modRevision: row.revision };
  }

  /** Resolves the revision a read happens at, checking it against history. */
  private readRevision(requested: number | undefined): number {
    return readRevision(requested, this.revision, this.compacted);
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

/** Why `op` cannot apply to the key's `current` value, or undefined when it can. */
function refuse(op: WriteOp, current: KeyValue | undefined): StorageError | undefined {
  const { key } = op;
  if (op.kind === 'create') {
    return current ? new StorageError('KeyExists', `key ${key} already exists`, { key, current }) : undefined;
  }
  if (!current) return new StorageError('KeyNotFound', `key ${key} not found`, { key });
  if (op.expected !== undefined && current.modRevision !== op.expected) {
    return new StorageError(
      'Conflict',
      `key ${key} is at modRevision ${current.modRevision}, not ${op.expected}`,
      { key, current },
    );
  }
  return undefined;
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
