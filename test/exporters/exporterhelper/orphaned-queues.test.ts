import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOrphanedQueues, queueDirectory } from '../../../src/exporters/exporterhelper/index.js';
import { DiskQueue } from '../../../src/queue/index.js';

const logger = pino({ level: 'silent' });
const READ_ALL = { maxSpans: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };
let storage: string;

beforeEach(async () => {
  storage = await mkdtemp(join(tmpdir(), 'sluice-orphans-'));
});
afterEach(async () => {
  await rm(storage, { recursive: true, force: true });
});

/** Leaves a closed queue for exporter `id` with `records` records, the first `delivered` of them acknowledged. */
async function leaveQueue(id: string, records: number, delivered: number): Promise<void> {
  const queue = new DiskQueue({ name: id, directory: queueDirectory(storage, id), maxSizeBytes: 1024 * 1024, logger });
  await queue.open();
  for (let i = 0; i < records; i++) await queue.append(Buffer.alloc(100, i), 1);
  const read = await queue.read(READ_ALL);
  await queue.ack(read.slice(0, delivered).map((record) => record.id));
  await queue.close();
}

describe('findOrphanedQueues', () => {
  it('names the queues of exporters not read any more that hold undelivered records, and only those', async () => {
    await leaveQueue('otlphttp/renamed', 3, 1);
    await leaveQueue('otlphttp/delivered', 3, 3);
    await leaveQueue('otlphttp/running', 3, 0);
    const orphaned = await findOrphanedQueues(storage, new Set(['otlphttp/running']));
    expect(orphaned.map((queue) => queue.exporter)).toEqual(['otlphttp/renamed']);
    expect(orphaned[0]?.bytes).toBeGreaterThan(300);
  });
});
