// A set for the short-lived members of a long-lived owner: the requests a
// listener has in flight, say.
//
// A long-lived Set or Map that members keep joining and leaving is a trap
// for V8's young-generation GC: every member that passed through it
// survives its scavenges and is promoted to the old generation, with all it
// references, and stays there until the next full GC. (The likely cause: the
// hash tables such a collection outgrows sit dead in the old generation but
// still point at the members they held, and the scavenger takes every
// old-to-young pointer for a live one.) For a request that is its whole
// object graph, request, response and headers: on the gateway near 10,000
// requests/s, two such Sets accounted for 0.9 of the 1.5 MB promoted per
// scavenge, and each pause went from 3 to 4.7 ms. Here a member sits in a
// doubly linked list, and leaving unlinks it: no pointer to it is left
// anywhere.

/** A member's place in a LinkedSet: what `add` returns and `delete` takes. */
export interface SetLink<T> {
  readonly value: T | undefined;
}

interface Link<T> extends SetLink<T> {
  value: T | undefined;
  prev: Link<T> | undefined;
  /** Kept when the link leaves, so an iteration standing on it goes on. */
  next: Link<T> | undefined;
  linked: boolean;
}

export class LinkedSet<T> implements Iterable<T> {
  #head: Link<T> | undefined;
  #tail: Link<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `value` at the end (a value added twice is there twice). */
  add(value: T): SetLink<T> {
    const link: Link<T> = { value, prev: this.#tail, next: undefined, linked: true };
    if (this.#tail === undefined) this.#head = link;
    else this.#tail.next = link;
    this.#tail = link;
    this.#size++;
    return link;
  }

  /** Removes the member at `link`; false if it had left already. */
  delete(handle: SetLink<T>): boolean {
    const link = handle as Link<T>;
    if (!link.linked) return false;
    link.linked = false;
    if (link.prev === undefined) this.#head = link.next;
    else link.prev.next = link.next;
    if (link.next === undefined) this.#tail = link.prev;
    else link.next.prev = link.prev;
    link.prev = undefined;
    link.value = undefined;
    this.#size--;
    return true;
  }

  clear(): void {
    for (let link = this.#head; link !== undefined; link = link.next) {
      link.linked = false;
      link.value = undefined;
      link.prev = undefined;
    }
    this.#head = undefined;
    this.#tail = undefined;
    this.#size = 0;
  }

  /** Removes and returns the first member. */
  shift(): T | undefined {
    const head = this.#head;
    if (head === undefined) return undefined;
    const value = head.value;
    this.delete(head);
    return value;
  }

  /**
   * In insertion order. Members may leave while it runs (those not reached
   * yet are skipped); members that join meanwhile may or may not be visited.
   */
  *[Symbol.iterator](): Iterator<T> {
    for (let link = this.#head; link !== undefined; link = link.next) {
      if (link.linked) yield link.value as T;
    }
  }
}
