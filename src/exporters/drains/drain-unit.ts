// One running drain: edge filter and sampling -> durable queue -> delivery.
// Each drain has its own queues, sampler and sender, so a slow or dead
// destination only ever holds up its own data. Spans waiting for their
// trace's root go to a second, "pending" queue first (see pending-hold.ts).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { DecisionStore } from '../../cluster/decision-store.js';
import type { SharedState } from '../../cluster/state.js';
import { ResourceExhaustedError } from '../../shared/errors.js';
import { exporterMetrics, type Telemetry } from '../../shared/telemetry.js';
import type { WireIndex } from '../../otlp/wire.js';
import { Sampler, type SpanSet } from '../../processors/sampling/sampler.js';
import { DiskQueue, QueueFullError, RecordTooLargeError, queueMetrics, updateQueueGauges } from '../../queue/index.js';
import type { Queue } from '../../queue/types.js';
import { FULL_QUEUE_RETRY_AFTER_MS, type QueuedSender } from '../exporterhelper/index.js';
import type { Transport } from '../otlphttp/transport.js';
import type { DrainsExporterConfig } from './config.js';
import { sameDefinition, type DrainDefinition } from './definition.js';
import type { DeliveryStats, DropReason } from './delivery-stats.js';
import { createDrainSender, createTransport } from './drain-sender.js';
import { PendingHold } from './pending-hold.js';

/** The pending queue's gauges are refreshed this often, as the sender refreshes the main queue's (ms). */
const PENDING_GAUGE_REFRESH_MS = 1_000;

export interface DrainUnitSettings {
  readonly storageDirectory: string;
  readonly config: DrainsExporterConfig;
  readonly telemetry: Telemetry;
  readonly stats: DeliveryStats;
  readonly logger: Logger;
  readonly userAgent: string;
  /** Where the drain's sampling decisions live (local, or shared in cluster mode). */
  readonly state: SharedState;
}

/** The label of a drain in the exporter metrics (`exporter="drain/drn_..."`) and queue gauges. */
export function drainLabel(id: string): string {
  return `drain/${id}`;
}

export const DRAINS_FOLDER = 'drains';

export function drainDirectory(storageDirectory: string, id: string): string {
  return join(storageDirectory, DRAINS_FOLDER, id);
}

export class DrainUnit {
  #definition: DrainDefinition;
  readonly #settings: DrainUnitSettings;
  readonly #logger: Logger;
  readonly #main: Queue;
  readonly #onFull: 'drop' | 'refuse';
  readonly #metrics: ReturnType<typeof exporterMetrics>;
  readonly #sender: QueuedSender;
  readonly #pending: PendingHold;
  readonly #pendingQueue: Queue;
  /** One store for the unit's life: decisions made under earlier rules still hold their traces together. */
  readonly #decisions: DecisionStore;
  readonly #sampler: Sampler;
  #transport: Transport;
  #pendingGaugeTimer: NodeJS.Timeout | undefined;

