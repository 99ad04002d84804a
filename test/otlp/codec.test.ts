import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { MalformedDataError } from '../../src/shared/errors.js';
import { TraceBatch } from '../../src/otlp/batch.js';
import { parseJsonRequest, stringifyRequest } from '../../src/otlp/json-codec.js';
import type { ExportTraceServiceRequest, Span } from '../../src/otlp/model.js';
import { decodeRequest, encodeRequest } from '../../src/otlp/proto-codec.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';

function allSpans(req: ExportTraceServiceRequest): Span[] {
  return req.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

describe('OTLP codecs', () => {
  it('reads a link without ids (accepted at intake) in protobuf and in JSON, and writes it back readable', () => {
    const bytes = encodeRequest({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'with a bare link', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2', links: [{ traceId: '', spanId: '', traceState: 'k=v' }] }] }] }] });
    expect(TraceBatch.fromProto(bytes).spanCount).toBe(1);
    const link = allSpans(decodeRequest(bytes))[0]?.links?.[0];
    expect(link).toMatchObject({ traceId: '', spanId: '', traceState: 'k=v' });
    const json = stringifyRequest(decodeRequest(bytes));
    expect(allSpans(parseJsonRequest(json))[0]?.links?.[0]).toMatchObject({ traceId: '', spanId: '', traceState: 'k=v' });
    expect(allSpans(parseJsonRequest(TraceBatch.fromProto(bytes).toJson()))[0]?.links?.[0]?.traceState).toBe('k=v');
  });

  it('decodes what the SDK serializes as protobuf and as JSON to the same model', () => {
    const spans = makeSdkSpans();
    const fromProto = decodeRequest(ProtobufTraceSerializer.serializeRequest(spans)!);
    const fromJson = parseJsonRequest(JsonTraceSerializer.serializeRequest(spans)!);
    expect(fromJson).toEqual(fromProto);
    expect(allSpans(fromProto)).toHaveLength(2);
  });

  it('keeps ids, names, kinds, times, attributes of every type, events, links and status', () => {
    const spans = makeSdkSpans();
    const model = decodeRequest(ProtobufTraceSerializer.serializeRequest(spans)!);
    const sdkRoot = spans.find((s) => s.name === 'GET /api/cart')!;
    const root = allSpans(model).find((s) => s.name === 'GET /api/cart')!;
    const child = allSpans(model).find((s) => s.name === 'SELECT cart')!;
    expect(root.traceId).toBe(sdkRoot.spanContext().traceId);
    expect(root.spanId).toBe(sdkRoot.spanContext().spanId);
    expect(root.parentSpanId).toBeUndefined();
    expect(child.parentSpanId).toBe(root.spanId);
    expect(root.kind).toBe(2);
    expect(child.kind).toBe(3);
    const nanos = BigInt(sdkRoot.startTime[0]) * 1_000_000_000n + BigInt(sdkRoot.startTime[1]);
    expect(root.startTimeUnixNano).toBe(nanos.toString());
    const attrs = Object.fromEntries((root.attributes ?? []).map((kv) => [kv.key, kv.value]));
    expect(attrs['url.path']).toEqual({ stringValue: '/api/cart' });
    expect(attrs['http.response.status_code']).toEqual({ intValue: '200' });
    expect(attrs['sample.double']).toEqual({ doubleValue: 3.25 });
    expect(attrs['sample.bool']).toEqual({ boolValue: true });
    expect(attrs['sample.strings']).toEqual({ arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } });
    expect(attrs['sample.big']).toEqual({ intValue: '9007199254740991' });
    expect(child.events?.[0]?.name).toBe('rows');
    expect(child.events?.[0]?.attributes).toEqual([{ key: 'count', value: { intValue: '3' } }]);
    expect(child.links?.[0]).toMatchObject({ traceId: root.traceId, spanId: root.spanId });
    expect(child.status).toEqual({ code: 2, message: 'timeout' });
    expect(root.status).toEqual({ code: 1 });
    expect(model.resourceSpans[0]?.scopeSpans[0]?.scope).toMatchObject({ name: 'test-scope', version: '1.2.3' });
  });

  it('round-trips JSON -> model -> protobuf -> model -> JSON losslessly', () => {
    const json = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(makeSdkSpans())!);
    const model = parseJsonRequest(json);
    const again = decodeRequest(encodeRequest(model));
    expect(again).toEqual(model);
    expect(parseJsonRequest(stringifyRequest(again))).toEqual(model);
  });

  it('reads 64-bit integers from numbers and strings and writes them as decimal strings', () => {
    const body = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'x',
                  kind: 'SPAN_KIND_SERVER',
                  startTimeUnixNano: 1700000000000000000,
                  endTimeUnixNano: '1700000000000000123',
                  attributes: [{ key: 'n', value: { intValue: 42 } }],
                  unknownField: { ignored: true },
                },
              ],
            },
          ],
        },
      ],
    };
    const span = allSpans(parseJsonRequest(JSON.stringify(body)))[0]!;
    expect(span.kind).toBe(2);
    expect(span.startTimeUnixNano).toBe('1700000000000000000');
    expect(span.endTimeUnixNano).toBe('1700000000000000123');
    expect(span.attributes).toEqual([{ key: 'n', value: { intValue: '42' } }]);
    expect(stringifyRequest({ resourceSpans: [] })).toBe('{"resourceSpans":[]}');
  });

  it('accepts doubles given as strings, as the proto3 JSON mapping allows, and keeps them through protobuf', () => {
    const values = ['1.5', '-2e3', '.25', 'NaN', 'Infinity', '-Infinity', 7.5];
    const request = {
      resourceSpans: [{ scopeSpans: [{ spans: [{
        traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'doubles', kind: 1,
        startTimeUnixNano: '1', endTimeUnixNano: '2',
        attributes: values.map((doubleValue, i) => ({ key: `d${i}`, value: { doubleValue } })),
      }] }] }],
    };
    const model = parseJsonRequest(Buffer.from(JSON.stringify(request)));
    const doubles = (m: ExportTraceServiceRequest) => allSpans(m)[0]?.attributes?.map((a) => a.value?.doubleValue);
    expect(doubles(model)).toEqual([1.5, -2000, 0.25, NaN, Infinity, -Infinity, 7.5]);
    expect(doubles(decodeRequest(encodeRequest(model)))).toEqual([1.5, -2000, 0.25, NaN, Infinity, -Infinity, 7.5]);
    const bad = JSON.stringify(request).replace('"1.5"', '"1.5x"');
    expect(() => parseJsonRequest(Buffer.from(bad))).toThrow(/resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.attributes\[0\]\.value\.doubleValue: must be a number, a numeric string/);
  });

  it('rejects malformed JSON with the path of the bad field', () => {
    expect(() => parseJsonRequest('{')).toThrow(MalformedDataError);
    expect(() => parseJsonRequest('{"resourceSpans":{}}')).toThrow('resourceSpans: must be an array');
    expect(() => parseJsonRequest('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"b7ad6b7169203331"}]}]}]}')).toThrow(
      'resourceSpans[0].scopeSpans[0].spans[0].traceId: must be 32 hex characters',
    );
  });

  it('rejects 64-bit integers out of range as numbers too, and values nested too deep, naming the field', () => {
    const span = (extra: Record<string, unknown>) =>
      JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'x', ...extra }] }] }] });
    expect(() => parseJsonRequest(span({ startTimeUnixNano: 1e30 }))).toThrow('resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: is out of the 64-bit range');
    expect(() => parseJsonRequest(span({ attributes: [{ key: 'n', value: { intValue: 1e21 } }] }))).toThrow('attributes[0].value.intValue: is out of the 64-bit range');
    let value: Record<string, unknown> = { stringValue: 'bottom' };
    for (let i = 1; i < 20; i++) value = { arrayValue: { values: [value] } };
    expect(allSpans(parseJsonRequest(span({ attributes: [{ key: 'deep', value }] })))[0]?.attributes).toHaveLength(1);
    value = { kvlistValue: { values: [{ key: 'k', value }] } };
    expect(() => parseJsonRequest(span({ attributes: [{ key: 'deep', value }] }))).toThrow('is nested more than 20 levels deep');
    // An empty value at level 21 still encodes to an AnyValue there.
    let empty: Record<string, unknown> = { arrayValue: { values: [null] } };
    for (let i = 2; i < 20; i++) empty = { arrayValue: { values: [empty] } };
    expect(() => parseJsonRequest(span({ attributes: [{ key: 'deep', value: { arrayValue: { values: [empty] } } }] }))).toThrow('is nested more than 20 levels deep');
    // The largest int64 written as a JSON number keeps its digits (JSON.parse alone would round it to 2^63).
    const largest = allSpans(parseJsonRequest('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","attributes":[{"key":"n","value":{"intValue":9223372036854775807}}]}]}]}]}'));
    expect(largest[0]?.attributes).toEqual([{ key: 'n', value: { intValue: '9223372036854775807' } }]);
  });

  it('rejects truncated protobuf as malformed', () => {
    const bytes = ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;
    expect(() => TraceBatch.fromProto(bytes.subarray(0, bytes.length - 7))).toThrow(MalformedDataError);
    expect(() => TraceBatch.fromProto(Uint8Array.from([0x0a, 0xff, 0xff, 0x01]))).toThrow(MalformedDataError);
  });
});

