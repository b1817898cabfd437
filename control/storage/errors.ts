/**
 * Storage-layer errors. Every failure a `Store` reports is a `StorageError` with a stable
 * `code`; the API server maps these codes to HTTP statuses and `metav1.Status` reasons in
 * exactly one place (as the apiserver's storage errors map to `apierrors`).
 */
import type { KeyValue } from './store.js';

/** The stable codes a `Store` can fail with. */
export const StorageErrorCode = {
  /** create() of a key that already exists (etcd: compare createRevision == 0 failed). */
  KeyExists: 'KeyExists',
  /** update()/delete()/get-for-update of a key that does not exist. */
  KeyNotFound: 'KeyNotFound',
  /** update()/delete() whose expected modRevision is not the key's current one. */
  Conflict: 'Conflict',
  /** A read or watch at a revision older than the compacted history. */
  Compacted: 'Compacted',
  /** A read at a revision newer than the store's current revision. */
  FutureRevision: 'FutureRevision',
  /** A key outside `/registry/`, empty, or containing NUL. */
  InvalidKey: 'InvalidKey',
  /** A value that is not a JSON document. */
  InvalidValue: 'InvalidValue',
  /** Any other malformed argument: a non-integer revision, a bad limit or continue token. */
  InvalidArgument: 'InvalidArgument',
  /** The store was closed. */
  Closed: 'Closed',
  /** The backend cannot be reached or failed internally (etcd down, disk error). */
  Unavailable: 'Unavailable',
} as const;
export type StorageErrorCode = (typeof StorageErrorCode)[keyof typeof StorageErrorCode];

/**
 * A typed storage failure.
 *
 * - `Conflict` carries `current`: the key's value at the time of the failed compare, so a
 *   caller can retry without another read (as etcd's txn "else" branch returns it).
 * - `Compacted` carries `compactRevision`: the oldest revision still readable.
 */
export class StorageError extends Error {
  override readonly name = 'StorageError';
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    readonly details: {
      key?: string;
      current?: KeyValue;
      compactRevision?: number;
    } = {},
  ) {
    super(message);
  }
}

/** True when `err` is a StorageError with the given code (or any code when omitted). */
export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}
