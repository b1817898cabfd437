/**
 * In-process watch fan-out for the backends that own their data in this process (memory,
 * sqlite): after each commit the backend publishes the committed events, and every
 * watcher whose prefix matches gets them, in revision order, on a later microtask (a
 * slow or throwing handler never runs inside a writer's commit).
 *
 * Replay and registration happen in one synchronous step in the backend (read history,
 * then `add`), so no event can fall between the replayed past and the live stream.
 */
import { StorageError } from './errors.js';
import type { Watch, WatchEvent, WatchHandler } from './store.js';

interface Watcher {
  prefix: string;
  /** Only events with a later revision are delivered (a watch may start in the future). */
  since: number;
  handler: WatchHandler;
  pending: WatchEvent[];
  scheduled: boolean;
  done: boolean;
}

/** The fan-out of committed events to the in-process watchers of one store. */
export class WatchHub {
  private readonly watchers = new Set<Watcher>();

  /** Number of live watchers (for metrics and tests). */
  get size(): number {
    return this.watchers.size;
  }

  /**
   * Registers a watcher of events under `prefix` with revision > `since`; `replay`
   * (events already in history, in order, all after `since`) is delivered before anything
   * published later. `since` may be ahead of the store (as etcd allows): the writes that
   * lead up to it are then not delivered.
   */
  add(prefix: string, since: number, handler: WatchHandler, replay: WatchEvent[]): Watch {
    const w: Watcher = { prefix, since, handler, pending: [], scheduled: false, done: false };
    this.watchers.add(w);
    if (replay.length > 0) this.enqueue(w, replay);
    return {
      cancel: () => {
        w.done = true;
        this.watchers.delete(w);
      },
    };
  }

  /** Hands committed events (in revision order) to every matching watcher. */
  publish(events: WatchEvent[]): void {
    if (this.watchers.size === 0 || events.length === 0) return;
    for (const w of this.watchers) {
      const matching = events.filter((e) => e.kv.modRevision > w.since && e.kv.key.startsWith(w.prefix));
      if (matching.length > 0) this.enqueue(w, matching);
    }
  }

  /** Ends every watcher with `err` (store closed or failed). */
  failAll(err: StorageError): void {
    for (const w of this.watchers) {
      w.done = true;
      queueMicrotask(() => safeOnError(w.handler, err));
    }
    this.watchers.clear();
  }

  private enqueue(w: Watcher, events: WatchEvent[]): void {
    for (const e of events) w.pending.push(e);
    if (w.scheduled) return;
    w.scheduled = true;
    queueMicrotask(() => {
      w.scheduled = false;
      if (w.done || w.pending.length === 0) return;
      const batch = w.pending;
      w.pending = [];
      try {
        w.handler.onEvents(batch);
      } catch (err) {
        // A handler that throws loses its watch rather than breaking the other watchers.
        w.done = true;
        this.watchers.delete(w);
        safeOnError(
          w.handler,
          new StorageError('Unavailable', `watch handler failed: ${(err as Error).message}`),
        );
      }
    });
  }
}

/** Calls onError; a handler that throws there too cannot take the process down with it. */
function safeOnError(handler: WatchHandler, err: StorageError): void {
  try {
    handler.onError(err);
  } catch {
    // Nothing more can be told to a watcher whose error handler fails.
  }
}
