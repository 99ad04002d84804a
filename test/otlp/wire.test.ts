import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { MalformedDataError } from '../../src/shared/errors.js';
import { bytesToHex } from '../../src/otlp/ids.js';
import { decodeRequest, decodeResource, encodeResource } from '../../src/otlp/proto-codec.js';
import { concatRequests, filterSpans, rewriteResources, scanRequest, type WireIndex } from '../../src/otlp/wire.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';

const encode = (attrs?: Record<string, string>) => ProtobufTraceSerializer.serializeRequest(makeSdkSpans(attrs))!;

/** Every span of an index as plain values, in scan order. */
function spansOf(index: WireIndex) {
  return index.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      Array.from({ length: ss.spans.length }, (_, i) => ({
        field: ss.spans.field(i),
        content: Buffer.from(ss.spans.content(i)).toString('hex'),
        traceId: bytesToHex(ss.spans.traceId(i)),
        traceKey: ss.spans.traceKey(i),
        isRoot: ss.spans.isRoot(i),
        kind: ss.spans.kind(i),
      })),
    ),
  );
}

describe('protobuf wire scanning', () => {
  it('indexes spans with their trace id, root flag and kind without decoding them', () => {
    const bytes = encode();
    const index = scanRequest(bytes);
    const model = decodeRequest(bytes);
    const spans = spansOf(index);
    const modelSpans = model.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    expect(index.spanCount).toBe(2);
    expect(spans.map((s) => s.traceId)).toEqual(modelSpans.map((s) => s.traceId));
    expect(spans.map((s) => s.traceKey)).toEqual(modelSpans.map((s) => s.traceId));
    expect(spans.map((s) => s.isRoot)).toEqual(modelSpans.map((s) => s.parentSpanId === undefined));
    expect(spans.map((s) => s.kind)).toEqual(modelSpans.map((s) => s.kind));
  });

  it('indexes the rewritten request exactly as scanning it again would', () => {
    const bytes = encode();
    const out = rewriteResources(scanRequest(bytes), (resource) => {
      const r = decodeResource(resource ?? new Uint8Array());
      r.attributes.push({ key: 'platform.projectId', value: { stringValue: 'prj_1' } });
      return encodeResource(r);
    });
    const rescanned = scanRequest(out.buf);
    const shape = (index: typeof out) => ({
      spanCount: index.spanCount,
      resourceSpans: index.resourceSpans.map((rs) => ({
        field: rs.field,
        resource: rs.resource,
        otherFields: rs.otherFields,
        scopeSpans: rs.scopeSpans.map((ss) => ({ field: ss.field, spanCount: ss.spanCount, otherFields: ss.otherFields })),
      })),
      spans: spansOf(index),
    });
    expect(shape(out)).toEqual(shape(rescanned));
  });

  it('rejects a body with a broken field inside a span, though spans are indexed lazily', () => {
    const bytes = Buffer.from(encode());
    const index = scanRequest(bytes);
    const spans = index.resourceSpans[0]?.scopeSpans[0]?.spans;
    if (spans === undefined || spans.length === 0) throw new Error('no span');
    const contentStart = spans.content(0).byteOffset - bytes.byteOffset;
    // The span's first field is trace_id (tag 0x0a); wire type 7 does not exist.
    expect(bytes[contentStart]).toBe(0x0a);
    bytes[contentStart] = 0x0f;
    expect(() => scanRequest(bytes)).toThrow(MalformedDataError);
  });

  it('rewrites only the resource and leaves every span as it was', () => {
    const bytes = encode();
    const out = rewriteResources(scanRequest(bytes), (resource) => {
      const r = decodeResource(resource ?? new Uint8Array());
      r.attributes.push({ key: 'platform.projectId', value: { stringValue: 'prj_1' } });
      return encodeResource(r);
    });
    const before = decodeRequest(bytes);
    const after = decodeRequest(out.buf);
    expect(after.resourceSpans[0]?.scopeSpans).toEqual(before.resourceSpans[0]?.scopeSpans);
    expect(after.resourceSpans[0]?.resource?.attributes).toContainEqual({ key: 'platform.projectId', value: { stringValue: 'prj_1' } });
  });

  it('filters spans by copying the kept ones and drops empty scopes and resources', () => {
    const bytes = concatRequests([encode({ 'service.name': 'a' }), encode({ 'service.name': 'b' })]);
    const index = scanRequest(bytes);
    expect(index.resourceSpans).toHaveLength(2);
    const kept = filterSpans(index, (spans, i, resourceIndex) => resourceIndex === 1 && spans.isRoot(i))!;
    expect(kept.spanCount).toBe(1);
    const model = decodeRequest(kept.buf);
    expect(model.resourceSpans).toHaveLength(1);
    expect(model.resourceSpans[0]?.resource?.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'b' } });
    expect(model.resourceSpans[0]?.scopeSpans[0]?.spans.map((s) => s.name)).toEqual(['GET /api/cart']);
    const second = filterSpans(index, (_spans, _i, _resourceIndex, ordinal) => ordinal === 1)!;
    expect(decodeRequest(second.buf).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))).toEqual([decodeRequest(bytes).resourceSpans[0]?.scopeSpans[0]?.spans[1]]);
    expect(filterSpans(index, () => false)).toBeUndefined();
    expect(filterSpans(index, () => true)?.buf).toBe(bytes);
  });

  it('merges two requests by concatenating their bytes', () => {
    const merged = decodeRequest(concatRequests([encode({ 'service.name': 'a' }), encode({ 'service.name': 'b' })]));
    expect(merged.resourceSpans.map((rs) => rs.resource?.attributes[0]?.value?.stringValue)).toEqual(['a', 'b']);
  });
});
