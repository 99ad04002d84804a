// Issue 2 end to end: the OpenTelemetry JS SDK's three trace exporters send
// to the built daemon, which stamps platform attributes and delivers through
// otlphttp to HTTPS sinks (self-signed CA) in both encodings.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeRequest } from '../../src/otlp/proto-codec.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { testTls } from '../helpers/tls.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  daemon: RunningDaemon;
  httpUrl: string;
  grpcUrl: string;
  jsonSink: OtlpSink;
  protoSink: OtlpSink;
}

async function setup(): Promise<Setup> {
  const jsonSink = await startOtlpSink();
  const protoSink = await startOtlpSink();
  cleanups.push(() => jsonSink.close(), () => protoSink.close());
  const httpPort = await freePort();
  const grpcPort = await freePort();
  const daemon = await startDaemon(
    ({ dir, adminPort }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${httpPort} }
      grpc: { endpoint: 127.0.0.1:${grpcPort} }
processors:
  resource:
    attributes:
      platform.projectId: "\${env:PLATFORM_PROJECT_ID}"
      platform.deploymentId: "\${env:PLATFORM_DEPLOYMENT_ID:-dpl_default}"
exporters:
  otlphttp/json:
    endpoint: ${jsonSink.url}
    encoding: json
    compression: gzip
    headers: { x-team: core }
    tls: { ca_file: ${testTls().caFile} }
  otlphttp/proto:
    endpoint: ${protoSink.url}
    encoding: protobuf
    compression: none
    tls: { ca_file: ${testTls().caFile} }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines:
    traces:
      receivers: [otlp]
      processors: [resource]
      exporters: [otlphttp/json, otlphttp/proto]
`,
    { env: { PLATFORM_PROJECT_ID: 'prj_e2e', PLATFORM_DEPLOYMENT_ID: 'dpl_7Hq2' } },
  );
  cleanups.push(() => daemon.cleanup());
  return { daemon, httpUrl: `http://127.0.0.1:${httpPort}/v1/traces`, grpcUrl: `http://127.0.0.1:${grpcPort}`, jsonSink, protoSink };
}

function exportWith(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  cleanups.push(() => exporter.shutdown());
  return new Promise((resolve) => exporter.export(spans, resolve));
}

describe('pipeline end to end', () => {
  it('delivers spans from each SDK exporter to both sinks once, unchanged, with platform attributes', async () => {
    const s = await setup();
    const batches = [makeSdkSpans({ 'service.name': 'via-json' }), makeSdkSpans({ 'service.name': 'via-proto' }), makeSdkSpans({ 'service.name': 'via-grpc' })];
    const results = await Promise.all([
      exportWith(new JsonExporter({ url: s.httpUrl }), batches[0]!),
      exportWith(new ProtoExporter({ url: s.httpUrl }), batches[1]!),
      exportWith(new GrpcExporter({ url: s.grpcUrl }), batches[2]!),
    ]);
    expect(results.map((r) => r.code)).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);

    const sent = batches.flatMap((spans) => decodeRequest(ProtobufTraceSerializer.serializeRequest(spans)!).resourceSpans);
    const expected = sent.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)).sort((a, b) => a.spanId.localeCompare(b.spanId));
    for (const sink of [s.jsonSink, s.protoSink]) {
      await sink.waitForSpans(expected.length);
      const received = sink.spans();
      expect(received.map((r) => r.span).sort((a, b) => a.spanId.localeCompare(b.spanId))).toEqual(expected);
      for (const { resource } of received) {
        expect(resource['platform.projectId']).toBe('prj_e2e');
        expect(resource['platform.deploymentId']).toBe('dpl_7Hq2');
      }
      expect(new Set(received.map((r) => r.resource['service.name']))).toEqual(new Set(['via-json', 'via-proto', 'via-grpc']));
    }
    const jsonHeaders = s.jsonSink.received[0]!.headers;
    expect(jsonHeaders['content-type']).toBe('application/json');
    expect(jsonHeaders['content-encoding']).toBe('gzip');
    expect(jsonHeaders['x-team']).toBe('core');
    expect(jsonHeaders['user-agent']).toMatch(/^sluice\/\d+\.\d+\.\d+/);
    expect(s.protoSink.received[0]!.headers['content-type']).toBe('application/x-protobuf');
    expect(s.protoSink.received[0]!.headers['content-encoding']).toBeUndefined();
  });

  it('keeps serving after bad input and reports accepted and refused spans in /metrics', async () => {
    const s = await setup();
    const bad = await fetch(s.httpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz"}]}]}]}' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('traceId');
    const result = await exportWith(new ProtoExporter({ url: s.httpUrl }), makeSdkSpans());
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    await s.protoSink.waitForSpans(2);
    const metrics = await (await fetch(`http://127.0.0.1:${s.daemon.adminPort}/metrics`)).text();
    expect(metrics).toMatch(/sluice_receiver_accepted_spans_total\{receiver="otlp",transport="http"\} 2/);
    expect(metrics).toMatch(/sluice_receiver_refused_requests_total\{[^}]*receiver="otlp"[^}]*\} 1/);
    expect(metrics).toContain('# TYPE sluice_event_loop_delay_seconds histogram');
    expect(metrics).toMatch(/sluice_event_loop_delay_seconds_bucket\{le="0\.002"\} \d+/);
    expect(Number(/sluice_event_loop_delay_seconds_count (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(0);
    await (async function waitForSent() {
      for (let i = 0; i < 100; i++) {
        const m = await (await fetch(`http://127.0.0.1:${s.daemon.adminPort}/metrics`)).text();
        if (/sluice_exporter_sent_spans_total\{exporter="otlphttp\/proto"\} 2/.test(m)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('sent spans never counted');
    })();
  });

  it('takes a JSON request large enough to be decoded on a worker thread, and refuses a bad one naming the field', async () => {
    const s = await setup();
    const body = (bad: number | undefined) =>
      JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'shop' } }] },
            scopeSpans: [{ spans: Array.from({ length: 4_000 }, (_, i) => ({ traceId: i === bad ? 'xyz' : '0af7651916cd43dd8448eb211c80319c', spanId: (i + 1).toString(16).padStart(16, '0'), name: `span ${i}`, startTimeUnixNano: '1', endTimeUnixNano: '2' })) }],
          },
        ],
      });
    const post = (text: string) => fetch(s.httpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    const refused = await post(body(3_210));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('spans[3210].traceId');
    const accepted = await post(body(undefined));
    expect(accepted.status).toBe(200);
    await s.protoSink.waitForSpans(4_000);
    const last = s.protoSink.spans().find((entry) => entry.span.name === 'span 3999');
    expect(last?.resource).toMatchObject({ 'service.name': 'shop', 'platform.projectId': 'prj_e2e' });
  });
});
