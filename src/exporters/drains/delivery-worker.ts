// Delivers one drain's queue: reads queued records in batches, sends them
// through the drain's transport, retries retryable outcomes with exponential
// backoff and jitter (honouring Retry-After) until the data is older than
// max_age, drops permanent failures, and acknowledges only what is settled.
// Unacknowledged records stay on disk for the next start.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { SendOutcome, Transport } from '../otlphttp/transport.js';
import type { Queue, QueueRecord, ReadLimits } from '../../queue/types.js';

const JITTER = 0.2; // +-20% of each backoff delay
const BACKOFF_MULTIPLIER = 2;

export interface RetrySettings {
  /** ms */
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
  readonly maxAgeMs: number;
}

export interface DeliveryEvents {
  success(spans: number, rejectedSpans: number): void;
  failure(spans: number, error: string, willRetry: boolean): void;
  dropped(reason: 'permanent' | 'max_age', spans: number, error: string): void;
}

export interface DeliveryWorkerOptions {
  readonly queue: Queue;
  /** Read per attempt, so an updated drain's next delivery uses its new settings. */
  readonly transport: () => Transport;
  readonly limits: ReadLimits;
  readonly retry: RetrySettings;
  readonly events: DeliveryEvents;
  readonly logger: Logger;
  readonly now?: () => number;
}

export function backoffDelay(attempt: number, retry: RetrySettings, random: () => number = Math.random): number {
  const base = Math.min(retry.maxIntervalMs, retry.initialIntervalMs * BACKOFF_MULTIPLIER ** attempt);
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())));
}

export class DeliveryWorker {
  readonly #options: DeliveryWorkerOptions;
  readonly #abort = new AbortController();
  readonly #now: () => number;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #delivering = false;

  constructor(options: DeliveryWorkerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  start(): void {
    this.#loop ??= this.#run().catch((err: unknown) => {
      if (!this.#abort.signal.aborted) this.#options.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'drain delivery worker stopped');
    });
  }

  /** Lets the delivery in flight finish within graceMs, then aborts it (its records stay queued). */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    const loop = this.#loop;
    if (loop === undefined) return;
    // Idle or backing off: nothing in flight to finish.
    if (!this.#delivering) this.#abort.abort();
    const grace = new AbortController();
    try {
      await Promise.race([loop, sleep(graceMs, undefined, { signal: grace.signal }).catch(() => undefined)]);
    } finally {
      grace.abort();
      this.#abort.abort();
    }
    await loop;
  }

  async #run(): Promise<void> {
    const { queue, limits } = this.#options;
    const signal = this.#abort.signal;
    while (!this.#stopping) {
      if (queue.stats().unreadRecords === 0 && !(await queue.waitForUnread(signal))) return;
      if (this.#stopping) return;
      const records = await queue.read(limits);
      if (records.length === 0) continue;
      const settled = await this.#deliver(records, signal);
      if (!settled) return;
      await queue.ack(records.map((record) => record.id));
    }
  }

  /** True once the records are delivered or dropped; false when stopped first. */
  async #deliver(records: readonly QueueRecord[], signal: AbortSignal): Promise<boolean> {
    const { retry, events } = this.#options;
    const data = records.map((record) => record.data);
    let spans = 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const record of records) {
      spans += record.spans;
      oldest = Math.min(oldest, record.enqueuedAtMs);
    }
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) return false;
      let outcome: SendOutcome;
      this.#delivering = true;
      try {
        outcome = await this.#options.transport().send(data, spans, signal);
      } catch (err) {
        // The transport returns HTTP outcomes; a throw means these bytes cannot be serialized at all.
        outcome = { status: 'failure', httpStatus: null, error: `could not send: ${err instanceof Error ? err.message : String(err)}` };
      } finally {
        this.#delivering = false;
      }
      if (outcome.status === 'success') {
        events.success(spans, outcome.rejectedSpans);
        return true;
      }
      if (signal.aborted) return false;
      if (outcome.status === 'failure') {
        events.failure(spans, outcome.error, false);
        events.dropped('permanent', spans, outcome.error);
        return true;
      }
      const delay = outcome.retryInMs ?? backoffDelay(attempt, retry);
      if (this.#now() + delay - oldest > retry.maxAgeMs) {
        events.failure(spans, outcome.error, false);
        events.dropped('max_age', spans, outcome.error);
        return true;
      }
      events.failure(spans, outcome.error, true);
      if (this.#stopping) return false;
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        return false;
      }
    }
  }
}
