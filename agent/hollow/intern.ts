/**
 * Canonical copies of the short strings in the objects the hollow nodes' shared pod watch
 * decodes (watches.ts). JSON.parse makes a new string for every value, so the pods of a few
 * Deployments hold one copy per pod of each image, schedulerName, toleration key, volume
 * mount path, condition type...: a heap snapshot of 200 hollow nodes with 2,000 pods had
 * "k8ts/busybox:1.0" 8,424 times and some 125 strings per pod. The values stay as they are;
 * only which string object holds them changes (strings are immutable, so sharing one
 * cannot be seen).
 *
 * The table holds at most `maxEntries` strings: when it is full it starts afresh, so that
 * values seen once (uids, names, timestamps, tokens) cannot grow it without bound, while
 * the ones that repeat are back in it at their next occurrence.
 */
export class StringInterner {
  private table = new Map<string, string>();

  /**
   * @param maxEntries strings kept at most (default 20,000: some 2 MB).
   * @param maxLength longer strings are left alone (default 128 characters).
   */
  constructor(
    private readonly maxEntries = 20_000,
    private readonly maxLength = 128,
  ) {}

  /** The canonical copy of `s` (`s` itself when it is long or the first of its value). */
  string(s: string): string {
    if (s.length > this.maxLength) return s;
    const known = this.table.get(s);
    if (known !== undefined) return known;
    if (this.table.size >= this.maxEntries) this.table = new Map();
    this.table.set(s, s);
    return s;
  }

  /**
   * Replaces, in place, every string value in `value` (objects and arrays, deeply) by its
   * canonical copy; returns `value`. For objects this process owns alone, as a watch
   * event's freshly decoded object.
   */
  internAll<T>(value: T): T {
    this.walk(value as unknown);
    return value;
  }

  private walk(v: unknown): void {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === 'string') v[i] = this.string(x);
        else if (typeof x === 'object' && x !== null) this.walk(x);
      }
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        const x = o[k];
        if (typeof x === 'string') o[k] = this.string(x);
        else if (typeof x === 'object' && x !== null) this.walk(x);
      }
    }
  }
}
