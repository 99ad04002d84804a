// The OpenTelemetry JS SDK's own trace exporters against the receiver.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { ResourceExhaustedError } from '../../../src/shared/errors.js';
import { decodeRequest } from '../../../src/otlp/proto-codec.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { allSpans, startReceiver, stopAll, type Harness } from './harness.js';

const exporters: SpanExporter[] = [];

afterEach(async () => {
  await Promise.all(exporters.splice(0).map((exporter) => exporter.shutdown()));
  await stopAll();
});

type ExporterKind = 'http/json' | 'http/protobuf' | 'grpc';

function makeExporter(kind: ExporterKind, harness: Harness, gzip: boolean): SpanExporter {
  const compression = gzip ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE;
  const exporter =
    kind === 'grpc'
      ? new GrpcExporter({ url: `http://${harness.grpcTarget}`, compression })
      : kind === 'http/json'
        ? new JsonExporter({ url: harness.tracesUrl, compression })
        : new ProtoExporter({ url: harness.tracesUrl, compression });
  exporters.push(exporter);
  return exporter;
}

function exportSpans(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise(function exported(resolve) {
    exporter.export(spans, resolve);
  });
}

/** The SDK's spans as our model, via the SDK's own protobuf serializer. */
function expectedModel(spans: ReadableSpan[]) {
  return decodeRequest(ProtobufTraceSerializer.serializeRequest(spans)!);
}

describe('the OpenTelemetry JS SDK exporters', () => {
  for (const kind of ['http/json', 'http/protobuf', 'grpc'] as const) {
    for (const gzip of [false, true]) {
      it(`deliver spans over ${kind}${gzip ? ' with gzip' : ''} with the same ids, names, times, attributes, events, links and status`, async () => {
        const harness = await startReceiver();
        const spans = makeSdkSpans();
        const result = await exportSpans(makeExporter(kind, harness, gzip), spans);
        expect(result.code).toBe(ExportResultCode.SUCCESS);
        expect(harness.consumer.batches).toHaveLength(1);
        const received = harness.consumer.batches[0]!.toModel();
        expect(received).toEqual(expectedModel(spans));
        const ids = allSpans(received).map((s) => `${s.traceId}/${s.spanId}/${s.name}`).sort();
        expect(ids).toEqual(spans.map((s) => `${s.spanContext().traceId}/${s.spanContext().spanId}/${s.name}`).sort());
      });
    }
  }

  for (const kind of ['http/json', 'http/protobuf'] as const) {
    it(`retry over ${kind} after a 429 until the spans are accepted`, async () => {
      const harness = await startReceiver();
      harness.consumer.behaviour = (_batch, call) => {
        if (call === 1) throw new ResourceExhaustedError('queue is full', { retryAfterMs: 0 });
      };
      const spans = makeSdkSpans();
      const result = await exportSpans(makeExporter(kind, harness, false), spans);
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      expect(harness.consumer.calls).toBe(2);
      expect(harness.consumer.batches[0]!.toModel()).toEqual(expectedModel(spans));
    });
  }

  it('deliver a span with NaN and infinite attributes over http/json, which the SDK writes as null, keeping its other attributes', async () => {
    const harness = await startReceiver();
    const recorder = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(recorder)] }).getTracer('ratios');
    tracer.startSpan('divide', { attributes: { ratio: NaN, ceiling: Infinity, floor: -Infinity, count: 2 } }).end();
    const result = await exportSpans(makeExporter('http/json', harness, false), recorder.getFinishedSpans());
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    const attributes = Object.fromEntries((harness.consumer.spans()[0]?.attributes ?? []).map((kv) => [kv.key, kv.value]));
    // JSON has no NaN: the SDK's JSON.stringify writes null, which the proto3 JSON mapping reads as a value not set.
    expect(attributes).toEqual({ ratio: {}, ceiling: {}, floor: {}, count: { intValue: '2' } });
  });
});
