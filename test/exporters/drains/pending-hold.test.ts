// The pending loop on its own: a record that can never be held must not hold
// back the records after it (the queue frees space only in order).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PendingHold } from '../../../src/exporters/drains/pending-hold.js';
import type { HoldResult, Sampler } from '../../../src/processors/sampling/sampler.js';
import { DiskQueue } from '../../../src/queue/index.js';
import { MalformedDataError } from '../../../src/shared/errors.js';

describe('drain pending loop', () => {
  it('drops, counts and acknowledges a record it cannot read, and goes on to the next', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-pending-'));
    const logger = pino({ level: 'silent' });
    const queue = new DiskQueue({ name: 'pending-test', directory, maxSizeBytes: 1024 * 1024, logger });
    const unreadable: number[] = [];
    const decided: HoldResult[] = [];
    const sampler = {
      hold: (data: Uint8Array): Promise<HoldResult> =>
        data[0] === 0xff ? Promise.reject(new MalformedDataError('malformed attributes: invalid wire type 7')) : Promise.resolve({ kept: { buf: data, spanCount: 2 }, sampledOutSpans: 0 }),
    } as unknown as Sampler;
    const hold = new PendingHold({ queue, sampler: () => sampler, decided: async (held) => void decided.push(held), maxSpansPerRead: 1_000, unreadable: (spans) => void unreadable.push(spans), logger });
    await hold.start();
    try {
      await queue.append(Uint8Array.from([0xff, 1]), 3);
      await queue.append(Uint8Array.from([0x0a, 1]), 2);
      for (let i = 0; i < 200 && queue.stats().records > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unreadable).toEqual([3]);
      expect(decided.map((held) => held.kept?.spanCount)).toEqual([2]);
      // Both acknowledged: nothing is left to hold back the queue.
      expect(queue.stats().records).toBe(0);
    } finally {
      await hold.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
