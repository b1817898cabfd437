/**
 * The Store contract (store.ts) over an append-only revisioned log, in the manner of
 * kine's `logstructured` layer: this file owns everything the memory and sqlite backends
 * share — the current revision, argument checks, compare-and-swap, the events a write
 * makes, pagination, watch replay and fan-out (WatchHub), close — and a backend
 * (`RevisionLog`) only stores rows and reads them back.
 *
 *   Store call ─► LogStructuredStore ─► RevisionLog (memory.ts: arrays; sqlite.ts: one table)
 *                   │  revision, CAS, events
 *                   └─► WatchHub ─► watchers
 *
 * Writes: each create/update/delete is checked, then committed as a batch — at once, as
 * a batch of one (memory), or group-committed (sqlite): queued, and on the next turn of
 * the event loop every queued write runs in ONE `RevisionLog.transaction`, each doing its
 * own compare-and-swap against the state including the earlier writes of the same batch.
 * Each caller gets its own result or error; committed events are then published in
 * revision order. A transaction that fails as a whole fails every write in it with
 * Unavailable and moves the revision not at all.
 *
 * Reads run synchronously against the committed log; a failure of the backend itself
 * (anything that is not a StorageError, e.g. SQLite's I/O errors) surfaces as Unavailable.
 */
import { errorMessage } from '../../api/errors.js';
import { decodeContinue, listPage } from './continue.js';
import { StorageError } from './errors.js';
import type {
  KeyValue,
  ListOptions,
  ListResult,
  Store,
  StoreBackend,
  Watch,
  WatchEvent,
  WatchHandler,
} from './store.js';
import {
  checkCompactRevision,
  checkKey,
  checkPrefix,
  checkRevision,
  checkValue,
  prefixEnd,
  readRevision,
  watchStart,
} from './validate.js';
import { WatchHub } from './watch-hub.js';

/** At most this many queued writes share one group commit; the rest go in the next one. */
const MAX_BATCH = 1024;

/**
 * The rows of a log-structured backend (kine's `Log`/`Backend`): one row per revision, a
 * value or a tombstone. All reads are synchronous and see committed rows only (and, inside
 * `transaction`, the rows appended so far in it); they may throw anything, which the layer
 * reports as Unavailable.
 */
export interface RevisionLog {
  /** The revision of the newest row when the log was opened, floored at the compacted revision and at 1. */
  headRevision(): number;
  /** The oldest revision still readable (1 until the first compaction). */
  readonly compacted: number;
  /** The key at revision `rev`: its newest row at or below `rev`, or undefined if none or a tombstone. */
  at(key: string, rev: number): KeyValue | undefined;
  /** The live keys in [start, end) at revision `rev`, ascending, at most `limit` of them (-1: all). */
  range(start: string, end: string, rev: number, limit: number): KeyValue[];
  /** Every write under `prefix` with revision > `since`, ascending, each with the value it replaced. */
  after(prefix: string, since: number): WatchEvent[];
  /**
   * Runs `fn`, in which `append` is called once per write, as one atomic unit (sqlite: a
   * transaction; memory: just `fn()`). Throws what `fn` or the commit throws; then
   * nothing `fn` appended is kept.
   */
  transaction(fn: () => void): void;
  /** Appends the row of one committed write: its event (a PUT with `kv`, or a DELETE with `prevKv`). */
  append(event: WatchEvent): void;
  /**
   * Discards history older than `revision` (already checked against the current
   * revision; at or below `compacted` a no-op) and raises `compacted` to it.
   * @throws StorageError Closed, Unavailable (the backend's own failures).
   */
  compact(revision: number): Promise<void>;
  /** Releases the backend (called once, after the last commit). */
  close(): void;
}

/** How a LogStructuredStore commits writes. */
export interface LogStructuredOptions {
  /**
   * Queue writes and commit all queued on the next turn of the event loop in one
   * transaction (one fsync for the batch), rather than each at once.
   */
  groupCommit: boolean;
}

type WriteOp =
  | { kind: 'create'; key: string; value: string }
  | { kind: 'update'; key: string; value: string; expected: number }
  | { kind: 'delete'; key: string; expected: number | undefined };

/** A checked write waiting for the next group commit; it settles with its own event or error. */
interface QueuedWrite {
  op: WriteOp;
  resolve: (event: WatchEvent) => void;
  reject: (err: StorageError) => void;
}

/**
 * A Store over a RevisionLog (see the top of this file). Besides the errors in store.ts,
 * every call fails with Closed after close(), and with Unavailable when the backend
 * itself fails.
 */
export abstract class LogStructuredStore implements Store {
  abstract readonly backend: StoreBackend;
  /** The revision of the latest committed write (1 when empty). */
  private revision: number;
  private closed = false;
  private queue: QueuedWrite[] = [];
  private flushScheduled = false;
  private readonly hub = new WatchHub();

  protected constructor(
    private readonly log: RevisionLog,
    private readonly opts: LogStructuredOptions,
  ) {
    this.revision = log.headRevision();
  }

  async currentRevision(): Promise<number> {
    this.checkOpen();
    return this.revision;
  }

