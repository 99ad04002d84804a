// Protobuf ExportTraceServiceRequest bytes -> OTLP/JSON bytes, read straight
// from the wire and written straight into one output buffer (DESIGN section
// 9): no protobufjs message objects, no Long, no model, and no string per
// field, so a batch leaves almost nothing for the garbage collector. The
// output is exactly what stringifyRequest(decodeRequest(bytes)) writes, key
// order included; the tests hold the two to that on the same requests.
//
// Each message is read twice: a first pass notes its singular fields (the
// last occurrence wins, as in protobufjs) and counts its repeated ones, then
// the JSON is written in the codec's key order, walking the message again for
// each repeated field. The walk is a generator that pauses after every span,
// so a caller on the request loop can cut a large batch into slices
// (transcodeToJsonSliced) while tests run it to the end at once.
import { WIRE_FIXED32, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT, WireReader, type RawBuffer } from './wire-reader.js';
import { LoopSlices } from '../shared/loop-slices.js';
import { takeRememberedResourceSpans, rememberJson } from './json-reuse.js';

const TWO_POW_32 = 4294967296;
const MAX_EXACT_HIGH = 0x1fffff; // hi words up to this keep hi * 2^32 + lo below 2^53
const BILLION = 1_000_000_000;
const INITIAL_OUTPUT_FACTOR = 3; // JSON output bytes per input byte, a first guess
const COPY_PIECE_BYTES = 256 * 1024; // remembered JSON copied between two chances to yield
const NONE = -1;

const tag = (field: number, wireType: number): number => (field << 3) | wireType;

