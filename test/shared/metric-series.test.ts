import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesTable } from '../../src/shared/metric-series.js';
import { Telemetry } from '../../src/shared/telemetry.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 1];
const VALUES = [0.001, 0.005, 0.007, 0.02, 0.3, 0.3, 4, 0.05];

describe('metric series', () => {
  it('exposes a histogram exactly as prom-client does for the same observations', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const ours = telemetry.histogramSeries('demo_duration_seconds', 'Demo latency.', ['receiver', 'route'], BUCKETS);
    const peer = new Registry();
    const theirs = new Histogram({ name: 'demo_duration_seconds', help: 'Demo latency.', labelNames: ['receiver', 'route'], buckets: BUCKETS, registers: [peer] });
    const chat = ours.series({ receiver: 'gateway', route: '/v1/chat/completions' });
    for (const value of VALUES) {
      chat.observe(value);
      theirs.observe({ receiver: 'gateway', route: '/v1/chat/completions' }, value);
    }
    ours.observe({ receiver: 'gateway', route: '/v1/models' }, 0.002);
    theirs.observe({ receiver: 'gateway', route: '/v1/models' }, 0.002);
    const text = await telemetry.registry.metrics();
    expect(text).toBe(await peer.metrics());
    expect(text).toContain('demo_duration_seconds_bucket{le="0.01",receiver="gateway",route="/v1/chat/completions"} 3');
    expect(text).toContain('demo_duration_seconds_count{receiver="gateway",route="/v1/chat/completions"} 8');
  });

  it('hands a counter what its series gathered at each scrape, and no more', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const requests = telemetry.counterSeries<'route' | 'status'>('demo_requests_total', 'Demo requests.', ['route', 'status']);
    const table = new SeriesTable((route, status) => requests.series({ route, status }));
    table.get('/v1/chat/completions', '200').inc();
    table.get('/v1/chat/completions', '200').inc(2);
    table.get('/v1/chat/completions', '429').inc();
    expect(table.get('/v1/chat/completions', '200')).toBe(table.get('/v1/chat/completions', '200'));
    expect(await telemetry.registry.metrics()).toContain('demo_requests_total{route="/v1/chat/completions",status="200"} 3');
    table.get('/v1/chat/completions', '200').inc();
    const text = await telemetry.registry.metrics();
    expect(text).toContain('demo_requests_total{route="/v1/chat/completions",status="200"} 4');
    expect(text).toContain('demo_requests_total{route="/v1/chat/completions",status="429"} 1');
    // The same name again (a component recreated on reload) finds the same counter.
    telemetry.counterSeries('demo_requests_total', 'Demo requests.', ['route', 'status']).inc({ route: '/v1/models', status: '200' });
    expect(await telemetry.registry.metrics()).toContain('demo_requests_total{route="/v1/models",status="200"} 1');
  });

  it('refuses a value that is not a number and zeroes series on reset', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const histogram = telemetry.histogramSeries('demo_attempt_seconds', 'Demo.', ['provider'], BUCKETS);
    const series = histogram.series({ provider: 'openai' });
    expect(() => series.observe(Number.NaN)).toThrow(TypeError);
    expect(() => histogram.series({ provider: 'openai', model: 'x' } as unknown as { provider: string })).toThrow(/model/);
    series.observe(0.02);
    telemetry.registry.resetMetrics();
    series.observe(0.2);
    const text = await telemetry.registry.metrics();
    expect(text).toContain('demo_attempt_seconds_count{provider="openai"} 1');
    expect(text).toContain('demo_attempt_seconds_sum{provider="openai"} 0.2');
  });

  it('drops counts gathered since the last scrape on a reset, and refuses a name taken by a plain counter', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const requests = telemetry.counterSeries<'route'>('demo_reset_total', 'Demo.', ['route']);
    requests.series({ route: '/a' }).inc(5);
    telemetry.registry.resetMetrics();
    requests.series({ route: '/a' }).inc(2);
    expect(await telemetry.registry.metrics()).toContain('demo_reset_total{route="/a"} 2');
    telemetry.counter('demo_plain_total', 'Demo.', ['route']);
    expect(() => telemetry.counterSeries('demo_plain_total', 'Demo.', ['route'])).toThrow(/plain counter/);
  });
});
