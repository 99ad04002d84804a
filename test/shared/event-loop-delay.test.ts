import { createHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EVENT_LOOP_DELAY_METRIC, fold } from '../../src/shared/event-loop-delay.js';
import { Telemetry } from '../../src/shared/telemetry.js';

function sample(text: string, suffix: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${EVENT_LOOP_DELAY_METRIC}${suffix} `));
  if (line === undefined) throw new Error(`no ${EVENT_LOOP_DELAY_METRIC}${suffix} in the metrics`);
  return Number(line.split(' ')[1]);
}

describe('sluice_event_loop_delay_seconds', () => {
  it('records a stall of the event loop in the histogram the registry serves', async () => {
    const telemetry = new Telemetry();
    await sleep(30); // the monitor's timer starts on the loop's next turn
    const blockedUntil = Date.now() + 80;
    while (Date.now() < blockedUntil) {
      // hold the loop: the monitor's timer falls due meanwhile and runs late
    }
    await sleep(50);
    const text = await telemetry.registry.metrics();
    expect(text).toContain(`# TYPE ${EVENT_LOOP_DELAY_METRIC} histogram`);
    // The process and runtime metrics beside it, once prefixed.
    expect(text).toContain('# TYPE sluice_process_cpu_seconds_total counter');
    expect(text).toContain('# TYPE sluice_nodejs_heap_size_used_bytes gauge');
    expect(text).not.toContain('sluice_process_process_');
    const count = sample(text, '_count');
    expect(count).toBeGreaterThanOrEqual(1);
    // At least one sample was more than 25 ms late.
    expect(sample(text, '_bucket{le="0.025"}')).toBeLessThan(count);
  });

  it('moves every recorded sample into the buckets of its delay, once', async () => {
    const recorded = createHistogram();
    // Values are whole timer periods (20 ms resolution): 50 on time, 50 about 130 ms late.
    for (let i = 0; i < 50; i++) recorded.record(20_300_000);
    for (let i = 0; i < 50; i++) recorded.record(150_000_000);
    const registry = new Registry();
    const histogram = new Histogram({ name: EVENT_LOOP_DELAY_METRIC, help: 'test', buckets: [0.001, 0.1, 0.25], registers: [registry] });
    fold(recorded, histogram);
    fold(recorded, histogram);
    const text = await registry.metrics();
    expect(sample(text, '_count')).toBe(100);
    expect(sample(text, '_bucket{le="0.001"}')).toBe(50);
    expect(sample(text, '_bucket{le="0.1"}')).toBe(50);
    expect(sample(text, '_bucket{le="0.25"}')).toBe(100);
    expect(recorded.count).toBe(0);
  });
});