const HEX_PAIRS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).map((pair) => [pair.charCodeAt(0), pair.charCodeAt(1)] as const);
const SHORT_ESCAPES: Readonly<Record<number, string>> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/** A growing output buffer. */
class JsonOut {
  buf: RawBuffer;
  pos = 0;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(Math.max(capacity, 256)) as RawBuffer;
  }

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes)) as RawBuffer;
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** ASCII text (keys, punctuation, digits). */
  raw(text: string): void {
    const n = text.length;
    this.ensure(n);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  byte(value: number): void {
    this.ensure(1);
    this.buf[this.pos++] = value;
  }

  /** JSON text written before. */
  bytes(text: Uint8Array): void {
    this.ensure(text.byteLength);
    this.buf.set(text, this.pos);
    this.pos += text.byteLength;
  }

  /** A non-negative integer below 2^53, in decimal, without making a string. */
  uint(value: number): void {
    if (value < BILLION) {
      this.#belowBillion(value);
      return;
    }
    let high = Math.floor(value / BILLION);
    let low = value - high * BILLION;
    // The division rounds: near a multiple of 10^9 the quotient can be off by one.
    if (low < 0) {
      high -= 1;
      low += BILLION;
    } else if (low >= BILLION) {
      high += 1;
      low -= BILLION;
    }
    this.#belowBillion(high);
    this.#nineDigits(low);
  }

  /** A 32-bit signed integer (an enum's value), in decimal. */
  int32(value: number): void {
    if (value < 0) this.byte(0x2d);
    this.uint(Math.abs(value));
  }

  /** `key` then a non-negative integer. */
  keyedUint(key: string, value: number): void {
    this.raw(key);
    this.uint(value);
  }

  /** The unsigned 64-bit integer hi * 2^32 + lo, in decimal. */
  uint64(lo: number, hi: number): void {
    if (hi <= MAX_EXACT_HIGH) {
      this.uint(hi * TWO_POW_32 + lo);
      return;
    }
    // Long division by 10^9 over 16-bit limbs: every step stays below 2^53,
    // and so does the quotient (below 2^64 / 10^9).
    let current = hi >>> 16;
    let quotient = 0;
    for (let limb = 0; limb < 4; limb++) {
      const digit = Math.floor(current / BILLION);
      const rest = current - digit * BILLION;
      quotient = quotient * 65536 + digit;
      if (limb === 3) {
        this.uint(quotient);
        this.#nineDigits(rest);
        return;
      }
      const next = limb === 0 ? hi & 0xffff : limb === 1 ? lo >>> 16 : lo & 0xffff;
      current = rest * 65536 + next;
    }
  }

  /** The two's complement 64-bit integer in hi and lo, in decimal. */
  int64(lo: number, hi: number): void {
    if (hi < 0x80000000) {
      this.uint64(lo, hi);
      return;
    }
    const negatedLo = (~lo + 1) >>> 0;
    const negatedHi = (~hi + (negatedLo === 0 ? 1 : 0)) >>> 0;
    this.byte(0x2d);
    this.uint64(negatedLo, negatedHi);
  }

  #belowBillion(value: number): void {
    let digits = 1;
    for (let limit = 10; limit <= value; limit *= 10) digits++;
    this.ensure(digits);
    const buf = this.buf;
    let pos = this.pos + digits;
    this.pos = pos;
    let rest = value;
    do {
      const next = (rest / 10) | 0;
      buf[--pos] = 0x30 + rest - next * 10;
      rest = next;
    } while (rest > 0);
  }

  #nineDigits(value: number): void {
    this.ensure(9);
    const buf = this.buf;
    let pos = this.pos + 9;
    this.pos = pos;
    let rest = value;
    for (let i = 0; i < 9; i++) {
      const next = (rest / 10) | 0;
      buf[--pos] = 0x30 + rest - next * 10;
      rest = next;
    }
  }

  /** The bytes [start, end) of `src` as a JSON string literal, escaped as JSON.stringify escapes. */
  string(src: RawBuffer, start: number, end: number): void {
    // Worst case for ASCII: every byte a \u00XX escape, plus the quotes.
    this.ensure((end - start) * 6 + 2);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = 0x22;
    for (let i = start; i < end; i++) {
      const byte = src[i] as number;
      if (byte >= 0x20 && byte !== 0x22 && byte !== 0x5c && byte < 0x80) {
        buf[pos++] = byte;
        continue;
      }
      if (byte >= 0x80) {
        // Non-ASCII: decode and escape as the codec does (invalid UTF-8 becomes
        // U+FFFD). this.pos has not moved, so the literal starts over.
        this.#unicodeString(src, start, end);
        return;
      }
      const short = SHORT_ESCAPES[byte];
      const escape = short ?? `\\u00${(HEX_PAIRS[byte] as readonly [number, number]).map((c) => String.fromCharCode(c)).join('')}`;
      for (let k = 0; k < escape.length; k++) buf[pos++] = escape.charCodeAt(k);
    }
    buf[pos++] = 0x22;
    this.pos = pos;
  }

  #unicodeString(src: RawBuffer, start: number, end: number): void {
    const literal = JSON.stringify(src.utf8Slice(start, end));
    this.ensure(Buffer.byteLength(literal));
    this.pos += this.buf.utf8Write(literal, this.pos);
  }

  hex(src: Buffer, start: number, end: number): void {
    this.ensure((end - start) * 2);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = start; i < end; i++) {
      const pair = HEX_PAIRS[src[i] as number] as readonly [number, number];
      buf[pos++] = pair[0];
      buf[pos++] = pair[1];
    }
    this.pos = pos;
  }

  /** Leading comma for every list element but the first. */
  comma(first: boolean): void {
    if (!first) this.byte(0x2c);
  }
}

/** Writes every length-delimited field `wanted` of the message [start, end) with `write`, comma-separated. */
function eachField(r: WireReader, out: JsonOut, start: number, end: number, wanted: number, write: (r: WireReader, out: JsonOut, end: number) => void): void {
  r.pos = start;
  let first = true;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === wanted) {
      const fieldEnd = r.lengthEnd(end);
      out.comma(first);
      first = false;
      write(r, out, fieldEnd);
      r.pos = fieldEnd;
    } else r.skip(t & 7, end);
  }
  r.pos = end;
}

