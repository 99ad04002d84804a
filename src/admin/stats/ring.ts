// A fixed-size ring of the most recent items, oldest first when read.
export class Ring<T> {
  readonly #items: Array<T | undefined>;
  #next = 0;
  #size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.#items = new Array<T | undefined>(capacity);
  }

  push(item: T): void {
    this.#items[this.#next] = item;
    this.#next = (this.#next + 1) % this.capacity;
    this.#size = Math.min(this.#size + 1, this.capacity);
  }

  get size(): number {
    return this.#size;
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = [];
    const start = (this.#next - this.#size + this.capacity) % this.capacity;
    for (let i = 0; i < this.#size; i += 1) out.push(this.#items[(start + i) % this.capacity] as T);
    return out;
  }

  latest(): T | undefined {
    return this.#size === 0 ? undefined : this.#items[(this.#next - 1 + this.capacity) % this.capacity];
  }
}
