// Protobuf ExportTraceServiceRequest bytes -> OTLP/JSON text, read straight
// from the wire (DESIGN section 9): no protobufjs message objects, no Long,
// no model. The output is exactly what stringifyRequest(decodeRequest(bytes))
// writes, key order included, so the two are interchangeable; the tests hold
// them to that on the same requests.
//
// The walk is a generator that pauses after every span, so a caller on the
// request loop can cut a large batch into slices (transcodeSliced) while
// small batches and tests run it to the end at once (transcode).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MalformedDataError } from '../core/errors.js';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;
const TWO_POW_32 = 4294967296;
const MAX_EXACT_HIGH = 0x1fffff; // hi words up to this keep hi * 2^32 + lo below 2^53

function malformed(what: string): MalformedDataError {
  return new MalformedDataError(`malformed protobuf ExportTraceServiceRequest: ${what}`);
}

/**
 * Buffer's per-encoding slice methods: what toString(encoding, start, end)
 * calls after looking the encoding up, a cost that shows per attribute.
 */
interface SlicingBuffer extends Buffer {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
}

/** A cursor over one buffer; every read checks the end of the enclosing message. */
class WireReader {
  readonly buf: SlicingBuffer;
  pos: number;
  /** Low and high words of the last 64-bit value read. */
  lo = 0;
  hi = 0;

  constructor(bytes: Uint8Array) {
    this.buf = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as SlicingBuffer;
    this.pos = 0;
  }

  uint32(end: number): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw malformed('a varint overruns its message');
      const byte = this.buf[this.pos++] as number;
      if (shift < 32) result |= (byte & 0x7f) << shift;
      shift += 7;
      if (byte < 0x80) return result >>> 0;
    }
    throw malformed('a varint is longer than 10 bytes');
  }

  /** Reads a 64-bit varint into lo / hi. */
  varint64(end: number): void {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw malformed('a varint overruns its message');
      const byte = this.buf[this.pos++] as number;
      const bits = byte & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28;
        hi |= bits >>> 4;
      } else hi |= bits << (7 * i - 32);
      if (byte < 0x80) {
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw malformed('a varint is longer than 10 bytes');
  }

  fixed32(end: number): number {
    if (this.pos + 4 > end) throw malformed('a fixed32 overruns its message');
    const value = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return value;
  }

  fixed64(end: number): void {
    if (this.pos + 8 > end) throw malformed('a fixed64 overruns its message');
    this.lo = this.buf.readUInt32LE(this.pos);
    this.hi = this.buf.readUInt32LE(this.pos + 4);
    this.pos += 8;
  }

  double(end: number): number {
    if (this.pos + 8 > end) throw malformed('a double overruns its message');
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /** Reads a length prefix and returns where the field's content ends. */
  lengthEnd(end: number): number {
    const length = this.uint32(end);
    const contentEnd = this.pos + length;
    if (contentEnd > end) throw malformed('a field overruns its message');
    return contentEnd;
  }

  skip(wireType: number, end: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint64(end);
        return;
      case WIRE_FIXED64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.pos = this.lengthEnd(end);
        return;
      case WIRE_START_GROUP:
        for (;;) {
          const tag = this.uint32(end);
          if ((tag & 7) === WIRE_END_GROUP) return;
          this.skip(tag & 7, end);
        }
      case WIRE_FIXED32:
        this.pos += 4;
        break;
      default:
        throw malformed(`invalid wire type ${wireType}`);
    }
    if (this.pos > end) throw malformed('a field overruns its message');
  }

  /** A length-delimited string as a JSON string literal. */
  jsonString(end: number): string {
    const contentEnd = this.lengthEnd(end);
    const start = this.pos;
    const buf = this.buf;
    this.pos = contentEnd;
    // Printable ASCII without a quote or backslash needs no escaping and
    // decodes byte for byte: the common case, at a fraction of the cost.
    let plain = true;
    for (let i = start; i < contentEnd; i++) {
      const byte = buf[i] as number;
      if (byte < 0x20 || byte > 0x7e || byte === 0x22 || byte === 0x5c) {
        plain = false;
        break;
      }
    }
    if (plain) return `"${buf.latin1Slice(start, contentEnd)}"`;
    return JSON.stringify(buf.utf8Slice(start, contentEnd));
  }

  hex(end: number): string {
    const contentEnd = this.lengthEnd(end);
    const text = this.buf.hexSlice(this.pos, contentEnd);
    this.pos = contentEnd;
    return text;
  }

  base64(end: number): string {
    const contentEnd = this.lengthEnd(end);
    const text = this.buf.base64Slice(this.pos, contentEnd);
    this.pos = contentEnd;
    return text;
  }

  /** The last 64-bit value read, unsigned, in decimal. */
  unsignedDecimal(): string {
    const { lo, hi } = this;
    if (hi <= MAX_EXACT_HIGH) return String(hi * TWO_POW_32 + lo);
    return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
  }

  /** The last 64-bit value read, as a two's complement int64, in decimal. */
  signedDecimal(): string {
    if (this.hi < 0x80000000) return this.unsignedDecimal();
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo)).toString();
  }
}

