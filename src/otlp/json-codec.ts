// OTLP/JSON exactly as the spec writes it: lowerCamelCase keys, hex ids,
// enums as integers, 64-bit integers as decimal strings (read from strings
// or numbers), unknown fields ignored. Reading validates as it normalizes,
// and a bad field is reported with its JSON path.
import { MalformedDataError } from '../shared/errors.js';
import { isHex } from './ids.js';
import { MAX_VALUE_DEPTH } from './wire-check.js';
import type {
  AnyValue,
  ExportTraceServiceRequest,
  ExportTraceServiceResponse,
  InstrumentationScope,
  KeyValue,
  Resource,
  ResourceSpans,
  ScopeSpans,
  Span,
  SpanEvent,
  SpanLink,
  Status,
} from './model.js';

type Json = Record<string, unknown>;

const SPAN_KINDS: ReadonlyMap<string, number> = new Map([
  ['SPAN_KIND_UNSPECIFIED', 0],
  ['SPAN_KIND_INTERNAL', 1],
  ['SPAN_KIND_SERVER', 2],
  ['SPAN_KIND_CLIENT', 3],
  ['SPAN_KIND_PRODUCER', 4],
  ['SPAN_KIND_CONSUMER', 5],
]);
const STATUS_CODES: ReadonlyMap<string, number> = new Map([
  ['STATUS_CODE_UNSET', 0],
  ['STATUS_CODE_OK', 1],
  ['STATUS_CODE_ERROR', 2],
]);
/** Enums are int32 on the wire; OTLP's values are never negative. */
const ENUM_MAX = 0x7fffffff;
const UNSIGNED = /^\d+$/;
const SIGNED = /^-?\d+$/;
/** A decimal integer string: its sign, and its digits without leading zeros. */
const DECIMAL_INTEGER = /^(-?)0*(\d+)$/;
/** 2^64 has 20 digits: an integer with more is out of range whatever they are, and BigInt() reads a long string in quadratic time. */
const MAX_INT64_DIGITS = 20;

function fail(path: string, message: string): never {
  throw new MalformedDataError(`${path}: ${message}`);
}

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object');
  return value as Json;
}

function array(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(path, 'must be an array');
  return value;
}

function string(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') fail(path, 'must be a string');
  return value;
}

/** A uint32 or fixed32: a number or, as the proto3 JSON mapping (and the collector) allow, a decimal string. */
function uint32(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'string' && UNSIGNED.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffffffff) fail(path, 'must be an unsigned 32-bit integer');
  return n;
}

/**
 * A JSON number past 2^53 reached a 64-bit field: JSON.parse kept only the
 * double nearest to it, not its digits. The text is read again with such
 * numbers quoted (quoteLongIntegers), so the field gets them exactly.
 */
class InexactIntegerError extends Error {}

function int64(value: unknown, path: string, unsigned: boolean): string | undefined {
  if (value === undefined || value === null) return undefined;
  let n: bigint;
  if (typeof value === 'number') {
    // JSON.parse reads a number past a double's range as Infinity.
    if (!Number.isFinite(value)) fail(path, 'is out of the 64-bit range');
    if (!Number.isInteger(value)) fail(path, 'must be an integer');
    if (unsigned && value < 0) fail(path, 'must not be negative');
    if (!Number.isSafeInteger(value)) throw new InexactIntegerError(path);
    n = BigInt(value);
  } else {
    const decimal = typeof value === 'string' ? DECIMAL_INTEGER.exec(value) : null;
    if (decimal === null) fail(path, 'must be a 64-bit integer or a decimal string');
    if (unsigned && decimal[1] === '-') fail(path, 'must not be negative');
    const [, sign = '', digits = ''] = decimal;
    if (digits.length > MAX_INT64_DIGITS) fail(path, 'is out of the 64-bit range');
    n = BigInt(sign + digits);
  }
  if (unsigned ? n > 0xffffffffffffffffn : n > 0x7fffffffffffffffn || n < -0x8000000000000000n) fail(path, 'is out of the 64-bit range');
  return n.toString();
}

function enumValue(value: unknown, names: ReadonlyMap<string, number>, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= ENUM_MAX) return value;
  const named = typeof value === 'string' ? names.get(value) : undefined;
  return named ?? fail(path, `must be an enum name or an integer from 0 to ${ENUM_MAX}`);
}

