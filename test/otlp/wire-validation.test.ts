// What the intake scan refuses: every message down to attribute values is
// checked, so nothing acknowledged fails a later reader (the JSON transcoder,
// sampling, protobufjs, a destination's decoder).
import { describe, expect, it } from 'vitest';
import { transcodeToJson } from '../../src/otlp/json-transcoder.js';
import { decodeRequest, encodeRequest } from '../../src/otlp/proto-codec.js';
import type { ExportTraceServiceRequest } from '../../src/otlp/model.js';
import { scanRequest } from '../../src/otlp/wire.js';
import { MAX_VALUE_DEPTH } from '../../src/otlp/wire-check.js';
import { MalformedDataError } from '../../src/shared/errors.js';

function varint(value: number): number[] {
  const out: number[] = [];
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return out;
}

const cat = (...parts: Array<Uint8Array | number[]>): Uint8Array => Buffer.concat(parts.map((p) => Uint8Array.from(p)));
/** A length-delimited field. */
const len = (field: number, ...content: Array<Uint8Array | number[]>): Uint8Array => {
  const body = cat(...content);
  return cat(varint((field << 3) | 2), varint(body.length), body);
};
const text = (value: string): Uint8Array => new TextEncoder().encode(value);

const TRACE_ID = len(1, new Uint8Array(16).fill(0xab));
const SPAN_ID = len(2, new Uint8Array(8).fill(0xcd));
/** An AnyValue holding a string. */
const stringValue = (value: string): Uint8Array => len(1, text(value));
/** A KeyValue field `field` of its message. */
const attribute = (field: number, value: Uint8Array | number[]): Uint8Array => len(field, len(1, text('k')), len(2, value));
/** resource_spans { resource? scope_spans { spans { ... } } } */
const request = (span: Uint8Array, resource: Uint8Array = new Uint8Array()): Uint8Array => len(1, resource, len(2, len(2, span)));
/** An AnyValue whose arrays nest `depth` values deep, a string at the bottom. */
function nested(depth: number): Uint8Array {
  let value = stringValue('bottom');
  for (let i = 1; i < depth; i++) value = len(5, len(1, value));
  return value;
}

