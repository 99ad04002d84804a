// Delivery outcomes of one drain: lifetime counters for the API, and a
// rolling one-hour window (sixty one-minute buckets) for its status.
export const WINDOW_MS = 60 * 60_000;
const BUCKET_MS = 60_000;
const BUCKETS = WINDOW_MS / BUCKET_MS;
/** errored: more than this share of the past hour's deliveries failed ... */
const ERRORED_FAILURE_RATIO = 0.8;
/** ... or more than this many failed. */
const ERRORED_FAILURE_COUNT = 50;

export type DropReason = 'sampled_out' | 'edge' | 'queue_full' | 'permanent' | 'max_age' | 'rejected';
export const DROP_REASONS: readonly DropReason[] = ['sampled_out', 'edge', 'queue_full', 'permanent', 'max_age', 'rejected'];

interface Bucket {
  minute: number;
  succeeded: number;
  failed: number;
}

export interface DeliveryCounters {
  deliveriesSucceeded: number;
  deliveriesFailed: number;
  spansSent: number;
  spansDropped: Record<DropReason, number>;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  lastError: string | null;
}

export class DeliveryStats {
  readonly counters: DeliveryCounters = {
    deliveriesSucceeded: 0,
    deliveriesFailed: 0,
    spansSent: 0,
    spansDropped: { sampled_out: 0, edge: 0, queue_full: 0, permanent: 0, max_age: 0, rejected: 0 },
    lastSuccessAt: null,
    lastFailureAt: null,
    lastError: null,
  };
  readonly #buckets: Bucket[] = Array.from({ length: BUCKETS }, () => ({ minute: -1, succeeded: 0, failed: 0 }));
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  success(spans: number): void {
    const now = this.#now();
    this.#bucket(now).succeeded++;
    this.counters.deliveriesSucceeded++;
    this.counters.spansSent += spans;
    this.counters.lastSuccessAt = now;
  }

  failure(error: string): void {
    const now = this.#now();
    this.#bucket(now).failed++;
    this.counters.deliveriesFailed++;
    this.counters.lastFailureAt = now;
    this.counters.lastError = error;
  }

  dropped(reason: DropReason, spans: number): void {
    this.counters.spansDropped[reason] += spans;
  }

  /** Deliveries in the past hour. */
  window(): { succeeded: number; failed: number } {
    const current = Math.floor(this.#now() / BUCKET_MS);
    let succeeded = 0;
    let failed = 0;
    for (const bucket of this.#buckets) {
      if (bucket.minute > current - BUCKETS) {
        succeeded += bucket.succeeded;
        failed += bucket.failed;
      }
    }
    return { succeeded, failed };
  }

  get errored(): boolean {
    const { succeeded, failed } = this.window();
    const total = succeeded + failed;
    return failed > ERRORED_FAILURE_COUNT || (total > 0 && failed / total > ERRORED_FAILURE_RATIO);
  }

  #bucket(now: number): Bucket {
    const minute = Math.floor(now / BUCKET_MS);
    const bucket = this.#buckets[minute % BUCKETS] as Bucket;
    if (bucket.minute !== minute) {
      bucket.minute = minute;
      bucket.succeeded = 0;
      bucket.failed = 0;
    }
    return bucket;
  }
}
