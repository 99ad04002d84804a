// The queued sender every exporter and drain uses: consume() appends to the
// queue and resolves once durable; num_consumers workers read batches, send
// them through the transport, retry with backoff, and acknowledge.
import type { Logger } from 'pino';
import { PermanentError, ResourceExhaustedError, RetryableError, errorMessage } from '../../shared/errors.js';
import { exporterMetrics, type Telemetry } from '../../shared/telemetry.js';
import { leftOutField, LogThrottle } from '../../shared/log-throttle.js';
import { QueueFullError, queueMetrics, RecordTooLargeError, updateQueueGauges, type Queue, type QueueRecord } from '../../queue/index.js';
import { retryDelayMs, sleep, type BackoffPolicy } from './backoff.js';
import { collectBatch, type BatchLimits } from './batch-reader.js';
import type { QueuedSenderConfig } from './config.js';
import type { SendResult, Transport } from './transport.js';

export const DEFAULT_SHUTDOWN_GRACE_MS = 5_000;
/** Retry-After offered to clients refused by a full `on_full: refuse` queue (ms). */
export const FULL_QUEUE_RETRY_AFTER_MS = 5_000;
/** After the grace period, aborted sends get this long to unwind before the queue closes anyway (ms). */
const ABORT_SETTLE_MS = 1_000;
/** A worker whose queue read failed waits this long before reading again (ms). */
const READ_ERROR_PAUSE_MS = 1_000;
/** Queue gauges are also refreshed this often, for owners that append to the queue directly (drains) (ms). */
const GAUGE_REFRESH_MS = 1_000;

