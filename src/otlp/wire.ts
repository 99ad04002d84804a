// The protobuf hot path. An ExportTraceServiceRequest is scanned, not
// decoded: the index records where each ResourceSpans, Resource, ScopeSpans
// and Span lies in the buffer, plus the few span fields routing needs (trace
// id, parent presence, kind). Stamping a resource rewrites only that field;
// filtering spans copies the kept spans' bytes verbatim. Repeated fields
// concatenate on the wire, so requests merge by byte concatenation.
import protobuf from 'protobufjs';
import { MalformedDataError } from '../shared/errors.js';
import { checkResource, checkScope, checkSpan } from './wire-check.js';
import { WireReader } from './wire-reader.js';

// Field numbers from the OTLP trace protos.
const REQUEST_RESOURCE_SPANS = 1;
const RS_RESOURCE = 1;
const RS_SCOPE_SPANS = 2;
const SS_SPANS = 2;
const SPAN_TRACE_ID = 1;
const SPAN_PARENT_SPAN_ID = 4;
const SPAN_KIND = 6;
const WIRE_VARINT = 0;
const WIRE_LEN = 2;
const SS_SCOPE = 1;

/** A byte range [start, end) of the scanned buffer. */
export type Range = readonly [start: number, end: number];

/**
 * The spans of one ScopeSpans, packed six numbers to a span (where its field
 * and content lie, where its trace id lies, its kind and root flag) instead
 * of an object each: a request of tiny spans would otherwise cost the heap
 * several times its own size.
 */
export class SpanTable {
  readonly length: number;
  readonly #bytes: Buffer;
  readonly #cells: Uint32Array;

  constructor(buf: Uint8Array, cells: Uint32Array, length: number) {
    this.#bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.#cells = cells;
    this.length = length;
  }

  /** The whole field (tag, length, content): copied verbatim when kept. */
  field(i: number): Range {
    return [this.fieldStart(i), this.fieldEnd(i)];
  }

  fieldStart(i: number): number {
    return this.#cells[i * CELLS] ?? 0;
  }

  fieldEnd(i: number): number {
    return this.#cells[i * CELLS + 2] ?? 0;
  }

  /** The Span message content, for decoding when a span's attributes are needed. */
  content(i: number): Uint8Array {
    return this.#bytes.subarray(this.#cells[i * CELLS + 1], this.#cells[i * CELLS + 2]);
  }

  traceId(i: number): Uint8Array {
    return this.#bytes.subarray(this.#cells[i * CELLS + 3], this.#cells[i * CELLS + 4]);
  }

  /** The trace id in hex, read without a view of its bytes. */
  traceKey(i: number): string {
    return this.#bytes.toString('hex', this.#cells[i * CELLS + 3], this.#cells[i * CELLS + 4]);
  }

