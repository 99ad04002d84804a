import { describe, expect, it } from 'vitest';
import type { TracesConsumer } from '../../src/core/component.js';
import { ResourceExhaustedError } from '../../src/shared/errors.js';
import { MEMORY_GC_INTERVAL_MS, MEMORY_SAMPLE_INTERVAL_MS, guardMemory } from '../../src/core/memory-guard.js';
import { TraceBatch } from '../../src/otlp/batch.js';

const MIB = 1024 * 1024;
const batch = TraceBatch.fromProto(new Uint8Array());

function counting(): TracesConsumer & { calls: number } {
  const consumer = {
    calls: 0,
    consume(): Promise<void> {
      consumer.calls += 1;
      return Promise.resolve();
    },
  };
  return consumer;
}

describe('memory guard', () => {
  it('passes data on below the limit and refuses with ResourceExhaustedError above it', async () => {
    let rss = 10 * MIB;
    let now = 0;
    const next = counting();
    const guarded = guardMemory(next, { limitMib: 64, rss: () => rss, now: () => now });
    await guarded.consume(batch);
    rss = 100 * MIB;
    now += MEMORY_SAMPLE_INTERVAL_MS;
    const error = await guarded.consume(batch).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ResourceExhaustedError);
    expect((error as ResourceExhaustedError).retryAfterMs).toBeGreaterThan(0);
    expect((error as Error).message).toContain('memory_limit_mib');
    expect(next.calls).toBe(1);
  });

  it('reads memory at most once per sample interval', async () => {
    let reads = 0;
    let now = 0;
    const guarded = guardMemory(counting(), { limitMib: 64, rss: () => (reads++, MIB), now: () => now });
    for (let i = 0; i < 10; i++) await guarded.consume(batch);
    now += MEMORY_SAMPLE_INTERVAL_MS;
    await guarded.consume(batch);
    expect(reads).toBe(2);
  });

  it('collects garbage when above the limit, so memory a past burst left behind does not refuse every later request', async () => {
    let garbage = 200 * MIB;
    let collections = 0;
    let now = 0;
    const next = counting();
    const guarded = guardMemory(next, {
      limitMib: 64,
      rss: () => 10 * MIB + garbage,
      now: () => now,
      collect: () => {
        collections += 1;
        garbage = 0;
      },
    });
    await guarded.consume(batch);
    expect(next.calls).toBe(1);
    expect(collections).toBe(1);
  });

  it('collects at most once per interval while memory stays above the limit', async () => {
    let collections = 0;
    let now = 0;
    const guarded = guardMemory(counting(), { limitMib: 64, rss: () => 100 * MIB, now: () => now, collect: () => (collections += 1) });
    for (let i = 0; i < 5; i++) {
      await guarded.consume(batch).catch(() => undefined);
      now += MEMORY_SAMPLE_INTERVAL_MS;
    }
    expect(collections).toBe(1);
    now += MEMORY_GC_INTERVAL_MS;
    await guarded.consume(batch).catch(() => undefined);
    expect(collections).toBe(2);
  });
});
