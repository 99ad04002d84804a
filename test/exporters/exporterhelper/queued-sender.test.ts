import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResourceExhaustedError } from '../../../src/shared/errors.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import {
  createDefaultQueuedSenderConfig,
  createQueuedSender,
  type QueuedSender,
  type QueuedSenderConfig,
  type Transport,
} from '../../../src/exporters/exporterhelper/index.js';
import { DiskQueue, MemoryQueue } from '../../../src/queue/index.js';
import { createFakeTransport, createHangingTransport } from './fake-transport.js';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
const POLL_MS = 5;

let dir: string;
let telemetry: Telemetry;
const senders: QueuedSender[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-sender-'));
  telemetry = new Telemetry({ defaultMetrics: false });
});

afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.shutdown(0)));
  await rm(dir, { recursive: true, force: true });
});

interface Overrides {
  readonly queue?: Partial<QueuedSenderConfig['sending_queue']>;
  readonly retry?: Partial<QueuedSenderConfig['retry_on_failure']>;
}

function makeConfig(overrides: Overrides = {}): QueuedSenderConfig {
  const defaults = createDefaultQueuedSenderConfig();
  return {
    sending_queue: { ...defaults.sending_queue, num_consumers: 1, flush_timeout: 20, ...overrides.queue },
    retry_on_failure: { ...defaults.retry_on_failure, initial_interval: 5, max_interval: 20, ...overrides.retry },
  };
}

/** The queue is opened up front so records can be queued before the workers start. */
async function makeSender(transport: Transport, overrides: Overrides = {}): Promise<{ sender: QueuedSender; queue: DiskQueue }> {
  const config = makeConfig(overrides);
  const queue = new DiskQueue({ name: 'otlphttp/test', directory: join(dir, 'queue'), maxSizeBytes: config.sending_queue.max_size, logger });
  await queue.open();
  const sender = createQueuedSender({ id: 'otlphttp/test', queue, transport, logger, telemetry, config });
  senders.push(sender);
  return { sender, queue };
}

function record(tag: number, bytes = 10): Uint8Array {
  return Buffer.alloc(bytes, tag);
}

async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = telemetry.registry.getSingleMetric(name);
  if (metric === undefined) return 0;
  const { values } = await metric.get();
  const match = values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}

const exporter = { exporter: 'otlphttp/test' };