  isRoot(i: number): boolean {
    return ((this.#cells[i * CELLS + 5] ?? 0) & ROOT_FLAG) !== 0;
  }

  kind(i: number): number {
    return (this.#cells[i * CELLS + 5] ?? 0) & KIND_MASK;
  }
}

/** Numbers per span in a SpanTable: field start, content start, end, trace id start and end, kind and root flag. */
const CELLS = 6;
const ROOT_FLAG = 0x8000_0000;
const KIND_MASK = 0x7fff_ffff;

export interface WireScopeSpans {
  readonly field: Range;
  /** Spans in this scope, counted when the request was scanned. */
  readonly spanCount: number;
  /** Fields other than spans (scope, schema_url, unknown), copied verbatim. */
  readonly otherFields: readonly Range[];
  readonly spans: SpanTable;
}

export interface WireResourceSpans {
  readonly field: Range;
  /** The Resource message content, or undefined when the field is absent. */
  readonly resource: Range | undefined;
  /** Fields other than resource and scope_spans (schema_url, unknown). */
  readonly otherFields: readonly Range[];
  readonly scopeSpans: readonly WireScopeSpans[];
}

export interface WireIndex {
  readonly buf: Uint8Array;
  readonly resourceSpans: readonly WireResourceSpans[];
  readonly spanCount: number;
}

function malformed(what: string, err?: unknown): MalformedDataError {
  const detail = err instanceof Error ? `: ${err.message}` : '';
  return new MalformedDataError(`malformed protobuf ExportTraceServiceRequest: ${what}${detail}`);
}

/** Reads the length of a length-delimited field and checks it fits in `end`. */
function lengthDelimited(reader: protobuf.Reader, end: number, what: string): Range {
  const length = reader.uint32();
  const start = reader.pos;
  if (start + length > end) throw malformed(`${what} overruns its container`);
  reader.pos = start + length;
  return [start, start + length];
}

/** As lengthDelimited, for the validating walk: returns only the end, allocating nothing. */
function lengthDelimitedEnd(reader: protobuf.Reader, end: number, what: string): number {
  const length = reader.uint32();
  const contentEnd = reader.pos + length;
  if (contentEnd > end) throw malformed(`${what} overruns its container`);
  return contentEnd;
}

function skip(reader: protobuf.Reader, wireType: number, end: number): void {
  // Groups are proto2's and no OTLP field uses them; skipping one recurses once per nested group.
  if (wireType === 3 || wireType === 4) throw malformed(`wire type ${wireType} is not used by OTLP`);
  reader.skipType(wireType);
  if (reader.pos > end) throw malformed('a field overruns its container');
}

/**
 * An empty id, or all zeros: no valid span id (W3C trace context), so no
 * parent. Some exporters send a root span's unset parent as eight zero bytes.
 */
function isInvalidId(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i] !== 0) return false;
  return true;
}

/** Writes one span's cells at `at` (content is the Span message's range). */
function readSpan(reader: protobuf.Reader, cells: Uint32Array, at: number, fieldStart: number, content: Range): void {
  let traceStart = 0;
  let traceEnd = 0;
  let isRoot = true;
  let kind = 0;
  reader.pos = content[0];
  while (reader.pos < content[1]) {
    const tag = reader.uint32();
    const fieldNumber = tag >>> 3;
    const wireType = tag & 7;
    if (fieldNumber === SPAN_TRACE_ID && wireType === WIRE_LEN) {
      [traceStart, traceEnd] = lengthDelimited(reader, content[1], 'span.trace_id');
    } else if (fieldNumber === SPAN_PARENT_SPAN_ID && wireType === WIRE_LEN) {
      const [s, e] = lengthDelimited(reader, content[1], 'span.parent_span_id');
      isRoot = isInvalidId(reader.buf, s, e);
    } else if (fieldNumber === SPAN_KIND && wireType === WIRE_VARINT) {
      kind = reader.uint32() & KIND_MASK;
    } else {
      skip(reader, wireType, content[1]);
    }
  }
  reader.pos = content[1];
  cells[at] = fieldStart;
  cells[at + 1] = content[0];
  cells[at + 2] = content[1];
  cells[at + 3] = traceStart;
  cells[at + 4] = traceEnd;
  cells[at + 5] = (isRoot ? ROOT_FLAG : 0) | kind;
}

/**
 * A ScopeSpans whose span-level index is built on first use. Stamping
 * resources and forwarding bytes never look at spans; sampling and drains
 * do. The bytes were validated when the request was scanned, so reading
 * them again cannot fail.
 */
class LazyScopeSpans implements WireScopeSpans {
  readonly field: Range;
  readonly spanCount: number;
  readonly #buf: Uint8Array;
  #otherFields: Range[] | undefined;
  #spans: SpanTable | undefined;

  constructor(buf: Uint8Array, field: Range, spanCount: number) {
    this.#buf = buf;
    this.field = field;
    this.spanCount = spanCount;
  }

