import { cp, mkdtemp, open, readdir, rm, stat, truncate, writeFile, readFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskQueue, FRAME_OVERHEAD_BYTES, QueueDirectoryError, QueueFullError, QueueLockedError, QueueWriteError, type QueueRecord } from '../../src/queue/index.js';

const logger = pino({ level: process.env.LOG_LEVEL ?? "silent" });
const READ_ALL = { maxSpans: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };

let dir: string;
const opened: DiskQueue[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-queue-'));
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((q) => q.close()));
  await rm(dir, { recursive: true, force: true });
});

async function openQueue(
  options: {
    maxSizeBytes?: number;
    segmentBytes?: number;
    directory?: string;
    ackIntervalMs?: number;
    recentBytes?: number;
    openSegmentFile?: (path: string, flags: number) => Promise<FileHandle>;
  } = {},
): Promise<DiskQueue> {
  const queue = new DiskQueue({
    name: 'test',
    directory: options.directory ?? join(dir, 'q'),
    maxSizeBytes: options.maxSizeBytes ?? 1024 * 1024,
    logger,
    ...(options.segmentBytes === undefined ? {} : { segmentBytes: options.segmentBytes }),
    ...(options.ackIntervalMs === undefined ? {} : { ackIntervalMs: options.ackIntervalMs }),
    ...(options.recentBytes === undefined ? {} : { recentBytes: options.recentBytes }),
    ...(options.openSegmentFile === undefined ? {} : { openSegmentFile: options.openSegmentFile }),
  });
  opened.push(queue);
  await queue.open();
  return queue;
}

function payload(n: number, size = 10): Uint8Array {
  return Buffer.alloc(size, n);
}

function texts(records: readonly QueueRecord[]): number[] {
  return records.map((r) => r.data[0] ?? -1);
}

/** What a crash would leave: the queue's files as they are now, in another directory, while the queue stays open. */
async function crashCopy(): Promise<string> {
  const copy = join(dir, 'crashed');
  await cp(join(dir, 'q'), copy, { recursive: true });
  return copy;
}

async function flipLastByte(path: string): Promise<void> {
  const bytes = await readFile(path);
  bytes[bytes.length - 1] = 0xff ^ (bytes[bytes.length - 1] ?? 0);
  await writeFile(path, bytes);
}

/** Flips a data byte of record `index` of a segment of `records` equal-sized records; its length field stays intact. */
async function flipDataByte(path: string, index: number, records: number): Promise<void> {
  const bytes = await readFile(path);
  const at = (bytes.length / records) * index + FRAME_OVERHEAD_BYTES + 5;
  bytes[at] = 0xff ^ (bytes[at] ?? 0);
  await writeFile(path, bytes);
}

async function segmentFiles(): Promise<string[]> {
  return (await readdir(join(dir, 'q'))).filter((name) => name.endsWith('.seg')).sort();
}

