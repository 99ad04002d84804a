// Issue 3 end to end: the OpenTelemetry JS SDK sends traces of several
// environments and paths to the built daemon; two HTTPS drains (one JSON,
// one protobuf, different rules) receive exactly the traces their rules
// select, whole, stamped, and signed.
import { createHmac } from 'node:crypto';
import { SpanKind, context, trace as otelTrace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../src/otlp/ids.js';
import { RuleSet, type SamplingRule } from '../../src/processors/sampling/rules.js';
import { freePort, startDaemon } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { testTls } from '../helpers/tls.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const JSON_RULES: SamplingRule[] = [
  { environment: 'production', percentage: 100, path_prefix: '/api' },
  { environment: 'production', percentage: 50 },
];
const PROTO_RULES: SamplingRule[] = [
  { environment: 'preview', percentage: 100 },
  { environment: 'production', percentage: 25, path_prefix: '/checkout' },
];

function yamlRules(rules: SamplingRule[]): string {
  return rules.map((r) => `\n      - { environment: ${r.environment}, percentage: ${r.percentage}${r.path_prefix === undefined ? '' : `, path_prefix: ${r.path_prefix}`} }`).join('');
}

interface SentTrace {
  readonly traceId: string;
  readonly env: string;
  readonly path: string;
  readonly edge: boolean;
}

async function sendTraces(url: string): Promise<SentTrace[]> {
  const sent: SentTrace[] = [];
  const resources = [
    { env: 'production', edge: false },
    { env: 'preview', edge: false },
    { env: 'development', edge: false },
    { env: 'production', edge: true },
  ];
  for (const { env, edge } of resources) {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': `shop-${env}`, 'deployment.environment.name': env, ...(edge ? { 'platform.runtime': 'edge' } : {}) }),
      // Small batches, so a trace's children and its root often travel in different requests.
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { maxExportBatchSize: 5, scheduledDelayMillis: 20 })],
    });
    const tracer = provider.getTracer('e2e');
    for (let i = 0; i < 20; i++) {
      const path = ['/api/cart', '/checkout/pay', '/home'][i % 3] ?? '/';
      const root = tracer.startSpan(`GET ${path}`, { kind: SpanKind.SERVER, attributes: { 'url.path': path } });
      const ctx = otelTrace.setSpan(context.active(), root);
      tracer.startSpan('load', { kind: SpanKind.INTERNAL }, ctx).end();
      tracer.startSpan('SELECT', { kind: SpanKind.CLIENT }, ctx).end();
      root.end();
      sent.push({ traceId: root.spanContext().traceId, env, path, edge });
    }
    await provider.forceFlush();
    await provider.shutdown();
  }
  return sent;
}

function expectedTraces(sent: SentTrace[], rules: SamplingRule[]): Set<string> {
  const ruleSet = new RuleSet(rules);
  return new Set(sent.filter((t) => !t.edge && ruleSet.decide(hexToBytes(t.traceId), t.env, t.path).keep).map((t) => t.traceId));
}

function spansByTrace(sink: OtlpSink): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { span } of sink.spans()) counts.set(span.traceId, (counts.get(span.traceId) ?? 0) + 1);
  return counts;
}

describe('drains end to end', () => {
  it('delivers to each drain exactly the whole, stamped, signed traces its rules select', async () => {
    const tls = testTls();
    const jsonSink = await startOtlpSink();
    const protoSink = await startOtlpSink();
    cleanups.push(() => jsonSink.close(), () => protoSink.close());
    const httpPort = await freePort();
    const daemon = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${httpPort} }
processors:
  resource:
    attributes:
      platform.projectId: prj_e2e
      platform.deploymentId: dpl_drains
exporters:
  drains: { decision_wait: 1s }
drains:
  - name: json-api
    url: ${jsonSink.url}
    format: json
    compression: gzip
    headers: { x-team: core }
    secret: json-secret
    tls: { ca_file: ${tls.caFile} }
    sampling:${yamlRules(JSON_RULES)}
  - name: proto-preview
    url: ${protoSink.url}
    format: protobuf
    compression: none
    secret: proto-secret
    tls: { ca_file: ${tls.caFile} }
    sampling:${yamlRules(PROTO_RULES)}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines:
    traces:
      receivers: [otlp]
      processors: [resource]
      exporters: [drains]
`,
    );
    cleanups.push(() => daemon.cleanup());

    const sent = await sendTraces(`http://127.0.0.1:${httpPort}/v1/traces`);
    const wantJson = expectedTraces(sent, JSON_RULES);
    const wantProto = expectedTraces(sent, PROTO_RULES);
    expect(wantJson.size).toBeGreaterThan(0);
    expect(wantProto.size).toBeGreaterThan(0);
    await jsonSink.waitForSpans(wantJson.size * 3, 20_000);
    await protoSink.waitForSpans(wantProto.size * 3, 20_000);
    // Past decision_wait, nothing more may arrive.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    for (const [sink, want, secret, contentType] of [
      [jsonSink, wantJson, 'json-secret', 'application/json'],
      [protoSink, wantProto, 'proto-secret', 'application/x-protobuf'],
    ] as const) {
      const got = spansByTrace(sink);
      expect(new Set(got.keys())).toEqual(want);
      for (const count of got.values()) expect(count).toBe(3);
      for (const { resource } of sink.spans()) {
        expect(resource['platform.projectId']).toBe('prj_e2e');
        expect(resource['platform.deploymentId']).toBe('dpl_drains');
        expect(resource['platform.runtime']).toBeUndefined();
      }
      for (const request of sink.received) {
        expect(request.headers['content-type']).toBe(contentType);
        expect(request.headers['user-agent']).toMatch(/^sluice\//);
        expect(request.headers['x-sluice-signature']).toBe(createHmac('sha256', secret).update(request.raw).digest('hex'));
      }
    }
    expect(jsonSink.received[0]?.headers['content-encoding']).toBe('gzip');
    expect(jsonSink.received[0]?.headers['x-team']).toBe('core');

    const metrics = await (await fetch(`http://127.0.0.1:${daemon.adminPort}/metrics`)).text();
    expect(metrics).toMatch(/sluice_exporter_sent_spans_total\{exporter="drain\/drn_cfg_[0-9a-f]+"\} \d+/);
    expect(metrics).toMatch(/sluice_exporter_dropped_spans_total\{exporter="drain\/drn_cfg_[0-9a-f]+",reason="edge"\} 60/);
    expect(metrics).toMatch(/sluice_sampling_kept_spans_total\{sampler="drain\/drn_cfg_[0-9a-f]+",rule="0"\} \d+/);
  }, 90_000);
});