  get otherFields(): readonly Range[] {
    if (this.#otherFields === undefined) this.#read();
    return this.#otherFields ?? [];
  }

  get spans(): SpanTable {
    if (this.#spans === undefined) this.#read();
    return this.#spans ?? new SpanTable(this.#buf, new Uint32Array(0), 0);
  }

  #read(): void {
    const buf = this.#buf;
    const reader = protobuf.Reader.create(buf);
    const otherFields: Range[] = [];
    const cells = new Uint32Array(this.spanCount * CELLS);
    let count = 0;
    // Skip the ScopeSpans field's own tag and length to reach its content.
    reader.pos = this.field[0];
    reader.uint32();
    const end = lengthDelimitedEnd(reader, this.field[1], 'scope_spans');
    while (reader.pos < end) {
      const fieldStart = reader.pos;
      const tag = reader.uint32();
      if (tag >>> 3 === SS_SPANS && (tag & 7) === WIRE_LEN) {
        const spanContent = lengthDelimited(reader, end, 'span');
        if (count === this.spanCount) throw malformed('scope_spans holds more spans than it was scanned with');
        readSpan(reader, cells, count * CELLS, fieldStart, spanContent);
        count += 1;
      } else {
        skip(reader, tag & 7, end);
        otherFields.push([fieldStart, reader.pos]);
      }
    }
    this.#otherFields = otherFields;
    this.#spans = new SpanTable(buf, cells, count);
  }
}

/**
 * A field's tag, refusing field number 0 and a known field (`known` lists
 * this message's length-delimited ones) sent with another wire type: decoders
 * after this one (a destination's) refuse both.
 */
function tagOf(reader: protobuf.Reader, known: readonly number[], what: string): number {
  const tag = reader.uint32();
  const field = tag >>> 3;
  if (field === 0) throw malformed(`${what} has a field numbered 0`);
  if ((tag & 7) !== WIRE_LEN && known.includes(field)) throw malformed(`${what} field ${field} has wire type ${tag & 7}, not ${WIRE_LEN}`);
  return tag;
}

/** ScopeSpans' and ResourceSpans' length-delimited fields: scope or resource 1, scope_spans or spans 2, schema_url 3. */
const CONTAINER_FIELDS = [1, 2, 3];

/** Walks a ScopeSpans down to its spans (their contents too, with `checker`); returns how many spans it holds. */
function validateScopeSpans(reader: protobuf.Reader, end: number, checker: WireReader | undefined): number {
  let spans = 0;
  while (reader.pos < end) {
    const tag = tagOf(reader, CONTAINER_FIELDS, 'scope_spans');
    const field = tag >>> 3;
    if (field === SS_SPANS || field === SS_SCOPE) {
      const contentEnd = lengthDelimitedEnd(reader, end, field === SS_SPANS ? 'span' : 'scope');
      if (field === SS_SPANS) spans += 1;
      if (checker !== undefined) {
        if (field === SS_SPANS) checkSpan(checker, reader.pos, contentEnd);
        else checkScope(checker, reader.pos, contentEnd);
      }
      reader.pos = contentEnd;
    } else {
      skip(reader, tag & 7, end);
    }
  }
  return spans;
}

function scanResourceSpans(reader: protobuf.Reader, buf: Uint8Array, field: Range, end: number, checker: WireReader | undefined): WireResourceSpans {
  let resource: Range | undefined;
  const otherFields: Range[] = [];
  const scopeSpans: WireScopeSpans[] = [];
  while (reader.pos < end) {
    const fieldStart = reader.pos;
    const tag = tagOf(reader, CONTAINER_FIELDS, 'resource_spans');
    const fieldNumber = tag >>> 3;
    if (fieldNumber === RS_RESOURCE) {
      // A repeated occurrence of a singular message merges; keep it simple and exact by
      // treating the last one as the resource only when there is one (the common case).
      if (resource !== undefined) throw malformed('resource_spans.resource appears twice');
      resource = lengthDelimited(reader, end, 'resource');
      if (checker !== undefined) checkResource(checker, resource[0], resource[1]);
    } else if (fieldNumber === RS_SCOPE_SPANS) {
      const ssEnd = lengthDelimitedEnd(reader, end, 'scope_spans');
      const spans = validateScopeSpans(reader, ssEnd, checker);
      scopeSpans.push(new LazyScopeSpans(buf, [fieldStart, ssEnd], spans));
    } else {
      skip(reader, tag & 7, end);
      otherFields.push([fieldStart, reader.pos]);
    }
  }
  return { field, resource, otherFields, scopeSpans };
}

/**
 * Scans an encoded ExportTraceServiceRequest; throws MalformedDataError on
 * broken framing and, unless `check` is false, on contents no later reader
 * could take (wire-check.ts). Every field down to the spans' own is checked
 * now, but the index records only resource and scope ranges: the span level
 * is read when first asked for (LazyScopeSpans). Bytes this process made
 * from checked ones (filtered, merged, encoded from a checked JSON request,
 * its own spans) and records it queued need only the framing.
 */
export function scanRequest(buf: Uint8Array, check = true): WireIndex {
  const reader = protobuf.Reader.create(buf);
  const checker = check ? new WireReader(buf) : undefined;
  const resourceSpans: WireResourceSpans[] = [];
  let spanCount = 0;
  try {
    while (reader.pos < buf.length) {
      const fieldStart = reader.pos;
      const tag = tagOf(reader, [REQUEST_RESOURCE_SPANS], 'the request');
      if (tag >>> 3 === REQUEST_RESOURCE_SPANS) {
        const end = lengthDelimitedEnd(reader, buf.length, 'resource_spans');
        const rs = scanResourceSpans(reader, buf, [fieldStart, end], end, checker);
        for (const ss of rs.scopeSpans) spanCount += ss.spanCount;
        resourceSpans.push(rs);
      } else {
        skip(reader, tag & 7, buf.length);
      }
    }
  } catch (err) {
    if (err instanceof MalformedDataError) throw err;
    throw malformed('truncated or invalid data', err);
  }
  return { buf, resourceSpans, spanCount };
}

// ---- writing -----------------------------------------------------------

export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

class ByteWriter {
  readonly out: Uint8Array;
  pos = 0;

