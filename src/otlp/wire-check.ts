// The intake check of an ExportTraceServiceRequest's contents (wire.ts scans
// its framing down to the spans): every message down to attribute values,
// read in place by one WireReader per request (wire-reader.ts).
//
// Whatever a receiver acknowledges is read again later: by the JSON
// transcoder, by sampling's attribute reader, by protobufjs in the debug
// exporter, and at last by a destination's own decoder. A fault found only
// then would fail a whole delivery batch of other clients' spans, or stop a
// drain's queue at the bad record; found here, it is the sender's 400.
import { malformed, WIRE_END_GROUP, WIRE_FIXED32, WIRE_FIXED64, WIRE_LEN, WIRE_START_GROUP, WIRE_VARINT, type WireReader } from './wire-reader.js';

const TRACE_ID_BYTES = 16;
const SPAN_ID_BYTES = 8;

/**
 * The deepest nesting of attribute values accepted (an attribute's value is
 * 1, a value in its array or key-value list 2, ...). Real attributes nest a
 * few levels; the bound keeps every reader of the bytes (the JSON
 * transcoder, protobufjs, whose decoder stops at 100 message levels, and a
 * value nested three levels per list) within its limits.
 */
export const MAX_VALUE_DEPTH = 20;

/** A field's tag; field number 0 does not exist (decoders after this one refuse it). */
function tagOf(r: WireReader, end: number): number {
  const tag = r.uint32(end);
  if (tag >>> 3 === 0) throw malformed('a field is numbered 0');
  return tag;
}

function skip(r: WireReader, wireType: number, end: number): void {
  // Groups are proto2's and no OTLP field uses them.
  if (wireType === WIRE_START_GROUP || wireType === WIRE_END_GROUP) throw malformed(`wire type ${wireType} is not used by OTLP`);
  r.skip(wireType, end);
}

/** A known field: its wire type must be `expected`. */
function expect(r: WireReader, wireType: number, expected: number, end: number, what: string): void {
  if (wireType !== expected) throw malformed(`${what} has wire type ${wireType}, not ${expected}`);
  r.skip(wireType, end);
}

/** A known message field: the end of its content. */
function message(r: WireReader, wireType: number, end: number, what: string): number {
  if (wireType !== WIRE_LEN) throw malformed(`${what} has wire type ${wireType}, not ${WIRE_LEN}`);
  return r.lengthEnd(end);
}

/** An id: empty or exactly `size` bytes; returns its length. */
function id(r: WireReader, wireType: number, end: number, what: string, size: number): number {
  const contentEnd = message(r, wireType, end, what);
  const length = contentEnd - r.pos;
  if (length !== 0 && length !== size) throw malformed(`${what} is ${length} bytes, not ${size}`);
  r.pos = contentEnd;
  return length;
}

function anyValue(r: WireReader, end: number, depth: number): void {
  if (depth > MAX_VALUE_DEPTH) throw malformed(`an attribute value is nested more than ${MAX_VALUE_DEPTH} levels deep`);
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
      case 7:
        expect(r, wireType, WIRE_LEN, end, 'AnyValue string or bytes');
        break;
      case 2:
      case 3:
        expect(r, wireType, WIRE_VARINT, end, 'AnyValue bool or int');
        break;
      case 4:
        expect(r, wireType, WIRE_FIXED64, end, 'AnyValue double');
        break;
      case 5:
        list(r, message(r, wireType, end, 'AnyValue array'), depth, anyValue);
        break;
      case 6:
        list(r, message(r, wireType, end, 'AnyValue kvlist'), depth, keyValue);
        break;
      default:
        skip(r, wireType, end);
    }
  }
}

/** ArrayValue and KeyValueList: field 1 repeated, each item one level deeper. */
function list(r: WireReader, end: number, depth: number, item: (r: WireReader, end: number, depth: number) => void): void {
  while (r.pos < end) {
    const tag = tagOf(r, end);
    if (tag >>> 3 === 1) item(r, message(r, tag & 7, end, 'a list value'), depth + 1);
    else skip(r, tag & 7, end);
  }
}

/** KeyValue: a key, and a value at `depth`. */
function keyValue(r: WireReader, end: number, depth: number): void {
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const field = tag >>> 3;
    if (field === 1) expect(r, tag & 7, WIRE_LEN, end, 'KeyValue key');
    else if (field === 2) anyValue(r, message(r, tag & 7, end, 'KeyValue value'), depth);
    else skip(r, tag & 7, end);
  }
}

