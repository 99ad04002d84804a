// service.memory_limit_mib: above it, receivers refuse new data with
// ResourceExhaustedError (HTTP 429 / gRPC RESOURCE_EXHAUSTED) so clients back
// off, instead of the process growing until the kernel kills it and takes
// whatever is only in memory with it. RSS is sampled, not read per request.
import type { TraceBatch } from '../otlp/batch.js';
import type { TracesConsumer } from './component.js';
import { ResourceExhaustedError } from '../shared/errors.js';
import { collectGarbage } from '../shared/full-gc.js';

/** RSS is read at most this often (ms). */
export const MEMORY_SAMPLE_INTERVAL_MS = 100;
/** Retry-After offered to clients refused for memory (ms). */
export const MEMORY_RETRY_AFTER_MS = 1_000;
/**
 * While above the limit, a full garbage collection runs at most this often
 * (ms), as the collector's memory_limiter forces one: an idle process
 * collects nothing, so the garbage a burst of large requests left kept RSS
 * above the limit, and every request was refused, for good.
 */
export const MEMORY_GC_INTERVAL_MS = 1_000;
const BYTES_PER_MIB = 1024 * 1024;

export interface MemoryGuardOptions {
  readonly limitMib: number;
  /** Resident set size in bytes; process.memoryUsage.rss by default. */
  readonly rss?: () => number;
  readonly now?: () => number;
  /** Runs a full garbage collection; V8's by default. */
  readonly collect?: () => void;
}

/** Wraps the consumer a receiver feeds; refuses while the process is above the limit. */
export function guardMemory(next: TracesConsumer, options: MemoryGuardOptions): TracesConsumer {
  const limitBytes = options.limitMib * BYTES_PER_MIB;
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const now = options.now ?? Date.now;
  const collect = options.collect ?? collectGarbage;
  let sampledAt = Number.NEGATIVE_INFINITY;
  let collectedAt = Number.NEGATIVE_INFINITY;
  let over = false;
  let lastRss = 0;
  return {
    consume: function memoryGuardedConsume(batch: TraceBatch): Promise<void> {
      const t = now();
      if (t - sampledAt >= MEMORY_SAMPLE_INTERVAL_MS) {
        sampledAt = t;
        lastRss = rss();
        over = lastRss > limitBytes;
        if (over && t - collectedAt >= MEMORY_GC_INTERVAL_MS) {
          collectedAt = t;
          collect();
          lastRss = rss();
          over = lastRss > limitBytes;
        }
      }
      if (over) {
        const message = `process memory ${Math.round(lastRss / BYTES_PER_MIB)} MiB is above service.memory_limit_mib ${options.limitMib}`;
        return Promise.reject(new ResourceExhaustedError(message, { retryAfterMs: MEMORY_RETRY_AFTER_MS }));
      }
      return next.consume(batch);
    },
  };
}