  async compactedRevision(): Promise<number> {
    this.checkOpen();
    return this.log.compacted;
  }

  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | undefined> {
    this.checkOpen();
    checkKey(key);
    const rev = this.readRevision(opts.revision);
    return this.read(() => this.log.at(key, rev));
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
    // One key more than asked for tells whether another page follows, and where it starts.
    const items = this.read(() => this.log.range(start, prefixEnd(prefix), rev, limit > 0 ? limit + 1 : -1));
    return listPage(items, limit, rev);
  }

  /**
   * Checks, then commits the write (see the top of this file); resolves once the
   * transaction holding it is committed. Errors as store.ts, plus Unavailable when the
   * transaction fails as a whole.
   */
  async create(key: string, value: string): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    return (await this.write({ kind: 'create', key, value })).kv;
  }

  /** Committed like create(); errors as store.ts, plus Unavailable. */
  async update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    checkRevision(expectedModRevision, 'expected modRevision');
    return (await this.write({ kind: 'update', key, value, expected: expectedModRevision })).kv;
  }

  /** Committed like create(): appends a tombstone; errors as store.ts, plus Unavailable. */
  async delete(key: string, expectedModRevision?: number): Promise<{ deleted: KeyValue; revision: number }> {
    this.checkOpen();
    checkKey(key);
    if (expectedModRevision !== undefined) checkRevision(expectedModRevision, 'expected modRevision');
    const event = await this.write({ kind: 'delete', key, expected: expectedModRevision });
    return { deleted: event.prevKv!, revision: event.kv.modRevision };
  }

  /**
   * As store.ts: replays the log's writes after `sinceRevision` under `prefix`, then goes
   * on live through the WatchHub. Compacted when sinceRevision < compactedRevision().
   */
  async watch(prefix: string, sinceRevision: number, handler: WatchHandler): Promise<Watch> {
    this.checkOpen();
    checkPrefix(prefix);
    const since = watchStart(sinceRevision, this.revision, this.log.compacted);
    // Replay and registration in one synchronous step: commits (which publish) cannot
    // run in between, so the live stream starts exactly where the replay ends.
    if (since >= this.revision) return this.hub.add(prefix, since, handler, []);
    const replay = this.read(() => this.log.after(prefix, since));
    return this.hub.add(prefix, since, handler, replay);
  }

  /**
   * Discards history older than `revision` (see store.ts and the backend's compact()).
   * @throws StorageError InvalidArgument, FutureRevision, Closed, Unavailable.
   */
  async compact(revision: number): Promise<void> {
    this.checkOpen();
    checkCompactRevision(revision, this.revision);
    return this.log.compact(revision);
  }

  /**
   * Ends the store: writes already queued are committed (their callers get their
   * results), watches end with Closed, the backend is released. Later calls fail with
   * Closed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    while (this.queue.length > 0) this.commitBatch(this.queue.splice(0, MAX_BATCH));
    this.closed = true;
    this.hub.failAll(new StorageError('Closed', 'store closed'));
    this.log.close();
  }

  /** Commits `op` at once, or queues it for the next group commit. */
  private write(op: WriteOp): Promise<WatchEvent> {
    return new Promise<WatchEvent>((resolve, reject) => {
      const write: QueuedWrite = { op, resolve, reject };
      if (!this.opts.groupCommit) {
        this.commitBatch([write]);
        return;
      }
      this.queue.push(write);
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
   * only after the commit; if the transaction fails, every op in it fails with
   * Unavailable and nothing is written.
   */
  private commitBatch(batch: QueuedWrite[]): void {
    const outcomes: (WatchEvent | StorageError)[] = [];
    let revision = this.revision;
    try {
      this.log.transaction(() => {
        // Keys written earlier in this batch: their value now, or undefined once deleted.
        const written = new Map<string, KeyValue | undefined>();
        for (const { op } of batch) {
          const current = written.has(op.key) ? written.get(op.key) : this.log.at(op.key, this.revision);
          const refusal = refuse(op, current);
          if (refusal) {
            outcomes.push(refusal);
            continue;
          }
          const event = writeEvent(op, current, ++revision);
          this.log.append(event);
          written.set(op.key, event.type === 'DELETE' ? undefined : event.kv);
          outcomes.push(event);
        }
      });
    } catch (err) {
      const message = `${this.backend} commit failed: ${errorMessage(err)}`;
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
    this.hub.publish(events);
  }

  /** Resolves the revision a read happens at, checking it against history. */
  private readRevision(requested: number | undefined): number {
    return readRevision(requested, this.revision, this.log.compacted);
  }

  /** Runs a read of the log, reporting a failure of the backend itself (I/O, corruption) as Unavailable. */
  private read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof StorageError) throw err;
      throw new StorageError('Unavailable', `${this.backend}: ${errorMessage(err)}`);
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

/** The event of an accepted write at `revision` over the key's `current` value. */
function writeEvent(op: WriteOp, current: KeyValue | undefined, revision: number): WatchEvent {
  if (op.kind === 'delete') {
    return {
      type: 'DELETE',
      kv: { key: op.key, value: '', createRevision: 0, modRevision: revision },
      prevKv: current!,
    };
  }
  const kv: KeyValue = {
    key: op.key,
    value: op.value,
    createRevision: current ? current.createRevision : revision,
    modRevision: revision,
  };
  return current ? { type: 'PUT', kv, prevKv: current } : { type: 'PUT', kv };
}
