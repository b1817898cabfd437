/**
 * One `Store.watch` on etcd: an etcd3 `Watcher` plus the bookkeeping that makes it keep
 * the Store's promise — every event after `sinceRevision`, in order, exactly once — across
 * the reconnections etcd3 performs by itself.
 *
 * Why this is more than a thin wrapper: etcd3 (1.1.2) resumes a broken watch stream from
 * `last response header revision + 1`. That header is the store's current revision, not
 * the revision of the last event delivered: on the created response, and on every batch
 * of a watch still catching up on history (etcd sends at most 1000 revisions per batch,
 * each stamped with the current revision). A stream dropped during catch-up therefore
 * resumes past events never delivered (seen with etcd 3.4: 1000 of 2500 replayed events
 * arrived, the rest were skipped). So this class tracks `nextRev` itself — the modRevision
 * of the last delivered event + 1 — and rewrites the watcher's `start_revision` whenever the
 * stream disconnects; events below `nextRev` are dropped should any be sent again.
 *
 * `nextRev` advances only on events. Progress notifications (empty responses) are not used
 * to advance it: etcd before 3.4.24/3.5.8 may send one ahead of pending events
 * (etcd-io/etcd#15220). An idle watch that reconnects after its start revision was
 * compacted therefore ends with Compacted, and its owner relists — as an informer must.
 *
 * States: starting (until etcd acknowledges the watch) → live → ended. Once ended, no
 * handler callback follows; onError is called at most once, and never after cancel().
 */
import type { IWatchResponse, Watcher } from 'etcd3';
import { StorageError } from './errors.js';
import type { KeyValue, Watch, WatchEvent, WatchHandler } from './store.js';

/** What an EtcdWatch needs: the etcd watch builder's inputs, the handler, and its retry deadline. */
export interface EtcdWatchConfig {
  /** A watcher from `WatchBuilder.watcher()`: attached to the stream, not yet acknowledged. */
  watcher: Watcher;
  handler: WatchHandler;
  /** The first revision wanted (sinceRevision + 1), or 0 for "from when etcd registers it". */
  startRevision: number;
  /** How long start() may wait for etcd to acknowledge the watch (ms). */
  startTimeoutMs: number;
  /** How long a live watch may stay disconnected before it ends with Unavailable (ms). */
  retryTimeoutMs: number;
  /**
   * Turns a failure into the error to report: Compacted if `nextRev` is no longer in
   * history, else Unavailable. Never rejects.
   */
  classify(err: unknown, nextRev: number): Promise<StorageError>;
  /** Called once when the watch ends, however it ends. */
  onEnd(watch: EtcdWatch): void;
}

type State = 'starting' | 'live' | 'ended';

/**
 * One Store watch over an etcd watch: converts responses to WatchEvent batches, tracks the
 * next revision owed so a resumed stream neither repeats nor skips events, and ends once
 * with onError on a failure it cannot resume from.
 */
export class EtcdWatch implements Watch {
  private state: State = 'starting';
  /** The revision of the next event to deliver (0 until known, for a watch "from now"). */
  private nextRev: number;
  private cancelled = false;
  private startTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly started: Promise<Watch>;
  private settleStart: { resolve(w: Watch): void; reject(err: StorageError): void } | undefined;
  /** Resolves when etcd3 has let go of the watcher (at once if it never had to). */
  detached: Promise<void> = Promise.resolve();

  constructor(private readonly cfg: EtcdWatchConfig) {
    this.nextRev = cfg.startRevision;
    this.started = new Promise<Watch>((resolve, reject) => (this.settleStart = { resolve, reject }));
    // Listeners go on synchronously, before the stream can deliver anything.
    const w = cfg.watcher;
    w.on('connected', (res) => this.onConnected(res));
    w.on('data', (res) => this.onData(res));
    w.on('disconnected', (err) => this.onDisconnected(err));
    w.on('error', (err) => {
      if (this.state !== 'ended') this.end(this.cfg.classify(err, this.nextRev), false);
    });
    this.startTimer = setTimeout(
      () =>
        this.end(
          new StorageError(
            'Unavailable',
            `etcd did not acknowledge the watch within ${cfg.startTimeoutMs} ms`,
          ),
          true,
        ),
      cfg.startTimeoutMs,
    );
  }

  /** Resolves once etcd has registered the watch; rejects with the StorageError that ended it. */
  start(): Promise<Watch> {
    return this.started;
  }

  cancel(): void {
    this.cancelled = true;
    this.end(new StorageError('Closed', 'watch cancelled'), true);
  }

  /** Ends the watch with `err` (delivered to onError, or as the start() rejection). */
  fail(err: StorageError): void {
    this.end(err, true);
  }

