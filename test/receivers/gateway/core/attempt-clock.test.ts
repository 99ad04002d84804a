// The attempt clock under fake timers: the first-byte timeout before the
// first body byte, the idle timeout after it, whichever of the two is longer.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClientLink } from '../../../../src/receivers/gateway/core/client-link.js';
import { AttemptClock } from '../../../../src/receivers/gateway/core/upstream.js';

function clockWithAborts(firstByteMs: number, idleMs: number): { clock: AttemptClock; aborts: Array<{ reason: string; at: number }> } {
  const clock = new AttemptClock(firstByteMs, idleMs, new ClientLink());
  const aborts: Array<{ reason: string; at: number }> = [];
  clock.onAbort = (error) => aborts.push({ reason: error.message, at: performance.now() });
  return { clock, aborts };
}

describe('AttemptClock', () => {
  let start = 0;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    start = performance.now();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends an attempt with no body byte at the first-byte timeout', () => {
    const { clock, aborts } = clockWithAborts(100, 1_000);
    vi.advanceTimersByTime(99);
    expect(aborts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(aborts).toEqual([{ reason: 'first_byte_timeout', at: start + 100 }]);
    expect(clock.reason).toBe('first_byte_timeout');
  });

  it('after a first byte, times the silence since the last chunk, past the first-byte timeout', () => {
    const { clock, aborts } = clockWithAborts(100, 1_000);
    vi.advanceTimersByTime(50);
    clock.onByte();
    vi.advanceTimersByTime(500);
    clock.onByte();
    vi.advanceTimersByTime(999);
    expect(aborts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(aborts).toEqual([{ reason: 'stream_idle_timeout', at: start + 1_550 }]);
  });

  it('ends a silent stream at the idle time after its first byte when the first-byte timeout is longer', () => {
    const { clock, aborts } = clockWithAborts(5_000, 100);
    vi.advanceTimersByTime(10);
    clock.onByte();
    vi.advanceTimersByTime(100);
    expect(aborts).toEqual([{ reason: 'stream_idle_timeout', at: start + 110 }]);
  });

  it('cleared, aborts nothing', () => {
    const { clock, aborts } = clockWithAborts(100, 100);
    clock.onByte();
    clock.clear();
    vi.advanceTimersByTime(10_000);
    expect(aborts).toEqual([]);
    expect(clock.reason).toBeUndefined();
  });
});