describe('ExportTraceServiceResponse', () => {
  it('decodes an empty body as a full success and keeps a partial success', async () => {
    const { decodeResponse, encodeResponse } = await import('../../src/otlp/proto-codec.js');
    expect(decodeResponse(new Uint8Array())).toEqual({});
    const partial = { partialSuccess: { rejectedSpans: '3', errorMessage: 'too old' } };
    expect(decodeResponse(encodeResponse(partial))).toEqual(partial);
  });
});

describe('absent message fields', () => {
  it('decodes spans without status, scope or resource (protobufjs reports them as null)', () => {
    const bare: ExportTraceServiceRequest = {
      resourceSpans: [
        { scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'bare', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: [{ key: 'empty' }] }] }] },
      ],
    };
    const decoded = decodeRequest(encodeRequest(bare));
    expect(decoded.resourceSpans[0]?.resource).toBeUndefined();
    expect(decoded.resourceSpans[0]?.scopeSpans[0]?.scope).toBeUndefined();
    const span = decoded.resourceSpans[0]?.scopeSpans[0]?.spans[0];
    expect(span?.status).toBeUndefined();
    expect(span?.attributes).toEqual([{ key: 'empty', value: {} }]);
    expect(TraceBatch.fromProto(encodeRequest(bare)).toJson()).toContain('"name":"bare"');
  });
});
