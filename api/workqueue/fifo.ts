/**
 * A first-in first-out list with O(1) amortized push and shift: items are taken from a
 * moving head, and the array is compacted once the taken part is over 1024 items and
 * more than half of it (Array.prototype.shift() copies the whole array every time).
 * Used by the WorkQueue and the EventRecorder's queue.
 */
export class Fifo<T> {
  private items: T[] = [];
  /** Index of the first item not taken yet. */
  private head = 0;

  /** Items waiting. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Adds `item` at the end. */
  push(item: T): void {
    this.items.push(item);
  }

  /** Takes the first item; undefined when there is none. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    // The taken slot lets go of its item, so that the queue does not keep it alive.
    this.items[this.head++] = undefined as T;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Takes every item waiting, oldest first, and leaves the list empty. */
  takeAll(): T[] {
    const all = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return all;
  }
}
