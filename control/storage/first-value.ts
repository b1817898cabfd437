/**
 * A value every control process of a cluster must share (its CA, its service account
 * signing key), settled by whoever starts first: the store's value under a key, or this
 * process's own put there create-if-absent, so that two processes starting at once agree.
 */
import { isStorageError } from './errors.js';
import type { Store } from './store.js';

/**
 * The JSON value under `key` as `parse` reads it, or `local` when there was none (then it
 * is stored). A create that loses the race to another process reads the winner's.
 * @throws StorageError when the store cannot be read or written; whatever `parse` throws
 *   for a stored value it refuses.
 */
export async function firstValue<T>(
  store: Store,
  key: string,
  local: T,
  parse: (stored: unknown) => T,
): Promise<T> {
  for (;;) {
    const kv = await store.get(key);
    if (kv) return parse(JSON.parse(kv.value));
    try {
      await store.create(key, JSON.stringify(local));
      return local;
    } catch (err) {
      // Another control process created it first: read theirs.
      if (!isStorageError(err, 'KeyExists')) throw err;
    }
  }
}