const JSON_EMPTY_STRING = '""';

function jsonDouble(value: number): string {
  // proto3 JSON spells non-finite doubles as strings, as stringifyRequest does.
  return Number.isFinite(value) ? String(value) : `"${String(value)}"`;
}

function anyValue(r: WireReader, end: number): string {
  let out = '{}';
  while (r.pos < end) {
    const tag = r.uint32(end);
    const wireType = tag & 7;
    switch (tag >>> 3) {
      case 1:
        if (wireType !== WIRE_LEN) break;
        out = `{"stringValue":${r.jsonString(end)}}`;
        continue;
      case 2:
        if (wireType !== WIRE_VARINT) break;
        r.varint64(end);
        out = r.lo !== 0 || r.hi !== 0 ? '{"boolValue":true}' : '{"boolValue":false}';
        continue;
      case 3:
        if (wireType !== WIRE_VARINT) break;
        r.varint64(end);
        out = `{"intValue":"${r.signedDecimal()}"}`;
        continue;
      case 4:
        if (wireType !== WIRE_FIXED64) break;
        out = `{"doubleValue":${jsonDouble(r.double(end))}}`;
        continue;
      case 5:
        if (wireType !== WIRE_LEN) break;
        out = `{"arrayValue":{"values":[${arrayValues(r, r.lengthEnd(end))}]}}`;
        continue;
      case 6:
        if (wireType !== WIRE_LEN) break;
        out = `{"kvlistValue":{"values":[${keyValues(r, r.lengthEnd(end), 1)}]}}`;
        continue;
      case 7:
        if (wireType !== WIRE_LEN) break;
        out = `{"bytesValue":"${r.base64(end)}"}`;
        continue;
      default:
        break;
    }
    r.skip(wireType, end);
  }
  return out;
}

/** The values of an ArrayValue (field 1, repeated AnyValue), comma-joined. */
function arrayValues(r: WireReader, end: number): string {
  let out = '';
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((1 << 3) | WIRE_LEN)) {
      const value = anyValue(r, r.lengthEnd(end));
      out = out === '' ? value : `${out},${value}`;
    } else r.skip(tag & 7, end);
  }
  r.pos = end;
  return out;
}

function keyValue(r: WireReader, end: number): string {
  let key = JSON_EMPTY_STRING;
  let value = '{}';
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((1 << 3) | WIRE_LEN)) key = r.jsonString(end);
    else if (tag === ((2 << 3) | WIRE_LEN)) {
      const valueEnd = r.lengthEnd(end);
      value = anyValue(r, valueEnd);
      r.pos = valueEnd;
    } else r.skip(tag & 7, end);
  }
  return `{"key":${key},"value":${value}}`;
}

/** Every KeyValue in field `field` of the message ending at `end`, comma-joined; other fields are skipped. */
function keyValues(r: WireReader, end: number, field: number): string {
  const wanted = (field << 3) | WIRE_LEN;
  let out = '';
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === wanted) {
      const kvEnd = r.lengthEnd(end);
      const kv = keyValue(r, kvEnd);
      r.pos = kvEnd;
      out = out === '' ? kv : `${out},${kv}`;
    } else r.skip(tag & 7, end);
  }
  r.pos = end;
  return out;
}

/** Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; } */
function resource(r: WireReader, end: number): string {
  let attributes = '';
  let dropped = 0;
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((1 << 3) | WIRE_LEN)) {
      const kvEnd = r.lengthEnd(end);
      const kv = keyValue(r, kvEnd);
      r.pos = kvEnd;
      attributes = attributes === '' ? kv : `${attributes},${kv}`;
    } else if (tag === ((2 << 3) | WIRE_VARINT)) dropped = r.uint32(end);
    else r.skip(tag & 7, end);
  }
  return dropped === 0 ? `{"attributes":[${attributes}]}` : `{"attributes":[${attributes}],"droppedAttributesCount":${dropped}}`;
}

