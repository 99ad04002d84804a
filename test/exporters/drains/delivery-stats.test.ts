import { describe, expect, it } from 'vitest';
import { DeliveryStats } from '../../../src/exporters/drains/delivery-stats.js';

function at(start: number) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('delivery stats', () => {
  it('is not errored with no deliveries or mostly successful ones', () => {
    const clock = at(1_000_000);
    const stats = new DeliveryStats(clock.now);
    expect(stats.errored).toBe(false);
    for (let i = 0; i < 5; i++) stats.success(10);
    stats.failure('x');
    expect(stats.errored).toBe(false);
  });

  it('is errored when more than 80% of the past hour failed', () => {
    const stats = new DeliveryStats(at(1_000_000).now);
    stats.success(1);
    for (let i = 0; i < 4; i++) stats.failure('x');
    expect(stats.errored).toBe(false); // exactly 80%
    stats.failure('x');
    expect(stats.errored).toBe(true);
  });

  it('is errored past 50 failures in the past hour, whatever the successes', () => {
    const stats = new DeliveryStats(at(1_000_000).now);
    for (let i = 0; i < 1000; i++) stats.success(1);
    for (let i = 0; i < 50; i++) stats.failure('x');
    expect(stats.errored).toBe(false);
    stats.failure('x');
    expect(stats.errored).toBe(true);
  });

  it('forgets failures older than an hour', () => {
    const clock = at(1_000_000);
    const stats = new DeliveryStats(clock.now);
    for (let i = 0; i < 60; i++) stats.failure('x');
    expect(stats.errored).toBe(true);
    clock.advance(61 * 60_000);
    expect(stats.window()).toEqual({ succeeded: 0, failed: 0 });
    expect(stats.errored).toBe(false);
    expect(stats.counters.deliveriesFailed).toBe(60);
  });
});