function id(value: unknown, path: string, bytes: number, required: boolean): string | undefined {
  const text = string(value, path);
  if (text === undefined || text === '') {
    if (required) fail(path, `must be ${bytes * 2} hex characters`);
    return undefined;
  }
  if (!isHex(text, bytes * 2)) fail(path, `must be ${bytes * 2} hex characters`);
  return text.toLowerCase();
}

// One way to match each digit: `\d+\.?\d*` would try every split of a run of
// digits before failing (quadratic: 250,000 digits and a letter took minutes).
const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function doubleFromString(text: string): number | undefined {
  if (text === 'NaN' || text === 'Infinity' || text === '-Infinity') return Number(text);
  return DECIMAL.test(text) ? Number(text) : undefined;
}

const BASE64_DIGITS = /^[A-Za-z0-9+/_-]*$/;

/**
 * Standard or URL-safe base64, padded or not, as the proto3 JSON mapping
 * accepts. Buffer.from() would decode anything, dropping what it cannot
 * read: a lone last digit (less than a byte) or padding that does not
 * complete a group of four is refused instead.
 */
function isBase64(text: string): boolean {
  const digits = text.endsWith('==') ? text.slice(0, -2) : text.endsWith('=') ? text.slice(0, -1) : text;
  if (!BASE64_DIGITS.test(digits) || digits.length % 4 === 1) return false;
  return digits.length === text.length || text.length % 4 === 0;
}

function anyValue(value: unknown, path: string, depth: number): AnyValue {
  // Before the empty case: an empty value encodes to an AnyValue the protobuf check counts too.
  if (depth > MAX_VALUE_DEPTH) fail(path, `is nested more than ${MAX_VALUE_DEPTH} levels deep`);
  if (value === undefined || value === null) return {};
  const v = object(value, path);
  // A member given as null is not set, as in the proto3 JSON mapping: the OpenTelemetry JS SDK's
  // JSON exporter writes a NaN or infinite attribute as {"doubleValue": null}.
  if (v.stringValue != null) return { stringValue: string(v.stringValue, `${path}.stringValue`) ?? '' };
  if (v.boolValue != null) {
    if (typeof v.boolValue !== 'boolean') fail(`${path}.boolValue`, 'must be a boolean');
    return { boolValue: v.boolValue };
  }
  if (v.intValue != null) return { intValue: int64(v.intValue, `${path}.intValue`, false) ?? '0' };
  if (v.doubleValue != null) {
    // The proto3 JSON mapping accepts a double as a number or a string: "1.5",
    // "1e3", and the spellings JSON has no literal for ("NaN", "Infinity", "-Infinity").
    if (typeof v.doubleValue === 'string') {
      const parsed = doubleFromString(v.doubleValue);
      if (parsed === undefined) fail(`${path}.doubleValue`, 'must be a number, a numeric string, "NaN", "Infinity" or "-Infinity"');
      return { doubleValue: parsed };
    }
    if (typeof v.doubleValue !== 'number') fail(`${path}.doubleValue`, 'must be a number');
    return { doubleValue: v.doubleValue };
  }
  if (v.arrayValue != null) {
    const values = array(object(v.arrayValue, `${path}.arrayValue`).values, `${path}.arrayValue.values`);
    return { arrayValue: { values: values.map((x, i) => anyValue(x, `${path}.arrayValue.values[${i}]`, depth + 1)) } };
  }
  if (v.kvlistValue != null) {
    const values = object(v.kvlistValue, `${path}.kvlistValue`).values;
    return { kvlistValue: { values: attributes(values, `${path}.kvlistValue.values`, depth + 1) ?? [] } };
  }
  if (v.bytesValue != null) {
    const text = string(v.bytesValue, `${path}.bytesValue`) ?? '';
    if (!isBase64(text)) fail(`${path}.bytesValue`, 'must be base64');
    return { bytesValue: Buffer.from(text, 'base64').toString('base64') };
  }
  return {};
}

/** A list of KeyValues whose values sit at `depth` (1 for a span's, a resource's, ... own attributes). */
function attributes(value: unknown, path: string, depth = 1): KeyValue[] | undefined {
  const list = array(value, path);
  if (list.length === 0) return undefined;
  return list.map(function keyValue(item, i) {
    const kv = object(item, `${path}[${i}]`);
    return { key: string(kv.key, `${path}[${i}].key`) ?? '', value: anyValue(kv.value, `${path}[${i}].value`, depth) };
  });
}

