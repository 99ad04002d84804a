import { describe, expect, it } from 'vitest';
import { MemoryQueue, QueueFullError } from '../../src/queue/index.js';

const READ_ALL = { maxSpans: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };

async function openQueue(maxSizeBytes = 1024 * 1024): Promise<MemoryQueue> {
  const queue = new MemoryQueue({ name: 'mem', maxSizeBytes });
  await queue.open();
  return queue;
}

describe('MemoryQueue', () => {
  it('hands records out once and frees their space when acknowledged out of order', async () => {
    const queue = await openQueue();
    for (let i = 0; i < 3; i++) await queue.append(Buffer.alloc(10, i), 2);
    const records = await queue.read(READ_ALL);
    expect(records.map((r) => r.data[0])).toEqual([0, 1, 2]);
    expect(await queue.read(READ_ALL)).toEqual([]);
    await queue.ack([records[2]?.id ?? -1, records[0]?.id ?? -1]);
    expect(queue.stats().records).toBe(1);
    await queue.ack([records[1]?.id ?? -1]);
    expect(queue.stats().sizeBytes).toBe(0);
  });

  it('fills at the same byte count as the disk queue', async () => {
    const queue = await openQueue(200);
    await queue.append(Buffer.alloc(70), 1);
    await queue.append(Buffer.alloc(70), 1);
    await expect(queue.append(Buffer.alloc(70), 1)).rejects.toBeInstanceOf(QueueFullError);
  });
});
