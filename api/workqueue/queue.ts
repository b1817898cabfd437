/**
 * The workqueue: a FIFO of keys with the guarantees client-go's `util/workqueue` gives
 * controllers.
 *
 * - **Dedup.** A key added while it is already waiting is not queued twice.
 * - **One worker per key.** A key handed out by get() is *processing* until done(key).
 *   Adding it meanwhile only marks it *dirty*; done() then queues it again, so the
 *   change is not lost and no two workers reconcile the same object at once.
 * - **Shutdown.** After shutDown() adds are ignored; get() keeps handing out what is
 *   still queued and then resolves `undefined`, the signal for a worker to exit.
 *
 * Items are compared by identity (`===`, as a `Set`), so keys are normally strings
 * (`namespace/name`).
 */
import { Fifo } from './fifo.js';

/** What a worker needs from a queue: get, done and the add that reconcile results feed. */
export interface QueueInterface<T> {
  add(item: T): void;
  get(): Promise<T | undefined>;
  done(item: T): void;
  len(): number;
  shutDown(): void;
  shuttingDown(): boolean;
}

/**
 * A FIFO workqueue of keys (client-go `workqueue.Typed`): dedup of waiting keys, no
 * concurrent processing of one key (dirty/processing sets), graceful shutdown.
 * `T` must not include `undefined` (get() uses it to signal shutdown).
 */
export class WorkQueue<T = string> implements QueueInterface<T> {
  /** Keys waiting to be handed out, in order; each is also in `dirty`, none in `processing`. */
  private readonly queue = new Fifo<T>();
  /** Keys that need processing: queued ones, and processing ones added again. */
  private readonly dirty = new Set<T>();
  /** Keys handed out by get() and not yet done(). */
  private readonly processing = new Set<T>();
  /** get() calls waiting for a key, oldest first. */
  private readonly waiters: Array<(item: T | undefined) => void> = [];
  /** shutDownWithDrain() calls waiting for the queue to empty. */
  private drainWaiters: Array<() => void> = [];
  private shutting = false;

  /**
   * Marks `item` as needing processing. Ignored after shutdown and when the item is already
   * waiting. If it is being processed, it is only marked dirty and is queued again by done().
   */
  add(item: T): void {
    if (this.shutting || this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.push(item);
  }

  /** Number of keys waiting (not those being processed). Informational only. */
  len(): number {
    return this.queue.length;
  }

  /**
   * Resolves with the next key, waiting as long as the queue is empty; the key is then
   * processing until done(key) is called, which the caller must do exactly once.
   * Resolves `undefined` once the queue is shut down and nothing is left waiting.
   */
  get(): Promise<T | undefined> {
    if (this.len() > 0) return Promise.resolve(this.take());
    if (this.shutting) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Marks `item` as no longer processing. If it was added again meanwhile (dirty), it is
   * queued again now. Calling done() for an item not processing has no effect.
   */
  done(item: T): void {
    if (!this.processing.delete(item)) return;
    if (this.dirty.has(item)) this.push(item);
    this.checkDrained();
  }

  /**
   * Stops accepting new keys. Workers still receive every key already queued (and dirty
   * keys queued again by done()), then get() resolves `undefined`. Idempotent; also ends
   * the wait of a pending shutDownWithDrain().
   */
  shutDown(): void {
    this.shutting = true;
    this.wakeWaitersOnShutdown();
    const drained = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of drained) resolve();
  }

  /**
   * shutDown(), then resolves once every queued key has been handed out and done() (the
   * queue and the processing set are both empty). Workers must keep calling get() and
   * done() or this never resolves; a later shutDown() ends the wait.
   */
  shutDownWithDrain(): Promise<void> {
    this.shutting = true;
    this.wakeWaitersOnShutdown();
    if (this.isDrained()) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Whether shutDown() or shutDownWithDrain() has been called. */
  shuttingDown(): boolean {
    return this.shutting;
  }

  private push(item: T): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      // Hand the key straight to the oldest waiting worker, marking it processing now so
      // that no later get() or add() can see it as merely queued.
      this.dirty.delete(item);
      this.processing.add(item);
      waiter(item);
      return;
    }
    this.queue.push(item);
  }

  private take(): T {
    const item = this.queue.shift()!;
    this.dirty.delete(item);
    this.processing.add(item);
    return item;
  }

  private wakeWaitersOnShutdown(): void {
    // Waiters exist only while the queue is empty, so every one of them is told to exit.
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  private isDrained(): boolean {
    return this.len() === 0 && this.processing.size === 0;
  }

  private checkDrained(): void {
    if (this.shutting && this.drainWaiters.length > 0 && this.isDrained()) {
      const drained = this.drainWaiters;
      this.drainWaiters = [];
      for (const resolve of drained) resolve();
    }
  }
}
