/**
 * The `etcd` backend: the Store contract (store.ts) on a real etcd v3 cluster through the
 * `etcd3` client — the backend for running several control processes against one state.
 *
 * Why one file of some 600 lines: every operation shares the client, the key namespace,
 * the deadlines and the retry policy below, and most of its length is that failure
 * handling; the watch, which has state of its own, is already apart (etcd-watch.ts).
 *
 * Every Store operation is one etcd request, as in kube-apiserver's etcd3 storage:
 * create, update and delete are single transactions (compare → write, else → read the
 * current value), so the revision they report is etcd's own and a failed compare costs no
 * second round trip. Keys are stored under an optional `namespace` prefix, so tests and
 * several clusters can share one etcd; the Store's callers never see it.
 *
 * Failure handling, owned here rather than left to etcd3's defaults:
 * - Reads (and compaction, which is idempotent) are retried on transient failures until
 *   `requestTimeoutMs`; writes are retried only when the failure proves the request never
 *   left this process. etcd3's default policy retries writes blindly, which would turn an
 *   applied-but-unacknowledged create into a spurious KeyExists (and an update into a
 *   Conflict against its own write).
 * - Anything that is not an answer from etcd (refused, timed out, dropped) surfaces as
 *   StorageError `Unavailable` within `requestTimeoutMs`.
 */
import { Etcd3, isRecoverableError } from 'etcd3';
import type {
  IKeyValue,
  IOptions,
  IRangeRequest,
  IRangeResponse,
  IResponseHeader,
  ITxnRequest,
  ITxnResponse,
  Namespace,
} from 'etcd3';
import { decodeContinue, listPage } from './continue.js';
import { EtcdWatch, toRevision } from './etcd-watch.js';
import { StorageError, isStorageError } from './errors.js';
import type { KeyValue, ListOptions, ListResult, Store, Watch, WatchHandler } from './store.js';
import { KEY_ROOT, checkKey, checkPrefix, checkRevision, checkValue, prefixEnd } from './validate.js';
import { errorMessage } from '../../api/errors.js';

/** Options of `EtcdStore.open`: client URLs, an optional key namespace, and deadlines in ms. */
export interface EtcdStoreOptions {
  /** Client URLs of the etcd members, e.g. `['http://127.0.0.1:2379']`. */
  endpoints: string[];
  /**
   * A key prefix inside etcd for everything this store reads and writes ('' by default):
   * with `'/cluster-a'`, the Store key `/registry/pods/default/p` is stored as
   * `/cluster-a/registry/pods/default/p`. Revisions and compaction stay global to etcd.
   */
  namespace?: string;
  /** How long open() waits for a first answer from etcd (ms). Default 5 000. */
  dialTimeoutMs?: number;
  /** The deadline of each operation, retries included (ms). Default 10 000. */
  requestTimeoutMs?: number;
  /**
   * How long a live watch may stay disconnected while etcd3 reconnects it before it ends
   * with Unavailable (ms). Default 30 000.
   */
  watchRetryTimeoutMs?: number;
}

const COMPACTED = 'required revision has been compacted';
const FUTURE = 'required revision is a future revision';
/**
 * The deadline of one compaction request: a physical compaction of a long history walks
 * the backend in batches and can take far longer than a read.
 */
const COMPACT_TIMEOUT_MS = 60_000;
/** How long close() lets etcd acknowledge watch cancellations before dropping the channels. */
const CLOSE_GRACE_MS = 1_000;

type FaultHandling = NonNullable<IOptions['faultHandling']>;
type Policy = NonNullable<FaultHandling['global']>;
type Backoff = NonNullable<FaultHandling['watchBackoff']>;
type CallOptions = { deadline: number };

/**
 * The etcd backend: every Store operation is one etcd request or transaction (CAS through
 * txn compares on create/mod revision), revisions are etcd's own, watches are etcd watches
 * resumed exactly once across reconnects (etcd-watch.ts). Open with `EtcdStore.open()`;
 * failures to reach etcd are `Unavailable`.
 */
