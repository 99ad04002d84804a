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
const BUSY_UTILIZATION = 0.3; // at or above: allow growth
const QUIET_UTILIZATION = 0.15; // below, for QUIET_CHECKS checks in a row: lean again
const QUIET_CHECKS = 10;
/**
 * After this many busy checks, with no quiet one since (checks between the
 * two thresholds count for neither), the old generation may also grow to
 * 4x what the last full collection left (V8's own upper bound) before the
 * next one. Left to itself V8 chose about 1.2x under the mixed load: a full
 * collection (6-18 ms pauses) every 0.5-1 s. It waits for sustained load so
 * that start-up's compile burst does not leave a steady, light load with a
 * bigger heap. Under the mixed load the loop's utilization hovers about the
 * busy threshold (0.27-0.38 from one second to the next): had each check
 * below it started the count over, the room would come late or not at all.
 * A fixed factor below V8's own choice costs throughput where V8 already
 * picks a large one: 2.5x made the pipeline's maximum 40% dearer per span,
 * 1.5x 130% (bench/RESULTS.md).
 */
const OLD_GENERATION_AFTER_CHECKS = 5;
const BUSY_HEAP_GROWING_PERCENT = 300;
/**
 * Otherwise the old generation may grow to 2x what the last full collection
 * left. V8 counts the Buffers allocated since its last full collection
 * against the old generation's room, and under a light load it chose 1.1x:
 * about 12 MiB of room for Sluice's 20 MiB heap. At 10,000 spans/s the
 * request bodies, queue records and export batches fill that in about a
 * second, so every young collection was a full one (20 per 15 s, none of them
 * scavenges), each marking the whole heap on V8's helper threads. At 2x,
 * scavenges free the dead Buffers first: one or two full collections per
 * 15 s, about 12% less CPU and 10 MiB more RSS (bench/RESULTS.md,
 * otlp-throughput).
 */
const LIGHT_HEAP_GROWING_PERCENT = 100;

export interface HeapMode {
  /** The young generation's semi-space growth factor. */
  readonly factor: number;
  /** Whether the old generation gets the busy growing factor (otherwise the light one). */
  readonly roomyOldGeneration: boolean;
}

export const LEAN: HeapMode = { factor: LEAN_GROWTH_FACTOR, roomyOldGeneration: false };

/** The V8 flags for a mode. */
export function heapFlags(mode: HeapMode): string {
  return `--semi-space-growth-factor=${mode.factor} --heap-growing-percent=${mode.roomyOldGeneration ? BUSY_HEAP_GROWING_PERCENT : LIGHT_HEAP_GROWING_PERCENT}`;
}

export class GrowthPolicy {
  mode: HeapMode = LEAN;
  #quiet = 0;
  #busy = 0;

  /** The mode to set after a check window with this utilization (0..1), or undefined to keep the current one. */
  next(utilization: number): HeapMode | undefined {
    if (utilization >= BUSY_UTILIZATION) {
      this.#quiet = 0;
      this.#busy++;
      return this.#set({ factor: DEFAULT_GROWTH_FACTOR, roomyOldGeneration: this.mode.roomyOldGeneration || this.#busy >= OLD_GENERATION_AFTER_CHECKS });
    }
    if (utilization < QUIET_UTILIZATION) {
      this.#busy = 0;
      this.#quiet++;
      if (this.#quiet >= QUIET_CHECKS) return this.#set(LEAN);
    } else this.#quiet = 0;
    return undefined;
  }

  #set(mode: HeapMode): HeapMode | undefined {
    if (mode.factor === this.mode.factor && mode.roomyOldGeneration === this.mode.roomyOldGeneration) return undefined;
    this.mode = mode;
    return mode;
  }
}
