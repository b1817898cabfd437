/**
 * Deep freezing of JSON values that several owners share (the API server's watch cache and
 * the informers of the same process): a write to a shared object then throws a TypeError
 * (modules are strict) instead of changing what every other reader sees.
 */

/**
 * Freezes `value` and every object and array reachable from it, in place, and returns it.
 * An already frozen object is taken as frozen all the way down (what this function
 * leaves), so a second call costs one check. For JSON values (no cycles).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    for (const v of value) deepFreeze(v);
  } else {
    for (const k in value) deepFreeze((value as Record<string, unknown>)[k]);
  }
  return Object.freeze(value);
}