function attribute(r: WireReader, wireType: number, end: number, what: string): void {
  keyValue(r, message(r, wireType, end, what), 1);
}

function event(r: WireReader, end: number): void {
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
        expect(r, wireType, WIRE_FIXED64, end, 'event.time_unix_nano');
        break;
      case 2:
        expect(r, wireType, WIRE_LEN, end, 'event.name');
        break;
      case 3:
        attribute(r, wireType, end, 'event.attributes');
        break;
      case 4:
        expect(r, wireType, WIRE_VARINT, end, 'event.dropped_attributes_count');
        break;
      default:
        skip(r, wireType, end);
    }
  }
}

function link(r: WireReader, end: number): void {
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
        id(r, wireType, end, 'link.trace_id', TRACE_ID_BYTES);
        break;
      case 2:
        id(r, wireType, end, 'link.span_id', SPAN_ID_BYTES);
        break;
      case 3:
        expect(r, wireType, WIRE_LEN, end, 'link.trace_state');
        break;
      case 4:
        attribute(r, wireType, end, 'link.attributes');
        break;
      case 5:
        expect(r, wireType, WIRE_VARINT, end, 'link.dropped_attributes_count');
        break;
      case 6:
        expect(r, wireType, WIRE_FIXED32, end, 'link.flags');
        break;
      default:
        skip(r, wireType, end);
    }
  }
}

function status(r: WireReader, end: number): void {
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const field = tag >>> 3;
    if (field === 2) expect(r, tag & 7, WIRE_LEN, end, 'status.message');
    else if (field === 3) expect(r, tag & 7, WIRE_VARINT, end, 'status.code');
    else skip(r, tag & 7, end);
  }
}

/** A Resource's content [start, end): its attributes and dropped count. */
export function checkResource(r: WireReader, start: number, end: number): void {
  r.pos = start;
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const field = tag >>> 3;
    if (field === 1) attribute(r, tag & 7, end, 'resource.attributes');
    else if (field === 2) expect(r, tag & 7, WIRE_VARINT, end, 'resource.dropped_attributes_count');
    else skip(r, tag & 7, end);
  }
}

/** An InstrumentationScope's content [start, end). */
export function checkScope(r: WireReader, start: number, end: number): void {
  r.pos = start;
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const field = tag >>> 3;
    if (field === 1 || field === 2) expect(r, tag & 7, WIRE_LEN, end, 'scope.name or version');
    else if (field === 3) attribute(r, tag & 7, end, 'scope.attributes');
    else if (field === 4) expect(r, tag & 7, WIRE_VARINT, end, 'scope.dropped_attributes_count');
    else skip(r, tag & 7, end);
  }
}

/** A Span's content [start, end) and what it holds; its trace and span ids must be there, at their sizes. */
export function checkSpan(r: WireReader, start: number, end: number): void {
  r.pos = start;
  let traceId = 0;
  let spanId = 0;
  while (r.pos < end) {
    const tag = tagOf(r, end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
        traceId = id(r, wireType, end, 'span.trace_id', TRACE_ID_BYTES);
        break;
      case 2:
        spanId = id(r, wireType, end, 'span.span_id', SPAN_ID_BYTES);
        break;
      case 4:
        id(r, wireType, end, 'span.parent_span_id', SPAN_ID_BYTES);
        break;
      case 3:
      case 5:
        expect(r, wireType, WIRE_LEN, end, 'span.trace_state or name');
        break;
      case 6:
      case 10:
      case 12:
      case 14:
        expect(r, wireType, WIRE_VARINT, end, 'span.kind or a dropped count');
        break;
      case 7:
      case 8:
        expect(r, wireType, WIRE_FIXED64, end, 'span start or end time');
        break;
      case 9:
        attribute(r, wireType, end, 'span.attributes');
        break;
      case 11:
        event(r, message(r, wireType, end, 'span.events'));
        break;
      case 13:
        link(r, message(r, wireType, end, 'span.links'));
        break;
      case 15:
        status(r, message(r, wireType, end, 'span.status'));
        break;
      case 16:
        expect(r, wireType, WIRE_FIXED32, end, 'span.flags');
        break;
      default:
        skip(r, wireType, end);
    }
  }
  if (traceId === 0) throw malformed(`a span has no trace_id (${TRACE_ID_BYTES} bytes)`);
  if (spanId === 0) throw malformed(`a span has no span_id (${SPAN_ID_BYTES} bytes)`);
}