/** Assigns only the fields that are present, so exactOptionalPropertyTypes holds. */
function assign<T extends object>(target: T, fields: { [K in keyof T]?: T[K] | undefined }): T {
  for (const key of Object.keys(fields) as Array<keyof T>) {
    const value = fields[key];
    if (value !== undefined) target[key] = value as T[keyof T];
  }
  return target;
}

function resource(value: unknown, path: string): Resource {
  const r = object(value, path);
  return assign<Resource>(
    { attributes: attributes(r.attributes, `${path}.attributes`) ?? [] },
    { droppedAttributesCount: uint32(r.droppedAttributesCount, `${path}.droppedAttributesCount`) || undefined },
  );
}

function scope(value: unknown, path: string): InstrumentationScope {
  const s = object(value, path);
  return assign<InstrumentationScope>(
    {},
    {
      name: string(s.name, `${path}.name`) || undefined,
      version: string(s.version, `${path}.version`) || undefined,
      attributes: attributes(s.attributes, `${path}.attributes`),
      droppedAttributesCount: uint32(s.droppedAttributesCount, `${path}.droppedAttributesCount`) || undefined,
    },
  );
}

function spanEvent(value: unknown, path: string): SpanEvent {
  const e = object(value, path);
  return assign<SpanEvent>(
    { timeUnixNano: int64(e.timeUnixNano, `${path}.timeUnixNano`, true) ?? '0', name: string(e.name, `${path}.name`) ?? '' },
    {
      attributes: attributes(e.attributes, `${path}.attributes`),
      droppedAttributesCount: uint32(e.droppedAttributesCount, `${path}.droppedAttributesCount`) || undefined,
    },
  );
}

function spanLink(value: unknown, path: string): SpanLink {
  const l = object(value, path);
  return assign<SpanLink>(
    // As in protobuf intake, a link's ids may be empty (written "" by encoders that always write them).
    { traceId: id(l.traceId, `${path}.traceId`, 16, false) ?? '', spanId: id(l.spanId, `${path}.spanId`, 8, false) ?? '' },
    {
      traceState: string(l.traceState, `${path}.traceState`) || undefined,
      attributes: attributes(l.attributes, `${path}.attributes`),
      droppedAttributesCount: uint32(l.droppedAttributesCount, `${path}.droppedAttributesCount`) || undefined,
      flags: uint32(l.flags, `${path}.flags`) || undefined,
    },
  );
}

function status(value: unknown, path: string): Status {
  const s = object(value, path);
  return assign<Status>(
    {},
    { message: string(s.message, `${path}.message`) || undefined, code: enumValue(s.code, STATUS_CODES, `${path}.code`) || undefined },
  );
}

function span(value: unknown, path: string): Span {
  const s = object(value, path);
  const events = array(s.events, `${path}.events`).map((e, i) => spanEvent(e, `${path}.events[${i}]`));
  const links = array(s.links, `${path}.links`).map((l, i) => spanLink(l, `${path}.links[${i}]`));
  return assign<Span>(
    {
      traceId: id(s.traceId, `${path}.traceId`, 16, true) ?? '',
      spanId: id(s.spanId, `${path}.spanId`, 8, true) ?? '',
      name: string(s.name, `${path}.name`) ?? '',
      kind: enumValue(s.kind, SPAN_KINDS, `${path}.kind`) ?? 0,
      startTimeUnixNano: int64(s.startTimeUnixNano, `${path}.startTimeUnixNano`, true) ?? '0',
      endTimeUnixNano: int64(s.endTimeUnixNano, `${path}.endTimeUnixNano`, true) ?? '0',
    },
    {
      traceState: string(s.traceState, `${path}.traceState`) || undefined,
      parentSpanId: id(s.parentSpanId, `${path}.parentSpanId`, 8, false),
      flags: uint32(s.flags, `${path}.flags`) || undefined,
      attributes: attributes(s.attributes, `${path}.attributes`),
      droppedAttributesCount: uint32(s.droppedAttributesCount, `${path}.droppedAttributesCount`) || undefined,
      events: events.length > 0 ? events : undefined,
      droppedEventsCount: uint32(s.droppedEventsCount, `${path}.droppedEventsCount`) || undefined,
      links: links.length > 0 ? links : undefined,
      droppedLinksCount: uint32(s.droppedLinksCount, `${path}.droppedLinksCount`) || undefined,
      status: s.status === undefined || s.status === null ? undefined : status(s.status, `${path}.status`),
    },
  );
}

