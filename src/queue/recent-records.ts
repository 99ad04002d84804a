// The newest committed records, kept in memory so a reader that keeps up
// never reads back from disk what it just wrote. Bounded by bytes: the
// oldest entries are evicted first, and the reader then falls back to the
// segment files (as it does after a restart). Entries are contiguous by
// sequence number, which makes lookup an index.

// Compact the backing array once this many entries at its front are gone.
const COMPACT_AFTER = 1024;

export interface RecentRecord<S> {
  readonly seq: number;
  /** The segment holding the record, and the offset just past its frame. */
  readonly segment: S;
  readonly endOffset: number;
  readonly data: Uint8Array;
  readonly spans: number;
  readonly enqueuedAtMs: number;
}

export class RecentRecords<S> {
  readonly #maxBytes: number;
  /** Slots before #head are emptied: a dropped record must not stay reachable from this long-lived array. */
  #entries: (RecentRecord<S> | undefined)[] = [];
  #head = 0;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Appends the record after the last one; a gap in sequence numbers starts over. */
  push(record: RecentRecord<S>): void {
    if (this.#maxBytes <= 0) return;
    const last = this.#entries[this.#entries.length - 1];
    if (last !== undefined && this.#head < this.#entries.length && last.seq + 1 !== record.seq) this.clear();
    this.#entries.push(record);
    // Counts the record's view only; callers hand in buffers they no longer use.
    this.#bytes += record.data.byteLength;
    while (this.#bytes > this.#maxBytes) this.#dropFirst();
  }

  /** The record with this sequence number, if still held. */
  get(seq: number): RecentRecord<S> | undefined {
    const first = this.#entries[this.#head];
    if (first === undefined || seq < first.seq) return undefined;
    return this.#entries[this.#head + (seq - first.seq)];
  }

  /** Forgets every record before `seq` (already handed out). */
  dropBefore(seq: number): void {
    for (let first = this.#entries[this.#head]; first !== undefined && first.seq < seq; first = this.#entries[this.#head]) this.#dropFirst();
  }

  get bytes(): number {
    return this.#bytes;
  }

  clear(): void {
    this.#entries = [];
    this.#head = 0;
    this.#bytes = 0;
  }

  #dropFirst(): void {
    const first = this.#entries[this.#head];
    if (first === undefined) return;
    this.#bytes -= first.data.byteLength;
    this.#entries[this.#head] = undefined;
    this.#head += 1;
    if (this.#head === this.#entries.length) this.clear();
    else if (this.#head >= COMPACT_AFTER) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
