/**
 * The revisioned key-value store every API object lives in, with etcd v3 semantics
 * (the contract kube-apiserver's storage relies on):
 *
 * - One global revision, starting at 1 for an empty store (as etcd). Every successful
 *   write (create, update, delete) increments it by exactly one. A key's `modRevision` is
 *   the revision of its last write and becomes the object's `metadata.resourceVersion`.
 * - Keys are `/registry/<resource>/[<namespace>/]<name>`; values are JSON documents (text).
 * - Writes are compare-and-swap: create fails if the key exists; update and delete are
 *   guarded by the modRevision the caller last saw.
 * - Reads may name a past revision; history older than the last compaction is gone and
 *   reading it fails with `Compacted`.
 * - Watches deliver every PUT/DELETE after a given revision, in revision order, each with
 *   the key's previous value.
 *
 * Backends: `memory` (tests), `sqlite` (embedded default), `etcd` (clusters). They are
 * interchangeable: `runStoreConformance` in `conformance.ts` runs against each.
 */
import type { StorageError } from './errors.js';

/** One key at one revision. Revisions are positive integers (etcd's int64, safe in a JS number). */
export interface KeyValue {
  key: string;
  /** The JSON document as text; '' for the `kv` of a DELETE event. */
  value: string;
  /** Revision at which the key was (last) created. 0 only in DELETE events. */
  createRevision: number;
  /** Revision of the key's last write (for a DELETE event: the deletion's revision). */
  modRevision: number;
}

/** A change seen by a watch. `prevKv` is the value just before the change, if the key existed. */
export interface WatchEvent {
  type: 'PUT' | 'DELETE';
  kv: KeyValue;
  prevKv?: KeyValue;
}

/** Receives watch events. Callbacks are invoked in revision order and never concurrently. */
export interface WatchHandler {
  /** A batch of one or more events, in increasing revision order. */
  onEvents(events: WatchEvent[]): void;
  /**
   * The watch has ended with an error (the backend failed, or history it still needed
   * was compacted). No more callbacks follow.
   */
  onError(err: StorageError): void;
}

/** A running watch. cancel() is idempotent; no callbacks follow it. */
export interface Watch {
  cancel(): void;
}

/** Options of `Store.list`. */
export interface ListOptions {
  /** Read at this past revision instead of the current one (0/undefined = current). */
  revision?: number;
  /** At most this many items (positive integer; undefined/0 = all). */
  limit?: number;
  /** The `continue` token of a previous page; the page is read at that page's revision. */
  continue?: string;
}

/** One page of a list: items in key order, the revision they were read at, and where to go on. */
export interface ListResult {
  items: KeyValue[];
  /** The revision the list was read at (its `metadata.resourceVersion`). */
  revision: number;
  /** Present when more items follow: pass it back as `continue` to read the next page. */
  continue?: string;
}

/** The backend names of `--datastore`. */
export type StoreBackend = 'memory' | 'sqlite' | 'etcd';

/**
 * The revisioned store (see the top of this file for the semantics every backend keeps).
 * All methods reject with `StorageError` only.
 */
export interface Store {
  readonly backend: StoreBackend;

  /** The store's current revision (the revision of the latest write; 1 when empty). */
  currentRevision(): Promise<number>;

  /**
   * The key's value, at the current revision or at `revision`.
   * @returns undefined when the key does not exist (at that revision).
   * @throws StorageError InvalidKey, InvalidArgument, Compacted, FutureRevision.
   */
  get(key: string, opts?: { revision?: number }): Promise<KeyValue | undefined>;

  /**
   * The keys under `prefix` (which must end in '/'), in ascending key order, at one
   * revision. With `limit`, returns a page and a `continue` token; following pages are
   * read at the first page's revision, so a paginated list is one consistent snapshot
   * however many writes happen meanwhile.
   * @throws StorageError InvalidKey, InvalidArgument (bad limit/token), Compacted, FutureRevision.
   */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;

  /**
   * Creates `key` if it does not exist.
   * @returns the stored KeyValue (its modRevision is the new revision).
   * @throws StorageError KeyExists, InvalidKey, InvalidValue.
   */
  create(key: string, value: string): Promise<KeyValue>;

  /**
   * Replaces `key`'s value if its modRevision is still `expectedModRevision`.
   * @throws StorageError Conflict (with `details.current`), KeyNotFound, InvalidKey,
   *   InvalidValue, InvalidArgument (expected revision not a positive integer).
   */
  update(key: string, value: string, expectedModRevision: number): Promise<KeyValue>;

  /**
   * Deletes `key`, if `expectedModRevision` is given only when it still matches.
   * @returns the value that was deleted, and the revision of the deletion.
   * @throws StorageError KeyNotFound, Conflict (with `details.current`), InvalidKey, InvalidArgument.
   */
  delete(key: string, expectedModRevision?: number): Promise<{ deleted: KeyValue; revision: number }>;

  /**
   * Watches every key under `prefix` for changes with revision > `sinceRevision`
   * (sinceRevision 0 = from now on). Past events still in history are replayed first,
   * then live ones, with no gap and no duplicate.
   * @throws StorageError Compacted (the promise rejects) when the state at sinceRevision
   *   is no longer readable (sinceRevision < compactedRevision()); InvalidKey, InvalidArgument.
   */
  watch(prefix: string, sinceRevision: number, handler: WatchHandler): Promise<Watch>;

  /**
   * Discards history older than `revision`: afterwards reads at revisions < `revision`
   * and watches with sinceRevision < revision fail with Compacted. The state at
   * `revision` and later stays readable. Compacting at or below a previous compaction is
   * a no-op.
   * @throws StorageError InvalidArgument, FutureRevision.
   */
  compact(revision: number): Promise<void>;

  /** The oldest revision still readable (1 until the first compaction). */
  compactedRevision(): Promise<number>;

  /** Releases the backend; later calls fail with Closed; active watches are cancelled. */
  close(): Promise<void>;
}
