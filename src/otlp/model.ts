// The decoded trace data model. It is the OTLP/JSON shape itself (DESIGN
// section 5): lowerCamelCase keys, hex trace and span ids, enums as integers,
// 64-bit integers as decimal strings, bytes as base64. So encoding to JSON is
// JSON.stringify, and only the protobuf codec converts.

export interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  /** int64 as a decimal string */
  intValue?: string;
  doubleValue?: number;
  arrayValue?: ArrayValue;
  kvlistValue?: KeyValueList;
  /** base64 */
  bytesValue?: string;
}

export interface ArrayValue {
  values: AnyValue[];
}

export interface KeyValueList {
  values: KeyValue[];
}

export interface KeyValue {
  key: string;
  value?: AnyValue;
}

export interface Resource {
  attributes: KeyValue[];
  droppedAttributesCount?: number;
}

export interface InstrumentationScope {
  name?: string;
  version?: string;
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
}

export const SpanKind = {
  UNSPECIFIED: 0,
  INTERNAL: 1,
  SERVER: 2,
  CLIENT: 3,
  PRODUCER: 4,
  CONSUMER: 5,
} as const;
export type SpanKindValue = (typeof SpanKind)[keyof typeof SpanKind];

export const StatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export interface Status {
  message?: string;
  code?: number;
}

export interface SpanEvent {
  /** fixed64 nanoseconds as a decimal string */
  timeUnixNano: string;
  name: string;
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  traceState?: string;
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
  flags?: number;
}

export interface Span {
  /** 32 hex characters */
  traceId: string;
  /** 16 hex characters */
  spanId: string;
  traceState?: string;
  /** 16 hex characters, absent or empty for a root span */
  parentSpanId?: string;
  flags?: number;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
  events?: SpanEvent[];
  droppedEventsCount?: number;
  links?: SpanLink[];
  droppedLinksCount?: number;
  status?: Status;
}

export interface ScopeSpans {
  scope?: InstrumentationScope;
  spans: Span[];
  schemaUrl?: string;
}

export interface ResourceSpans {
  resource?: Resource;
  scopeSpans: ScopeSpans[];
  schemaUrl?: string;
}

export interface ExportTraceServiceRequest {
  resourceSpans: ResourceSpans[];
}

export interface ExportTracePartialSuccess {
  /** int64 as a decimal string */
  rejectedSpans?: string;
  errorMessage?: string;
}

export interface ExportTraceServiceResponse {
  partialSuccess?: ExportTracePartialSuccess;
}
