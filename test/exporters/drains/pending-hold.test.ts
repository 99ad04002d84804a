// The pending loop on its own: a record that can never be held must not hold
// back the records after it (the queue frees space only in order).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PendingHold } from '../../../src/exporters/drains/pending-hold.js';
import type { HoldResult, Sampler, SpanSet } from '../../../src/processors/sampling/sampler.js';
import { DiskQueue, QueueFullError } from '../../../src/queue/index.js';
import { MalformedDataError } from '../../../src/shared/errors.js';

describe('drain pending loop', () => {
  it('drops, counts and acknowledges a record it cannot read, and goes on to the next', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-pending-'));
    const logger = pino({ level: 'silent' });
    const queue = new DiskQueue({ name: 'pending-test', directory, maxSizeBytes: 1024 * 1024, logger });
    const unreadable: number[] = [];
    const released: SpanSet[] = [];
    const sampler = {
      hold: (data: Uint8Array): Promise<HoldResult> =>
        data[0] === 0xff ? Promise.reject(new MalformedDataError('malformed attributes: invalid wire type 7')) : Promise.resolve({ kept: { buf: data, spanCount: 2 }, sampledOutSpans: 0 }),
    } as unknown as Sampler;
    const hold = new PendingHold({ queue, sampler, sampledOut: () => undefined, release: async (kept) => void released.push(kept), maxSpansPerRead: 1_000, unreadable: (spans) => void unreadable.push(spans), logger });
    await hold.start();
    try {
      await queue.append(Uint8Array.from([0xff, 1]), 3);
      await queue.append(Uint8Array.from([0x0a, 1]), 2);
      for (let i = 0; i < 200 && queue.stats().records > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unreadable).toEqual([3]);
      expect(released.map((kept) => kept.spanCount)).toEqual([2]);
      // Both acknowledged: nothing is left to hold back the queue.
      expect(queue.stats().records).toBe(0);
    } finally {
      await hold.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('retries handing decided spans on until it succeeds, counting what was sampled out once, and only then acknowledges the record', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-pending-'));
    const logger = pino({ level: 'silent' });
    const queue = new DiskQueue({ name: 'pending-retry', directory, maxSizeBytes: 1024 * 1024, logger });
    const sampler = { hold: (data: Uint8Array): Promise<HoldResult> => Promise.resolve({ kept: { buf: data, spanCount: 2 }, sampledOutSpans: 1 }) } as unknown as Sampler;
    const sampledOut: number[] = [];
    let attempts = 0;
    const release = async (): Promise<void> => {
      attempts += 1;
      if (attempts < 3) throw new QueueFullError('main', 100, 100);
    };
    const hold = new PendingHold({ queue, sampler, sampledOut: (spans) => void sampledOut.push(spans), release, maxSpansPerRead: 1_000, unreadable: () => undefined, logger });
    await hold.start();
    try {
      await queue.append(Uint8Array.from([0x0a, 1]), 3);
      for (let i = 0; i < 500 && queue.stats().records > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(attempts).toBe(3);
      expect(sampledOut).toEqual([1]);
      expect(queue.stats().records).toBe(0);
    } finally {
      await hold.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('leaves a record whose spans could not be handed on pending when it stops', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-pending-'));
    const logger = pino({ level: 'silent' });
    const queue = new DiskQueue({ name: 'pending-stuck', directory, maxSizeBytes: 1024 * 1024, logger });
    const sampler = { hold: (data: Uint8Array): Promise<HoldResult> => Promise.resolve({ kept: { buf: data, spanCount: 2 }, sampledOutSpans: 0 }) } as unknown as Sampler;
    let attempts = 0;
    const release = async (): Promise<void> => {
      attempts += 1;
      throw new QueueFullError('main', 100, 100);
    };
    const hold = new PendingHold({ queue, sampler, sampledOut: () => undefined, release, maxSpansPerRead: 1_000, unreadable: () => undefined, logger });
    await hold.start();
    try {
      await queue.append(Uint8Array.from([0x0a, 1]), 2);
      for (let i = 0; i < 500 && attempts < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await hold.stop();
      const reopened = new DiskQueue({ name: 'pending-stuck', directory, maxSizeBytes: 1024 * 1024, logger });
      await reopened.open();
      expect(reopened.stats().records).toBe(1);
      await reopened.close();
    } finally {
      await hold.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('reads no further while the records it holds reach its byte bound, and goes on as they settle', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-pending-'));
    const logger = pino({ level: 'silent' });
    const queue = new DiskQueue({ name: 'pending-bound', directory, maxSizeBytes: 1024 * 1024, logger });
    const waiting: (() => void)[] = [];
    let mostHeld = 0;
    const sampler = {
      hold: (data: Uint8Array): Promise<HoldResult> =>
        new Promise((resolve) => {
          waiting.push(() => resolve({ kept: { buf: data, spanCount: 1 }, sampledOutSpans: 0 } as HoldResult));
          mostHeld = Math.max(mostHeld, waiting.length);
        }),
    } as unknown as Sampler;
    let decided = 0;
    // 1,000-byte records under a 2,500-byte bound: two fit, a third is read while under it, then the loop waits.
    const hold = new PendingHold({ queue, sampler, sampledOut: () => undefined, release: async () => void decided++, maxSpansPerRead: 1_000, maxHeldBytes: 2_500, unreadable: () => undefined, logger });
    await queue.open();
    for (let i = 0; i < 8; i++) await queue.append(Buffer.alloc(1_000, i), 1);
    await hold.start();
    const until = async (done: () => boolean): Promise<void> => {
      for (let i = 0; i < 300 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    try {
      await until(() => waiting.length >= 3);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(waiting.length).toBe(3);
      expect(queue.stats().unreadRecords).toBe(5);
      for (let step = 0; step < 100 && decided < 8; step++) {
        const next = waiting.shift();
        if (next === undefined) await until(() => waiting.length > 0);
        else next();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(decided).toBe(8);
      expect(mostHeld).toBe(3);
      await until(() => queue.stats().records === 0);
      expect(queue.stats().records).toBe(0);
    } finally {
      for (const release of waiting.splice(0)) release();
      await hold.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
