// The durable side of "wait for the root": undecided spans are appended to
// the drain's pending queue before consume() resolves; this loop reads each
// pending record, holds it in the sampler until its traces are decided, hands
// the kept spans on (retrying while that fails, say while the main queue is
// full), and only then acknowledges the record. Records not yet acknowledged
// at shutdown are read and held again after the next start.
import type { Logger } from 'pino';
import { errorMessage, MalformedDataError } from '../../shared/errors.js';
import { SamplerStoppedError, type HoldResult, type Sampler, type SpanSet } from '../../processors/sampling/sampler.js';
import type { Queue, QueueRecord } from '../../queue/types.js';
import { retryDelayMs, sleep, type BackoffPolicy } from '../exporterhelper/index.js';

/** Bytes of pending records the loop holds at once by default (read, not yet settled). */
const MAX_HELD_BYTES = 64 * 1024 * 1024;
/** Between attempts to hand decided spans on (ms). */
const RELEASE_BACKOFF: BackoffPolicy = { initialIntervalMs: 100, maxIntervalMs: 5_000 };

export interface PendingHoldOptions {
  readonly queue: Queue;
  /** The drain's sampler (it keeps running when the drain's rules change). */
  readonly sampler: Sampler;
  /** Counts the spans a decision left out; once per record. */
  readonly sampledOut: (spans: number) => void;
  /**
   * Queues the kept spans. A throw is retried with backoff until it succeeds
   * or the loop stops (then the record stays pending, for the next start).
   */
  readonly release: (kept: SpanSet) => Promise<void>;
  readonly maxSpansPerRead: number;
  /**
   * Bytes of records read and not yet settled past which the loop waits for
   * one to settle before reading more: a backlog on disk (after a restart, or
   * while the main queue is slow to take decided spans) is not read into
   * memory whole. Defaults to 64 MiB; a single larger record is still read.
   */
  readonly maxHeldBytes?: number;
  /** A record that can never be held (bytes no reader can parse): its spans are dropped and counted, the record acknowledged. */
  readonly unreadable: (spans: number) => void;
  readonly logger: Logger;
}

export class PendingHold {
  readonly #options: PendingHoldOptions;
  readonly #maxHeldBytes: number;
  readonly #abort = new AbortController();
  readonly #settling = new Set<Promise<void>>();
  /** First attempts to hand decided spans on, in flight. */
  readonly #handOvers = new Set<Promise<void>>();
  #heldBytes = 0;
  #loop: Promise<void> | undefined;

  constructor(options: PendingHoldOptions) {
    this.#options = options;
    this.#maxHeldBytes = options.maxHeldBytes ?? MAX_HELD_BYTES;
  }

  async start(): Promise<void> {
    await this.#options.queue.open();
    this.#loop = this.#run().catch((err: unknown) => {
      if (!this.#abort.signal.aborted) this.#options.logger.error({ err: errorMessage(err) }, 'drain pending loop stopped');
    });
  }

  /**
   * Resolves once the spans decided so far are queued (or their first
   * attempt failed, and the loop retries it). A batch that decides held
   * traces resolves their holds synchronously (Sampler.sample) and their
   * hand-overs begin a few microtasks later: one turn of the loop lets them
   * all begin. The drain answers such a batch only after this: the decision
   * that keeps them reaches disk up to a second later (decisions.log), and
   * spans replayed after a crash without it would be sampled out.
   */
  async handedOver(): Promise<void> {
    if (this.#settling.size === 0) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    await Promise.all(this.#handOvers);
  }

  /** Call after stopping the sampler (its holds reject); waits for the loop and closes the queue. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    await Promise.all(this.#settling);
    await this.#options.queue.close();
  }

  async #run(): Promise<void> {
    const { queue } = this.#options;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      if (this.#heldBytes >= this.#maxHeldBytes) {
        await Promise.race(this.#settling);
        continue;
      }
      if (queue.stats().unreadRecords === 0 && !(await queue.waitForUnread(signal))) return;
      for (const record of await queue.read({ maxSpans: this.#options.maxSpansPerRead, maxBytes: this.#maxHeldBytes - this.#heldBytes })) {
        const bytes = record.data.byteLength;
        this.#heldBytes += bytes;
        const settling = this.#settle(record).finally(() => {
          this.#settling.delete(settling);
          this.#heldBytes -= bytes;
        });
        this.#settling.add(settling);
      }
    }
  }

  async #settle(record: QueueRecord): Promise<void> {
    const { logger } = this.#options;
    let held: HoldResult;
    try {
      held = await this.#options.sampler.hold(record.data);
    } catch (err) {
      if (err instanceof MalformedDataError) {
        // Left in place, it would hold back every record after it for good (the queue frees space in order).
        logger.error({ err: errorMessage(err), spans: record.spans }, 'pending spans cannot be read; dropped');
        this.#options.unreadable(record.spans);
        await this.#options.queue.ack([record.id]).catch((ackErr: unknown) => logger.error({ err: errorMessage(ackErr) }, 'could not acknowledge unreadable pending spans'));
        return;
      }
      // Stopped: the record stays on disk and is held again after a restart.
      if (!(err instanceof SamplerStoppedError)) logger.error({ err: errorMessage(err) }, 'pending spans could not be held');
      return;
    }
    this.#options.sampledOut(held.sampledOutSpans);
    if (held.kept !== undefined && !(await this.#release(held.kept))) return;
    await this.#options.queue.ack([record.id]).catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'could not acknowledge released pending spans'));
  }

  /** Hands kept spans on, retrying while that fails; false once the loop stopped first (the record stays pending). */
  async #release(kept: SpanSet): Promise<boolean> {
    const signal = this.#abort.signal;
    const first = this.#options.release(kept);
    const handOver = first.then(
      () => undefined,
      () => undefined,
    );
    this.#handOvers.add(handOver);
    void handOver.then(() => this.#handOvers.delete(handOver));
    for (let attempt = 0; ; attempt++) {
      try {
        await (attempt === 0 ? first : this.#options.release(kept));
        if (attempt > 0) this.#options.logger.info({ spans: kept.spanCount, attempts: attempt + 1 }, 'queued decided spans after retrying');
        return true;
      } catch (err) {
        if (attempt === 0) this.#options.logger.warn({ err: errorMessage(err), spans: kept.spanCount }, 'could not queue decided spans; retrying with backoff');
        if (!(await sleep(retryDelayMs(RELEASE_BACKOFF, attempt, undefined), signal))) return false;
      }
    }
  }
}
