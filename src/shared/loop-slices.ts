// Synchronous batch work cut into slices of a few tenths of a millisecond,
// with a turn of the event loop between them, so requests are served in
// between (issue 10: the loop is never held by batch work for long).
import { setImmediate as nextTurn } from 'node:timers/promises';

export class LoopSlices {
  readonly #sliceMs: number;
  #deadline: number;

  constructor(sliceMs: number) {
    this.#sliceMs = sliceMs;
    this.#deadline = performance.now() + sliceMs;
  }

  /** Whether the current slice's time is used up: checked between two pieces of work, without a promise. */
  get due(): boolean {
    return performance.now() >= this.#deadline;
  }

  /** A turn of the event loop, then a new slice. */
  async turn(): Promise<void> {
    await nextTurn();
    this.#deadline = performance.now() + this.#sliceMs;
  }
}