export class EtcdStore implements Store {
  readonly backend = 'etcd' as const;
  private closed = false;
  private readonly watches = new Set<EtcdWatch>();
  /** Where compactedRevision() starts looking: its last answer, or a compaction we made. */
  private compactGuess = 1;
  private readonly prefix: Buffer;

  private constructor(
    private readonly client: Etcd3,
    private readonly ns: Namespace,
    namespace: string,
    private readonly requestTimeoutMs: number,
    private readonly watchRetryTimeoutMs: number,
  ) {
    this.prefix = Buffer.from(namespace, 'utf8');
  }

  /**
   * Connects to etcd and checks that it answers (a linearizable read).
   * @throws StorageError InvalidArgument for bad options; Unavailable when no endpoint
   *   answers within `dialTimeoutMs`.
   */
  static async open(opts: EtcdStoreOptions): Promise<EtcdStore> {
    const { endpoints } = opts;
    if (
      !Array.isArray(endpoints) ||
      endpoints.length === 0 ||
      !endpoints.every((e) => typeof e === 'string' && /^https?:\/\/[^/]+\/?$/.test(e))
    ) {
      throw new StorageError(
        'InvalidArgument',
        'endpoints must be a non-empty list of http(s)://host:port URLs',
      );
    }
    const namespace = opts.namespace ?? '';
    if (typeof namespace !== 'string' || namespace.includes('\0')) {
      throw new StorageError('InvalidArgument', 'namespace must be a string without NUL');
    }
    const dialTimeoutMs = positive(opts.dialTimeoutMs, 5_000, 'dialTimeoutMs');
    const requestTimeoutMs = positive(opts.requestTimeoutMs, 10_000, 'requestTimeoutMs');
    const watchRetryTimeoutMs = positive(opts.watchRetryTimeoutMs, 30_000, 'watchRetryTimeoutMs');

    const client = new Etcd3({
      hosts: endpoints.map((e) => e.replace(/\/$/, '')),
      grpcOptions: {
        // A list or a replayed watch batch can hold many 1.5 MiB objects; gRPC's default
        // cap is 4 MiB. kube-apiserver's etcd client lifts it the same way.
        'grpc.max_receive_message_length': -1,
        // Notice a silently dead connection (and so a stuck watch) within ~40 s; etcd's
        // default keepalive enforcement allows pings every 5 s.
        'grpc.keepalive_time_ms': 30_000,
        'grpc.keepalive_timeout_ms': 10_000,
        'grpc.max_reconnect_backoff_ms': 2_000,
      },
      faultHandling: { global: passThrough, host: () => passThrough, watchBackoff: backoff(50) },
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + requestTimeoutMs }),
    });
    const store = new EtcdStore(
      client,
      namespace ? client.namespace(namespace) : client,
      namespace,
      requestTimeoutMs,
      watchRetryTimeoutMs,
    );
    try {
      await store.call((o) => client.kv.range({ key: store.key(KEY_ROOT), count_only: true }, o), {
        retry: isTransient,
        timeoutMs: dialTimeoutMs,
      });
    } catch (err) {
      client.close();
      throw new StorageError(
        'Unavailable',
        `cannot reach etcd at ${endpoints.join(',')} within ${dialTimeoutMs} ms: ${(err as Error).message}`,
      );
    }
    return store;
  }

  /**
   * etcd's current revision: the header of a linearizable single-key read (a fresh etcd
   * is at 1). In a shared etcd this counts every namespace's writes.
   * @throws StorageError Unavailable, Closed.
   */
  async currentRevision(): Promise<number> {
    this.checkOpen();
    const res = await this.range({ key: this.key(KEY_ROOT), count_only: true });
    return headerRevision(res.header);
  }

  /**
   * The oldest revision still readable (1 until the first compaction; global to etcd).
   *
   * etcd keeps its compaction point to itself (no RPC returns it; HashKV does but scans
   * the whole keyspace), but a read below it fails with "compacted", and whether revision
   * r is readable is monotone in r. So the answer is the smallest readable revision, found
   * by probing: a count-only read of one key at r. The last answer is the first guess and
   * compaction only moves forward, so this is usually two probes (the guess is readable,
   * the revision before it is not); after another client compacted, a binary search up to
   * the current revision. Correct whichever client compacted; nothing is stored in etcd.
   * @throws StorageError Unavailable, Closed.
   */
  async compactedRevision(): Promise<number> {
    this.checkOpen();
    const guess = this.compactGuess;
    let lo: number;
    let hi: number;
    if (await this.readable(guess)) {
      if (guess === 1 || !(await this.readable(guess - 1))) return guess;
      // Older history than we saw before (etcd restored from a backup?): search below.
      [lo, hi] = [1, guess - 1];
    } else {
      [lo, hi] = [guess + 1, await this.currentRevision()];
    }
    // Invariant: revision hi is readable, every revision below lo is not.
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (await this.readable(mid)) hi = mid;
      else lo = mid + 1;
    }
    this.compactGuess = lo;
    return lo;
  }

  /**
   * The key's value, now or at `opts.revision` (a linearizable etcd Range).
   * @returns undefined when the key does not exist at that revision.
   * @throws StorageError InvalidKey, InvalidArgument, Compacted (with compactRevision),
   *   FutureRevision, Unavailable, Closed.
   */
  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | undefined> {
    this.checkOpen();
    checkKey(key);
    const revision = opts.revision ?? 0;
    checkRevision(revision, 'revision', true);
    const res = await this.range({ key: this.key(key), revision });
    return res.kvs[0] ? this.decode(res.kvs[0]) : undefined;
  }

  /**
   * The keys under `prefix`, ascending, at one revision; pages of `limit` with a
   * `continue` token that pins the first page's revision (as kube-apiserver's). One etcd
   * Range per page, for limit + 1 keys from the token's start key: the extra key says
   * whether more follow and is where the next page starts. etcd returns a range in
   * ascending byte order of keys (its index order; no sort is requested, so the limit is
   * applied inside etcd).
   * @throws StorageError InvalidKey, InvalidArgument (bad limit/token), Compacted,
   *   FutureRevision, Unavailable, Closed.
   */
  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkOpen();
    checkPrefix(prefix);
    let start = prefix;
    let revision: number;
    if (opts.continue) {
      const point = decodeContinue(opts.continue, prefix);
      start = point.startKey;
      revision = point.revision;
    } else {
      revision = opts.revision ?? 0;
      checkRevision(revision, 'revision', true);
    }
    const limit = opts.limit ?? 0;
    checkRevision(limit, 'limit', true);
    const res = await this.range({
      key: this.key(start),
      range_end: this.key(prefixEnd(prefix)),
      revision,
      limit: limit > 0 ? limit + 1 : 0,
    });
    const at = revision || headerRevision(res.header);
    return listPage(
      res.kvs.map((kv) => this.decode(kv)),
      limit,
      at,
    );
  }

  /**
   * Creates `key`: one txn, `if createRevision(key) == 0 then put else get`.
   * @returns the stored KeyValue; its revisions are the txn's revision.
   * @throws StorageError KeyExists (with `current`), InvalidKey, InvalidValue (also for a
   *   value above etcd's --max-request-bytes), Unavailable, Closed.
   */
  async create(key: string, value: string): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    const k = this.key(key);
    const res = await this.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value: Buffer.from(value, 'utf8') } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) {
      const current = this.failureKv(res);
      throw new StorageError('KeyExists', `key ${key} already exists`, current ? { key, current } : { key });
    }
    const revision = headerRevision(res.header);
    return { key, value, createRevision: revision, modRevision: revision };
  }

  /**
   * Replaces `key`'s value: one txn, `if modRevision(key) == expected then put (with the
   * previous value, for its createRevision) else get`.
   * @throws StorageError Conflict (with `current`), KeyNotFound, InvalidKey, InvalidValue,
   *   InvalidArgument, Unavailable, Closed.
   */
  async update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    this.checkOpen();
    checkKey(key);
    checkValue(value);
    checkRevision(expectedModRevision, 'expected modRevision');
    const k = this.key(key);
    const res = await this.txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision }],
      success: [{ request_put: { key: k, value: Buffer.from(value, 'utf8'), prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.compareFailed(key, expectedModRevision, res);
    const revision = headerRevision(res.header);
    const prev = res.responses[0]?.response_put?.prev_kv;
    const createRevision = prev?.key?.length
      ? toRevision(prev.create_revision, 'create_revision')
      : // etcd returns the previous value of a put in the same apply; never expected here.
        ((await this.get(key, { revision }))?.createRevision ?? revision);
    return { key, value, createRevision, modRevision: revision };
  }

  /**
   * Deletes `key`: one txn, `[if modRevision(key) == expected] then delete (returning the
   * previous value) else get`.
   * @throws StorageError KeyNotFound, Conflict (with `current`), InvalidKey,
   *   InvalidArgument, Unavailable, Closed.
   */
  async delete(key: string, expectedModRevision?: number): Promise<{ deleted: KeyValue; revision: number }> {
    this.checkOpen();
    checkKey(key);
    if (expectedModRevision !== undefined) checkRevision(expectedModRevision, 'expected modRevision');
    const k = this.key(key);
    const res = await this.txn({
      compare:
        expectedModRevision === undefined
          ? []
          : [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision }],
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.compareFailed(key, expectedModRevision ?? 0, res);
    const prev = res.responses[0]?.response_delete_range?.prev_kvs?.[0];
    // Deleting nothing does not advance etcd's revision: the failure writes nothing.
    if (!prev) throw new StorageError('KeyNotFound', `key ${key} not found`, { key });
    return { deleted: this.decode(prev), revision: headerRevision(res.header) };
  }

  /**
   * Watches `prefix` from `sinceRevision` + 1 (0: from when etcd registers the watch) with
   * previous values; one etcd watch response becomes one onEvents batch.
   *
   * etcd accepts a watch from a compacted revision and cancels it only later, from its
   * background sync (about 100 ms), with no reason text through etcd3. So the start is
   * checked first: a read at sinceRevision that fails with "compacted" rejects the
   * promise with Compacted. A compaction that races the start, or that overtakes a watch
   * while it is disconnected, ends it through onError with Compacted instead. See
   * etcd-watch.ts for how reconnections keep events exactly-once.
   * @throws StorageError Compacted, InvalidKey, InvalidArgument, Unavailable (etcd did
   *   not acknowledge the watch within requestTimeoutMs), Closed.
   */
  async watch(prefix: string, sinceRevision: number, handler: WatchHandler): Promise<Watch> {
    this.checkOpen();
    checkPrefix(prefix);
    checkRevision(sinceRevision, 'sinceRevision', true);
    const startRevision = sinceRevision > 0 ? sinceRevision + 1 : 0;
    // The state at sinceRevision must be readable: etcd reads each event's previous value
    // at the revision before it, so a watch from compacted - 1 would lose prevKv.
    if (startRevision > 0 && !(await this.readable(sinceRevision))) {
      throw await this.compactedError(sinceRevision);
    }
    this.checkOpen();
    const builder = this.ns.watch().prefix(prefix).withPreviousKV();
    if (startRevision > 0) builder.startRevision(String(startRevision));
    const watch = new EtcdWatch({
      watcher: builder.watcher(),
      handler,
      startRevision,
      startTimeoutMs: this.requestTimeoutMs,
      retryTimeoutMs: this.watchRetryTimeoutMs,
      classify: (err, nextRev) => this.watchError(err, nextRev),
      onEnd: (w) => this.watches.delete(w),
    });
    this.watches.add(watch);
    return watch.start();
  }

  /**
   * Compacts etcd's history at `revision` (physical: returns once the backend has
   * dropped it). Global to etcd, whatever the namespace. At or below a previous
   * compaction it is a no-op (etcd answers "compacted"; that is mapped to success).
   * @throws StorageError InvalidArgument, FutureRevision, Unavailable, Closed.
   */
  async compact(revision: number): Promise<void> {
    this.checkOpen();
    checkRevision(revision, 'compact revision');
    try {
      await this.call((o) => this.client.kv.compact({ revision, physical: true }, o), {
        retry: isTransient,
        attemptTimeoutMs: Math.max(COMPACT_TIMEOUT_MS, this.requestTimeoutMs),
      });
    } catch (err) {
      if (!isStorageError(err, 'Compacted')) throw err;
    }
    // Either way etcd's compaction point is now at least `revision`.
    this.compactGuess = Math.max(this.compactGuess, revision);
  }

  /**
   * Ends every watch (onError Closed, as the other backends) and closes the client.
   * Later calls fail with Closed; idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closed = new StorageError('Closed', 'store closed');
    const detached: Promise<void>[] = [];
    for (const w of [...this.watches]) {
      w.fail(closed);
      detached.push(w.detached);
    }
    // Let etcd3 send the watch cancellations before the channels go (bounded: a dead etcd
    // never answers them).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(detached),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS))),
    ]);
    clearTimeout(timer);
    this.client.close();
  }

  // ---- etcd calls -------------------------------------------------------------------

  /** A linearizable Range, retried on transient failures; Compacted carries the compaction point. */
  private async range(req: IRangeRequest): Promise<IRangeResponse> {
    try {
      return await this.call((o) => this.client.kv.range(req, o), { retry: isTransient });
    } catch (err) {
      if (isStorageError(err, 'Compacted')) throw await this.compactedError(Number(req.revision));
      throw err;
    }
  }

  /** A Txn, retried only if it cannot have reached etcd. */
  private txn(req: ITxnRequest): Promise<ITxnResponse> {
    return this.call((o) => this.client.kv.txn(req, o), { retry: neverSent });
  }

  /**
   * Runs `fn` until it succeeds, fails for good, or `timeoutMs` passes (each attempt's
   * own deadline is `attemptTimeoutMs` when given, else the same); maps failures to
   * StorageErrors.
   */
  private async call<T>(
    fn: (opts: CallOptions) => Promise<T>,
    opts: { retry: (err: unknown) => boolean; timeoutMs?: number; attemptTimeoutMs?: number },
  ): Promise<T> {
    this.checkOpen();
    const deadline = Date.now() + (opts.timeoutMs ?? this.requestTimeoutMs);
    const { retry, attemptTimeoutMs } = opts;
    for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
      try {
        return await fn({
          deadline: attemptTimeoutMs === undefined ? deadline : Date.now() + attemptTimeoutMs,
        });
      } catch (err) {
        if (this.closed || !retry(err) || Date.now() + pause >= deadline) throw this.toStorageError(err);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
      this.checkOpen();
    }
  }

  /** Whether reads at `revision` still work (not compacted away; a future one counts). */
  private async readable(revision: number): Promise<boolean> {
    try {
      await this.call(
        (o) => this.client.kv.range({ key: this.key(KEY_ROOT), revision, count_only: true }, o),
        { retry: isTransient },
      );
      return true;
    } catch (err) {
      if (isStorageError(err, 'FutureRevision')) return true;
      if (isStorageError(err, 'Compacted')) return false;
      throw err;
    }
  }

  private async compactedError(revision: number): Promise<StorageError> {
    const oldest = await this.compactedRevision().catch(() => undefined);
    return new StorageError(
      'Compacted',
      `revision ${revision} has been compacted${oldest === undefined ? '' : ` (oldest is ${oldest})`}`,
      oldest === undefined ? {} : { compactRevision: oldest },
    );
  }

  /** What a watch failure means: Compacted if its next revision is gone, else Unavailable. */
  private async watchError(err: unknown, nextRevision: number): Promise<StorageError> {
    if (this.closed) return new StorageError('Closed', 'store closed');
    if (err instanceof StorageError) return err;
    if (nextRevision > 0) {
      try {
        if (!(await this.readable(nextRevision))) return await this.compactedError(nextRevision - 1);
      } catch {
        // etcd unreachable: Unavailable below.
      }
    }
    return new StorageError('Unavailable', `etcd watch failed: ${(err as Error).message}`);
  }

  private toStorageError(err: unknown): StorageError {
    if (err instanceof StorageError) return err;
    const message = errorMessage(err);
    if (this.closed || (err instanceof Error && err.name === 'ClientClosedError')) {
      return new StorageError('Closed', 'store closed');
    }
    if (message.includes(COMPACTED)) return new StorageError('Compacted', message);
    if (message.includes(FUTURE)) return new StorageError('FutureRevision', message);
    if (
      message.includes('etcdserver: request is too large') ||
      /received message larger than max/i.test(message)
    ) {
      // etcd's --max-request-bytes (1.5 MiB by default: the origin of Kubernetes' object cap).
      return new StorageError('InvalidValue', `value too large for etcd: ${message}`);
    }
    return new StorageError('Unavailable', `etcd: ${message}`);
  }

  // ---- keys and values --------------------------------------------------------------

  private key(key: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(key, 'utf8')]);
  }

  private decode(kv: IKeyValue): KeyValue {
    if (!kv.key.subarray(0, this.prefix.length).equals(this.prefix)) {
      throw new StorageError('Unavailable', `etcd returned key ${kv.key.toString()} outside the namespace`);
    }
    return {
      key: kv.key.subarray(this.prefix.length).toString('utf8'),
      value: kv.value.toString('utf8'),
      createRevision: toRevision(kv.create_revision, 'create_revision'),
      modRevision: toRevision(kv.mod_revision, 'mod_revision'),
    };
  }

  /** The key's current value from a failed txn's `else` read, if it exists. */
  private failureKv(res: ITxnResponse): KeyValue | undefined {
    const kv = res.responses[0]?.response_range?.kvs?.[0];
    return kv ? this.decode(kv) : undefined;
  }

  private compareFailed(key: string, expected: number, res: ITxnResponse): StorageError {
    const current = this.failureKv(res);
    if (!current) return new StorageError('KeyNotFound', `key ${key} not found`, { key });
    return new StorageError(
      'Conflict',
      `key ${key} is at modRevision ${current.modRevision}, not ${expected}`,
      { key, current },
    );
  }

  private checkOpen(): void {
    if (this.closed) throw new StorageError('Closed', 'store closed');
  }
}