/** InstrumentationScope { name = 1; version = 2; attributes = 3; dropped_attributes_count = 4; } */
function scope(r: WireReader, end: number): string {
  let name = JSON_EMPTY_STRING;
  let version = JSON_EMPTY_STRING;
  let attributes = '';
  let dropped = 0;
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((1 << 3) | WIRE_LEN)) name = r.jsonString(end);
    else if (tag === ((2 << 3) | WIRE_LEN)) version = r.jsonString(end);
    else if (tag === ((3 << 3) | WIRE_LEN)) {
      const kvEnd = r.lengthEnd(end);
      const kv = keyValue(r, kvEnd);
      r.pos = kvEnd;
      attributes = attributes === '' ? kv : `${attributes},${kv}`;
    } else if (tag === ((4 << 3) | WIRE_VARINT)) dropped = r.uint32(end);
    else r.skip(tag & 7, end);
  }
  const fields: string[] = [];
  if (name !== JSON_EMPTY_STRING) fields.push(`"name":${name}`);
  if (version !== JSON_EMPTY_STRING) fields.push(`"version":${version}`);
  if (attributes !== '') fields.push(`"attributes":[${attributes}]`);
  if (dropped !== 0) fields.push(`"droppedAttributesCount":${dropped}`);
  return `{${fields.join(',')}}`;
}

/** Span.Event { fixed64 time_unix_nano = 1; name = 2; attributes = 3; dropped_attributes_count = 4; } */
function spanEvent(r: WireReader, end: number): string {
  let time = '0';
  let name = JSON_EMPTY_STRING;
  let attributes = '';
  let dropped = 0;
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((1 << 3) | WIRE_FIXED64)) {
      r.fixed64(end);
      time = r.unsignedDecimal();
    } else if (tag === ((2 << 3) | WIRE_LEN)) name = r.jsonString(end);
    else if (tag === ((3 << 3) | WIRE_LEN)) {
      const kvEnd = r.lengthEnd(end);
      const kv = keyValue(r, kvEnd);
      r.pos = kvEnd;
      attributes = attributes === '' ? kv : `${attributes},${kv}`;
    } else if (tag === ((4 << 3) | WIRE_VARINT)) dropped = r.uint32(end);
    else r.skip(tag & 7, end);
  }
  let out = `{"timeUnixNano":"${time}","name":${name}`;
  if (attributes !== '') out += `,"attributes":[${attributes}]`;
  if (dropped !== 0) out += `,"droppedAttributesCount":${dropped}`;
  return `${out}}`;
}

/** Span.Link { trace_id = 1; span_id = 2; trace_state = 3; attributes = 4; dropped_attributes_count = 5; fixed32 flags = 6; } */
function spanLink(r: WireReader, end: number): string {
  let traceId = '';
  let spanId = '';
  let traceState = JSON_EMPTY_STRING;
  let attributes = '';
  let dropped = 0;
  let flags = 0;
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((1 << 3) | WIRE_LEN)) traceId = r.hex(end);
    else if (tag === ((2 << 3) | WIRE_LEN)) spanId = r.hex(end);
    else if (tag === ((3 << 3) | WIRE_LEN)) traceState = r.jsonString(end);
    else if (tag === ((4 << 3) | WIRE_LEN)) {
      const kvEnd = r.lengthEnd(end);
      const kv = keyValue(r, kvEnd);
      r.pos = kvEnd;
      attributes = attributes === '' ? kv : `${attributes},${kv}`;
    } else if (tag === ((5 << 3) | WIRE_VARINT)) dropped = r.uint32(end);
    else if (tag === ((6 << 3) | WIRE_FIXED32)) flags = r.fixed32(end);
    else r.skip(tag & 7, end);
  }
  let out = `{"traceId":"${traceId}","spanId":"${spanId}"`;
  if (traceState !== JSON_EMPTY_STRING) out += `,"traceState":${traceState}`;
  if (attributes !== '') out += `,"attributes":[${attributes}]`;
  if (dropped !== 0) out += `,"droppedAttributesCount":${dropped}`;
  if (flags !== 0) out += `,"flags":${flags}`;
  return `${out}}`;
}