/** `key` (ending in "[") then the list eachField writes, closed. */
function list(r: WireReader, out: JsonOut, key: string, start: number, end: number, wanted: number, write: (r: WireReader, out: JsonOut, end: number) => void): void {
  out.raw(key);
  eachField(r, out, start, end, wanted, write);
  out.byte(0x5d);
}

/** `key` and the string [start, end) of `src`, when it is not empty. */
function optionalString(out: JsonOut, key: string, src: RawBuffer, start: number, end: number): void {
  if (end <= start) return;
  out.raw(key);
  out.string(src, start, end);
}

function jsonDouble(value: number): string {
  // -0 keeps its sign, as in stringifyRequest and the collector (Go's
  // strconv writes -0); JSON.stringify would write 0.
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  // proto3 JSON spells non-finite doubles as strings, as stringifyRequest does.
  // JSON.stringify writes the same digits as String() without going through
  // V8's number-string cache, whose entries outlive the young generation.
  return Number.isFinite(value) ? JSON.stringify(value) : `"${String(value)}"`;
}

/** AnyValue: the last member of the oneof present wins. */
function anyValue(r: WireReader, out: JsonOut, end: number): void {
  let field = 0;
  let at = 0;
  let number = 0;
  let lo = 0;
  let hi = 0;
  let contentEnd = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    switch (t) {
      case tag(1, WIRE_LEN):
      case tag(5, WIRE_LEN):
      case tag(6, WIRE_LEN):
      case tag(7, WIRE_LEN):
        contentEnd = r.lengthEnd(end);
        field = t >>> 3;
        at = r.pos;
        r.pos = contentEnd;
        break;
      case tag(2, WIRE_VARINT):
      case tag(3, WIRE_VARINT):
        r.varint64(end);
        field = t >>> 3;
        lo = r.lo;
        hi = r.hi;
        break;
      case tag(4, WIRE_FIXED64):
        number = r.double(end);
        field = 4;
        break;
      default:
        r.skip(t & 7, end);
    }
  }
  switch (field) {
    case 1:
      out.raw('{"stringValue":');
      out.string(r.buf, at, contentEnd);
      out.byte(0x7d);
      break;
    case 2:
      out.raw(lo !== 0 || hi !== 0 ? '{"boolValue":true}' : '{"boolValue":false}');
      break;
    case 3:
      out.raw('{"intValue":"');
      out.int64(lo, hi);
      out.raw('"}');
      break;
    case 4:
      out.raw('{"doubleValue":');
      out.raw(jsonDouble(number));
      out.byte(0x7d);
      break;
    case 5:
      out.raw('{"arrayValue":{"values":[');
      eachField(r, out, at, contentEnd, tag(1, WIRE_LEN), anyValue);
      out.raw(']}}');
      break;
    case 6:
      out.raw('{"kvlistValue":{"values":[');
      eachField(r, out, at, contentEnd, tag(1, WIRE_LEN), keyValue);
      out.raw(']}}');
      break;
    case 7:
      out.raw(`{"bytesValue":"${r.buf.base64Slice(at, contentEnd)}"}`);
      break;
    default:
      out.raw('{}');
  }
  r.pos = end;
}

function keyValue(r: WireReader, out: JsonOut, end: number): void {
  let keyStart = 0;
  let keyEnd = 0;
  let valueStart = NONE;
  let valueEnd = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(1, WIRE_LEN)) {
      keyStart = r.delimited(end);
      keyEnd = r.contentEnd;
    } else if (t === tag(2, WIRE_LEN)) {
      valueStart = r.delimited(end);
      valueEnd = r.contentEnd;
    } else r.skip(t & 7, end);
  }
  out.raw('{"key":');
  out.string(r.buf, keyStart, keyEnd);
  out.raw(',"value":');
  if (valueStart === NONE) out.raw('{}');
  else {
    r.pos = valueStart;
    anyValue(r, out, valueEnd);
  }
  out.byte(0x7d);
  r.pos = end;
}

/** Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; } */
function resource(r: WireReader, out: JsonOut, end: number): void {
  const start = r.pos;
  let dropped = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(2, WIRE_VARINT)) dropped = r.uint32(end);
    else r.skip(t & 7, end);
  }
  out.raw('{"attributes":[');
  eachField(r, out, start, end, tag(1, WIRE_LEN), keyValue);
  if (dropped === 0) out.raw(']}');
  else {
    out.keyedUint('],"droppedAttributesCount":', dropped);
    out.byte(0x7d);
  }
}

/** InstrumentationScope { name = 1; version = 2; repeated attributes = 3; dropped_attributes_count = 4; } */
function scope(r: WireReader, out: JsonOut, end: number): void {
  const start = r.pos;
  let nameStart = 0;
  let nameEnd = 0;
  let versionStart = 0;
  let versionEnd = 0;
  let attributes = 0;
  let dropped = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(1, WIRE_LEN)) {
      nameStart = r.delimited(end);
      nameEnd = r.contentEnd;
    } else if (t === tag(2, WIRE_LEN)) {
      versionStart = r.delimited(end);
      versionEnd = r.contentEnd;
    } else if (t === tag(3, WIRE_LEN)) {
      attributes++;
      r.pos = r.lengthEnd(end);
    } else if (t === tag(4, WIRE_VARINT)) dropped = r.uint32(end);
    else r.skip(t & 7, end);
  }
  let first = true;
  out.byte(0x7b);
  if (nameEnd > nameStart) {
    out.raw('"name":');
    out.string(r.buf, nameStart, nameEnd);
    first = false;
  }
  if (versionEnd > versionStart) {
    out.comma(first);
    out.raw('"version":');
    out.string(r.buf, versionStart, versionEnd);
    first = false;
  }
  if (attributes > 0) {
    out.comma(first);
    list(r, out, '"attributes":[', start, end, tag(3, WIRE_LEN), keyValue);
    first = false;
  }
  if (dropped !== 0) {
    out.comma(first);
    out.keyedUint('"droppedAttributesCount":', dropped);
  }
  out.byte(0x7d);
  r.pos = end;
}

/** Span.Event { fixed64 time_unix_nano = 1; name = 2; repeated attributes = 3; dropped_attributes_count = 4; } */
function spanEvent(r: WireReader, out: JsonOut, end: number): void {
  const start = r.pos;
  let timeLo = 0;
  let timeHi = 0;
  let nameStart = 0;
  let nameEnd = 0;
  let attributes = 0;
  let dropped = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(1, WIRE_FIXED64)) {
      r.fixed64(end);
      timeLo = r.lo;
      timeHi = r.hi;
    } else if (t === tag(2, WIRE_LEN)) {
      nameStart = r.delimited(end);
      nameEnd = r.contentEnd;
    } else if (t === tag(3, WIRE_LEN)) {
      attributes++;
      r.pos = r.lengthEnd(end);
    } else if (t === tag(4, WIRE_VARINT)) dropped = r.uint32(end);
    else r.skip(t & 7, end);
  }
  out.raw('{"timeUnixNano":"');
  out.uint64(timeLo, timeHi);
  out.raw('","name":');
  out.string(r.buf, nameStart, nameEnd);
  if (attributes > 0) list(r, out, ',"attributes":[', start, end, tag(3, WIRE_LEN), keyValue);
  if (dropped !== 0) out.keyedUint(',"droppedAttributesCount":', dropped);
  out.byte(0x7d);
  r.pos = end;
}

