// The intake check of an ExportTraceServiceRequest's contents (wire.ts scans
// its framing down to the spans): every message down to attribute values,
// read in place, allocating nothing.
//
// Whatever a receiver acknowledges is read again later: by the JSON
// transcoder, by sampling's attribute reader, by protobufjs in the debug
// exporter, and at last by a destination's own decoder. A fault found only
// then would fail a whole delivery batch of other clients' spans, or stop a
// drain's queue at the bad record; found here, it is the sender's 400.
import { MalformedDataError } from '../shared/errors.js';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

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

function malformed(what: string): MalformedDataError {
  return new MalformedDataError(`malformed protobuf ExportTraceServiceRequest: ${what}`);
}

/** A read position in the request's bytes; one per scan, reset for each message checked. */
class Cursor {
  buf: Uint8Array = new Uint8Array(0);
  pos = 0;

  /** A varint's low 32 bits (as every reader of these bytes takes it). */
  varint(end: number): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= end) throw malformed('a varint overruns its message');
    let byte = buf[pos++] as number;
    if (byte < 0x80) {
      this.pos = pos;
      return byte;
    }
    let result = byte & 0x7f;
    for (let shift = 7; shift < 70; shift += 7) {
      if (pos >= end) throw malformed('a varint overruns its message');
      byte = buf[pos++] as number;
      if (shift < 32) result |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.pos = pos;
        return result >>> 0;
      }
    }
    throw malformed('a varint is longer than 10 bytes');
  }

  /** A field's tag; field number 0 does not exist (decoders after this one refuse it). */
  tag(end: number): number {
    const tag = this.varint(end);
    if (tag >>> 3 === 0) throw malformed('a field is numbered 0');
    return tag;
  }

  /** Reads a length; returns where that content ends, checked against `end`. */
  lengthEnd(end: number): number {
    const length = this.varint(end);
    const contentEnd = this.pos + length;
    if (contentEnd > end) throw malformed('a field overruns its message');
    return contentEnd;
  }

  skip(wireType: number, end: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint(end);
        return;
      case WIRE_FIXED64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.pos = this.lengthEnd(end);
        return;
      case WIRE_FIXED32:
        this.pos += 4;
        break;
      default:
        // Groups (3, 4) are proto2's and no OTLP field uses them; 6 and 7 do not exist.
        throw malformed(`wire type ${wireType} is not used by OTLP`);
    }
    if (this.pos > end) throw malformed('a field overruns its message');
  }

  /** A known field: its wire type must be `expected`. */
  expect(wireType: number, expected: number, end: number, what: string): void {
    if (wireType !== expected) throw malformed(`${what} has wire type ${wireType}, not ${expected}`);
    this.skip(wireType, end);
  }

  /** A known message field: the end of its content. */
  message(wireType: number, end: number, what: string): number {
    if (wireType !== WIRE_LEN) throw malformed(`${what} has wire type ${wireType}, not ${WIRE_LEN}`);
    return this.lengthEnd(end);
  }

  /** An id: empty or exactly `size` bytes; returns its length. */
  id(wireType: number, end: number, what: string, size: number): number {
    const contentEnd = this.message(wireType, end, what);
    const length = contentEnd - this.pos;
    if (length !== 0 && length !== size) throw malformed(`${what} is ${length} bytes, not ${size}`);
    this.pos = contentEnd;
    return length;
  }
}

const cursor = new Cursor();
const NO_BYTES = new Uint8Array(0);

/** Lets go of the last request checked (it may be up to the body limit), once a scan is done with it. */
export function releaseCheckedBytes(): void {
  cursor.buf = NO_BYTES;
}

function anyValue(c: Cursor, end: number, depth: number): void {
  if (depth > MAX_VALUE_DEPTH) throw malformed(`an attribute value is nested more than ${MAX_VALUE_DEPTH} levels deep`);
  while (c.pos < end) {
    const tag = c.tag(end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
      case 7:
        c.expect(wireType, WIRE_LEN, end, 'AnyValue string or bytes');
        break;
      case 2:
      case 3:
        c.expect(wireType, WIRE_VARINT, end, 'AnyValue bool or int');
        break;
      case 4:
        c.expect(wireType, WIRE_FIXED64, end, 'AnyValue double');
        break;
      case 5:
        list(c, c.message(wireType, end, 'AnyValue array'), depth, anyValue);
        break;
      case 6:
        list(c, c.message(wireType, end, 'AnyValue kvlist'), depth, keyValue);
        break;
      default:
        c.skip(wireType, end);
    }
  }
}

/** ArrayValue and KeyValueList: field 1 repeated, each item one level deeper. */
function list(c: Cursor, end: number, depth: number, item: (c: Cursor, end: number, depth: number) => void): void {
  while (c.pos < end) {
    const tag = c.tag(end);
    if (tag >>> 3 === 1) item(c, c.message(tag & 7, end, 'a list value'), depth + 1);
    else c.skip(tag & 7, end);
  }
}

