// The newest generation records by id, answered without reading a log.
// Records are kept as their UTF-8 bytes in large buffers outside the
// JavaScript heap, with only a map of id -> offset inside it. Kept as
// strings, a request's record survived two young-generation collections
// (copied, then promoted) and then filled the old generation: at 1,000
// requests/s that was a third of what every scavenge copied and made each
// one take about 40% longer (bench/RESULTS.md, mixed load).
//
// Records are kept in two generations: when the current one holds its
// share it becomes the previous one and the old previous is dropped whole,
// which costs far less per record than evicting the oldest one each time.

const LENGTH_BYTES = 4;
const FIRST_ARENA_BYTES = 64 * 1024;
/** A new generation's buffer against the bytes the last one used. */
const GROWTH_ROOM = 1.25;
/** UTF-8 needs at most 3 bytes per UTF-16 code unit. */
const MAX_BYTES_PER_UNIT = 3;

/** One generation: records appended to a growing buffer, each as its byte length and its bytes. */
class Arena {
  readonly offsets = new Map<string, number>();
  bytes: Buffer;
  used = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(capacity);
  }

  add(id: string, text: string): void {
    const worst = LENGTH_BYTES + text.length * MAX_BYTES_PER_UNIT;
    if (this.used + worst > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + worst));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    const at = this.used;
    const written = this.bytes.write(text, at + LENGTH_BYTES, 'utf8');
    this.bytes.writeUInt32LE(written, at);
    this.used = at + LENGTH_BYTES + written;
    this.offsets.set(id, at);
  }

  get(id: string): string | undefined {
    const at = this.offsets.get(id);
    if (at === undefined) return undefined;
    const start = at + LENGTH_BYTES;
    return this.bytes.toString('utf8', start, start + this.bytes.readUInt32LE(at));
  }
}

export class RecentGenerations {
  readonly #perGeneration: number;
  #current = new Arena(FIRST_ARENA_BYTES);
  #previous: Arena | undefined;

  /** Keeps between `perGeneration` and twice as many of the newest records. */
  constructor(perGeneration: number) {
    this.#perGeneration = perGeneration;
  }

  add(id: string, text: string): void {
    if (this.#current.offsets.size >= this.#perGeneration) {
      this.#previous = this.#current;
      // The next generation will hold about as many bytes: one buffer from the
      // start, with room for the worst case reserved before each write.
      this.#current = new Arena(Math.ceil(this.#previous.used * GROWTH_ROOM));
    }
    this.#current.add(id, text);
  }

  /** The record's text, if it is among the newest. */
  get(id: string): string | undefined {
    return this.#current.get(id) ?? this.#previous?.get(id);
  }
}