/** Span.Link { trace_id = 1; span_id = 2; trace_state = 3; repeated attributes = 4; dropped_attributes_count = 5; fixed32 flags = 6; } */
function spanLink(r: WireReader, out: JsonOut, end: number): void {
  const start = r.pos;
  let traceStart = 0;
  let traceEnd = 0;
  let spanStart = 0;
  let spanEnd = 0;
  let stateStart = 0;
  let stateEnd = 0;
  let attributes = 0;
  let dropped = 0;
  let flags = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(1, WIRE_LEN)) {
      traceStart = r.delimited(end);
      traceEnd = r.contentEnd;
    } else if (t === tag(2, WIRE_LEN)) {
      spanStart = r.delimited(end);
      spanEnd = r.contentEnd;
    } else if (t === tag(3, WIRE_LEN)) {
      stateStart = r.delimited(end);
      stateEnd = r.contentEnd;
    } else if (t === tag(4, WIRE_LEN)) {
      attributes++;
      r.pos = r.lengthEnd(end);
    } else if (t === tag(5, WIRE_VARINT)) dropped = r.uint32(end);
    else if (t === tag(6, WIRE_FIXED32)) flags = r.fixed32(end);
    else r.skip(t & 7, end);
  }
  out.raw('{"traceId":"');
  out.hex(r.buf, traceStart, traceEnd);
  out.raw('","spanId":"');
  out.hex(r.buf, spanStart, spanEnd);
  out.byte(0x22);
  optionalString(out, ',"traceState":', r.buf, stateStart, stateEnd);
  if (attributes > 0) list(r, out, ',"attributes":[', start, end, tag(4, WIRE_LEN), keyValue);
  if (dropped !== 0) out.keyedUint(',"droppedAttributesCount":', dropped);
  if (flags !== 0) out.keyedUint(',"flags":', flags);
  out.byte(0x7d);
  r.pos = end;
}

/** Status { string message = 2; StatusCode code = 3; } */
function status(r: WireReader, out: JsonOut, end: number): void {
  let messageStart = 0;
  let messageEnd = 0;
  let code = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(2, WIRE_LEN)) {
      messageStart = r.delimited(end);
      messageEnd = r.contentEnd;
    } else if (t === tag(3, WIRE_VARINT)) code = r.uint32(end) | 0;
    else r.skip(t & 7, end);
  }
  out.byte(0x7b);
  if (messageEnd > messageStart) {
    out.raw('"message":');
    out.string(r.buf, messageStart, messageEnd);
    if (code !== 0) out.raw(',"code":');
  } else if (code !== 0) out.raw('"code":');
  if (code !== 0) out.int32(code);
  out.byte(0x7d);
  r.pos = end;
}

