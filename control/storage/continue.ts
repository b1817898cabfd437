/**
 * `continue` tokens for paginated lists. As kube-apiserver's, a token pins the revision of
 * the first page and the key to resume from, so that every page reads the same snapshot.
 * The token is opaque to clients: base64url of `{"v":1,"rv":N,"start":"<key>"}`.
 */
import { StorageError } from './errors.js';

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
