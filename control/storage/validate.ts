/**
 * Argument checks shared by every backend, so that all of them reject the same bad input
 * with the same typed error before anything is written.
 */
import { StorageError } from './errors.js';

/** Every key lives under this prefix (as kube-apiserver's default `--etcd-prefix`). */
export const KEY_ROOT = '/registry/';

/** The largest value stored, in bytes: 1.5 MiB, etcd's default request limit (and so Kubernetes' object limit). */
export const MAX_VALUE_BYTES = 1.5 * 1024 * 1024;
/** The longest key, in bytes (names are at most 253 characters; this leaves room for the rest of the path). */
export const MAX_KEY_BYTES = 1024;

/** A UTF-16 surrogate without its pair: not encodable as UTF-8, so backends would alter it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks a key (`/registry/...`, no NUL, no empty segments at the end).
 * @throws StorageError InvalidKey.
 */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || !key.startsWith(KEY_ROOT) || key.length === KEY_ROOT.length) {
    throw new StorageError(
      'InvalidKey',
      `key ${JSON.stringify(key)} must start with ${KEY_ROOT} and name an object`,
      {
        key: String(key),
      },
    );
  }
  if (key.includes('\0') || key.endsWith('/')) {
    throw new StorageError('InvalidKey', `key ${JSON.stringify(key)} must not contain NUL or end with '/'`, {
      key,
    });
  }
  if (Buffer.byteLength(key) > MAX_KEY_BYTES || LONE_SURROGATE.test(key)) {
    throw new StorageError('InvalidKey', `key must be valid UTF-8 of at most ${MAX_KEY_BYTES} bytes`, {
      key,
    });
  }
}

/**
 * Checks a list/watch prefix: under `/registry/` and ending with '/', so that
 * `/registry/pods/default/` never matches `/registry/pods/default-2/...`.
 * @throws StorageError InvalidKey.
 */
export function checkPrefix(prefix: unknown): asserts prefix is string {
  if (
    typeof prefix !== 'string' ||
    !prefix.startsWith(KEY_ROOT) ||
    !prefix.endsWith('/') ||
    prefix.includes('\0')
  ) {
    throw new StorageError(
      'InvalidKey',
      `prefix ${JSON.stringify(prefix)} must start with ${KEY_ROOT} and end with '/'`,
      {
        key: String(prefix),
      },
    );
  }
}

/** Values jsonValue made that no write has checked yet (see there). */
const madeByStringify = new Set<string>();
/** More unchecked values than this (made and never written) are forgotten, and checked in full. */
const MAX_UNCHECKED_VALUES = 1024;

/**
 * `JSON.stringify(obj)` as a value to write: a value made here is JSON and has no lone
 * surrogate by construction (JSON.stringify escapes them), so checkValue skips its parse and
 * its scan of it, which were some 1.5 % of the control process in bench:scale (every object
 * written parsed once more only to be checked). The size limit is still checked. Any other
 * string is checked in full, and one equal to a value made here is the same JSON.
 */
export function jsonValue(obj: unknown): string {
  const value = JSON.stringify(obj);
  if (typeof value !== 'string') return value;
  if (madeByStringify.size >= MAX_UNCHECKED_VALUES) madeByStringify.clear();
  madeByStringify.add(value);
  return value;
}

/**
 * Checks that a value is a JSON document of at most MAX_VALUE_BYTES without lone
 * surrogates. Parsing costs about 4 ms per MiB and keeps a corrupt value from ever reaching
 * the log; a value jsonValue made is not parsed again.
 * @throws StorageError InvalidValue.
 */
export function checkValue(value: unknown): asserts value is string {
  if (typeof value !== 'string')
    throw new StorageError('InvalidValue', `value must be a JSON string, got ${typeof value}`);
  const made = madeByStringify.delete(value);
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_VALUE_BYTES) {
    throw new StorageError(
      'InvalidValue',
      `value of ${bytes} bytes exceeds the limit of ${MAX_VALUE_BYTES} bytes`,
    );
  }
  if (made) return;
  if (LONE_SURROGATE.test(value)) {
    throw new StorageError('InvalidValue', 'value is not valid UTF-8 text (it has a lone surrogate)');
  }
  try {
    JSON.parse(value);
  } catch (err) {
    throw new StorageError('InvalidValue', `value is not JSON: ${(err as Error).message}`);
  }
}

/**
 * Checks a revision argument: a positive safe integer (`allowZero` also accepts 0, which
 * means "current" / "from now on").
 * @throws StorageError InvalidArgument.
 */
export function checkRevision(rev: unknown, what: string, allowZero = false): asserts rev is number {
  if (typeof rev !== 'number' || !Number.isSafeInteger(rev) || rev < (allowZero ? 0 : 1)) {
    throw new StorageError(
      'InvalidArgument',
      `${what} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${JSON.stringify(rev)}`,
    );
  }
}

/** The smallest string greater than every string starting with `prefix` (etcd's range_end). */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/**
 * The revision a read happens at, for backends that know their current and compacted
 * revisions: `requested` undefined/0 → `current`.
 * @throws StorageError InvalidArgument (not a positive integer), Compacted (older than
 *   `compacted`), FutureRevision (newer than `current`).
 */
export function readRevision(requested: number | undefined, current: number, compacted: number): number {
  if (requested === undefined || requested === 0) return current;
  checkRevision(requested, 'revision');
  if (requested < compacted) {
    throw new StorageError('Compacted', `revision ${requested} has been compacted (oldest is ${compacted})`, {
      compactRevision: compacted,
    });
  }
  if (requested > current) {
    throw new StorageError('FutureRevision', `revision ${requested} is newer than the current ${current}`);
  }
  return requested;
}

/**
 * The start of a watch: events after `sinceRevision` (0 = after `current`). The state at
 * `sinceRevision` must still be readable (so every event can carry its previous value,
 * which etcd reads at the revision before the event): a watch may start at `compacted`
 * at the earliest.
 * @throws StorageError InvalidArgument, Compacted.
 */
export function watchStart(sinceRevision: number, current: number, compacted: number): number {
  checkRevision(sinceRevision, 'sinceRevision', true);
  const since = sinceRevision === 0 ? current : sinceRevision;
  if (since < compacted) {
    throw new StorageError('Compacted', `revision ${since} has been compacted (oldest is ${compacted})`, {
      compactRevision: compacted,
    });
  }
  return since;
}

/**
 * Checks a compaction point against the current revision.
 * @throws StorageError InvalidArgument (not a positive integer), FutureRevision (newer than `current`).
 */
export function checkCompactRevision(revision: unknown, current: number): asserts revision is number {
  checkRevision(revision, 'compact revision');
  if (revision > current) {
    throw new StorageError('FutureRevision', `cannot compact at ${revision}: current revision is ${current}`);
  }
}