describe('createQueuedSender', () => {
  it('merges queued records into requests of at most max_batch_spans', async () => {
    const transport = createFakeTransport([]);
    const { sender } = await makeSender(transport, { queue: { max_batch_spans: 25 } });
    for (let tag = 0; tag < 5; tag++) await sender.consume(record(tag), 10);
    await sender.start();
    await until(() => transport.delivered().length === 5);
    expect(transport.calls.map((c) => c.tags)).toEqual([[0, 1], [2, 3], [4]]);
    expect(transport.calls.map((c) => c.spans)).toEqual([20, 20, 10]);
    expect(await metricValue('sluice_exporter_sent_spans_total', exporter)).toBe(50);
  });

  it('keeps topping each batch up for flush_timeout when several workers share a trickle of records', async () => {
    const transport = createFakeTransport([]);
    const { sender } = await makeSender(transport, { queue: { num_consumers: 2, flush_timeout: 1_000 } });
    await sender.start();
    for (let tag = 0; tag < 8; tag++) {
      await sender.consume(record(tag), 1);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await until(() => transport.delivered().length === 8);
    // Two workers each top up their own batch: at most two requests, not one per record.
    expect(transport.calls.length).toBeLessThanOrEqual(2);
    expect(transport.delivered().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('stops a request before it passes max_batch_bytes', async () => {
    const transport = createFakeTransport([]);
    const { sender } = await makeSender(transport, { queue: { max_batch_bytes: 250 } });
    for (let tag = 0; tag < 3; tag++) await sender.consume(record(tag, 100), 1);
    await sender.start();
    await until(() => transport.delivered().length === 3);
    expect(transport.calls.map((c) => c.tags)).toEqual([[0, 1], [2]]);
  });

  it('retries after Retry-After and backoff, then delivers every record exactly once', async () => {
    const transport = createFakeTransport([
      { status: 'retryable', retryInMs: 15, error: '429' },
      { status: 'retryable', error: '503' },
    ]);
    const { sender } = await makeSender(transport);
    await sender.start();
    await Promise.all([0, 1, 2].map((tag) => sender.consume(record(tag), 2)));
    await until(async () => (await metricValue('sluice_exporter_sent_spans_total', exporter)) === 6);
    expect(transport.delivered().sort()).toEqual([0, 1, 2]);
    expect(await metricValue('sluice_exporter_retries_total', exporter)).toBe(2);
    expect(await metricValue('sluice_exporter_send_failed_spans_total', exporter)).toBeGreaterThan(0);
  });

  it('keeps delivering later records on another worker while one batch waits to be retried', async () => {
    const transport: Transport & { delivered: number[] } = {
      delivered: [],
      send(records) {
        const tags = records.map((r) => r[0] ?? -1);
        if (tags.includes(0)) return Promise.resolve({ status: 'retryable', retryInMs: 60_000, error: '503' });
        transport.delivered.push(...tags);
        return Promise.resolve({ status: 'success' });
      },
    };
    const { sender } = await makeSender(transport, { queue: { num_consumers: 2, max_batch_spans: 1 } });
    for (let tag = 0; tag < 4; tag++) await sender.consume(record(tag), 1);
    await sender.start();
    await until(() => transport.delivered.length === 3);
    expect(transport.delivered).toEqual([1, 2, 3]);
  });

  it('drops a batch the destination rejects permanently and counts it', async () => {
    const transport = createFakeTransport([], { status: 'failure', error: '400 bad request' });
    const { sender, queue } = await makeSender(transport);
    await sender.consume(record(1), 7);
    await sender.start();
    await until(async () => (await metricValue('sluice_exporter_dropped_spans_total', { ...exporter, reason: 'permanent' })) === 7);
    expect(transport.calls).toHaveLength(1);
    await until(() => queue.stats().records === 0);
  });

  it('gives up on records older than max_age and counts them', async () => {
    const transport = createFakeTransport([], { status: 'retryable', error: '503' });
    const { sender, queue } = await makeSender(transport, { retry: { max_age: 40 } });
    await sender.consume(record(1), 4);
    await sender.start();
    await until(async () => (await metricValue('sluice_exporter_dropped_spans_total', { ...exporter, reason: 'max_age' })) === 4);
    await until(() => queue.stats().records === 0);
    expect(transport.delivered()).toEqual([]);
  });

  it('refuses with ResourceExhaustedError when the queue is full and on_full is refuse', async () => {
    const { sender } = await makeSender(createFakeTransport([]), { queue: { max_size: 200, on_full: 'refuse' } });
    await sender.consume(record(1, 100), 3);
    const error = await sender.consume(record(2, 100), 3).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ResourceExhaustedError);
    expect((error as ResourceExhaustedError).retryAfterMs).toBeGreaterThan(0);
    expect(await metricValue('sluice_queue_enqueue_failed_spans_total', { queue: 'otlphttp/test' })).toBe(3);
  });

  it('drops and counts new spans when the queue is full and on_full is drop', async () => {
    const { sender, queue } = await makeSender(createFakeTransport([]), { queue: { max_size: 200 } });
    await sender.consume(record(1, 100), 3);
    await sender.consume(record(2, 100), 5);
    expect(queue.stats().records).toBe(1);
    expect(await metricValue('sluice_exporter_dropped_spans_total', { ...exporter, reason: 'queue_full' })).toBe(5);
    expect(await metricValue('sluice_queue_enqueue_failed_spans_total', { queue: 'otlphttp/test' })).toBe(5);
  });

  it('leaves undelivered records on disk at shutdown and delivers them on the next start', async () => {
    const failing = createFakeTransport([], { status: 'retryable', error: '503' });
    const first = await makeSender(failing);
    await first.sender.start();
    for (let tag = 0; tag < 3; tag++) await first.sender.consume(record(tag), 1);
    await until(() => failing.calls.length > 0);
    await first.sender.shutdown(100);

    const working = createFakeTransport([]);
    const second = await makeSender(working);
    expect(second.queue.stats().records).toBe(3);
    await second.sender.start();
    await until(() => working.delivered().length === 3);
    expect(working.delivered().sort()).toEqual([0, 1, 2]);
  });

  it('aborts sends still in flight after the grace period and keeps their records', async () => {
    const hanging = createHangingTransport();
    const first = await makeSender(hanging);
    await first.sender.start();
    await first.sender.consume(record(9), 1);
    await until(() => hanging.started() > 0);
    await first.sender.shutdown(10);

    const second = await makeSender(createFakeTransport([]));
    expect(second.queue.stats().records).toBe(1);
  });

  it('delivers what a memory queue holds before it closes at shutdown, within the grace period', async () => {
    const config = makeConfig({ queue: { storage: 'memory', max_batch_spans: 1 } });
    const queue = new MemoryQueue({ name: 'otlphttp/test', maxSizeBytes: config.sending_queue.max_size });
    const inner = createFakeTransport([]);
    // Each send takes a turn of the timers, so records are still queued when shutdown begins.
    const transport: Transport = {
      send: (records, spans, signal) => new Promise((resolve) => setTimeout(resolve, 1)).then(() => inner.send(records, spans, signal)),
    };
    const sender = createQueuedSender({ id: 'otlphttp/test', queue, transport, logger, telemetry, config });
    senders.push(sender);
    await sender.start();
    for (let tag = 0; tag < 20; tag++) await sender.consume(record(tag), 1);
    await sender.shutdown(10_000);
    expect(inner.delivered().sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, tag) => tag));
  });

  it('shuts down idempotently, even before start', async () => {
    const { sender } = await makeSender(createFakeTransport([]));
    await Promise.all([sender.shutdown(0), sender.shutdown(0)]);
    await sender.start();
    await expect(sender.consume(record(1), 1)).rejects.toThrow(/closed/);
  });

  it('delivers directly, with errors a receiver can map, when the sending queue is disabled', async () => {
    const transport = createFakeTransport([{ status: 'retryable', retryInMs: 1_000, error: '503' }]);
    const { sender } = await makeSender(transport, { queue: { enabled: false } });
    await sender.start();
    await expect(sender.consume(record(1), 1)).rejects.toMatchObject({ retryAfterMs: 1_000 });
    await sender.consume(record(2), 1);
    expect(transport.delivered()).toEqual([2]);
  });
});
