import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { MalformedDataError } from '../../src/shared/errors.js';
import { stringifyRequest } from '../../src/otlp/json-codec.js';
import { transcodeToJson as transcodeToBytes, transcodeToJsonSliced } from '../../src/otlp/json-transcoder.js';
import type { AnyValue, ExportTraceServiceRequest, KeyValue, Span } from '../../src/otlp/model.js';
import { decodeRequest, encodeRequest } from '../../src/otlp/proto-codec.js';
import { concatRequests } from '../../src/otlp/wire.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { turnsDuring } from '../helpers/turns.js';

function transcodeToJson(requests: readonly Uint8Array[]): string {
  return transcodeToBytes(requests).toString('utf8');
}

/** What the model-based path writes for the same bytes: the reference. */
function viaModel(bytes: Uint8Array): string {
  return stringifyRequest(decodeRequest(bytes));
}

const text = fc.oneof(fc.string({ unit: 'binary-ascii', maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constant(''));
const hexBytes = (length: number) => fc.uint8Array({ minLength: length, maxLength: length }).map((b) => Buffer.from(b).toString('hex'));
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const uint64 = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 53n })).map(String);
const count = fc.oneof(fc.constant(0), fc.nat(0xffffffff));

const { anyValue } = fc.letrec<{ anyValue: AnyValue; keyValue: KeyValue }>((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant({}),
    text.map((stringValue) => ({ stringValue })),
    fc.boolean().map((boolValue) => ({ boolValue })),
    int64.map((intValue) => ({ intValue })),
    fc.double().map((doubleValue) => ({ doubleValue })),
    fc.uint8Array({ maxLength: 20 }).map((b) => ({ bytesValue: Buffer.from(b).toString('base64') })),
    fc.array(tie('anyValue') as fc.Arbitrary<AnyValue>, { maxLength: 3 }).map((values) => ({ arrayValue: { values } })),
    fc.array(tie('keyValue') as fc.Arbitrary<KeyValue>, { maxLength: 3 }).map((values) => ({ kvlistValue: { values } })),
  ),
  keyValue: fc.record({ key: text, value: tie('anyValue') as fc.Arbitrary<AnyValue> }, { requiredKeys: ['key'] }),
}));
const attributes = fc.array(fc.record({ key: text, value: anyValue }, { requiredKeys: ['key'] }), { maxLength: 4 });

