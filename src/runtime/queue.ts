/**
 * A bounded FIFO queue (what an agent's mailbox holds). Push and shift are O(1) amortised (a ring buffer
 * over a growing array), so a burst of 10,000 signals costs linear time, not quadratic.
 */
export class BoundedQueue<T> {
  // Allocated on the first push: most agents never queue anything.
  private items: (T | undefined)[] = [];
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.count;
  }

  /** Adds an item; returns false (and adds nothing) when the mailbox is full. */
  push(item: T): boolean {
    if (this.count >= this.capacity) return false;
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) % this.items.length] = item;
    this.count++;
    return true;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.items.length;
    this.count--;
    return item;
  }

  /** The items, oldest first, left in place. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.count; i++) yield this.items[(this.head + i) % this.items.length]!;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const all: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) all.push(item);
    return all;
  }

  private grow(): void {
    const next = new Array<T | undefined>(Math.max(16, this.items.length * 2));
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) % this.items.length];
    this.items = next;
    this.head = 0;
  }
}