function refusal(bytes: Uint8Array): string {
  try {
    scanRequest(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(MalformedDataError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

/** Accepted, and readable by the later readers. */
function accepted(bytes: Uint8Array): void {
  expect(scanRequest(bytes).spanCount).toBe(1);
  expect(() => JSON.parse(new TextDecoder().decode(transcodeToJson([bytes])))).not.toThrow();
  expect(() => decodeRequest(bytes)).not.toThrow();
}

describe('protobuf intake validation', () => {
  it('accepts a span with its ids, attributes, an event, a link and a status', () => {
    const event = len(11, [0x09, ...new Array<number>(8).fill(0)], len(2, text('e')), attribute(3, stringValue('v')));
    const link = len(13, TRACE_ID, SPAN_ID, attribute(4, cat([0x10, 0x01])));
    const status = len(15, len(2, text('ok')), [0x18, 0x01]);
    accepted(request(cat(TRACE_ID, SPAN_ID, len(5, text('GET /')), [0x30, 0x02], attribute(9, nested(MAX_VALUE_DEPTH)), event, link, status), len(1, attribute(1, stringValue('svc')))));
  });

  it('refuses a span without its ids or with ids of the wrong size', () => {
    expect(refusal(request(SPAN_ID))).toContain('no trace_id');
    expect(refusal(request(TRACE_ID))).toContain('no span_id');
    expect(refusal(request(cat(len(1, [1, 2]), SPAN_ID)))).toContain('span.trace_id is 2 bytes, not 16');
    expect(refusal(request(cat(TRACE_ID, SPAN_ID, len(4, [1, 2, 3]))))).toContain('span.parent_span_id is 3 bytes, not 8');
    expect(refusal(request(cat(TRACE_ID, SPAN_ID, len(13, len(1, [1]), SPAN_ID))))).toContain('link.trace_id is 1 bytes, not 16');
  });

  it('refuses an attribute whose bytes are not a KeyValue, wherever it is', () => {
    const broken = len(9, [0x0f]);
    for (const bytes of [request(cat(TRACE_ID, SPAN_ID, broken)), request(cat(TRACE_ID, SPAN_ID), len(1, len(1, [0x0f]))), request(cat(TRACE_ID, SPAN_ID, len(11, len(3, [0x0f]))))]) {
      expect(refusal(bytes)).toContain('wire type 7');
    }
  });

  it('refuses a known field sent with another wire type', () => {
    // AnyValue.double_value (field 4) as a varint.
    expect(refusal(request(cat(TRACE_ID, SPAN_ID, attribute(9, [0x20, 0x01]))))).toContain('AnyValue double has wire type 0, not 1');
    // Span.kind as a length-delimited field.
    expect(refusal(request(cat(TRACE_ID, SPAN_ID, len(6, [1]))))).toContain('wire type 2, not 0');
  });

  it(`accepts values nested ${MAX_VALUE_DEPTH} deep and refuses one level more`, () => {
    accepted(request(cat(TRACE_ID, SPAN_ID, attribute(9, nested(MAX_VALUE_DEPTH)))));
    expect(refusal(request(cat(TRACE_ID, SPAN_ID, attribute(9, nested(MAX_VALUE_DEPTH + 1)))))).toContain(`nested more than ${MAX_VALUE_DEPTH} levels deep`);
    // Thousands of levels (a few KB) are refused as quickly, without exhausting the stack.
    expect(refusal(request(cat(TRACE_ID, SPAN_ID, attribute(9, nested(3_000)))))).toContain('nested more than');
  });

  it('accepts every field an encoder writes: parent, links with flags, events, status, scope, schema URLs, dropped counts', () => {
    const attributes = [{ key: 's', value: { stringValue: 'v' } }, { key: 'list', value: { kvlistValue: { values: [{ key: 'n', value: { intValue: '-5' } }, { key: 'empty' }] } } }];
    const model: ExportTraceServiceRequest = {
      resourceSpans: [{
        resource: { attributes, droppedAttributesCount: 2 },
        schemaUrl: 'https://opentelemetry.io/schemas/1.26.0',
        scopeSpans: [{
          scope: { name: 'lib', version: '1.0', attributes, droppedAttributesCount: 1 },
          schemaUrl: 'https://opentelemetry.io/schemas/1.26.0',
          spans: [{
            traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), parentSpanId: 'ef'.repeat(8), traceState: 'k=v', name: 'GET /', kind: 2,
            startTimeUnixNano: '1700000000000000000', endTimeUnixNano: '1700000000000000001', attributes, droppedAttributesCount: 3,
            events: [{ timeUnixNano: '1700000000000000000', name: 'e', attributes, droppedAttributesCount: 1 }], droppedEventsCount: 1,
            links: [{ traceId: '12'.repeat(16), spanId: '34'.repeat(8), traceState: 'a=b', attributes, droppedAttributesCount: 1, flags: 257 }], droppedLinksCount: 1,
            status: { code: 2, message: 'boom' }, flags: 769,
          }],
        }],
      }],
    };
    accepted(encodeRequest(model));
  });

  it('refuses field number 0 and a known container field with another wire type, at every level', () => {
    const span = cat(TRACE_ID, SPAN_ID);
    // Field 0, length-delimited (tag 0x02), inside a span and at the request's top level.
    expect(refusal(request(cat(span, [0x02, 0x00])))).toContain('numbered 0');
    expect(refusal(cat(request(span), [0x02, 0x00]))).toContain('numbered 0');
    // resource_spans (1) as a varint at the top level; scope_spans (2) and schema_url (3) as varints in a ResourceSpans.
    expect(refusal(cat(request(span), [0x08, 0x01]))).toContain('field 1 has wire type 0');
    expect(refusal(len(1, [0x10, 0x01]))).toContain('resource_spans field 2 has wire type 0');
    expect(refusal(len(1, [0x18, 0x01]))).toContain('resource_spans field 3 has wire type 0');
    // ScopeSpans.schema_url (3) as a varint.
    expect(refusal(len(1, len(2, len(2, span), [0x18, 0x01])))).toContain('scope_spans field 3 has wire type 0');
    // A group (wire type 3), which OTLP never uses, in an unknown field of the request.
    expect(refusal(cat(request(span), [0xab, 0x01, 0xac, 0x01]))).toContain('wire type 3 is not used by OTLP');
  });
});