function span(r: WireReader, out: JsonOut, end: number): void {
  const start = r.pos;
  let traceStart = 0;
  let traceEnd = 0;
  let spanStart = 0;
  let spanEnd = 0;
  let stateStart = 0;
  let stateEnd = 0;
  let parentStart = 0;
  let parentEnd = 0;
  let nameStart = 0;
  let nameEnd = 0;
  let flags = 0;
  let kind = 0;
  let startLo = 0;
  let startHi = 0;
  let endLo = 0;
  let endHi = 0;
  let attributes = 0;
  let droppedAttributes = 0;
  let events = 0;
  let droppedEvents = 0;
  let links = 0;
  let droppedLinks = 0;
  let statusStart = NONE;
  let statusEnd = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    switch (t) {
      case tag(1, WIRE_LEN):
        traceStart = r.delimited(end);
        traceEnd = r.contentEnd;
        break;
      case tag(2, WIRE_LEN):
        spanStart = r.delimited(end);
        spanEnd = r.contentEnd;
        break;
      case tag(3, WIRE_LEN):
        stateStart = r.delimited(end);
        stateEnd = r.contentEnd;
        break;
      case tag(4, WIRE_LEN):
        parentStart = r.delimited(end);
        parentEnd = r.contentEnd;
        break;
      case tag(5, WIRE_LEN):
        nameStart = r.delimited(end);
        nameEnd = r.contentEnd;
        break;
      case tag(6, WIRE_VARINT):
        kind = r.uint32(end) | 0;
        break;
      case tag(7, WIRE_FIXED64):
        r.fixed64(end);
        startLo = r.lo;
        startHi = r.hi;
        break;
      case tag(8, WIRE_FIXED64):
        r.fixed64(end);
        endLo = r.lo;
        endHi = r.hi;
        break;
      case tag(9, WIRE_LEN):
        attributes++;
        r.pos = r.lengthEnd(end);
        break;
      case tag(10, WIRE_VARINT):
        droppedAttributes = r.uint32(end);
        break;
      case tag(11, WIRE_LEN):
        events++;
        r.pos = r.lengthEnd(end);
        break;
      case tag(12, WIRE_VARINT):
        droppedEvents = r.uint32(end);
        break;
      case tag(13, WIRE_LEN):
        links++;
        r.pos = r.lengthEnd(end);
        break;
      case tag(14, WIRE_VARINT):
        droppedLinks = r.uint32(end);
        break;
      case tag(15, WIRE_LEN):
        statusStart = r.delimited(end);
        statusEnd = r.contentEnd;
        break;
      case tag(16, WIRE_FIXED32):
        flags = r.fixed32(end);
        break;
      default:
        r.skip(t & 7, end);
    }
  }
  out.raw('{"traceId":"');
  out.hex(r.buf, traceStart, traceEnd);
  out.raw('","spanId":"');
  out.hex(r.buf, spanStart, spanEnd);
  out.raw('","name":');
  out.string(r.buf, nameStart, nameEnd);
  out.raw(',"kind":');
  out.int32(kind);
  out.raw(',"startTimeUnixNano":"');
  out.uint64(startLo, startHi);
  out.raw('","endTimeUnixNano":"');
  out.uint64(endLo, endHi);
  out.byte(0x22);
  optionalString(out, ',"traceState":', r.buf, stateStart, stateEnd);
  if (parentEnd > parentStart) {
    out.raw(',"parentSpanId":"');
    out.hex(r.buf, parentStart, parentEnd);
    out.byte(0x22);
  }
  if (flags !== 0) out.keyedUint(',"flags":', flags);
  if (attributes > 0) list(r, out, ',"attributes":[', start, end, tag(9, WIRE_LEN), keyValue);
  if (droppedAttributes !== 0) out.keyedUint(',"droppedAttributesCount":', droppedAttributes);
  if (events > 0) list(r, out, ',"events":[', start, end, tag(11, WIRE_LEN), spanEvent);
  if (droppedEvents !== 0) out.keyedUint(',"droppedEventsCount":', droppedEvents);
  if (links > 0) list(r, out, ',"links":[', start, end, tag(13, WIRE_LEN), spanLink);
  if (droppedLinks !== 0) out.keyedUint(',"droppedLinksCount":', droppedLinks);
  if (statusStart !== NONE) {
    out.raw(',"status":');
    r.pos = statusStart;
    status(r, out, statusEnd);
  }
  out.byte(0x7d);
  r.pos = end;
}

/**
 * ResourceSpans { resource = 1; repeated ScopeSpans scope_spans = 2; schema_url = 3; } and
 * ScopeSpans { scope = 1; repeated Span spans = 2; schema_url = 3; } share one shape: a
 * singular head message, a repeated child list and a schema URL.
 */
interface SpanContainer {
  readonly open: string;
  readonly headKey: string;
  readonly head: (r: WireReader, out: JsonOut, end: number) => void;
  /** The container the children are, or null when they are spans. */
  readonly inner: SpanContainer | null;
}

const SCOPE_SPANS: SpanContainer = { open: '{"spans":[', headKey: ',"scope":', head: scope, inner: null };
const RESOURCE_SPANS: SpanContainer = { open: '{"scopeSpans":[', headKey: ',"resource":', head: resource, inner: SCOPE_SPANS };