export const DROP_REASONS = ['queue_full', 'permanent', 'max_age', 'retry_disabled', 'rejected'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export interface QueuedSenderOptions {
  /** The exporter or drain id: the `exporter` and `queue` metric label. */
  readonly id: string;
  /** Owned by the sender from now on: opened by start(), closed by shutdown(). */
  readonly queue: Queue;
  readonly transport: Transport;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly config: QueuedSenderConfig;
  /** Told of every span given up on, beside the metric (a drain's API counters). */
  readonly onDrop?: (reason: DropReason, spans: number) => void;
}

export interface QueuedSender {
  /** Resolves once the spans are durable in the queue (or counted as dropped when full and on_full is drop). */
  consume(bytes: Uint8Array, spans: number): Promise<void>;
  /** Opens the queue (rejecting if its directory is unusable) and starts the workers. */
  start(): Promise<void>;
  /** Idempotent, safe before start. In-flight sends get `graceMs`; the rest stays queued. */
  shutdown(graceMs?: number): Promise<void>;
}

export function createQueuedSender(options: QueuedSenderOptions): QueuedSender {
  const { id, queue, transport, logger, config } = options;
  const queueConfig = config.sending_queue;
  const retryConfig = config.retry_on_failure;
  const metrics = exporterMetrics(options.telemetry);
  const gauges = queueMetrics(options.telemetry);
  const backoff: BackoffPolicy = { initialIntervalMs: retryConfig.initial_interval, maxIntervalMs: retryConfig.max_interval };
  const limits: BatchLimits = {
    maxSpans: queueConfig.max_batch_spans,
    maxBytes: queueConfig.max_batch_bytes,
    flushTimeoutMs: queueConfig.flush_timeout,
  };
  // `stop` ends reading, batching and backoff waits; `abortSends` cancels in-flight sends after the grace period.
  const stop = new AbortController();
  const abortSends = new AbortController();
  const workers: Promise<void>[] = [];
  const logDrop = createDropLogger(logger, id);
  const warningThrottle = new LogThrottle();
  let state: 'idle' | 'starting' | 'running' | 'stopped' = 'idle';
  let stopping: Promise<void> | undefined;
  let gaugeTimer: NodeJS.Timeout | undefined;
  /** Called after each acknowledgement while shutdown waits for a memory queue to empty. */
  let afterAck: (() => void) | undefined;

  function drop(reason: DropReason, spans: number, error: string): void {
    metrics.dropped.inc({ exporter: id, reason }, spans);
    options.onDrop?.(reason, spans);
    logDrop(reason, spans, error);
  }

  function refreshGauges(): void {
    updateQueueGauges(gauges, queue);
  }

  /** Every series at 0 from the start, so dashboards and alerts see "none yet" rather than no data. */
  function initCounters(): void {
    for (const reason of DROP_REASONS) metrics.dropped.inc({ exporter: id, reason }, 0);
    metrics.sent.inc({ exporter: id }, 0);
    metrics.failed.inc({ exporter: id }, 0);
    metrics.retries.inc({ exporter: id }, 0);
    gauges.enqueueFailedSpans.inc({ queue: id }, 0);
  }

  async function consume(bytes: Uint8Array, spans: number): Promise<void> {
    if (!queueConfig.enabled) return sendWithoutQueue(bytes, spans);
    try {
      await queue.append(bytes, spans);
    } catch (err) {
      gauges.enqueueFailedSpans.inc({ queue: id }, spans);
      // A record larger than the whole queue never fits: dropped and counted like a full queue's, whatever on_full says.
      if (!(err instanceof QueueFullError) && !(err instanceof RecordTooLargeError)) throw err;
      if (queueConfig.on_full === 'refuse' && err instanceof QueueFullError) {
        throw new ResourceExhaustedError(`exporter ${id}: sending queue is full`, { retryAfterMs: FULL_QUEUE_RETRY_AFTER_MS });
      }
      drop('queue_full', spans, err.message);
      return;
    }
    refreshGauges();
  }

  /** sending_queue.enabled: false — one attempt; the client's own retry is the retry. */
  async function sendWithoutQueue(bytes: Uint8Array, spans: number): Promise<void> {
    const result = await attempt([bytes], spans);
    if (result.status === 'success') {
      countSuccess(result, spans);
      return;
    }
    metrics.failed.inc({ exporter: id }, spans);
    if (result.status === 'failure') throw new PermanentError(`exporter ${id}: ${result.error}`);
    throw new RetryableError(`exporter ${id}: ${result.error}`, result.retryInMs === undefined ? {} : { retryAfterMs: result.retryInMs });
  }

  async function attempt(records: readonly Uint8Array[], spans: number): Promise<SendResult> {
    try {
      return await transport.send(records, spans, abortSends.signal);
    } catch (err) {
      return { status: 'retryable', error: errorMessage(err) };
    }
  }

  function countSuccess(result: Extract<SendResult, { status: 'success' }>, spans: number): void {
    const rejected = Math.min(spans, result.rejectedSpans ?? 0);
    metrics.sent.inc({ exporter: id }, spans - rejected);
    if (rejected > 0) drop('rejected', rejected, result.rejectedMessage ?? 'partial success');
    // A message with nothing rejected is how the OTLP spec has a destination warn (a full success otherwise).
    else if (result.rejectedMessage !== undefined) logWarning(result.rejectedMessage);
  }

  function logWarning(warning: string): void {
    warningThrottle.run(function warn(leftOut) {
      logger.warn({ exporter: id, warning, ...leftOutField(leftOut) }, 'the destination accepted every span, with a warning');
    });
  }

  function acknowledge(records: readonly QueueRecord[]): void {
    queue
      .ack(records.map((r) => r.id))
      .catch((err: unknown) => logger.warn({ exporter: id, err }, 'persisting the queue ack position failed; records may be delivered twice'))
      .finally(function acknowledged() {
        refreshGauges();
        afterAck?.();
      });
  }

  /** Sends one batch until it is delivered, dropped, or the sender stops (then it stays queued). */
  async function deliver(batch: readonly QueueRecord[]): Promise<void> {
    let pending = batch;
    for (let retry = 0; ; retry++) {
      const spans = sumSpans(pending);
      const result = await attempt(pending.map((r) => r.data), spans);
      if (result.status === 'success') {
        countSuccess(result, spans);
        acknowledge(pending);
        return;
      }
      metrics.failed.inc({ exporter: id }, spans);
      if (result.status === 'failure') {
        drop('permanent', spans, result.error);
        acknowledge(pending);
        return;
      }
      if (!retryConfig.enabled) {
        drop('retry_disabled', spans, result.error);
        acknowledge(pending);
        return;
      }
      if (stop.signal.aborted) return;
      const delayMs = retryDelayMs(backoff, retry, result.retryInMs);
      pending = dropExpired(pending, Date.now() + delayMs, result.error);
      if (pending.length === 0) return;
      metrics.retries.inc({ exporter: id });
      const log = retry === 0 ? logger.warn.bind(logger) : logger.debug.bind(logger);
      log({ exporter: id, spans: sumSpans(pending), retry, delayMs, error: result.error }, 'delivery failed; will retry');
      if (!(await sleep(delayMs, stop.signal))) return;
    }
  }

  /** Gives up on records that would pass max_age before the next attempt. */
  function dropExpired(records: readonly QueueRecord[], nextAttemptAt: number, error: string): readonly QueueRecord[] {
    const expired = records.filter((r) => nextAttemptAt - r.enqueuedAtMs > retryConfig.max_age);
    if (expired.length === 0) return records;
    drop('max_age', sumSpans(expired), error);
    acknowledge(expired);
    return records.filter((r) => nextAttemptAt - r.enqueuedAtMs <= retryConfig.max_age);
  }

  async function runWorker(): Promise<void> {
    while (!stop.signal.aborted) {
      try {
        if (!(await queue.waitForUnread(stop.signal))) return;
        const batch = await collectBatch(queue, limits, stop.signal);
        if (batch.length > 0) await deliver(batch);
      } catch (err) {
        logger.error({ exporter: id, err }, 'reading the sending queue failed');
        await sleep(READ_ERROR_PAUSE_MS, stop.signal);
      }
    }
  }

  async function start(): Promise<void> {
    if (state !== 'idle') return;
    state = 'starting';
    initCounters();
    if (!queueConfig.enabled) {
      state = 'running';
      return;
    }
    await queue.open();
    // shutdown() may have run while the queue was opening.
    if (state !== 'starting') return;
    state = 'running';
    refreshGauges();
    gaugeTimer = setInterval(refreshGauges, GAUGE_REFRESH_MS);
    gaugeTimer.unref();
    for (let i = 0; i < queueConfig.num_consumers; i++) workers.push(runWorker());
  }

  function shutdown(graceMs: number = DEFAULT_SHUTDOWN_GRACE_MS): Promise<void> {
    stopping ??= stopAll(graceMs);
    return stopping;
  }

  async function stopAll(graceMs: number): Promise<void> {
    const wasRunning = state === 'running';
    state = 'stopped';
    clearInterval(gaugeTimer);
    const endsAt = Date.now() + graceMs;
    // A memory queue loses what it holds when it closes: as in the collector, its workers first get the grace period to deliver it.
    if (wasRunning && queueConfig.storage === 'memory') await settlesWithin(emptied(), graceMs);
    stop.abort();
    const finished = Promise.allSettled(workers);
    if (!(await settlesWithin(finished, Math.max(0, endsAt - Date.now())))) {
      logger.warn({ exporter: id, graceMs }, 'deliveries still in flight after the grace period; aborting them, their records stay queued');
      abortSends.abort();
      await settlesWithin(finished, ABORT_SETTLE_MS);
    }
    if (queueConfig.storage === 'memory' && queue.stats().records > 0) {
      logger.warn({ exporter: id, records: queue.stats().records, graceMs }, 'records still in the memory queue after the grace period are lost');
    }
    await queue.close();
    refreshGauges();
  }

  /** Resolves once every queued record is acknowledged (delivered or given up on). */
  function emptied(): Promise<void> {
    return new Promise<void>((resolve) => {
      afterAck = function checkEmpty() {
        if (queue.stats().records === 0) resolve();
      };
      afterAck();
    });
  }

  return { consume, start, shutdown };
}

function sumSpans(records: readonly QueueRecord[]): number {
  let spans = 0;
  for (const r of records) spans += r.spans;
  return spans;
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const cancel = new AbortController();
  try {
    return await Promise.race([promise.then(() => true), sleep(ms, cancel.signal).then(() => false)]);
  } finally {
    cancel.abort();
  }
}

/** Logs the first drop at once, then at most one summary per interval, with the spans dropped since the last. */
function createDropLogger(logger: Logger, id: string): (reason: DropReason, spans: number, error: string) => void {
  const throttle = new LogThrottle();
  return function logDrop(reason, spans, error) {
    throttle.run(function summarize(leftOut) {
      logger.warn({ exporter: id, reason, spans: leftOut + spans, error }, 'dropped spans');
    }, spans);
  };
}
