import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { StatsSampler } from '../../../src/admin/stats/sampler.js';

/** A registry whose one sampled metric fails to read while `failing` is true. */
function flakyRegistry(): { registry: Registry; setFailing(value: boolean): void } {
  let failing = true;
  const registry = new Registry();
  const metric = {
    get: async () => {
      if (failing) throw new Error('collect failed');
      return { name: 'sluice_receiver_accepted_spans_total', help: '', type: 'counter', aggregator: 'sum', values: [{ value: 3, labels: { receiver: 'otlp' } }] };
    },
  };
  const getSingleMetric = (name: string) => (name === 'sluice_receiver_accepted_spans_total' ? metric : undefined);
  Object.assign(registry, { getSingleMetric });
  return { registry, setFailing: (value) => (failing = value) };
}

describe('stats sampler', () => {
  it('leaves a gap for a sample that fails and goes on sampling', async () => {
    const { registry, setFailing } = flakyRegistry();
    let now = 1_000;
    const sampler = new StatsSampler({ registry, intervalMs: 1_000, windowMs: 5_000, now: () => now });
    await expect(sampler.sample()).rejects.toThrow('collect failed');
    setFailing(false);
    now += 1_000;
    await sampler.sample();
    expect(sampler.snapshots().map((s) => s.at)).toEqual([2_000]);
  });

  it('started, it keeps a failed first sample from becoming an unhandled rejection', async () => {
    const { registry } = flakyRegistry();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const sampler = new StatsSampler({ registry, intervalMs: 60_000, windowMs: 300_000 });
    try {
      sampler.start();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      expect(sampler.snapshots()).toEqual([]);
    } finally {
      sampler.stop();
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
