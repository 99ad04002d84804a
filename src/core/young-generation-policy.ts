// When to let V8 grow the young generation. Kept at its initial size (growth
// factor 1), an idle or lightly loaded daemon stays lean; under a high
// allocation rate (thousands of open streams, the gateway at its maximum)
// that small young generation promotes short-lived objects, the old
// generation swells and the collector works harder: measured with 1,000 open
// streams, 195 KiB of RSS per stream and 45 µs of CPU per chunk at factor 1
// against 40 KiB and 33 µs with V8's default growth (bench/RESULTS.md).
// So the factor follows the load, read as event-loop utilization, with
// hysteresis so that a burst does not flip it back and forth.

export const LEAN_GROWTH_FACTOR = 1;
export const DEFAULT_GROWTH_FACTOR = 2; // V8's own default
/**
 * While busy, the old generation may grow to 4x what the last full
 * collection left (V8's own upper bound) before the next one. Left to itself
 * V8 chose about 1.2x under the mixed load, which meant a full collection
 * (6-18 ms pauses) every 0.5-1 s. A fixed factor below V8's own choice costs
 * throughput where V8 already chose a large one: 2.5x made the pipeline's
 * maximum 40% dearer per span, 1.5x 130% (bench/RESULTS.md).
 */
const BUSY_HEAP_GROWING_PERCENT = 300;

/** The V8 flags for a growth factor: lean keeps V8's own old-generation sizing (0 = unset). */
export function heapFlags(factor: number): string {
  const percent = factor === LEAN_GROWTH_FACTOR ? 0 : BUSY_HEAP_GROWING_PERCENT;
  return `--semi-space-growth-factor=${factor} --heap-growing-percent=${percent}`;
}
const BUSY_UTILIZATION = 0.3; // at or above: allow growth
const QUIET_UTILIZATION = 0.15; // below, for QUIET_CHECKS checks in a row: lean again
const QUIET_CHECKS = 10;

export class GrowthPolicy {
  factor = LEAN_GROWTH_FACTOR;
  #quiet = 0;

  /** The factor to set after a check window with this utilization (0..1), or undefined to keep the current one. */
  next(utilization: number): number | undefined {
    if (utilization >= BUSY_UTILIZATION) {
      this.#quiet = 0;
      return this.#set(DEFAULT_GROWTH_FACTOR);
    }
    if (utilization < QUIET_UTILIZATION) {
      this.#quiet++;
      if (this.#quiet >= QUIET_CHECKS) return this.#set(LEAN_GROWTH_FACTOR);
    } else this.#quiet = 0;
    return undefined;
  }

  #set(factor: number): number | undefined {
    if (factor === this.factor) return undefined;
    this.factor = factor;
    return factor;
  }
}
