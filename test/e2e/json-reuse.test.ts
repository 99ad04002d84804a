// The example config's `file` exporter beside a JSON drain: each batch is
// transcoded once, for the file's line, and the drain's deliveries copy that
// JSON (src/otlp/json-reuse.ts). What the drain receives must be exactly
// what the file holds, request by request, whatever records a delivery merges.
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { SpanKind, context, trace as otelTrace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon } from '../helpers/daemon.js';
import { startOtlpSink } from '../helpers/otlp-sink.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TRACES = 40;
const SPANS_PER_TRACE = 3;

/** Each resourceSpans entry of each OTLP/JSON request, as its own JSON text. */
function resourceSpansTexts(requests: readonly string[]): string[] {
  return requests.flatMap((text) => (JSON.parse(text) as { resourceSpans: unknown[] }).resourceSpans.map((rs) => JSON.stringify(rs))).sort();
}

describe('one transcoding for the file exporter and a JSON drain', () => {
  it('delivers to the JSON drain exactly the JSON the file exporter wrote', async () => {
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    const httpPort = await freePort();
    const daemon = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${httpPort} }
processors:
  resource:
    attributes: { platform.projectId: prj_reuse, platform.deploymentId: dpl_reuse }
exporters:
  file: { path: ${dir}/traces.jsonl }
  drains: {}
drains:
  - { name: json-sink, url: "${sink.url}", insecure: true, format: json, compression: gzip }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines:
    traces: { receivers: [otlp], processors: [resource], exporters: [file, drains] }
`,
    );
    cleanups.push(() => daemon.cleanup());

    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'shop', 'deployment.environment.name': 'production' }),
      // Small, frequent requests: a delivery often merges several queued records.
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `http://127.0.0.1:${httpPort}/v1/traces` }), { maxExportBatchSize: 7, scheduledDelayMillis: 5 })],
    });
    const tracer = provider.getTracer('e2e');
    for (let i = 0; i < TRACES; i++) {
      const root = tracer.startSpan(`GET /items/${i}`, { kind: SpanKind.SERVER, attributes: { 'url.path': `/items/${i}`, 'app.note': 'quote " and ünïcode' } });
      const ctx = otelTrace.setSpan(context.active(), root);
      tracer.startSpan('load', { kind: SpanKind.INTERNAL }, ctx).end();
      tracer.startSpan('SELECT', { kind: SpanKind.CLIENT, attributes: { 'db.rows': i } }, ctx).end();
      root.end();
    }
    await provider.forceFlush();
    await provider.shutdown();

    await sink.waitForSpans(TRACES * SPANS_PER_TRACE, 20_000);
    const lines = (await readFile(`${daemon.dir}/traces.jsonl`, 'utf8')).split('\n').filter((line) => line !== '');
    const delivered = sink.received.map((request) => gunzipSync(request.raw).toString('utf8'));
    expect(lines.length).toBeGreaterThan(1);
    // The texts, not only the spans: the drain's bodies are the file's JSON, spliced.
    expect(resourceSpansTexts(delivered)).toEqual(resourceSpansTexts(lines));
    expect(sink.spans()).toHaveLength(TRACES * SPANS_PER_TRACE);
    for (const { resource } of sink.spans()) expect(resource['platform.projectId']).toBe('prj_reuse');
  }, 60_000);
});
