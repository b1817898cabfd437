/**
 * One copy of each repeated short string in decoded API objects. JSON.parse makes a new
 * string for every value it reads (property names are shared by V8, values are not), so a
 * process that keeps thousands of pods keeps thousands of copies of `k8ts/busybox:1.0`,
 * `default-scheduler`, `node.kubernetes.io/not-ready`, `/dev/termination-log`, the
 * namespace and label values: in a heap snapshot of the control process after deploying
 * 2,000 pods, some 96 extra copies per pod, 3.7 KB. kube-apiserver has the same cost in
 * Go; client-go's informers do not intern either, the kubelet's pod cache neither.
 *
 * The table is bounded: at most `maxEntries` strings, and it starts afresh when full, so
 * values seen once (uids, names, timestamps) cannot grow it without end; a value that
 * repeats is back in it at its next occurrence. Strings longer than `maxLength` are left
 * alone (rarely repeated, and costly to hash).
 */
export class StringTable {
  private table = new Map<string, string>();

  /**
   * @param maxEntries strings kept before the table starts afresh (default 20,000).
   * @param maxLength longest string (UTF-16 code units) the table takes (default 128).
   */
  constructor(
    private readonly maxEntries = 20_000,
    private readonly maxLength = 128,
  ) {}

  /** The table's copy of `s` (`s` itself the first time, or when too long). */
  get(s: string): string {
    if (s.length > this.maxLength) return s;
    const canonical = this.table.get(s);
    if (canonical !== undefined) return canonical;
    if (this.table.size >= this.maxEntries) this.table = new Map();
    this.table.set(s, s);
    return s;
  }

  /** How many strings the table holds now. */
  get size(): number {
    return this.table.size;
  }

  /**
   * Replaces, in place, every string value in `value` (object properties and array
   * elements, at any depth) by the table's copy; returns `value`. Values are unchanged
   * (equal strings), so this is invisible to every reader. `value` must be a tree of
   * plain, writable objects and arrays, as JSON.parse makes.
   */
  internValues<T>(value: T): T {
    const pending: unknown[] = [value];
    while (pending.length > 0) {
      const node = pending.pop();
      if (typeof node !== 'object' || node === null) continue;
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) {
          const item: unknown = node[i];
          if (typeof item === 'string') node[i] = this.get(item);
          else if (typeof item === 'object' && item !== null) pending.push(item);
        }
        continue;
      }
      const record = node as Record<string, unknown>;
      for (const key in record) {
        const item = record[key];
        if (typeof item === 'string') record[key] = this.get(item);
        else if (typeof item === 'object' && item !== null) pending.push(item);
      }
    }
    return value;
  }
}