  constructor(definition: DrainDefinition, settings: DrainUnitSettings) {
    this.#definition = definition;
    this.#settings = settings;
    this.#logger = settings.logger.child({ drain: definition.id });
    const label = drainLabel(definition.id);
    const directory = drainDirectory(settings.storageDirectory, definition.id);
    const maxSizeBytes = definition.queue?.maxSizeBytes ?? settings.config.sending_queue.max_size;
    this.#onFull = definition.queue?.onFull ?? settings.config.sending_queue.on_full;
    this.#metrics = exporterMetrics(settings.telemetry);
    this.#main = new DiskQueue({ name: label, directory: join(directory, 'queue'), maxSizeBytes, logger: this.#logger });
    this.#decisions = settings.state.decisionStore({ name: definition.id, directory, logger: this.#logger });
    this.#sampler = new Sampler({
      name: label,
      rules: definition.sampling,
      decisionWaitMs: settings.config.decision_wait,
      maxPendingSpans: settings.config.max_pending_spans,
      excludeEdge: true,
      telemetry: settings.telemetry,
      decisions: this.#decisions,
    });
    this.#transport = createTransport(definition, settings.config.timeout, settings.userAgent);
    this.#sender = createDrainSender({
      label,
      queue: this.#main,
      transport: () => this.#transport,
      stats: settings.stats,
      config: settings.config,
      maxSizeBytes,
      onFull: this.#onFull,
      logger: this.#logger,
      telemetry: settings.telemetry,
    });
    const pendingQueue = new DiskQueue({ name: `${label}/pending`, directory: join(directory, 'pending'), maxSizeBytes, logger: this.#logger });
    this.#pending = new PendingHold({
      queue: pendingQueue,
      sampler: this.#sampler,
      sampledOut: (spans) => this.#drop('sampled_out', spans),
      release: (kept) => this.#append(this.#main, kept),
      maxSpansPerRead: settings.config.max_pending_spans,
      unreadable: (spans) => this.#drop('permanent', spans),
      logger: this.#logger,
    });
    this.#pendingQueue = pendingQueue;
  }

  get definition(): DrainDefinition {
    return this.#definition;
  }

  /** Opens the drain's state and queues; if that fails, lets go of what did open before rethrowing. */
  async start(): Promise<void> {
    try {
      // Decisions first: spans replayed from the pending queue follow what their roots decided before a restart.
      await mkdir(drainDirectory(this.#settings.storageDirectory, this.#definition.id), { recursive: true });
      await this.#decisions.open();
      // The sender owns the main queue: it opens it and starts its workers.
      // Both queues open side by side, but the pending loop starts only once
      // the main queue is open: replayed spans whose roots were decided
      // before the restart are handed to it at once.
      const opened = await Promise.allSettled([this.#sender.start(), this.#pendingQueue.open()]);
      for (const result of opened) if (result.status === 'rejected') throw result.reason;
      await this.#pending.start();
    } catch (err) {
      await this.#abandon();
      throw err;
    }
    this.#sampler.start();
    this.#refreshPendingGauges();
    this.#pendingGaugeTimer = setInterval(() => this.#refreshPendingGauges(), PENDING_GAUGE_REFRESH_MS);
    this.#pendingGaugeTimer.unref();
  }

  /** Resolves once this drain's share of the batch is durably queued (or dropped and counted). */
  async consume(index: WireIndex): Promise<void> {
    const result = this.#sampler.sample(index);
    this.#drop('edge', result.edgeSpans);
    this.#drop('sampled_out', result.sampledOutSpans);
    const appends: Promise<void>[] = [];
    if (result.kept !== undefined) appends.push(this.#append(this.#main, result.kept));
    if (result.pending !== undefined) appends.push(this.#append(this.#pendingQueue, result.pending).finally(() => this.#refreshPendingGauges()));
    await Promise.all(appends);
    // A root in this batch may have decided held spans: they are queued before the batch is answered.
    await this.#pending.handedOver();
  }

  /** Applies new rules or delivery settings in place; queued data stays. */
  update(definition: DrainDefinition): void {
    const previous = this.#definition;
    this.#definition = definition;
    // Spans waiting for their root stay held: the new rules decide them when it arrives.
    if (!sameDefinition({ ...previous, sampling: definition.sampling }, previous)) this.#sampler.setRules(definition.sampling);
    if (!sameDefinition({ ...previous, delivery: definition.delivery }, previous)) {
      const old = this.#transport;
      this.#transport = createTransport(definition, this.#settings.config.timeout, this.#settings.userAgent);
      // Closing waits for requests in flight on the old connection pool.
      void old.close().catch(() => undefined);
    }
  }

  /** Stops delivery (in-flight sends get graceMs); everything unsettled stays on disk. */
  async shutdown(graceMs: number): Promise<void> {
    // Undecided spans stay in the pending queue, to be held again after a restart.
    try {
      clearInterval(this.#pendingGaugeTimer);
      this.#sampler.stop();
      await this.#pending.stop();
      // What stays pending on disk until the next start.
      this.#refreshPendingGauges();
      await this.#sender.shutdown(graceMs);
    } finally {
      await this.#transport.close();
    }
    await this.#decisions.close();
  }

  /**
   * After a failed start: a queue that did open keeps its directory locked
   * (a retry of this drain would find it taken), its workers and timers run,
   * and the connection pool stays open, unless they are let go here.
   */
  async #abandon(): Promise<void> {
    // First: the pending loop may hold replayed records that only a started sampler would decide; stopped, it lets them go (they stay on disk).
    this.#sampler.stop();
    await Promise.allSettled([this.#pending.stop(), this.#sender.shutdown(0)]);
    await Promise.allSettled([this.#transport.close(), this.#decisions.close()]);
  }

  /** The sender keeps the main queue's gauges; the pending queue's are the unit's. */
  #refreshPendingGauges(): void {
    updateQueueGauges(queueMetrics(this.#settings.telemetry), this.#pendingQueue);
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
      queueMetrics(this.#settings.telemetry).enqueueFailedSpans.inc({ queue: queue.name }, spans.spanCount);
      if (!(err instanceof QueueFullError) && !(err instanceof RecordTooLargeError)) throw err;
      if (this.#onFull === 'refuse' && err instanceof QueueFullError) {
        throw new ResourceExhaustedError(`drain ${this.#definition.name}: ${err.message}`, { retryAfterMs: FULL_QUEUE_RETRY_AFTER_MS });
      }
      this.#drop('queue_full', spans.spanCount);
    }
  }
}
