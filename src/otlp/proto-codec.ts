// Full protobuf <-> model conversion, for the places whose output needs every
// field (JSON delivery, the debug and file exporters, tests). The hot path
// works on the wire bytes instead (wire.ts).
import type Long from 'long';
import { MalformedDataError } from '../shared/errors.js';
import { bytesToHex, hexToBytes } from './ids.js';
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
import { ProtoTypes } from './proto.js';

// What protobufjs hands back from decode(): Long for 64-bit fields, Buffer
// for bytes, numbers for enums, and defaults for absent scalars.
type Int64 = Long | number | string;
interface PbAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  arrayValue?: { values?: PbAnyValue[] } | null;
  kvlistValue?: { values?: PbKeyValue[] } | null;
  bytesValue?: Uint8Array;
  value?: string;
}
interface PbKeyValue {
  key?: string;
  value?: PbAnyValue | null;
}
interface PbResource {
  attributes?: PbKeyValue[];
  droppedAttributesCount?: number;
}
interface PbScope {
  name?: string;
  version?: string;
  attributes?: PbKeyValue[];
  droppedAttributesCount?: number;
}
interface PbEvent {
  timeUnixNano?: Int64;
  name?: string;
  attributes?: PbKeyValue[];
  droppedAttributesCount?: number;
}
interface PbLink {
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  traceState?: string;
  attributes?: PbKeyValue[];
  droppedAttributesCount?: number;
  flags?: number;
}
interface PbSpan {
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  traceState?: string;
  parentSpanId?: Uint8Array;
  flags?: number;
  name?: string;
  kind?: number;
  startTimeUnixNano?: Int64;
  endTimeUnixNano?: Int64;
  attributes?: PbKeyValue[];
  droppedAttributesCount?: number;
  events?: PbEvent[];
  droppedEventsCount?: number;
  links?: PbLink[];
  droppedLinksCount?: number;
  status?: { message?: string | null; code?: number } | null;
}
interface PbScopeSpans {
  scope?: PbScope | null;
  spans?: PbSpan[];
  schemaUrl?: string;
}
interface PbResourceSpans {
  resource?: PbResource | null;
  scopeSpans?: PbScopeSpans[];
  schemaUrl?: string;
}
interface PbRequest {
  resourceSpans?: PbResourceSpans[];
}

// ---- decode: protobuf -> model -------------------------------------------

function int64String(value: Int64 | undefined): string {
  if (value === undefined) return '0';
  return typeof value === 'object' ? value.toString() : String(value);
}

function has<T extends object>(message: T, key: keyof T): boolean {
  return Object.prototype.hasOwnProperty.call(message, key);
}

function anyValueFromPb(v: PbAnyValue | null | undefined): AnyValue {
  if (v === undefined || v === null) return {};
  // protobufjs sets `value` to the name of the oneof member that is present.
  switch (v.value) {
    case 'stringValue':
      return { stringValue: v.stringValue ?? '' };
    case 'boolValue':
      return { boolValue: v.boolValue ?? false };
    case 'intValue':
      return { intValue: int64String(v.intValue) };
    case 'doubleValue':
      return { doubleValue: v.doubleValue ?? 0 };
    case 'arrayValue':
      return { arrayValue: { values: (v.arrayValue?.values ?? []).map(anyValueFromPb) } };
    case 'kvlistValue':
      return { kvlistValue: { values: attributesFromPb(v.kvlistValue?.values) } };
    case 'bytesValue':
      return { bytesValue: Buffer.from(v.bytesValue ?? new Uint8Array()).toString('base64') };
    default:
      return {};
  }
}

function attributesFromPb(list: PbKeyValue[] | undefined): KeyValue[] {
  if (list === undefined) return [];
  return list.map((kv) => ({ key: kv.key ?? '', value: anyValueFromPb(kv.value) }));
}

function optionalAttributes(target: { attributes?: KeyValue[] }, list: PbKeyValue[] | undefined): void {
  if (list !== undefined && list.length > 0) target.attributes = attributesFromPb(list);
}

function resourceFromPb(r: PbResource): Resource {
  const out: Resource = { attributes: attributesFromPb(r.attributes) };
  if (r.droppedAttributesCount) out.droppedAttributesCount = r.droppedAttributesCount;
  return out;
}

function scopeFromPb(s: PbScope): InstrumentationScope {
  const out: InstrumentationScope = {};
  if (s.name) out.name = s.name;
  if (s.version) out.version = s.version;
  optionalAttributes(out, s.attributes);
  if (s.droppedAttributesCount) out.droppedAttributesCount = s.droppedAttributesCount;
  return out;
}

function eventFromPb(e: PbEvent): SpanEvent {
  const out: SpanEvent = { timeUnixNano: int64String(e.timeUnixNano), name: e.name ?? '' };
  optionalAttributes(out, e.attributes);
  if (e.droppedAttributesCount) out.droppedAttributesCount = e.droppedAttributesCount;
  return out;
}

