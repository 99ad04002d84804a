// Builds encoded OTLP requests for sampling tests.
import { randomBytes } from 'node:crypto';
import { encodeRequest } from '../../../src/otlp/proto-codec.js';
import type { KeyValue, ResourceSpans, Span } from '../../../src/otlp/model.js';
import { SpanKind } from '../../../src/otlp/model.js';
import { TraceBatch } from '../../../src/otlp/batch.js';

export interface TestSpan {
  readonly traceId: string;
  readonly spanId?: string;
  readonly parent?: string;
  readonly kind?: number;
  readonly attributes?: Record<string, string>;
  readonly resource?: Record<string, string>;
  readonly name?: string;
}

export function randomTraceId(): string {
  return randomBytes(16).toString('hex');
}

export function randomSpanId(): string {
  return randomBytes(8).toString('hex');
}

function keyValues(attributes: Record<string, string>): KeyValue[] {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } }));
}

function toSpan(span: TestSpan): Span {
  const out: Span = {
    traceId: span.traceId,
    spanId: span.spanId ?? randomSpanId(),
    name: span.name ?? 'span',
    kind: span.kind ?? SpanKind.INTERNAL,
    startTimeUnixNano: '1000',
    endTimeUnixNano: '2000',
    attributes: keyValues(span.attributes ?? {}),
    // A span without status decodes with status null in proto-codec today (reported); SDKs always send one.
    status: { code: 1 },
  };
  if (span.parent !== undefined) out.parentSpanId = span.parent;
  return out;
}

/** One ResourceSpans per distinct resource, in order of first appearance. */
export function requestOf(spans: readonly TestSpan[]): Uint8Array {
  const byResource = new Map<string, ResourceSpans>();
  for (const span of spans) {
    const resource = span.resource ?? { 'deployment.environment.name': 'production' };
    const key = JSON.stringify(resource);
    let rs = byResource.get(key);
    if (rs === undefined) {
      rs = { resource: { attributes: keyValues(resource) }, scopeSpans: [{ scope: { name: 'test' }, spans: [] }] };
      byResource.set(key, rs);
    }
    rs.scopeSpans[0]?.spans.push(toSpan(span));
  }
  return encodeRequest({ resourceSpans: [...byResource.values()] });
}

export function batchOf(spans: readonly TestSpan[]): TraceBatch {
  return TraceBatch.fromProto(requestOf(spans));
}

/** Span ids of a request, decoded (tests only). */
export function spanIdsOf(buf: Uint8Array | undefined): string[] {
  if (buf === undefined) return [];
  return TraceBatch.fromProto(buf).toModel().resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.spanId)));
}

/** A trace id whose low 56 bits are R (the other bytes random). */
export function traceIdWithR(r: bigint): string {
  return randomBytes(9).toString('hex') + r.toString(16).padStart(14, '0');
}

/** A trace: a SERVER root at `path` and `children` INTERNAL children. */
export function trace(options: { traceId?: string; path?: string; env?: string; children?: number; resource?: Record<string, string> }): TestSpan[] {
  const traceId = options.traceId ?? randomTraceId();
  const rootId = randomSpanId();
  const resource = options.resource ?? { 'deployment.environment.name': options.env ?? 'production' };
  const root: TestSpan = { traceId, spanId: rootId, kind: SpanKind.SERVER, attributes: options.path === undefined ? {} : { 'url.path': options.path }, resource, name: 'root' };
  const children: TestSpan[] = Array.from({ length: options.children ?? 2 }, (_, i) => ({ traceId, spanId: randomSpanId(), parent: rootId, resource, name: `child${i}` }));
  return [root, ...children];
}