/** KeyValue: a key, and a value at `depth`. */
function keyValue(c: Cursor, end: number, depth: number): void {
  while (c.pos < end) {
    const tag = c.tag(end);
    const field = tag >>> 3;
    if (field === 1) c.expect(tag & 7, WIRE_LEN, end, 'KeyValue key');
    else if (field === 2) anyValue(c, c.message(tag & 7, end, 'KeyValue value'), depth);
    else c.skip(tag & 7, end);
  }
}

function attribute(c: Cursor, wireType: number, end: number, what: string): void {
  keyValue(c, c.message(wireType, end, what), 1);
}

function event(c: Cursor, end: number): void {
  while (c.pos < end) {
    const tag = c.tag(end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
        c.expect(wireType, WIRE_FIXED64, end, 'event.time_unix_nano');
        break;
      case 2:
        c.expect(wireType, WIRE_LEN, end, 'event.name');
        break;
      case 3:
        attribute(c, wireType, end, 'event.attributes');
        break;
      case 4:
        c.expect(wireType, WIRE_VARINT, end, 'event.dropped_attributes_count');
        break;
      default:
        c.skip(wireType, end);
    }
  }
}

function link(c: Cursor, end: number): void {
  while (c.pos < end) {
    const tag = c.tag(end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
        c.id(wireType, end, 'link.trace_id', TRACE_ID_BYTES);
        break;
      case 2:
        c.id(wireType, end, 'link.span_id', SPAN_ID_BYTES);
        break;
      case 3:
        c.expect(wireType, WIRE_LEN, end, 'link.trace_state');
        break;
      case 4:
        attribute(c, wireType, end, 'link.attributes');
        break;
      case 5:
        c.expect(wireType, WIRE_VARINT, end, 'link.dropped_attributes_count');
        break;
      case 6:
        c.expect(wireType, WIRE_FIXED32, end, 'link.flags');
        break;
      default:
        c.skip(wireType, end);
    }
  }
}

function status(c: Cursor, end: number): void {
  while (c.pos < end) {
    const tag = c.tag(end);
    const field = tag >>> 3;
    if (field === 2) c.expect(tag & 7, WIRE_LEN, end, 'status.message');
    else if (field === 3) c.expect(tag & 7, WIRE_VARINT, end, 'status.code');
    else c.skip(tag & 7, end);
  }
}

function at(buf: Uint8Array, start: number): Cursor {
  cursor.buf = buf;
  cursor.pos = start;
  return cursor;
}

/** A Resource's content [start, end): its attributes and dropped count. */
export function checkResource(buf: Uint8Array, start: number, end: number): void {
  const c = at(buf, start);
  while (c.pos < end) {
    const tag = c.tag(end);
    const field = tag >>> 3;
    if (field === 1) attribute(c, tag & 7, end, 'resource.attributes');
    else if (field === 2) c.expect(tag & 7, WIRE_VARINT, end, 'resource.dropped_attributes_count');
    else c.skip(tag & 7, end);
  }
}

/** An InstrumentationScope's content [start, end). */
export function checkScope(buf: Uint8Array, start: number, end: number): void {
  const c = at(buf, start);
  while (c.pos < end) {
    const tag = c.tag(end);
    const field = tag >>> 3;
    if (field === 1 || field === 2) c.expect(tag & 7, WIRE_LEN, end, 'scope.name or version');
    else if (field === 3) attribute(c, tag & 7, end, 'scope.attributes');
    else if (field === 4) c.expect(tag & 7, WIRE_VARINT, end, 'scope.dropped_attributes_count');
    else c.skip(tag & 7, end);
  }
}

/** A Span's content [start, end) and what it holds; its trace and span ids must be there, at their sizes. */
export function checkSpan(buf: Uint8Array, start: number, end: number): void {
  const c = at(buf, start);
  let traceId = 0;
  let spanId = 0;
  while (c.pos < end) {
    const tag = c.tag(end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
        traceId = c.id(wireType, end, 'span.trace_id', TRACE_ID_BYTES);
        break;
      case 2:
        spanId = c.id(wireType, end, 'span.span_id', SPAN_ID_BYTES);
        break;
      case 4:
        c.id(wireType, end, 'span.parent_span_id', SPAN_ID_BYTES);
        break;
      case 3:
      case 5:
        c.expect(wireType, WIRE_LEN, end, 'span.trace_state or name');
        break;
      case 6:
      case 10:
      case 12:
      case 14:
        c.expect(wireType, WIRE_VARINT, end, 'span.kind or a dropped count');
        break;
      case 7:
      case 8:
        c.expect(wireType, WIRE_FIXED64, end, 'span start or end time');
        break;
      case 9:
        attribute(c, wireType, end, 'span.attributes');
        break;
      case 11:
        event(c, c.message(wireType, end, 'span.events'));
        break;
      case 13:
        link(c, c.message(wireType, end, 'span.links'));
        break;
      case 15:
        status(c, c.message(wireType, end, 'span.status'));
        break;
      case 16:
        c.expect(wireType, WIRE_FIXED32, end, 'span.flags');
        break;
      default:
        c.skip(wireType, end);
    }
  }
  if (traceId === 0) throw malformed(`a span has no trace_id (${TRACE_ID_BYTES} bytes)`);
  if (spanId === 0) throw malformed(`a span has no span_id (${SPAN_ID_BYTES} bytes)`);
}
