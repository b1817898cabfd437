/**
 * JSON objects used as maps: labels, annotations, a ConfigMap's `data` and `binaryData`,
 * a Secret's `data` and `stringData`, selectors' `matchLabels`, resource lists. Their keys
 * are the user's, and Go's `map[string]string` has no reserved ones: `constructor`,
 * `toString` and `__proto__` are keys like any other (`__proto__` is a valid ConfigMap
 * key and env var name). A plain JS object is not such a map unless it is read and
 * written by own keys only:
 *
 * - `k in m` and `m[k] !== undefined` are true for every name on Object.prototype, so a
 *   check of "is this key present" must be `Object.hasOwn(m, k)` (or `ownValue`);
 * - `m[k] = v` with `k === '__proto__'` sets the object's prototype instead of adding
 *   the key (and `m.__proto__` reads the prototype), so a copy made key by key must use
 *   `setOwnValue` (JSON.parse, structuredClone, spread and Object.fromEntries already
 *   create own properties; Object.assign does not).
 *
 * Upstream has no counterpart: Go maps have no prototype.
 */

/** `m[key]` when `key` is an own property of `m`, else undefined (never an Object.prototype member). */
export function ownValue<T>(m: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return m !== undefined && Object.hasOwn(m, key) ? m[key] : undefined;
}

/**
 * Sets `m[key] = value` as an own, enumerable property, `__proto__` included (a plain
 * assignment would replace the prototype of `m` with `value`).
 */
export function setOwnValue<M extends Record<string, unknown>>(m: M, key: string, value: M[string]): void {
  if (key === '__proto__')
    Object.defineProperty(m, key, { value, writable: true, enumerable: true, configurable: true });
  else (m as Record<string, unknown>)[key] = value;
}
