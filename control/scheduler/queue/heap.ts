/**
 * A binary heap of keyed items with removal and update by key
 * (pkg/scheduler/backend/heap): the storage of the scheduling queue's activeQ and backoffQ.
 */
export class KeyedHeap<T> {
  private readonly items: T[] = [];
  private readonly index = new Map<string, number>();

  /** `less(a, b)`: a comes out before b. */
  constructor(
    private readonly keyOf: (item: T) => string,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  get(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  /** Adds `item`, or replaces the item with the same key and restores the order. */
  addOrUpdate(item: T): void {
    const key = this.keyOf(item);
    const i = this.index.get(key);
    if (i !== undefined) {
      this.items[i] = item;
      this.fix(i);
      return;
    }
    this.items.push(item);
    this.index.set(key, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  /** The first item without removing it. */
  peek(): T | undefined {
    return this.items[0];
  }

  /** Removes and returns the first item. */
  pop(): T | undefined {
    if (this.items.length === 0) return undefined;
    return this.removeAt(0);
  }

  /** Removes the item with `key`; returns it, or undefined. */
  delete(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.removeAt(i);
  }

  /** Every item, in no particular order. */
  values(): readonly T[] {
    return this.items;
  }

  private removeAt(i: number): T {
    const item = this.items[i]!;
    const last = this.items.pop()!;
    this.index.delete(this.keyOf(item));
    if (i < this.items.length) {
      this.items[i] = last;
      this.index.set(this.keyOf(last), i);
      this.fix(i);
    }
    return item;
  }

  private fix(i: number): void {
    if (!this.up(i)) this.down(i);
  }

  private up(i: number): boolean {
    const start = i;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.items[i]!, this.items[parent]!)) break;
      this.swap(i, parent);
      i = parent;
    }
    return i !== start;
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(this.items[l]!, this.items[m]!)) m = l;
      if (r < n && this.less(this.items[r]!, this.items[m]!)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(a: number, b: number): void {
    const x = this.items[a]!;
    const y = this.items[b]!;
    this.items[a] = y;
    this.items[b] = x;
    this.index.set(this.keyOf(y), a);
    this.index.set(this.keyOf(x), b);
  }
}
