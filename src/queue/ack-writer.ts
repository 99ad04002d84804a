// Persists the acknowledged position lazily: at most once per interval and
// on close, off the ack path. A position lost in a crash only means the
// records acknowledged since the last write are delivered again
// (at-least-once), so an fsync per acknowledgement buys nothing.
import { writeAckFile } from './ack-file.js';

export class AckWriter {
  readonly #directory: string;
  readonly #intervalMs: number;
  readonly #onError: (err: unknown) => void;
  #wanted: number;
  #persisted: number;
  #timer: NodeJS.Timeout | undefined;
  #job: Promise<void> = Promise.resolve();

  constructor(options: { directory: string; position: number; intervalMs: number; onError: (err: unknown) => void }) {
    this.#directory = options.directory;
    this.#intervalMs = options.intervalMs;
    this.#onError = options.onError;
    this.#wanted = options.position;
    this.#persisted = options.position;
  }

  /** The position last written to disk. */
  get persisted(): number {
    return this.#persisted;
  }

  /** Records a new position; it reaches disk within the interval. */
  update(position: number): void {
    if (position > this.#wanted) this.#wanted = position;
    if (this.#timer !== undefined || this.#wanted <= this.#persisted) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#write().catch(this.#onError);
    }, this.#intervalMs);
    // A pending write never keeps the process alive; close() flushes it.
    this.#timer.unref();
  }

  /** Writes the latest position now (on close); rejects if that fails. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#write();
  }

  #write(): Promise<void> {
    const job = this.#job.then(async () => {
      const position = this.#wanted;
      if (position <= this.#persisted) return;
      await writeAckFile(this.#directory, position);
      this.#persisted = position;
    });
    this.#job = job.catch(() => undefined);
    return job;
  }
}