describe('DiskQueue', () => {
  it('hands back appended records with their span counts and acknowledges them', async () => {
    const queue = await openQueue();
    await queue.append(payload(1), 3);
    await queue.append(payload(2), 5);
    const records = await queue.read(READ_ALL);
    expect(texts(records)).toEqual([1, 2]);
    expect(records.map((r) => r.spans)).toEqual([3, 5]);
    expect(await queue.read(READ_ALL)).toEqual([]);
    await queue.ack(records.map((r) => r.id));
    expect(queue.stats().records).toBe(0);
  });

  it('keeps its directory, segments and ack file readable by their owner only, as queued spans may carry prompts', async () => {
    const queue = await openQueue({ directory: join(dir, 'queues', 'q') });
    await queue.append(payload(1), 1);
    const [record] = await queue.read(READ_ALL);
    await queue.ack([record?.id ?? -1]);
    await queue.append(payload(2), 1);
    await queue.close();
    const modes: Record<string, number> = {};
    for (const path of [join(dir, 'queues'), join(dir, 'queues', 'q')]) modes[path] = (await stat(path)).mode & 0o777;
    for (const name of await readdir(join(dir, 'queues', 'q'))) modes[name] = (await stat(join(dir, 'queues', 'q', name))).mode & 0o777;
    expect(Object.keys(modes).some((name) => name.endsWith('.seg'))).toBe(true);
    expect(Object.keys(modes)).toContain('ack');
    for (const [name, mode] of Object.entries(modes)) expect({ name, mode: mode.toString(8) }).toEqual({ name, mode: name.startsWith('/') ? '700' : '600' });
  });

  it('stops a read at the span and byte limits but always returns at least one record', async () => {
    const queue = await openQueue();
    for (let i = 0; i < 4; i++) await queue.append(payload(i, 100), 10);
    expect(texts(await queue.read({ maxSpans: 5, maxBytes: 1_000_000 }))).toEqual([0]);
    expect(texts(await queue.read({ maxSpans: 20, maxBytes: 1_000_000 }))).toEqual([1, 2]);
    expect(texts(await queue.read({ maxSpans: 1_000, maxBytes: 150 }))).toEqual([3]);
  });

  it('hands unacknowledged records out again after a reopen', async () => {
    const first = await openQueue();
    for (let i = 0; i < 3; i++) await first.append(payload(i), 1);
    const records = await first.read(READ_ALL);
    await first.ack([records[0]?.id ?? -1]);
    await first.close();

    const second = await openQueue();
    expect(second.stats().records).toBe(2);
    expect(texts(await second.read(READ_ALL))).toEqual([1, 2]);
  });

  it('keeps the acknowledged position behind an unacknowledged record when acks arrive out of order', async () => {
    const first = await openQueue();
    for (let i = 0; i < 3; i++) await first.append(payload(i), 1);
    const [a, b, c] = await first.read(READ_ALL);
    await first.ack([c?.id ?? -1, a?.id ?? -1]);
    await first.close();

    const second = await openQueue();
    // b was never acknowledged; c after it is redelivered too (at-least-once).
    expect(texts(await second.read(READ_ALL))).toEqual([b?.data[0] ?? -1, 2]);
  });

  it('deletes segments once every record in them is acknowledged', async () => {
    const queue = await openQueue({ segmentBytes: 100 });
    for (let i = 0; i < 6; i++) await queue.append(payload(i, 60), 1);
    expect((await segmentFiles()).length).toBeGreaterThan(3);
    const records = await queue.read(READ_ALL);
    await queue.ack(records.map((r) => r.id));
    expect(await segmentFiles()).toEqual([]);
    expect(queue.stats().sizeBytes).toBe(0);
  });

  it('keeps every whole record before a torn tail and truncates the tail', async () => {
    const first = await openQueue();
    for (let i = 0; i < 5; i++) await first.append(payload(i, 40), 1);
    await first.close();
    const [segment] = await segmentFiles();
    const path = join(dir, 'q', segment ?? '');
    const size = (await stat(path)).size;
    await truncate(path, size - 20); // mid-way through the last record

    const second = await openQueue();
    expect(texts(await second.read(READ_ALL))).toEqual([0, 1, 2, 3]);
    expect((await stat(path)).size).toBe(((size / 5) * 4));
  });

  it('skips a record whose CRC does not match alone on start, and keeps the records after it in the file', async () => {
    const first = await openQueue();
    for (let i = 0; i < 5; i++) await first.append(payload(i, 40), 1);
    await first.close();
    const [segment] = await segmentFiles();
    const path = join(dir, 'q', segment ?? '');
    const size = (await stat(path)).size;
    await flipDataByte(path, 1, 5);

    const second = await openQueue();
    expect(second.stats().records).toBe(5); // the damaged one is only found unreadable when read
    const records = await second.read(READ_ALL);
    expect(texts(records)).toEqual([0, 2, 3, 4]);
    expect((await stat(path)).size).toBe(size);
    await second.ack(records.map((r) => r.id));
    await second.close();

    const third = await openQueue();
    expect(third.stats().records).toBe(0);
  });

  it('skips damaged records in a row on start, and keeps the records after them in the file', async () => {
    const first = await openQueue();
    for (let i = 0; i < 6; i++) await first.append(payload(i, 40), 1);
    await first.close();
    const [segment] = await segmentFiles();
    const path = join(dir, 'q', segment ?? '');
    const size = (await stat(path)).size;
    for (const index of [1, 2, 3]) await flipDataByte(path, index, 6);

    const second = await openQueue();
    expect(texts(await second.read(READ_ALL))).toEqual([0, 4, 5]);
    expect((await stat(path)).size).toBe(size);
  });

  it('keeps every record after a damaged first record of a segment', async () => {
    const first = await openQueue();
    for (let i = 0; i < 3; i++) await first.append(payload(i, 40), 1);
    await first.close();
    const [segment] = await segmentFiles();
    await flipDataByte(join(dir, 'q', segment ?? ''), 0, 3);

    const second = await openQueue();
    expect(texts(await second.read(READ_ALL))).toEqual([1, 2]);
  });

  it('cuts off a damaged last record of a segment on start, as a corrupt tail', async () => {
    const first = await openQueue();
    for (let i = 0; i < 3; i++) await first.append(payload(i, 40), 1);
    await first.close();
    const [segment] = await segmentFiles();
    const path = join(dir, 'q', segment ?? '');
    const size = (await stat(path)).size;
    await flipDataByte(path, 2, 3);

    const second = await openQueue();
    expect(second.stats().records).toBe(2);
    expect(texts(await second.read(READ_ALL))).toEqual([0, 1]);
    expect((await stat(path)).size).toBe((size / 3) * 2);
  });

  it('cuts a segment at a record whose length is damaged, since nothing says where the next one starts', async () => {
    const first = await openQueue();
    for (let i = 0; i < 4; i++) await first.append(payload(i, 40), 1);
    await first.close();
    const [segment] = await segmentFiles();
    const path = join(dir, 'q', segment ?? '');
    const bytes = await readFile(path);
    bytes.writeUInt32LE(30, (bytes.length / 4) * 1); // record 1 now claims 38 of its 64 bytes
    await writeFile(path, bytes);

    const second = await openQueue();
    expect(texts(await second.read(READ_ALL))).toEqual([0]);
    expect((await stat(path)).size).toBe(bytes.length / 4);
  });

  it('skips a record damaged on disk while the queue runs alone, and delivers the records after it', async () => {
    const queue = await openQueue({ recentBytes: 0 });
    for (let i = 0; i < 6; i++) await queue.append(payload(i, 40), 1);
    expect(texts(await queue.read({ maxSpans: 2, maxBytes: Number.MAX_SAFE_INTEGER }))).toEqual([0, 1]);
    const [segment] = await segmentFiles();
    await flipDataByte(join(dir, 'q', segment ?? ''), 3, 6);

    const records = await queue.read(READ_ALL);
    expect(texts(records)).toEqual([2, 4, 5]);
    expect(queue.stats().unreadRecords).toBe(0);
    await queue.append(payload(6, 40), 1);
    expect(texts(await queue.read(READ_ALL))).toEqual([6]);
  });

  it('skips damaged records in a row while the queue runs, and delivers the records after them', async () => {
    const queue = await openQueue({ recentBytes: 0 });
    for (let i = 0; i < 6; i++) await queue.append(payload(i, 40), 1);
    expect(texts(await queue.read({ maxSpans: 1, maxBytes: Number.MAX_SAFE_INTEGER }))).toEqual([0]);
    const [segment] = await segmentFiles();
    for (const index of [2, 3]) await flipDataByte(join(dir, 'q', segment ?? ''), index, 6);

    expect(texts(await queue.read(READ_ALL))).toEqual([1, 4, 5]);
    expect(queue.stats().unreadRecords).toBe(0);
  });

  it('delivers later segments past a corrupt record in an earlier one, and acknowledges across the gap', async () => {
    const first = await openQueue({ segmentBytes: 100 });
    for (let i = 0; i < 4; i++) await first.append(payload(i, 60), 1); // one record per segment
    await first.close();
    const [firstSegment] = await segmentFiles();
    const path = join(dir, 'q', firstSegment ?? '');
    const bytes = await readFile(path);
    bytes[bytes.length - 1] = 0xff ^ (bytes[bytes.length - 1] ?? 0);
    await writeFile(path, bytes);

    const second = await openQueue({ segmentBytes: 100 });
    const records = await second.read(READ_ALL);
    expect(texts(records)).toEqual([1, 2, 3]);
    await second.ack(records.map((r) => r.id));
    await second.close();

    const third = await openQueue({ segmentBytes: 100 });
    expect(third.stats().records).toBe(0);
    expect(await segmentFiles()).toEqual([]);
  });

  it('loses nothing across many reopen cycles with concurrent appends and partial acks', async () => {
    const delivered: number[] = [];
    let next = 0;
    for (let cycle = 0; cycle < 5; cycle++) {
      const queue = await openQueue({ segmentBytes: 300 });
      await Promise.all(Array.from({ length: 20 }, () => queue.append(payload(next++ % 256, 30), 1)));
      const records = await queue.read({ maxSpans: 15, maxBytes: Number.MAX_SAFE_INTEGER });
      // Acknowledge every other record: the rest must come back after reopening.
      const acked = records.filter((_, i) => i % 2 === 0);
      await queue.ack(acked.map((r) => r.id));
      delivered.push(...texts(acked));
      await queue.close();
    }
    const last = await openQueue({ segmentBytes: 300 });
    const rest = await last.read(READ_ALL);
    delivered.push(...texts(rest));
    // Records after an unacknowledged one come back too (at-least-once), so compare as a set.
    expect([...new Set(delivered)].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('appends after recovery continue after the surviving records', async () => {
    const first = await openQueue();
    await first.append(payload(1), 1);
    await first.close();
    const second = await openQueue();
    await second.append(payload(2), 1);
    expect(texts(await second.read(READ_ALL))).toEqual([1, 2]);
  });

  it('rejects an append with QueueFullError once max_size is reached', async () => {
    const queue = await openQueue({ maxSizeBytes: 200 });
    await queue.append(payload(1, 70), 1);
    await queue.append(payload(2, 70), 1);
    const error = await queue.append(payload(3, 70), 1).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(QueueFullError);
    expect((error as QueueFullError).code).toBe('SLUICE_ERR_QUEUE_FULL');
  });

  it('shares one fsync between many concurrent appends', async () => {
    const queue = await openQueue();
    await Promise.all(Array.from({ length: 200 }, (_, i) => queue.append(payload(i % 250), 1)));
    expect(queue.stats().records).toBe(200);
    expect(queue.stats().fsyncs).toBeLessThan(20);
    expect(texts(await queue.read(READ_ALL))).toEqual(Array.from({ length: 200 }, (_, i) => i % 250));
  });

  it('fails open() with an error naming a directory it cannot create', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    const queue = new DiskQueue({ name: 'test', directory: join(file, 'q'), maxSizeBytes: 1024, logger });
    const error = await queue.open().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(QueueDirectoryError);
    expect((error as Error).message).toContain(join(file, 'q'));
  });

  it('refuses to open a directory another open queue holds, and allows it once that one closes', async () => {
    const first = await openQueue();
    const second = new DiskQueue({ name: 'again', directory: join(dir, 'q'), maxSizeBytes: 1024, logger });
    await expect(second.open()).rejects.toBeInstanceOf(QueueLockedError);
    await first.close();
    const third = await openQueue();
    expect(third.stats().records).toBe(0);
  });

  it('takes over a lock left by a process that no longer exists', async () => {
    const first = await openQueue();
    await first.append(payload(5), 1);
    await first.close();
    await writeFile(join(dir, 'q', 'lock'), '999999999'); // above any pid_max: a dead holder
    const second = await openQueue();
    expect(texts(await second.read(READ_ALL))).toEqual([5]);
  });

  it('wakes a waiting reader when a record is appended', async () => {
    const queue = await openQueue();
    const waiting = queue.waitForUnread(new AbortController().signal);
    await queue.append(payload(7), 1);
    expect(await waiting).toBe(true);
  });

  it('redelivers, never loses, records acknowledged after the last ack write when the process dies', async () => {
    const queue = await openQueue({ ackIntervalMs: 60_000 });
    for (let i = 0; i < 4; i++) await queue.append(payload(i), 1);
    const records = await queue.read(READ_ALL);
    await queue.ack(records.slice(0, 2).map((r) => r.id));
    const crashed = await crashCopy();

    const restarted = await openQueue({ directory: crashed });
    expect(texts(await restarted.read(READ_ALL))).toEqual([0, 1, 2, 3]);
  });

  it('writes the acknowledged position within the ack interval without waiting for close', async () => {
    const queue = await openQueue({ ackIntervalMs: 20 });
    for (let i = 0; i < 4; i++) await queue.append(payload(i), 1);
    const records = await queue.read(READ_ALL);
    await queue.ack(records.slice(0, 3).map((r) => r.id));
    const ackFile = join(dir, 'q', 'ack');
    await waitFor(async () => {
      const bytes = await readFile(ackFile).catch(() => Buffer.alloc(0));
      return bytes.length >= 4 && bytes.readUInt32LE(0) === 3;
    });
    const crashed = await crashCopy();

    const restarted = await openQueue({ directory: crashed });
    expect(texts(await restarted.read(READ_ALL))).toEqual([3]);
  });

  it('recovers when acknowledged segments were deleted before the ack position reached disk', async () => {
    const queue = await openQueue({ segmentBytes: 100, ackIntervalMs: 60_000 });
    for (let i = 0; i < 4; i++) await queue.append(payload(i, 60), 1); // one record per segment
    const records = await queue.read(READ_ALL);
    await queue.ack(records.slice(0, 2).map((r) => r.id));
    expect((await segmentFiles()).length).toBe(2);
    const crashed = await crashCopy();

    const restarted = await openQueue({ directory: crashed, segmentBytes: 100 });
    expect(texts(await restarted.read(READ_ALL))).toEqual([2, 3]);
    await restarted.append(payload(4, 60), 1);
    expect(texts(await restarted.read(READ_ALL))).toEqual([4]);
  });

  it('serves records read soon after their append from memory, not from the segment file', async () => {
    const queue = await openQueue({ segmentBytes: 100 });
    for (let i = 0; i < 3; i++) await queue.append(payload(i, 60), 1);
    const [first] = await segmentFiles();
    await flipLastByte(join(dir, 'q', first ?? ''));
    expect(texts(await queue.read(READ_ALL))).toEqual([0, 1, 2]);
  });

  it('reads records evicted from memory back from their segment files, in order', async () => {
    const queue = await openQueue({ segmentBytes: 100, recentBytes: 130 }); // room for the last two
    for (let i = 0; i < 5; i++) await queue.append(payload(i, 60), 1);
    const [first] = await segmentFiles();
    await flipLastByte(join(dir, 'q', first ?? ''));
    // Record 0 was read from disk (damaged there, so skipped); 1 and 2 from disk; 3 and 4 from memory.
    expect(texts(await queue.read(READ_ALL))).toEqual([1, 2, 3, 4]);
    await queue.append(payload(5, 60), 1);
    expect(texts(await queue.read(READ_ALL))).toEqual([5]);
  });

  it('checks large records read back from their segment files, and still finds a damaged one', async () => {
    const size = 600 * 1024; // checked in pieces, not in one call
    const queue = await openQueue({ maxSizeBytes: 16 * 1024 * 1024, segmentBytes: size + 1024, recentBytes: 1 });
    for (let i = 0; i < 3; i++) await queue.append(payload(i, size), 1);
    const [first] = await segmentFiles();
    await flipLastByte(join(dir, 'q', first ?? ''));
    const records = await queue.read(READ_ALL);
    expect(texts(records)).toEqual([1, 2]);
    expect(records.map((r) => r.data.byteLength)).toEqual([size, size]);
  });

  it('fails a write still in flight behind a failed one, then appends to a new segment, and recovers only what was acknowledged', async () => {
    const failSecond = signal();
    const writeStarted = [signal(), signal(), signal()];
    let writes = 0;
    async function openFailing(path: string, flags: number): Promise<FileHandle> {
      const handle = await open(path, flags);
      return new Proxy(handle, {
        get(target, prop) {
          if (prop !== 'writev') {
            const value: unknown = Reflect.get(target, prop);
            return typeof value === 'function' ? value.bind(target) : value;
          }
          return async function writev(buffers: NodeJS.ArrayBufferView[], position: number) {
            const n = writes++;
            writeStarted[n]?.resolve();
            if (n === 1) {
              await failSecond.promise;
              throw new Error('injected EIO');
            }
            return target.writev(buffers, position);
          };
        },
      });
    }
    const queue = await openQueue({ openSegmentFile: openFailing });
    await queue.append(payload(1), 1);
    const second = queue.append(payload(2), 1).catch((err: unknown) => err);
    await writeStarted[1]?.promise;
    const third = queue.append(payload(3), 1).catch((err: unknown) => err);
    await writeStarted[2]?.promise;
    failSecond.resolve();
    expect(await second).toBeInstanceOf(QueueWriteError);
    // Written after the hole the failed write left, so it must not count as stored.
    expect(await third).toBeInstanceOf(QueueWriteError);
    await queue.append(payload(4), 1);
    expect(texts(await queue.read(READ_ALL))).toEqual([1, 4]);
    expect((await segmentFiles()).length).toBe(2);
    await queue.close();

    const reopened = await openQueue();
    expect(texts(await reopened.read(READ_ALL))).toEqual([1, 4]);
  });

  it('appends again once the disk has room after a write into a new, empty segment failed', async () => {
    const faults = noFaults();
    const queue = await openQueue({ openSegmentFile: faultySegmentFiles(faults) });
    await queue.append(payload(1), 1);
    faults.full = true;
    // The first failure breaks the old segment; the second one a new, still-empty segment.
    await expect(queue.append(payload(2), 1)).rejects.toBeInstanceOf(QueueWriteError);
    await expect(queue.append(payload(3), 1)).rejects.toBeInstanceOf(QueueWriteError);
    faults.full = false;
    await queue.append(payload(4), 1);
    await queue.append(payload(5), 1);
    expect(texts(await queue.read(READ_ALL))).toEqual([1, 4, 5]);
    await queue.close();

    const reopened = await openQueue();
    expect(texts(await reopened.read(READ_ALL))).toEqual([1, 4, 5]);
  });

  it('appends again once the disk has room after the first write of a new queue failed', async () => {
    const faults = noFaults();
    faults.full = true;
    const queue = await openQueue({ openSegmentFile: faultySegmentFiles(faults) });
    await expect(queue.append(payload(1), 1)).rejects.toBeInstanceOf(QueueWriteError);
    faults.full = false;
    await queue.append(payload(2), 1);
    expect(texts(await queue.read(READ_ALL))).toEqual([2]);
    await queue.close();

    const reopened = await openQueue();
    expect(texts(await reopened.read(READ_ALL))).toEqual([2]);
  });

  it('cuts the whole records of a partly written group off the segment, so they are not delivered after a reopen', async () => {
    const faults = noFaults();
    const queue = await openQueue({ openSegmentFile: faultySegmentFiles(faults) });
    await queue.append(payload(1, 100), 1);
    faults.shortWriteNext = true;
    const group = await Promise.allSettled([10, 11, 12, 13].map((n) => queue.append(payload(n, 100), 1)));
    const stored = [1, ...[10, 11, 12, 13].filter((_, i) => group[i]?.status === 'fulfilled')];
    expect(stored.length).toBeLessThan(5);
    await queue.close();

    const reopened = await openQueue();
    expect(texts(await reopened.read(READ_ALL))).toEqual(stored);
  });

  it('loses no acknowledged record when a partly written group could not be cut off its segment', async () => {
    const faults = noFaults();
    faults.truncateFails = true;
    const first = await openQueue({ openSegmentFile: faultySegmentFiles(faults) });
    for (const n of [1, 2, 3]) await first.append(payload(n, 100), 1);
    faults.shortWriteNext = true;
    const group = await Promise.allSettled([10, 11, 12, 13].map((n) => first.append(payload(n, 100), 1)));
    const storedBefore = [1, 2, 3, ...[10, 11, 12, 13].filter((_, i) => group[i]?.status === 'fulfilled')];
    // These go to the next segment, numbered right after the records stored before them.
    for (const n of [20, 21, 22, 23, 24, 25]) await first.append(payload(n, 100), 1);
    expect((await segmentFiles()).length).toBe(2);
    await first.close();

    // Deliver exactly what the first segment holds, then restart before delivering the rest.
    const second = await openQueue();
    const delivered = await second.read({ maxSpans: storedBefore.length, maxBytes: Number.MAX_SAFE_INTEGER });
    expect(texts(delivered)).toEqual(storedBefore);
    await second.ack(delivered.map((r) => r.id));
    await second.close();

    const third = await openQueue();
    expect(texts(await third.read(READ_ALL))).toEqual([20, 21, 22, 23, 24, 25]);
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
}

interface DiskFaults {
  /** Every write fails as on a full disk. */
  full: boolean;
  /** The next write of more than one record lands all but its last bytes and reports a short count, as at ENOSPC. */
  shortWriteNext: boolean;
  /** Truncating a segment file fails. */
  truncateFails: boolean;
}

function noFaults(): DiskFaults {
  return { full: false, shortWriteNext: false, truncateFails: false };
}

/** Opens segment files whose writes and truncations fail while `faults` says so. */
function faultySegmentFiles(faults: DiskFaults): (path: string, flags: number) => Promise<FileHandle> {
  return async function openSegmentFile(path, flags) {
    const handle = await open(path, flags);
    return new Proxy(handle, {
      get(target, prop) {
        if (prop === 'writev') {
          return async function writev(buffers: Uint8Array[], position: number) {
            if (faults.full) throw Object.assign(new Error('injected ENOSPC: no space left on device'), { code: 'ENOSPC' });
            // Two buffers (header and data) per record.
            if (!faults.shortWriteNext || buffers.length <= 2) return target.writev(buffers, position);
            faults.shortWriteNext = false;
            const all = Buffer.concat(buffers);
            const { bytesWritten } = await target.write(all, 0, all.length - 50, position);
            return { bytesWritten, buffers };
          };
        }
        if (prop === 'truncate') {
          return async function truncate(length?: number) {
            if (faults.truncateFails) throw Object.assign(new Error('injected EIO: i/o error'), { code: 'EIO' });
            return target.truncate(length);
          };
        }
        const value: unknown = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
}

/** A promise and its resolve, for stepping through concurrent writes (Node 20 has no Promise.withResolvers). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