  constructor(size: number) {
    this.out = Buffer.allocUnsafe(size);
  }

  varint(value: number): void {
    while (value >= 0x80) {
      this.out[this.pos++] = (value & 0x7f) | 0x80;
      value = Math.floor(value / 128);
    }
    this.out[this.pos++] = value;
  }

  copy(buf: Uint8Array, range: Range): void {
    this.copyBytes(buf, range[0], range[1]);
  }

  copyBytes(buf: Uint8Array, start: number, end: number): void {
    this.out.set(buf.subarray(start, end), this.pos);
    this.pos += end - start;
  }

  raw(bytes: Uint8Array): void {
    this.out.set(bytes, this.pos);
    this.pos += bytes.length;
  }
}

const rangeLength = (r: Range): number => r[1] - r[0];
const fieldSize = (tag: number, length: number): number => varintSize(tag) + varintSize(length) + length;
const TAG_RESOURCE_SPANS = (REQUEST_RESOURCE_SPANS << 3) | WIRE_LEN;
const TAG_RESOURCE = (RS_RESOURCE << 3) | WIRE_LEN;
const TAG_SCOPE_SPANS = (RS_SCOPE_SPANS << 3) | WIRE_LEN;

/**
 * Rewrites the Resource of every ResourceSpans. `stamp` receives the current
 * Resource content (or undefined) and returns the new content; everything
 * else is copied verbatim. Returns the new request already indexed: its
 * ranges are the old ones moved to where the copy put them, so the result
 * is not scanned again.
 */
export function rewriteResources(index: WireIndex, stamp: (resource: Uint8Array | undefined) => Uint8Array): WireIndex {
  const { buf } = index;
  const parts = index.resourceSpans.map(function plan(rs) {
    const resource = stamp(rs.resource === undefined ? undefined : buf.subarray(rs.resource[0], rs.resource[1]));
    let contentLength = fieldSize(TAG_RESOURCE, resource.length);
    for (const ss of rs.scopeSpans) contentLength += rangeLength(ss.field);
    for (const other of rs.otherFields) contentLength += rangeLength(other);
    return { rs, resource, contentLength };
  });
  let total = 0;
  for (const p of parts) total += fieldSize(TAG_RESOURCE_SPANS, p.contentLength);
  const w = new ByteWriter(total);
  const resourceSpans: WireResourceSpans[] = [];
  for (const { rs, resource, contentLength } of parts) {
    const fieldStart = w.pos;
    w.varint(TAG_RESOURCE_SPANS);
    w.varint(contentLength);
    w.varint(TAG_RESOURCE);
    w.varint(resource.length);
    const resourceRange: Range = [w.pos, w.pos + resource.length];
    w.raw(resource);
    const scopeSpans: WireScopeSpans[] = [];
    for (const ss of rs.scopeSpans) {
      const at = w.pos;
      w.copy(buf, ss.field);
      scopeSpans.push(new LazyScopeSpans(w.out, [at, w.pos], ss.spanCount));
    }
    const otherFields: Range[] = [];
    for (const other of rs.otherFields) {
      const at = w.pos;
      w.copy(buf, other);
      otherFields.push([at, w.pos]);
    }
    resourceSpans.push({ field: [fieldStart, w.pos], resource: resourceRange, otherFields, scopeSpans });
  }
  return { buf: w.out, resourceSpans, spanCount: index.spanCount };
}

/**
 * Whether to keep span `i` of a scope's table. `ordinal` is the span's place
 * in the whole request, counting from 0 in scan order.
 */
export type SpanPredicate = (spans: SpanTable, i: number, resourceIndex: number, ordinal: number) => boolean;

/**
 * Builds a request with only the spans `keep` selects (scopes and resources
 * left empty are dropped). Returns undefined when nothing is kept, and the
 * original buffer when everything is.
 */
export function filterSpans(index: WireIndex, keep: SpanPredicate): { buf: Uint8Array; spanCount: number } | undefined {
  const { buf } = index;
  let kept = 0;
  let ordinal = 0;
  const plan = index.resourceSpans.map(function planResource(rs, resourceIndex) {
    const scopes = rs.scopeSpans.map(function planScope(ss) {
      const table = ss.spans;
      const chosen = new Uint32Array(table.length);
      let count = 0;
      let length = 0;
      for (let i = 0; i < table.length; i++, ordinal++) {
        if (!keep(table, i, resourceIndex, ordinal)) continue;
        chosen[count++] = i;
        length += table.fieldEnd(i) - table.fieldStart(i);
      }
      for (const o of ss.otherFields) length += rangeLength(o);
      return { ss, table, chosen: chosen.subarray(0, count), length };
    });
    const live = scopes.filter((s) => s.chosen.length > 0);
    let length = rs.resource === undefined ? 0 : fieldSize(TAG_RESOURCE, rangeLength(rs.resource));
    for (const o of rs.otherFields) length += rangeLength(o);
    for (const s of live) {
      length += fieldSize(TAG_SCOPE_SPANS, s.length);
      kept += s.chosen.length;
    }
    return { rs, live, length };
  });
  if (kept === 0) return undefined;
  if (kept === index.spanCount) return { buf, spanCount: kept };
  let total = 0;
  const liveResources = plan.filter((p) => p.live.length > 0);
  for (const p of liveResources) total += fieldSize(TAG_RESOURCE_SPANS, p.length);
  const w = new ByteWriter(total);
  for (const { rs, live, length } of liveResources) {
    w.varint(TAG_RESOURCE_SPANS);
    w.varint(length);
    if (rs.resource !== undefined) {
      w.varint(TAG_RESOURCE);
      w.varint(rangeLength(rs.resource));
      w.copy(buf, rs.resource);
    }
    for (const o of rs.otherFields) w.copy(buf, o);
    for (const s of live) {
      w.varint(TAG_SCOPE_SPANS);
      w.varint(s.length);
      for (const o of s.ss.otherFields) w.copy(buf, o);
      for (const i of s.chosen) w.copyBytes(buf, s.table.fieldStart(i), s.table.fieldEnd(i));
    }
  }
  return { buf: w.out, spanCount: kept };
}

/** Concatenates encoded requests into one (repeated fields concatenate on the wire). */
export function concatRequests(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1 && parts[0] !== undefined) return parts[0];
  return Buffer.concat(parts);
}
