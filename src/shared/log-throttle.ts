// A warning that can repeat with every request (a full disk refuses each
// one): the first is logged at once, the rest at most once per interval,
// each line saying how many were left out since the one before.

/** At most one line per this many ms for one repeating warning. */
export const LOG_THROTTLE_MS = 10_000;

export class LogThrottle {
  readonly #intervalMs: number;
  readonly #now: () => number;
  #nextAt = Number.NEGATIVE_INFINITY;
  #leftOut = 0;

  constructor(intervalMs = LOG_THROTTLE_MS, now: () => number = Date.now) {
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /**
   * Calls `log` with how many occurrences were left out since the last line,
   * or leaves this one out. An occurrence counts `weight` (a drop, its spans).
   */
  run(log: (leftOut: number) => void, weight = 1): void {
    const now = this.#now();
    if (now < this.#nextAt) {
      this.#leftOut += weight;
      return;
    }
    const leftOut = this.#leftOut;
    this.#leftOut = 0;
    this.#nextAt = now + this.#intervalMs;
    log(leftOut);
  }
}

/** The log field for what a throttle left out: none when nothing was. */
export function leftOutField(leftOut: number): { repeatedSinceLastLine?: number } {
  return leftOut > 0 ? { repeatedSinceLastLine: leftOut } : {};
}
