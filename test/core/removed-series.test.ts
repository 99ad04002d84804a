import { describe, expect, it } from 'vitest';
import type { GraphConfig } from '../../src/core/graph.js';
import { forgetRemovedSeries } from '../../src/core/removed-series.js';
import { Telemetry } from '../../src/shared/telemetry.js';

function graph(receivers: string[], exporters: string[], pipelines: string[]): GraphConfig {
  const entries = (ids: string[]) => new Map(ids.map((id) => [id, { id, factory: undefined as never, config: {} }]));
  return {
    receivers: entries(receivers),
    processors: entries([]),
    exporters: entries(exporters),
    service: { pipelines: Object.fromEntries(pipelines.map((id) => [id, { receivers, processors: [], exporters }])) },
  };
}

async function series(telemetry: Telemetry): Promise<string[]> {
  return (await telemetry.registry.metrics()).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('forgetRemovedSeries', () => {
  it('drops the series of removed components and pipelines, and keeps those of the ones that stay', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const sent = telemetry.counter('sent_total', 'test', ['exporter']);
    const queue = telemetry.gauge('queue_records', 'test', ['queue']);
    const connections = telemetry.gauge('connections', 'test', ['listener']);
    const accepted = telemetry.counter('accepted_total', 'test', ['pipeline']);
    for (const exporter of ['otlphttp', 'otlphttp/a', 'drain/drn_x']) {
      sent.inc({ exporter });
      queue.set({ queue: exporter }, 1);
    }
    for (const listener of ['otlp/http', 'otlp/grpc', 'otlp/next/http', 'gateway']) connections.set({ listener }, 1);
    for (const pipeline of ['traces', 'traces/old']) accepted.inc({ pipeline });
    const duration = telemetry.histogramSeries('duration_seconds', 'test', ['receiver'], [1]);
    for (const receiver of ['otlp', 'gateway']) duration.observe({ receiver }, 0.5);

    await forgetRemovedSeries(telemetry, graph(['otlp', 'otlp/next', 'gateway'], ['otlphttp', 'otlphttp/a', 'drains'], ['traces', 'traces/old']), graph(['otlp/next', 'gateway'], ['otlphttp/a', 'drains'], ['traces']));

    expect(await series(telemetry)).toEqual([
      'sent_total{exporter="otlphttp/a"} 1',
      'sent_total{exporter="drain/drn_x"} 1',
      'queue_records{queue="otlphttp/a"} 1',
      'queue_records{queue="drain/drn_x"} 1',
      'connections{listener="otlp/next/http"} 1',
      'connections{listener="gateway"} 1',
      'accepted_total{pipeline="traces"} 1',
      'duration_seconds_bucket{le="1",receiver="gateway"} 1',
      'duration_seconds_bucket{le="+Inf",receiver="gateway"} 1',
      'duration_seconds_sum{receiver="gateway"} 0.5',
      'duration_seconds_count{receiver="gateway"} 1',
    ]);
  });
});
