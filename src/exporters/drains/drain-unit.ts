// One running drain: edge filter and sampling -> durable queue -> delivery.
// Each drain has its own queues, sampler and worker, so a slow or dead
// destination only ever holds up its own data.
//
// Spans that wait for their trace's root are not kept in memory only: they
// are appended to the drain's "pending" queue before consume() resolves; a
// pending loop hands each record to the sampler's hold and, once decided,
// appends the kept spans to the main queue and acknowledges the record. After
// a restart the unacknowledged pending records are read again and re-held.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ResourceExhaustedError } from '../../core/errors.js';
import { exporterMetrics, type Telemetry } from '../../core/telemetry.js';
import type { WireIndex } from '../../otlp/wire.js';
import { Sampler, SamplerStoppedError, type SpanSet } from '../../processors/sampling/sampler.js';
import { DiskQueue, QueueFullError, RecordTooLargeError } from '../../queue/index.js';
import type { Queue, QueueRecord } from '../../queue/types.js';
import { FULL_QUEUE_RETRY_AFTER_MS, createQueuedSender, type QueuedSender } from '../exporterhelper/index.js';
import { createHttpTransport, type Transport } from '../otlphttp/transport.js';
import type { DrainsExporterConfig } from './config.js';
import type { DrainDefinition } from './definition.js';
import type { DeliveryStats, DropReason } from './delivery-stats.js';
import { observedTransport } from './observed-transport.js';

const PENDING_READ_BYTES = 64 * 1024 * 1024;

export interface DrainUnitSettings {
  readonly storageDirectory: string;
  readonly config: DrainsExporterConfig;
  readonly telemetry: Telemetry;
  readonly stats: DeliveryStats;
  readonly logger: Logger;
  readonly userAgent: string;
}

/** The label of a drain in the exporter metrics (`exporter="drain/drn_..."`) and queue gauges. */
export function drainLabel(id: string): string {
  return `drain/${id}`;
}

export function drainDirectory(storageDirectory: string, id: string): string {
  return join(storageDirectory, 'drains', id);
}

export function createTransport(definition: DrainDefinition, timeoutMs: number, userAgent: string): Transport {
  const { delivery } = definition;
  const ca = delivery.ca ?? (delivery.caFile === undefined ? undefined : readFileSync(delivery.caFile, 'utf8'));
  return createHttpTransport({
    url: delivery.url,
    encoding: delivery.encoding,
    compression: delivery.compression,
    headers: delivery.headers,
    secret: delivery.secret,
    ca,
    insecure: delivery.insecure,
    timeoutMs,
    userAgent,
  });
}

export class DrainUnit {
  #definition: DrainDefinition;
  readonly #settings: DrainUnitSettings;
  readonly #logger: Logger;
  readonly #main: Queue;
  readonly #pending: Queue;
  readonly #onFull: 'drop' | 'refuse';
  readonly #abort = new AbortController();
  readonly #settling = new Set<Promise<void>>();
  #sampler: Sampler;
  #transport: Transport;
  readonly #sender: QueuedSender;
  readonly #metrics: ReturnType<typeof exporterMetrics>;
  #pendingLoop: Promise<void> | undefined;

  constructor(definition: DrainDefinition, settings: DrainUnitSettings) {
    this.#definition = definition;
    this.#settings = settings;
    this.#logger = settings.logger.child({ drain: definition.id });
    const directory = drainDirectory(settings.storageDirectory, definition.id);
    const maxSizeBytes = definition.queue?.maxSizeBytes ?? settings.config.queue.max_size;
    this.#onFull = definition.queue?.onFull ?? settings.config.queue.on_full;
    this.#main = new DiskQueue({ name: drainLabel(definition.id), directory: join(directory, 'queue'), maxSizeBytes, logger: this.#logger });
    this.#pending = new DiskQueue({ name: `${drainLabel(definition.id)}/pending`, directory: join(directory, 'pending'), maxSizeBytes, logger: this.#logger });
    this.#metrics = exporterMetrics(settings.telemetry);
    this.#sampler = this.#newSampler(definition);
    this.#transport = createTransport(definition, settings.config.timeout, settings.userAgent);
    this.#sender = this.#newSender(maxSizeBytes);
  }

  get definition(): DrainDefinition {
    return this.#definition;
  }

