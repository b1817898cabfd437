/**
 * `continue` tokens for paginated lists. As kube-apiserver's, a token pins the revision of
 * the first page and the key to resume from, so that every page reads the same snapshot.
 * The token is opaque to clients: base64url of `{"v":1,"rv":N,"start":"<key>"}`.
 */
import { StorageError } from './errors.js';
import type { KeyValue, ListResult } from './store.js';

/** Where a paginated list resumes: the snapshot revision and the first key of the next page. */
export interface ContinuePoint {
  /** The revision all pages are read at. */
  revision: number;
  /** The first key of the next page (inclusive). */
  startKey: string;
}

/** Encodes where the next page starts. */
export function encodeContinue(point: ContinuePoint): string {
  return Buffer.from(JSON.stringify({ v: 1, rv: point.revision, start: point.startKey })).toString(
    'base64url',
  );
}

/**
 * Decodes a token from `encodeContinue`, checking that it resumes inside `prefix`.
 * @throws StorageError InvalidArgument for anything malformed or outside the prefix.
 */
export function decodeContinue(token: string, prefix: string): ContinuePoint {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw new StorageError('InvalidArgument', 'continue token is malformed');
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (
    p === null ||
    typeof p !== 'object' ||
    p.v !== 1 ||
    typeof p.rv !== 'number' ||
    !Number.isSafeInteger(p.rv) ||
    p.rv < 1 ||
    typeof p.start !== 'string' ||
    !p.start.startsWith(prefix)
  ) {
    throw new StorageError('InvalidArgument', 'continue token is malformed or does not belong to this list');
  }
  return { revision: p.rv, startKey: p.start };
}

/**
 * One page of a list read with `limit + 1` keys (all of them when `limit` is 0): the
 * first `limit`, and a `continue` token resuming at the extra key, pinned to `revision`.
 * Every backend reads its pages so (one key more than the limit).
 */
export function listPage(items: KeyValue[], limit: number, revision: number): ListResult {
  if (limit > 0 && items.length > limit) {
    return {
      items: items.slice(0, limit),
      revision,
      continue: encodeContinue({ revision, startKey: items[limit]!.key }),
    };
  }
  return { items, revision };
}