  private onConnected(res: IWatchResponse): void {
    if (this.state === 'ended') return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.state !== 'starting') return;
    // A watch "from now" starts after the revision etcd registered it at.
    if (this.nextRev === 0) {
      try {
        this.nextRev = toRevision(res.header.revision, 'header revision') + 1;
      } catch (err) {
        this.end(err as StorageError, true);
        return;
      }
    }
    this.state = 'live';
    clearTimeout(this.startTimer);
    this.settleStart?.resolve(this);
  }

  private onData(res: IWatchResponse): void {
    if (this.state !== 'live') return;
    const batch: WatchEvent[] = [];
    try {
      for (const ev of res.events) {
        const event = toWatchEvent(ev.type, ev.kv, ev.prev_kv);
        // Already delivered before a reconnect: etcd resent it.
        if (event.kv.modRevision >= this.nextRev) batch.push(event);
      }
    } catch (err) {
      this.end(err as StorageError, true);
      return;
    }
    if (batch.length === 0) return;
    this.nextRev = batch[batch.length - 1]!.kv.modRevision + 1;
    try {
      this.cfg.handler.onEvents(batch);
    } catch (err) {
      // As the in-process hub: a handler that throws loses its watch, nothing else.
      this.end(new StorageError('Unavailable', `watch handler failed: ${(err as Error).message}`), true);
    }
  }

  private onDisconnected(err: Error): void {
    if (this.state === 'ended') return;
    // etcd3 re-creates the watch from this request when the stream is back: make it ask
    // for exactly the next undelivered revision (see the top of this file).
    if (this.nextRev > 0) this.cfg.watcher.request.start_revision = String(this.nextRev);
    if (this.state === 'live' && this.retryTimer === undefined) {
      this.retryTimer = setTimeout(
        () =>
          this.end(
            new StorageError(
              'Unavailable',
              `etcd watch disconnected for ${this.cfg.retryTimeoutMs} ms: ${err.message}`,
            ),
            true,
          ),
        this.cfg.retryTimeoutMs,
      );
      this.retryTimer.unref();
    }
  }

  /**
   * The single exit. `detach` says whether etcd3 still holds the watcher (it has already
   * dropped it when it reports 'error', i.e. etcd cancelled the watch).
   */
  private end(reason: StorageError | Promise<StorageError>, detach: boolean): void {
    if (this.state === 'ended') return;
    const wasStarting = this.state === 'starting';
    this.state = 'ended';
    clearTimeout(this.startTimer);
    clearTimeout(this.retryTimer);
    // On a later microtask, so that nothing etcd3 throws can escape into the caller.
    if (detach) this.detached = Promise.resolve().then(() => this.cfg.watcher.cancel().catch(() => {}));
    this.cfg.onEnd(this);
    void Promise.resolve(reason).then((err) => {
      if (wasStarting) {
        this.settleStart?.reject(err);
      } else if (!this.cancelled) {
        try {
          this.cfg.handler.onError(err);
        } catch {
          // The watch is over either way; a throwing onError must not take the process down.
        }
      }
    });
  }
}

/**
 * An etcd int64 (etcd3 hands them over as decimal strings) as a number.
 * @throws StorageError Unavailable if it is not a non-negative safe integer.
 */
export function toRevision(value: string | number, what: string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new StorageError('Unavailable', `etcd returned ${what} ${String(value)}: not a safe integer`);
  }
  return n;
}

interface RawKv {
  key: Buffer;
  value: Buffer;
  create_revision: string;
  mod_revision: string;
}

function toKeyValue(kv: RawKv): KeyValue {
  return {
    key: kv.key.toString('utf8'),
    value: kv.value.toString('utf8'),
    createRevision: toRevision(kv.create_revision, 'create_revision'),
    modRevision: toRevision(kv.mod_revision, 'mod_revision'),
  };
}

/** An etcd event (keys already without the namespace) as a Store event. */
function toWatchEvent(type: string, kv: RawKv, prev: RawKv | null | undefined): WatchEvent {
  const prevKv = prev && prev.key.length > 0 ? toKeyValue(prev) : undefined;
  if (type.toUpperCase() === 'DELETE') {
    const deleted: KeyValue = {
      key: kv.key.toString('utf8'),
      value: '',
      createRevision: 0,
      modRevision: toRevision(kv.mod_revision, 'mod_revision'),
    };
    return prevKv ? { type: 'DELETE', kv: deleted, prevKv } : { type: 'DELETE', kv: deleted };
  }
  const put = toKeyValue(kv);
  return prevKv ? { type: 'PUT', kv: put, prevKv } : { type: 'PUT', kv: put };
}