function linkFromPb(l: PbLink): SpanLink {
  const out: SpanLink = { traceId: bytesToHex(l.traceId ?? new Uint8Array()), spanId: bytesToHex(l.spanId ?? new Uint8Array()) };
  if (l.traceState) out.traceState = l.traceState;
  optionalAttributes(out, l.attributes);
  if (l.droppedAttributesCount) out.droppedAttributesCount = l.droppedAttributesCount;
  if (l.flags) out.flags = l.flags;
  return out;
}

export function spanFromPb(s: PbSpan): Span {
  const out: Span = {
    traceId: bytesToHex(s.traceId ?? new Uint8Array()),
    spanId: bytesToHex(s.spanId ?? new Uint8Array()),
    name: s.name ?? '',
    kind: s.kind ?? 0,
    startTimeUnixNano: int64String(s.startTimeUnixNano),
    endTimeUnixNano: int64String(s.endTimeUnixNano),
  };
  if (s.traceState) out.traceState = s.traceState;
  if (s.parentSpanId !== undefined && s.parentSpanId.length > 0) out.parentSpanId = bytesToHex(s.parentSpanId);
  if (has(s, 'flags') && s.flags) out.flags = s.flags;
  optionalAttributes(out, s.attributes);
  if (s.droppedAttributesCount) out.droppedAttributesCount = s.droppedAttributesCount;
  if (s.events !== undefined && s.events.length > 0) out.events = s.events.map(eventFromPb);
  if (s.droppedEventsCount) out.droppedEventsCount = s.droppedEventsCount;
  if (s.links !== undefined && s.links.length > 0) out.links = s.links.map(linkFromPb);
  if (s.droppedLinksCount) out.droppedLinksCount = s.droppedLinksCount;
  if (s.status !== undefined && s.status !== null) {
    const status: Status = {};
    if (s.status.message) status.message = s.status.message;
    if (s.status.code) status.code = s.status.code;
    out.status = status;
  }
  return out;
}

function scopeSpansFromPb(ss: PbScopeSpans): ScopeSpans {
  const out: ScopeSpans = { spans: (ss.spans ?? []).map(spanFromPb) };
  if (ss.scope !== undefined && ss.scope !== null) out.scope = scopeFromPb(ss.scope);
  if (ss.schemaUrl) out.schemaUrl = ss.schemaUrl;
  return out;
}

function resourceSpansFromPb(rs: PbResourceSpans): ResourceSpans {
  const out: ResourceSpans = { scopeSpans: (rs.scopeSpans ?? []).map(scopeSpansFromPb) };
  if (rs.resource !== undefined && rs.resource !== null) out.resource = resourceFromPb(rs.resource);
  if (rs.schemaUrl) out.schemaUrl = rs.schemaUrl;
  return out;
}