/** Status { string message = 2; StatusCode code = 3; } */
function status(r: WireReader, end: number): string {
  let message = JSON_EMPTY_STRING;
  let code = 0;
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((2 << 3) | WIRE_LEN)) message = r.jsonString(end);
    else if (tag === ((3 << 3) | WIRE_VARINT)) code = r.uint32(end) | 0;
    else r.skip(tag & 7, end);
  }
  if (message === JSON_EMPTY_STRING) return code === 0 ? '{}' : `{"code":${code}}`;
  return code === 0 ? `{"message":${message}}` : `{"message":${message},"code":${code}}`;
}

function span(r: WireReader, end: number): string {
  let traceId = '';
  let spanId = '';
  let traceState = JSON_EMPTY_STRING;
  let parentSpanId = '';
  let flags = 0;
  let name = JSON_EMPTY_STRING;
  let kind = 0;
  let start = '0';
  let finish = '0';
  let attributes = '';
  let droppedAttributes = 0;
  let events = '';
  let droppedEvents = 0;
  let links = '';
  let droppedLinks = 0;
  let spanStatus: string | undefined;
  while (r.pos < end) {
    const tag = r.uint32(end);
    switch (tag) {
      case (1 << 3) | WIRE_LEN:
        traceId = r.hex(end);
        break;
      case (2 << 3) | WIRE_LEN:
        spanId = r.hex(end);
        break;
      case (3 << 3) | WIRE_LEN:
        traceState = r.jsonString(end);
        break;
      case (4 << 3) | WIRE_LEN:
        parentSpanId = r.hex(end);
        break;
      case (5 << 3) | WIRE_LEN:
        name = r.jsonString(end);
        break;
      case (6 << 3) | WIRE_VARINT:
        kind = r.uint32(end) | 0;
        break;
      case (7 << 3) | WIRE_FIXED64:
        r.fixed64(end);
        start = r.unsignedDecimal();
        break;
      case (8 << 3) | WIRE_FIXED64:
        r.fixed64(end);
        finish = r.unsignedDecimal();
        break;
      case (9 << 3) | WIRE_LEN: {
        const kvEnd = r.lengthEnd(end);
        const kv = keyValue(r, kvEnd);
        r.pos = kvEnd;
        attributes = attributes === '' ? kv : `${attributes},${kv}`;
        break;
      }
      case (10 << 3) | WIRE_VARINT:
        droppedAttributes = r.uint32(end);
        break;
      case (11 << 3) | WIRE_LEN: {
        const eventEnd = r.lengthEnd(end);
        const event = spanEvent(r, eventEnd);
        r.pos = eventEnd;
        events = events === '' ? event : `${events},${event}`;
        break;
      }
      case (12 << 3) | WIRE_VARINT:
        droppedEvents = r.uint32(end);
        break;
      case (13 << 3) | WIRE_LEN: {
        const linkEnd = r.lengthEnd(end);
        const link = spanLink(r, linkEnd);
        r.pos = linkEnd;
        links = links === '' ? link : `${links},${link}`;
        break;
      }
      case (14 << 3) | WIRE_VARINT:
        droppedLinks = r.uint32(end);
        break;
      case (15 << 3) | WIRE_LEN: {
        const statusEnd = r.lengthEnd(end);
        spanStatus = status(r, statusEnd);
        r.pos = statusEnd;
        break;
      }
      case (16 << 3) | WIRE_FIXED32:
        flags = r.fixed32(end);
        break;
      default:
        r.skip(tag & 7, end);
    }
  }
  let out = `{"traceId":"${traceId}","spanId":"${spanId}","name":${name},"kind":${kind},"startTimeUnixNano":"${start}","endTimeUnixNano":"${finish}"`;
  if (traceState !== JSON_EMPTY_STRING) out += `,"traceState":${traceState}`;
  if (parentSpanId !== '') out += `,"parentSpanId":"${parentSpanId}"`;
  if (flags !== 0) out += `,"flags":${flags}`;
  if (attributes !== '') out += `,"attributes":[${attributes}]`;
  if (droppedAttributes !== 0) out += `,"droppedAttributesCount":${droppedAttributes}`;
  if (events !== '') out += `,"events":[${events}]`;
  if (droppedEvents !== 0) out += `,"droppedEventsCount":${droppedEvents}`;
  if (links !== '') out += `,"links":[${links}]`;
  if (droppedLinks !== 0) out += `,"droppedLinksCount":${droppedLinks}`;
  if (spanStatus !== undefined) out += `,"status":${spanStatus}`;
  return `${out}}`;
}

