/**
 * The snapshot layer's one error type: every failure of save, list, delete, prune and
 * restore is a SnapshotError with a stable code and a message meant for the operator (the
 * CLI prints it as it is and exits 1).
 */

/** The stable codes of SnapshotError. */
export const SnapshotErrorCode = {
  /** A malformed argument: a base name with a '/', a retention of 0. */
  Invalid: 'Invalid',
  /** No such snapshot (name or path). */
  NotFound: 'NotFound',
  /** The file is shorter than its metadata says. */
  Truncated: 'Truncated',
  /** The file fails its checksum, SQLite's integrity_check, or is not a snapshot at all. */
  Corrupt: 'Corrupt',
  /** A k8ts server holds the data dir (restore in place refused while it runs). */
  ServerRunning: 'ServerRunning',
  /** The restore target already holds what would be overwritten (an etcd data dir). */
  Exists: 'Exists',
  /** The datastore could not be read or written (etcd unreachable, a full disk). */
  Failed: 'Failed',
} as const;
export type SnapshotErrorCode = (typeof SnapshotErrorCode)[keyof typeof SnapshotErrorCode];

/** A snapshot failure with a stable code; `message` says what to do about it. */
export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
  constructor(
    readonly code: SnapshotErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** True when `err` is a SnapshotError (with `code`, when given). */
export function isSnapshotError(err: unknown, code?: SnapshotErrorCode): err is SnapshotError {
  return err instanceof SnapshotError && (code === undefined || err.code === code);
}
