// Issue 4 fault tests, backpressure: a full `on_full: refuse` queue and the
// process memory limit make the daemon answer 429 with Retry-After, and the
// OpenTelemetry JS SDK exporter retries until its data is taken.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink } from '../helpers/otlp-sink.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { makeRequest, makeRequests, metricValue, metricsText, otlpEndpoint, receivedSpanIds, sendAll, spanIdsOf, startFaultDaemon, waitForSpanIds, type FaultDaemonOptions } from './faults-kit.js';

const RECOVER_AFTER_REFUSAL_MS = 1_000;
const SDK_TIMEOUT_MS = 20_000; // room for the SDK's retries after Retry-After

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(options: FaultDaemonOptions): Promise<RunningDaemon> {
  const daemon = await startFaultDaemon(options);
  cleanups.push(() => daemon.cleanup());
  return daemon;
}

describe('backpressure', () => {
  it('refuses the SDK exporter with 429 while an on_full: refuse queue is full, and loses nothing once the destination recovers', { timeout: 40_000 }, async () => {
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    sink.respond = () => ({ status: 503 });
    const otlp = await otlpEndpoint();
    const daemon = await start({
      sinkUrl: sink.url,
      otlpPort: otlp.port,
      exporterYaml: '    sending_queue: { max_size: 16KiB, max_batch_bytes: 4KiB, on_full: refuse }',
    });
    // Fill the queue with one-span requests, so what room is left is smaller
    // than the SDK's request: the destination is down, so nothing leaves it.
    const fillers = makeRequests(150, 1);
    const accepted = await sendAll(otlp.url, fillers, 1);
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.length).toBeLessThan(fillers.length);

    const refused = async () => metricValue(await metricsText(daemon), 'sluice_receiver_refused_spans_total', { receiver: 'otlp', reason: 'backpressure' }) ?? 0;
    const refusedFillers = await refused();
    const exporter = new OTLPTraceExporter({ url: otlp.url, timeoutMillis: SDK_TIMEOUT_MS });
    cleanups.push(() => exporter.shutdown());
    const sdkSpans = makeSdkSpans({ 'service.name': 'refused-then-retried' });
    const exported = new Promise<ExportResult>((resolve) => exporter.export(sdkSpans, resolve));
    const deadline = Date.now() + 10_000;
    // The SDK's first attempt is refused: its spans are counted as refused for backpressure.
    while ((await refused()) < refusedFillers + sdkSpans.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await refused()).toBeGreaterThanOrEqual(refusedFillers + sdkSpans.length);

    await new Promise((r) => setTimeout(r, RECOVER_AFTER_REFUSAL_MS));
    sink.respond = () => ({ status: 200 });
    expect((await exported).code).toBe(ExportResultCode.SUCCESS);

    const sdkIds = sdkSpans.map((s) => s.spanContext().spanId);
    await waitForSpanIds(sink, [...spanIdsOf(accepted), ...sdkIds], 15_000);
    const received = new Set(receivedSpanIds(sink));
    expect(sdkIds.every((id) => received.has(id))).toBe(true);
    const metrics = await metricsText(daemon);
    expect(metricValue(metrics, 'sluice_queue_enqueue_failed_spans_total', { queue: 'otlphttp/sink' })).toBeGreaterThan(0);
    expect(metricValue(metrics, 'sluice_queue_capacity_bytes', { queue: 'otlphttp/sink' })).toBe(16 * 1024);
  });

  it('answers 429 with Retry-After while the process is above service.memory_limit_mib', { timeout: 20_000 }, async () => {
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    const otlp = await otlpEndpoint();
    await start({ sinkUrl: sink.url, otlpPort: otlp.port, serviceYaml: '  memory_limit_mib: 1' });
    const res = await fetch(otlp.url, { method: 'POST', body: makeRequest(5).body, headers: { 'content-type': 'application/x-protobuf' } });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.text()).toContain('memory_limit_mib');
  });
});