function headerRevision(header: IResponseHeader): number {
  return toRevision(header.revision, 'header revision');
}

/** Failures worth retrying for an idempotent request: the network or etcd being unwell. */
function isTransient(err: unknown): boolean {
  return err instanceof Error && (isRecoverableError(err) || neverSent(err));
}

/**
 * Failures that prove a write was not applied, so retrying cannot apply it twice: gRPC
 * had no connection to send it on, or etcd refused it before proposing it.
 */
function neverSent(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return (
    message.includes('No connection established') ||
    message.includes('etcdserver: no leader') ||
    message.includes('etcdserver: too many requests')
  );
}

/** etcd3's fault-handling slot filled with "just run it": retries are decided above. */
const passThrough: Policy = {
  _altReturn: undefined as never,
  onSuccess: () => ({ dispose: () => {} }),
  onFailure: () => ({ dispose: () => {} }),
  execute: async (fn, signal) => fn({ signal: signal ?? new AbortController().signal }),
};

/** etcd3's watch-stream reconnect delays: ~100 ms doubling to ~2 s, jittered. */
function backoff(ms: number): Backoff {
  return {
    duration: ms * (0.5 + Math.random() / 2),
    next: () => backoff(Math.min(ms * 2, 2_000)),
  };
}

function positive(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new StorageError('InvalidArgument', `${what} must be a positive integer (ms), got ${value}`);
  }
  return value;
}