/** One ResourceSpans or ScopeSpans message, as `c` describes; pauses after each span. */
function* spanContainer(r: WireReader, out: JsonOut, end: number, c: SpanContainer): Generator<void, void, void> {
  const start = r.pos;
  let headStart = NONE;
  let headEnd = 0;
  let schemaStart = 0;
  let schemaEnd = 0;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(1, WIRE_LEN)) {
      headStart = r.delimited(end);
      headEnd = r.contentEnd;
    } else if (t === tag(3, WIRE_LEN)) {
      schemaStart = r.delimited(end);
      schemaEnd = r.contentEnd;
    } else r.skip(t & 7, end);
  }
  out.raw(c.open);
  r.pos = start;
  let first = true;
  while (r.pos < end) {
    const t = r.uint32(end);
    if (t === tag(2, WIRE_LEN)) {
      const childEnd = r.lengthEnd(end);
      out.comma(first);
      first = false;
      if (c.inner === null) {
        span(r, out, childEnd);
        r.pos = childEnd;
        yield;
      } else {
        yield* spanContainer(r, out, childEnd, c.inner);
        r.pos = childEnd;
      }
    } else r.skip(t & 7, end);
  }
  out.byte(0x5d);
  if (headStart !== NONE) {
    out.raw(c.headKey);
    r.pos = headStart;
    c.head(r, out, headEnd);
  }
  optionalString(out, ',"schemaUrl":', r.buf, schemaStart, schemaEnd);
  out.byte(0x7d);
  r.pos = end;
}

/**
 * The JSON of several encoded requests as one: repeated fields concatenate
 * on the wire, so this is the JSON of their concatenation, without copying
 * them into one buffer first.
 */
function* requestsJson(requests: readonly Uint8Array[], options: JsonOptions): Generator<void, Buffer, void> {
  const suffix = options.suffix ?? '';
  let inputBytes = 0;
  for (const bytes of requests) inputBytes += bytes.byteLength;
  const out = new JsonOut(inputBytes * INITIAL_OUTPUT_FACTOR);
  out.raw('{"resourceSpans":[');
  let first = true;
  let transcoded = false;
  for (const bytes of requests) {
    // Another output's transcoding of these very bytes (json-reuse.ts) is copied, not redone.
    const known = takeRememberedResourceSpans(bytes);
    if (known !== undefined) {
      if (known.json.byteLength === 0) continue;
      const copyStart = out.pos;
      out.comma(first);
      // A batch of 8 MiB copies tens of MiB into fresh pages: a chance to yield after every piece.
      for (let at = 0; at < known.json.byteLength; at += COPY_PIECE_BYTES) {
        out.bytes(known.json.subarray(at, at + COPY_PIECE_BYTES));
        yield;
      }
      if (known.intact()) {
        first = false;
        continue;
      }
      // Lines remembered during those turns wrote over it in the ring: transcoded below instead.
      out.pos = copyStart;
    }
    transcoded = true;
    const r = new WireReader(bytes);
    const end = bytes.byteLength;
    while (r.pos < end) {
      const t = r.uint32(end);
      if (t === tag(1, WIRE_LEN)) {
        const rsEnd = r.lengthEnd(end);
        out.comma(first);
        first = false;
        yield* spanContainer(r, out, rsEnd, RESOURCE_SPANS);
        r.pos = rsEnd;
      } else r.skip(t & 7, end);
    }
  }
  out.raw(']}');
  out.raw(suffix);
  const json = out.buf.subarray(0, out.pos);
  if (options.remember === true && transcoded && requests.length === 1) rememberJson(requests[0] as Uint8Array, json, suffix.length);
  return json;
}

export interface JsonOptions {
  /** Ends the output (a line's newline); ASCII. */
  readonly suffix?: string;
  /**
   * Keeps the JSON of a lone request for the queued outputs that will want
   * the same bytes as JSON later (json-reuse.ts): the `file` exporter's lines.
   */
  readonly remember?: boolean;
}

/** OTLP/JSON (UTF-8) of the encoded requests, merged into one, all at once. */
export function transcodeToJson(requests: readonly Uint8Array[], options: JsonOptions = {}): Buffer {
  const walk = requestsJson(requests, options);
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
export async function transcodeToJsonSliced(requests: readonly Uint8Array[], sliceMs: number, options: JsonOptions = {}): Promise<Buffer> {
  const walk = requestsJson(requests, options);
  const slices = await LoopSlices.start(sliceMs);
  for (;;) {
    const step = walk.next();
    if (step.done === true) return step.value;
    if (slices.due) await slices.turn();
  }
}