  async start(): Promise<void> {
    // The sender owns the main queue: it opens it and starts its workers.
    await Promise.all([this.#sender.start(), this.#pending.open()]);
    this.#sampler.start();
    this.#pendingLoop = this.#runPending().catch((err: unknown) => {
      if (!this.#abort.signal.aborted) this.#logger.error({ err: err instanceof Error ? err.message : String(err) }, 'drain pending loop stopped');
    });
  }

  /** Resolves once this drain's share of the batch is durably queued (or dropped and counted). */
  async consume(index: WireIndex): Promise<void> {
    const result = this.#sampler.sample(index);
    this.#drop('edge', result.edgeSpans);
    this.#drop('sampled_out', result.sampledOutSpans);
    const appends: Promise<void>[] = [];
    if (result.kept !== undefined) appends.push(this.#append(this.#main, result.kept));
    if (result.pending !== undefined) appends.push(this.#append(this.#pending, result.pending));
    await Promise.all(appends);
  }

  /** Applies new rules or delivery settings in place; queued data stays. */
  update(definition: DrainDefinition): void {
    const previous = this.#definition;
    this.#definition = definition;
    if (JSON.stringify(previous.sampling) !== JSON.stringify(definition.sampling)) {
      const old = this.#sampler;
      this.#sampler = this.#newSampler(definition);
      this.#sampler.start();
      // What waited under the old rules is decided by them now, and queued.
      old.flush();
      old.stop();
    }
    if (JSON.stringify(previous.delivery) !== JSON.stringify(definition.delivery)) {
      const old = this.#transport;
      this.#transport = createTransport(definition, this.#settings.config.timeout, this.#settings.userAgent);
      void old.close().catch(() => undefined);
    }
  }

  /** Stops delivery (in-flight work gets graceMs), keeps everything unsettled on disk. */
  async shutdown(graceMs: number): Promise<void> {
    this.#abort.abort();
    // Undecided spans stay in the pending queue, to be held again after a restart.
    this.#sampler.stop();
    await this.#pendingLoop;
    await Promise.all(this.#settling);
    await Promise.all([this.#sender.shutdown(graceMs), this.#pending.close()]);
    await this.#transport.close();
  }

  #newSampler(definition: DrainDefinition): Sampler {
    return new Sampler({
      name: `drain/${definition.id}`,
      rules: definition.sampling,
      decisionWaitMs: this.#settings.config.decision_wait,
      maxPendingSpans: this.#settings.config.max_pending_spans,
      excludeEdge: true,
      telemetry: this.#settings.telemetry,
    });
  }

  #newSender(maxSizeBytes: number): QueuedSender {
    const { config } = this.#settings;
    return createQueuedSender({
      id: drainLabel(this.#definition.id),
      queue: this.#main,
      transport: observedTransport(() => this.#transport, this.#settings.stats),
      logger: this.#logger,
      telemetry: this.#settings.telemetry,
      config: {
        sending_queue: {
          enabled: true,
          storage: 'disk',
          max_size: maxSizeBytes,
          on_full: this.#onFull,
          num_consumers: config.queue.num_consumers,
          max_batch_spans: config.batch.max_spans,
          max_batch_bytes: config.batch.max_bytes,
          flush_timeout: config.batch.flush_timeout,
        },
        retry_on_failure: { enabled: true, initial_interval: config.retry.initial_interval, max_interval: config.retry.max_interval, max_age: config.retry.max_age },
      },
    });
  }

  #drop(reason: DropReason, spans: number): void {
    if (spans <= 0) return;
    this.#settings.stats.dropped(reason, spans);
    this.#metrics.dropped.inc({ exporter: drainLabel(this.#definition.id), reason }, spans);
  }

  async #append(queue: Queue, spans: SpanSet): Promise<void> {
    try {
      await queue.append(spans.buf, spans.spanCount);
    } catch (err) {
      if (!(err instanceof QueueFullError) && !(err instanceof RecordTooLargeError)) throw err;
      if (this.#onFull === 'refuse' && err instanceof QueueFullError) {
        throw new ResourceExhaustedError(`drain ${this.#definition.name}: ${err.message}`, { retryAfterMs: FULL_QUEUE_RETRY_AFTER_MS });
      }
      this.#drop('queue_full', spans.spanCount);
    }
  }

  async #runPending(): Promise<void> {
    const signal = this.#abort.signal;
    const limits = { maxSpans: this.#settings.config.max_pending_spans, maxBytes: PENDING_READ_BYTES };
    while (!signal.aborted) {
      if (this.#pending.stats().unreadRecords === 0 && !(await this.#pending.waitForUnread(signal))) return;
      for (const record of await this.#pending.read(limits)) {
        const settling = this.#settle(record).finally(() => this.#settling.delete(settling));
        this.#settling.add(settling);
      }
    }
  }

  async #settle(record: QueueRecord): Promise<void> {
    let held;
    try {
      held = await this.#sampler.hold(record.data);
    } catch (err) {
      // Stopped: the record stays on disk and is held again after a restart.
      if (!(err instanceof SamplerStoppedError)) this.#logger.error({ err: err instanceof Error ? err.message : String(err) }, 'pending spans could not be held');
      return;
    }
    this.#drop('sampled_out', held.sampledOutSpans);
    try {
      if (held.kept !== undefined) await this.#append(this.#main, held.kept);
      await this.#pending.ack([record.id]);
    } catch (err) {
      this.#logger.error({ err: err instanceof Error ? err.message : String(err) }, 'could not queue decided spans; they stay pending until restart');
    }
  }
}
