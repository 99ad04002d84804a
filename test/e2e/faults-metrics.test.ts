// Issue 4 item 6 on a running daemon: queue size and capacity, enqueue
// failures, retries and dropped spans by reason, for an exporter and a drain.
import { afterEach, describe, expect, it } from 'vitest';
import { configDrainId } from '../../src/exporters/drains/definition.js';
import { startDaemon } from '../helpers/daemon.js';
import { startOtlpSink } from '../helpers/otlp-sink.js';
import { EXPORTER, makeRequests, metricValue, metricsText, otlpEndpoint, sendAll } from './faults-kit.js';

const DRAIN_QUEUE_BYTES = 4096;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('queue and delivery metrics', () => {
  it('reports queue size and capacity, enqueue failures, retries and drops by reason for an exporter and a drain', { timeout: 30_000 }, async () => {
    const sink = await startOtlpSink({ tls: false });
    const drainSink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close(), () => drainSink.close());
    drainSink.respond = () => ({ status: 503 });
    const otlp = await otlpEndpoint();
    const daemon = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${otlp.port} }
exporters:
  ${EXPORTER}:
    endpoint: ${sink.url}
    encoding: protobuf
    retry_on_failure: { initial_interval: 50ms, max_interval: 200ms }
  drains:
    decision_wait: 100ms
    retry_on_failure: { initial_interval: 50ms, max_interval: 200ms }
drains:
  - name: down
    url: ${drainSink.url}
    insecure: true
    sending_queue: { max_size: ${DRAIN_QUEUE_BYTES}, on_full: drop }
    sampling:
      - { environment: production, percentage: 100 }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  telemetry: { logs: { level: warn } }
  pipelines:
    traces: { receivers: [otlp], exporters: [${EXPORTER}, drains] }
`,
    );
    cleanups.push(() => daemon.cleanup());
    expect((await sendAll(otlp.url, makeRequests(20, 20), 1)).length).toBe(20);

    const drain = `drain/${configDrainId('down')}`;
    let metrics = '';
    const deadline = Date.now() + 15_000;
    do {
      await new Promise((r) => setTimeout(r, 100));
      metrics = await metricsText(daemon);
    } while (Date.now() < deadline && !ready(metrics));
    expect(metricValue(metrics, 'sluice_queue_capacity_bytes', { queue: drain })).toBe(DRAIN_QUEUE_BYTES);
    expect(metricValue(metrics, 'sluice_queue_size_bytes', { queue: drain })).toBeGreaterThan(0);
    expect(metricValue(metrics, 'sluice_exporter_retries_total', { exporter: drain })).toBeGreaterThan(0);
    expect(metricValue(metrics, 'sluice_exporter_dropped_spans_total', { exporter: drain, reason: 'queue_full' })).toBeGreaterThan(0);
    expect(metricValue(metrics, 'sluice_queue_capacity_bytes', { queue: EXPORTER })).toBe(512 * 1024 * 1024);
    expect(metricValue(metrics, 'sluice_queue_enqueue_failed_spans_total', { queue: EXPORTER })).toBe(0);
    expect(metricValue(metrics, 'sluice_exporter_dropped_spans_total', { exporter: EXPORTER, reason: 'queue_full' })).toBe(0);
    // Every span the full drain queue dropped is also an enqueue failure of that queue.
    expect(metricValue(metrics, 'sluice_queue_enqueue_failed_spans_total', { queue: drain })).toBe(
      metricValue(metrics, 'sluice_exporter_dropped_spans_total', { exporter: drain, reason: 'queue_full' }),
    );

    function ready(text: string): boolean {
      return (
        (metricValue(text, 'sluice_exporter_dropped_spans_total', { exporter: drain, reason: 'queue_full' }) ?? 0) > 0 &&
        (metricValue(text, 'sluice_exporter_retries_total', { exporter: drain }) ?? 0) > 0 &&
        (metricValue(text, 'sluice_queue_size_bytes', { queue: drain }) ?? 0) > 0
      );
    }
  });
});