/** ScopeSpans { scope = 1; repeated Span spans = 2; schema_url = 3; }: pauses after each span. */
function* scopeSpans(r: WireReader, end: number): Generator<void, string, void> {
  let spans = '';
  let scopeJson: string | undefined;
  let schemaUrl = JSON_EMPTY_STRING;
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((2 << 3) | WIRE_LEN)) {
      const spanEnd = r.lengthEnd(end);
      const s = span(r, spanEnd);
      r.pos = spanEnd;
      spans = spans === '' ? s : `${spans},${s}`;
      yield;
    } else if (tag === ((1 << 3) | WIRE_LEN)) {
      const scopeEnd = r.lengthEnd(end);
      scopeJson = scope(r, scopeEnd);
      r.pos = scopeEnd;
    } else if (tag === ((3 << 3) | WIRE_LEN)) schemaUrl = r.jsonString(end);
    else r.skip(tag & 7, end);
  }
  let out = `{"spans":[${spans}]`;
  if (scopeJson !== undefined) out += `,"scope":${scopeJson}`;
  if (schemaUrl !== JSON_EMPTY_STRING) out += `,"schemaUrl":${schemaUrl}`;
  return `${out}}`;
}

/** ResourceSpans { resource = 1; repeated ScopeSpans scope_spans = 2; schema_url = 3; } */
function* resourceSpans(r: WireReader, end: number): Generator<void, string, void> {
  let scopes = '';
  let resourceJson: string | undefined;
  let schemaUrl = JSON_EMPTY_STRING;
  while (r.pos < end) {
    const tag = r.uint32(end);
    if (tag === ((2 << 3) | WIRE_LEN)) {
      const scopeEnd = r.lengthEnd(end);
      const ss = yield* scopeSpans(r, scopeEnd);
      r.pos = scopeEnd;
      scopes = scopes === '' ? ss : `${scopes},${ss}`;
    } else if (tag === ((1 << 3) | WIRE_LEN)) {
      const resourceEnd = r.lengthEnd(end);
      resourceJson = resource(r, resourceEnd);
      r.pos = resourceEnd;
    } else if (tag === ((3 << 3) | WIRE_LEN)) schemaUrl = r.jsonString(end);
    else r.skip(tag & 7, end);
  }
  let out = `{"scopeSpans":[${scopes}]`;
  if (resourceJson !== undefined) out += `,"resource":${resourceJson}`;
  if (schemaUrl !== JSON_EMPTY_STRING) out += `,"schemaUrl":${schemaUrl}`;
  return `${out}}`;
}

/**
 * The ResourceSpans of several encoded requests, as one comma-joined list.
 * Repeated fields concatenate on the wire, so this is the JSON of their
 * concatenation without copying them into one buffer first.
 */
function* requestsBody(requests: readonly Uint8Array[]): Generator<void, string, void> {
  let out = '';
  for (const bytes of requests) {
    const r = new WireReader(bytes);
    const end = bytes.byteLength;
    while (r.pos < end) {
      const tag = r.uint32(end);
      if (tag === ((1 << 3) | WIRE_LEN)) {
        const rsEnd = r.lengthEnd(end);
        const rs = yield* resourceSpans(r, rsEnd);
        r.pos = rsEnd;
        out = out === '' ? rs : `${out},${rs}`;
      } else r.skip(tag & 7, end);
    }
  }
  return `{"resourceSpans":[${out}]}`;
}

/** OTLP/JSON of the encoded requests, merged into one, all at once. */
export function transcodeToJson(requests: readonly Uint8Array[]): string {
  const walk = requestsBody(requests);
  for (;;) {
    const step = walk.next();
    if (step.done === true) return step.value;
  }
}

/**
 * As transcodeToJson, cut into slices of at most `sliceMs` of work (checked
 * after each span) with a turn of the event loop between them, so that a
 * large batch never holds the loop that serves requests for longer.
 */
export async function transcodeToJsonSliced(requests: readonly Uint8Array[], sliceMs: number): Promise<string> {
  const walk = requestsBody(requests);
  let deadline = performance.now() + sliceMs;
  for (;;) {
    const step = walk.next();
    if (step.done === true) return step.value;
    if (performance.now() >= deadline) {
      await nextTurn();
      deadline = performance.now() + sliceMs;
    }
  }
}