function scopeSpans(value: unknown, path: string): ScopeSpans {
  const ss = object(value, path);
  return assign<ScopeSpans>(
    { spans: array(ss.spans, `${path}.spans`).map((s, i) => span(s, `${path}.spans[${i}]`)) },
    {
      scope: ss.scope === undefined || ss.scope === null ? undefined : scope(ss.scope, `${path}.scope`),
      schemaUrl: string(ss.schemaUrl, `${path}.schemaUrl`) || undefined,
    },
  );
}

function resourceSpans(value: unknown, path: string): ResourceSpans {
  const rs = object(value, path);
  return assign<ResourceSpans>(
    { scopeSpans: array(rs.scopeSpans, `${path}.scopeSpans`).map((s, i) => scopeSpans(s, `${path}.scopeSpans[${i}]`)) },
    {
      resource: rs.resource === undefined || rs.resource === null ? undefined : resource(rs.resource, `${path}.resource`),
      schemaUrl: string(rs.schemaUrl, `${path}.schemaUrl`) || undefined,
    },
  );
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Whether c can continue a JSON number: a digit, `.`, `e`, `E`, `+` or `-`. */
function inNumber(c: number): boolean {
  return isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS;
}

/**
 * The JSON text with every number whose value is an integer past 2^53 turned
 * into a string of its digits: those written, for an integer literal; those
 * of the double JSON.parse reads, for one with a fraction or exponent (1e30).
 * (A string field given such a number then reads its digits.)
 */
function quoteLongIntegers(text: string): string {
  let out = '';
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
    } else if (c === MINUS || isDigit(c)) {
      let end = i + 1;
      while (end < text.length && inNumber(text.charCodeAt(end))) end++;
      const literal = text.slice(i, end);
      const value = Number(literal);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        out += `${text.slice(copied, i)}"${SIGNED.test(literal) ? literal : BigInt(value).toString()}"`;
        copied = end;
      }
      i = end - 1;
    }
  }
  return out + text.slice(copied);
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new MalformedDataError(`malformed JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Reads JSON text with `read`, keeping 64-bit integers written as numbers
 * exact, as the proto3 JSON mapping wants them read: the text is parsed
 * again, with long integers quoted, only when `read` meets one.
 */
function readExact<T>(text: string, read: (parsed: unknown) => T): T {
  try {
    return read(parseText(text));
  } catch (err) {
    if (!(err instanceof InexactIntegerError)) throw err;
    return read(parseText(quoteLongIntegers(text)));
  }
}

/**
 * An object key holding an underscore, written as is or as `\u005f`, among
 * letters and digits written either way (`"trace\u005fid"` is `trace_id`).
 * Only keys are followed by a colon, and a quote inside a string is escaped,
 * so attribute keys and values (`{"key": "http_route"}`, JSON text in a
 * string) never match. What comes before the first underscore holds none,
 * so a long key is read once, not once per underscore in it.
 */
const SNAKE_CASE_KEY = /"(?:[A-Za-z0-9]|\\u00(?!5[Ff])[0-9A-Fa-f]{2})*(?:_|\\u005[Ff])(?:[A-Za-z0-9_]|\\u00[0-9A-Fa-f]{2})*"\s*:/;

/** A proto field name: lowercase words joined by underscores (`scope_spans`). */
const PROTO_FIELD_NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/**
 * Every object key in `value` that is a proto field name turned to its
 * lowerCamelCase spelling, as protojson reads either. OTLP/JSON has no object
 * keyed by data (attributes are `{key, value}` lists), so only field names
 * change. A field also written in lowerCamelCase is read by that spelling,
 * and a key mixing the two (`droppedAttributes_count`) stays unknown.
 */
function camelCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCaseKeys);
  if (typeof value !== 'object' || value === null) return value;
  const entries: Array<[string, unknown]> = [];
  for (const [key, field] of Object.entries(value)) {
    const name = PROTO_FIELD_NAME.test(key) ? key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()) : key;
    if (name !== key && Object.hasOwn(value, name)) continue;
    entries.push([name, camelCaseKeys(field)]);
  }
  // fromEntries defines each key, so a "__proto__" key stays a field (unknown) instead of becoming the prototype.
  return Object.fromEntries(entries);
}

/** Parses and validates an OTLP/JSON ExportTraceServiceRequest. */
export function parseJsonRequest(body: string | Uint8Array): ExportTraceServiceRequest {
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return readExact(text, function request(parsed) {
    let root = object(parsed, '$');
    // The proto's own field names (`resource_spans`, `trace_id`), which some
    // hand-made senders write and the collector's receiver reads, anywhere
    // in the request: read as if written in lowerCamelCase, not ignored as
    // unknown fields (which would drop their spans with a 200).
    if (SNAKE_CASE_KEY.test(text)) root = object(camelCaseKeys(root), '$');
    const list = array(root.resourceSpans, 'resourceSpans');
    return { resourceSpans: list.map((rs, i) => resourceSpans(rs, `resourceSpans[${i}]`)) };
  });
}

export function stringifyRequest(request: ExportTraceServiceRequest): string {
  let negativeZero = false;
  const text = JSON.stringify(request, function replaceNonFinite(_key, value: unknown) {
    if (typeof value === 'number') {
      // proto3 JSON spells non-finite doubles as strings; JSON.stringify would write null.
      if (!Number.isFinite(value)) return String(value);
      if (value === 0 && Object.is(value, -0)) negativeZero = true;
    }
    return value;
  });
  // JSON.stringify writes -0 as 0, and a replacer can only turn it into a
  // string: a request holding one (rare) is written again by hand.
  return negativeZero ? stringifyKeepingSign(request) : text;
}

/** JSON.stringify of plain JSON data (as stringifyRequest's replacer spells it), -0 written as -0, as the collector writes it. */
function stringifyKeepingSign(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `"${String(value)}"`;
    return Object.is(value, -0) ? '-0' : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item: unknown) => (item === undefined ? 'null' : stringifyKeepingSign(item))).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const members: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined) members.push(`${JSON.stringify(key)}:${stringifyKeepingSign(item)}`);
  }
  return `{${members.join(',')}}`;
}

/**
 * A model object (a span, a resource) with its non-finite doubles spelled as
 * stringifyRequest spells them, for writers that stringify it themselves: the
 * logger, as JSON.stringify, would write null. -0, which such a writer would
 * write as 0, is spelled `"-0"`, a string the proto3 JSON mapping also reads
 * as a double. Only for writing out: such a `doubleValue` is then a string.
 * Parts without one are shared, not copied.
 */
export function withNonFiniteSpelled<T>(value: T): T {
  if (typeof value === 'number') {
    if (value === 0) return (Object.is(value, -0) ? '-0' : value) as T;
    return (Number.isFinite(value) ? value : String(value)) as T;
  }
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => withNonFiniteSpelled(item));
    return (items.every((item, i) => item === value[i]) ? value : items) as T;
  }
  if (typeof value !== 'object' || value === null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const spelled = withNonFiniteSpelled(item as unknown);
    if (spelled !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = spelled;
  }
  return (copy ?? value) as T;
}

export function stringifyResponse(response: ExportTraceServiceResponse): string {
  return JSON.stringify(response);
}

export function parseJsonResponse(body: string): ExportTraceServiceResponse {
  return readExact(body, function response(json): ExportTraceServiceResponse {
    // As in a request, the proto's field names (`partial_success`, `rejected_spans`) read as their lowerCamelCase ones.
    const parsed = object(camelCaseKeys(json), '$');
    if (parsed.partialSuccess === undefined || parsed.partialSuccess === null) return {};
    const p = object(parsed.partialSuccess, 'partialSuccess');
    return {
      partialSuccess: assign<NonNullable<ExportTraceServiceResponse['partialSuccess']>>(
        {},
        { rejectedSpans: int64(p.rejectedSpans, 'partialSuccess.rejectedSpans', false), errorMessage: string(p.errorMessage, 'partialSuccess.errorMessage') },
      ),
    };
  });
}