function decodeWith<T>(type: typeof ProtoTypes.Resource, bytes: Uint8Array, what: string): T {
  try {
    return type.decode(bytes) as unknown as T;
  } catch (err) {
    throw new MalformedDataError(`malformed protobuf ${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

export function decodeRequest(bytes: Uint8Array): ExportTraceServiceRequest {
  const message = decodeWith<PbRequest>(ProtoTypes.ExportTraceServiceRequest, bytes, 'ExportTraceServiceRequest');
  return { resourceSpans: (message.resourceSpans ?? []).map(resourceSpansFromPb) };
}

export function decodeResource(bytes: Uint8Array): Resource {
  return resourceFromPb(decodeWith<PbResource>(ProtoTypes.Resource, bytes, 'Resource'));
}

export function decodeSpan(bytes: Uint8Array): Span {
  return spanFromPb(decodeWith<PbSpan>(ProtoTypes.Span, bytes, 'Span'));
}

/** A ScopeSpans message's scope and schema URL, from its fields other than spans. */
export function decodeScopeSpansHead(bytes: Uint8Array): Omit<ScopeSpans, 'spans'> {
  const { spans: _spans, ...head } = scopeSpansFromPb(decodeWith<PbScopeSpans>(ProtoTypes.ScopeSpans, bytes, 'ScopeSpans'));
  return head;
}

export function decodeResponse(bytes: Uint8Array): ExportTraceServiceResponse {
  const message = decodeWith<{ partialSuccess?: { rejectedSpans?: Int64; errorMessage?: string } | null }>(
    ProtoTypes.ExportTraceServiceResponse,
    bytes,
    'ExportTraceServiceResponse',
  );
  // protobufjs reports an absent message field as null.
  if (message.partialSuccess === undefined || message.partialSuccess === null) return {};
  const partial: NonNullable<ExportTraceServiceResponse['partialSuccess']> = {};
  if (message.partialSuccess.rejectedSpans !== undefined) partial.rejectedSpans = int64String(message.partialSuccess.rejectedSpans);
  if (message.partialSuccess.errorMessage) partial.errorMessage = message.partialSuccess.errorMessage;
  return { partialSuccess: partial };
}

// ---- encode: model -> protobuf -------------------------------------------

function anyValueToPb(v: AnyValue | undefined): PbAnyValue | undefined {
  if (v === undefined) return undefined;
  if (v.stringValue !== undefined) return { stringValue: v.stringValue };
  if (v.boolValue !== undefined) return { boolValue: v.boolValue };
  if (v.intValue !== undefined) return { intValue: v.intValue };
  if (v.doubleValue !== undefined) return { doubleValue: v.doubleValue };
  if (v.arrayValue !== undefined) return { arrayValue: { values: v.arrayValue.values.map((x) => anyValueToPb(x) ?? {}) } };
  if (v.kvlistValue !== undefined) return { kvlistValue: { values: attributesToPb(v.kvlistValue.values) } };
  if (v.bytesValue !== undefined) return { bytesValue: Buffer.from(v.bytesValue, 'base64') };
  return {};
}

function attributesToPb(list: KeyValue[] | undefined): PbKeyValue[] {
  if (list === undefined) return [];
  return list.map(function keyValueToPb(kv) {
    const value = anyValueToPb(kv.value);
    return value === undefined ? { key: kv.key } : { key: kv.key, value };
  });
}

function spanToPb(s: Span): PbSpan {
  return {
    traceId: hexToBytes(s.traceId),
    spanId: hexToBytes(s.spanId),
    traceState: s.traceState ?? '',
    parentSpanId: hexToBytes(s.parentSpanId ?? ''),
    flags: s.flags ?? 0,
    name: s.name,
    kind: s.kind ?? 0,
    startTimeUnixNano: s.startTimeUnixNano,
    endTimeUnixNano: s.endTimeUnixNano,
    attributes: attributesToPb(s.attributes),
    droppedAttributesCount: s.droppedAttributesCount ?? 0,
    events: (s.events ?? []).map((e) => ({
      timeUnixNano: e.timeUnixNano,
      name: e.name,
      attributes: attributesToPb(e.attributes),
      droppedAttributesCount: e.droppedAttributesCount ?? 0,
    })),
    droppedEventsCount: s.droppedEventsCount ?? 0,
    links: (s.links ?? []).map((l) => ({
      traceId: hexToBytes(l.traceId),
      spanId: hexToBytes(l.spanId),
      traceState: l.traceState ?? '',
      attributes: attributesToPb(l.attributes),
      droppedAttributesCount: l.droppedAttributesCount ?? 0,
      flags: l.flags ?? 0,
    })),
    droppedLinksCount: s.droppedLinksCount ?? 0,
    ...(s.status === undefined ? {} : { status: { message: s.status.message ?? '', code: s.status.code ?? 0 } }),
  };
}

function resourceToPb(r: Resource): PbResource {
  return { attributes: attributesToPb(r.attributes), droppedAttributesCount: r.droppedAttributesCount ?? 0 };
}

function requestToPb(req: ExportTraceServiceRequest): PbRequest {
  return {
    resourceSpans: req.resourceSpans.map((rs) => ({
      ...(rs.resource === undefined ? {} : { resource: resourceToPb(rs.resource) }),
      schemaUrl: rs.schemaUrl ?? '',
      scopeSpans: rs.scopeSpans.map((ss) => ({
        ...(ss.scope === undefined
          ? {}
          : {
              scope: {
                name: ss.scope.name ?? '',
                version: ss.scope.version ?? '',
                attributes: attributesToPb(ss.scope.attributes),
                droppedAttributesCount: ss.scope.droppedAttributesCount ?? 0,
              },
            }),
        schemaUrl: ss.schemaUrl ?? '',
        spans: ss.spans.map(spanToPb),
      })),
    })),
  };
}

export function encodeRequest(req: ExportTraceServiceRequest): Uint8Array {
  return ProtoTypes.ExportTraceServiceRequest.encode(requestToPb(req)).finish();
}

export function encodeResource(resource: Resource): Uint8Array {
  return ProtoTypes.Resource.encode(resourceToPb(resource)).finish();
}

/** One attribute as a Resource's `attributes` field (tag, length, KeyValue), to add to an encoded Resource. */
export function encodeResourceAttribute(attribute: KeyValue): Uint8Array {
  return ProtoTypes.Resource.encode({ attributes: attributesToPb([attribute]) }).finish();
}

export function encodeResponse(response: ExportTraceServiceResponse): Uint8Array {
  const partial = response.partialSuccess;
  if (partial === undefined) return ProtoTypes.ExportTraceServiceResponse.encode({}).finish();
  return ProtoTypes.ExportTraceServiceResponse.encode({
    partialSuccess: { rejectedSpans: partial.rejectedSpans ?? '0', errorMessage: partial.errorMessage ?? '' },
  }).finish();
}