const span: fc.Arbitrary<Span> = fc.record(
  {
    traceId: hexBytes(16),
    spanId: hexBytes(8),
    traceState: text,
    parentSpanId: fc.oneof(hexBytes(8), fc.constant('')),
    flags: count,
    name: text,
    kind: fc.integer({ min: 0, max: 5 }),
    startTimeUnixNano: uint64,
    endTimeUnixNano: uint64,
    attributes,
    droppedAttributesCount: count,
    events: fc.array(fc.record({ timeUnixNano: uint64, name: text, attributes, droppedAttributesCount: count }, { requiredKeys: ['timeUnixNano', 'name'] }), { maxLength: 2 }),
    droppedEventsCount: count,
    links: fc.array(
      fc.record({ traceId: hexBytes(16), spanId: hexBytes(8), traceState: text, attributes, droppedAttributesCount: count, flags: count }, { requiredKeys: ['traceId', 'spanId'] }),
      { maxLength: 2 },
    ),
    droppedLinksCount: count,
    status: fc.record({ message: text, code: fc.integer({ min: 0, max: 2 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: ['traceId', 'spanId', 'name', 'startTimeUnixNano', 'endTimeUnixNano'] },
);

const request: fc.Arbitrary<ExportTraceServiceRequest> = fc
  .array(
    fc.record(
      {
        resource: fc.record({ attributes, droppedAttributesCount: count }, { requiredKeys: ['attributes'] }),
        schemaUrl: text,
        scopeSpans: fc.array(
          fc.record(
            {
              scope: fc.record({ name: text, version: text, attributes, droppedAttributesCount: count }, { requiredKeys: [] }),
              schemaUrl: text,
              spans: fc.array(span, { maxLength: 3 }),
            },
            { requiredKeys: ['spans'] },
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: ['scopeSpans'] },
    ),
    { maxLength: 3 },
  )
  .map((resourceSpans) => ({ resourceSpans }));

describe('protobuf -> OTLP/JSON transcoder', () => {
  it('writes exactly what the model-based codec writes, for arbitrary requests', () => {
    fc.assert(
      fc.property(request, function sameJson(model) {
        const bytes = encodeRequest(model);
        expect(transcodeToJson([bytes])).toBe(viaModel(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('writes exactly what the model-based codec writes for the OpenTelemetry SDK exporter bytes', () => {
    const bytes = ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;
    const json = transcodeToJson([bytes]);
    expect(json).toBe(viaModel(bytes));
    expect(json).toContain('"sample.big","value":{"intValue":"9007199254740991"}');
  });

  it('writes 64-bit integers as exact decimal strings, negative ones included', () => {
    const model: ExportTraceServiceRequest = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'big',
                  startTimeUnixNano: '18446744073709551615',
                  endTimeUnixNano: '1700000000000000123',
                  attributes: [
                    { key: 'min', value: { intValue: '-9223372036854775808' } },
                    { key: 'max', value: { intValue: '9223372036854775807' } },
                    { key: 'minus-one', value: { intValue: '-1' } },
                    { key: 'past-2^53', value: { intValue: '9007199254740993' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const bytes = encodeRequest(model);
    const json = transcodeToJson([bytes]);
    expect(json).toBe(viaModel(bytes));
    expect(json).toContain('"startTimeUnixNano":"18446744073709551615","endTimeUnixNano":"1700000000000000123"');
    expect(json).toContain('{"intValue":"-9223372036854775808"}');
    expect(json).toContain('{"intValue":"9007199254740993"}');
  });

  it('writes every digit of 64-bit values at the 10^9, 2^32, 2^53 and 2^64 boundaries', () => {
    const unsigned = ['0', '9', '10', '999999999', '1000000000', '1000000001', '4294967295', '4294967296', '999999999999', '9007199254740991', '9007199254740992', '9007199254740993', '999999999999999999', '1000000000000000000', '1763942400123456789', '18446744072999999999', '18446744073000000000', '18446744073709551615'];
    const signed = ['-1', '-999999999', '-1000000000', '-4294967296', '-9007199254740993', '-1000000000000000000', '-9223372036854775807', '9223372036854775807'];
    const model: ExportTraceServiceRequest = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: unsigned.map((time, i) => ({
                traceId: '0af7651916cd43dd8448eb211c80319c',
                spanId: `b7ad6b71692033${String(i).padStart(2, '0')}`,
                name: 'n',
                startTimeUnixNano: time,
                endTimeUnixNano: unsigned[unsigned.length - 1 - i] as string,
                events: [{ timeUnixNano: time, name: 'e' }],
                attributes: [...unsigned.slice(0, 10), ...signed].map((intValue, k) => ({ key: `k${k}`, value: { intValue } })),
              })),
            },
          ],
        },
      ],
    };
    const bytes = encodeRequest(model);
    const json = transcodeToJson([bytes]);
    expect(json).toBe(viaModel(bytes));
    for (const time of unsigned) expect(json).toContain(`"startTimeUnixNano":"${time}"`);
    for (const time of unsigned) expect(json).toContain(`{"timeUnixNano":"${time}"`);
    for (const value of signed) expect(json).toContain(`{"intValue":"${value}"}`);
  });

  it('spells non-finite doubles as strings, keeps the sign of -0 and keeps bytes as base64', () => {
    const values: AnyValue[] = [{ doubleValue: Number.NaN }, { doubleValue: -Infinity }, { doubleValue: -0 }, { doubleValue: 1e-300 }, { bytesValue: 'AP8=' }, { arrayValue: { values: [] } }, { kvlistValue: { values: [] } }];
    const bytes = encodeRequest({
      resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'v', startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: values.map((value, i) => ({ key: `k${i}`, value })) }] }] }],
    });
    const json = transcodeToJson([bytes]);
    expect(json).toBe(viaModel(bytes));
    expect(json).toContain('{"doubleValue":"NaN"}');
    expect(json).toContain('{"doubleValue":"-Infinity"}');
    expect(json).toContain('{"doubleValue":-0}');
    expect(json).toContain('{"bytesValue":"AP8="}');
    expect(json).toContain('{"arrayValue":{"values":[]}}');
  });

  it('escapes strings as JSON.stringify does and writes invalid UTF-8 as U+FFFD', () => {
    const tricky = ['quote " backslash \\ slash /', 'controls \u0000\u0001\b\f\n\r\t\u001f\u007f', 'naïve 日本語 🎉', 'line\u2028separator'];
    const bytes = encodeRequest({
      resourceSpans: [{ scopeSpans: [{ spans: tricky.map((name, i) => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: `b7ad6b716920333${i}`, name, startTimeUnixNano: '1', endTimeUnixNano: '2' })) }] }],
    });
    const json = transcodeToJson([bytes]);
    expect(json).toBe(viaModel(bytes));
    const names = (JSON.parse(json) as ExportTraceServiceRequest).resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name);
    expect(names).toEqual(tricky);
    // A name field holding the bytes 0xff 0xfe: not UTF-8.
    const w = protobuf.Writer.create();
    const span = protobuf.Writer.create().uint32((5 << 3) | 2).bytes(Uint8Array.from([0x61, 0xff, 0xfe])).finish();
    const invalid = w.uint32((1 << 3) | 2).fork().uint32((2 << 3) | 2).fork().uint32((2 << 3) | 2).bytes(span).ldelim().ldelim().finish();
    expect(transcodeToJson([invalid])).toContain('"name":"a\ufffd\ufffd"');
    expect(transcodeToJson([invalid])).toBe(viaModel(invalid));
  });

  it('ignores unknown fields at every level, as the codec does', () => {
    const w = protobuf.Writer.create();
    const unknown = (writer: protobuf.Writer) => writer.uint32((99 << 3) | 0).uint64(7).uint32((98 << 3) | 2).string('junk').uint32((97 << 3) | 5).fixed32(1).uint32((96 << 3) | 1).fixed64(2);
    const kv = unknown(protobuf.Writer.create().uint32((1 << 3) | 2).string('k').uint32((2 << 3) | 2).fork()).uint32((1 << 3) | 2).string('v').ldelim();
    const spanBytes = unknown(
      protobuf.Writer.create()
        .uint32((1 << 3) | 2)
        .bytes(Buffer.alloc(16, 1))
        .uint32((2 << 3) | 2)
        .bytes(Buffer.alloc(8, 2))
        .uint32((5 << 3) | 2)
        .string('with unknowns')
        .uint32((9 << 3) | 2)
        .bytes(kv.finish()),
    ).finish();
    const scopeSpans = unknown(protobuf.Writer.create().uint32((2 << 3) | 2).bytes(spanBytes)).finish();
    const resourceSpans = unknown(protobuf.Writer.create().uint32((2 << 3) | 2).bytes(scopeSpans)).finish();
    const bytes = unknown(w.uint32((1 << 3) | 2).bytes(resourceSpans)).finish();
    const json = transcodeToJson([bytes]);
    expect(json).toBe(viaModel(bytes));
    expect(json).toContain('"name":"with unknowns"');
    expect(json).toContain('{"key":"k","value":{"stringValue":"v"}}');
  });

  it('writes empty messages and absent fields as the codec does', () => {
    const cases: ExportTraceServiceRequest[] = [
      { resourceSpans: [] },
      { resourceSpans: [{ scopeSpans: [] }] },
      { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: {}, spans: [] }] }] },
      { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: '', startTimeUnixNano: '0', endTimeUnixNano: '0', status: {}, attributes: [{ key: '' }] }] }] }] },
    ];
    for (const model of cases) {
      const bytes = encodeRequest(model);
      expect(transcodeToJson([bytes])).toBe(viaModel(bytes));
    }
    expect(transcodeToJson([])).toBe('{"resourceSpans":[]}');
    // A span without ids: the model path throws a TypeError on absent bytes fields; the transcoder writes them empty.
    const idless = encodeRequest({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '', spanId: '', name: 'n', startTimeUnixNano: '0', endTimeUnixNano: '0' }] }] }] });
    expect(transcodeToJson([idless])).toBe('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"","spanId":"","name":"n","kind":0,"startTimeUnixNano":"0","endTimeUnixNano":"0"}]}]}]}');
  });

  it('transcodes several requests as their concatenation', () => {
    const a = ProtobufTraceSerializer.serializeRequest(makeSdkSpans({ 'service.name': 'a' }))!;
    const b = ProtobufTraceSerializer.serializeRequest(makeSdkSpans({ 'service.name': 'b' }))!;
    expect(transcodeToJson([a, b])).toBe(viaModel(concatRequests([a, b])));
  });

  it('rejects truncated bytes as malformed data', () => {
    const bytes = ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;
    expect(() => transcodeToJson([bytes.subarray(0, bytes.length - 7)])).toThrow(MalformedDataError);
    expect(() => transcodeToJson([Uint8Array.from([0x0a, 0xff, 0xff, 0x01])])).toThrow(MalformedDataError);
  });

  it('gives the event loop a turn between slices and writes the same text', async () => {
    const bytes = ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;
    // A zero-length slice yields after every span (six here): the ticker runs in between.
    const { value, turns } = await turnsDuring(() => transcodeToJsonSliced([bytes, bytes, bytes], 0));
    const json = value.toString('utf8');
    expect(json).toBe(viaModel(concatRequests([bytes, bytes, bytes])));
    expect(turns).toBeGreaterThanOrEqual(5);
  });
});
