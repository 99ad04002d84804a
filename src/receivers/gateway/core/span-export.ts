// One batch of the gateway's spans as an encoded ExportTraceServiceRequest:
// one ResourceSpans (the gateway's resource), one ScopeSpans, the spans.
import { ProtoWriter } from './proto-writer.js';
import { SCOPE_NAME, type SpanRecord } from './spans.js';

// opentelemetry/proto field numbers.
const REQUEST_RESOURCE_SPANS = 1;
const RESOURCE_SPANS_RESOURCE = 1;
const RESOURCE_SPANS_SCOPE_SPANS = 2;
const RESOURCE_ATTRIBUTES = 1;
const SCOPE_SPANS_SCOPE = 1;
const SCOPE_SPANS_SPANS = 2;
const SCOPE_NAME_FIELD = 1;

// One writer, reused: encoding is synchronous and its output is copied out.
const writer = new ProtoWriter();

/** Resource attributes as [key, string value] pairs. */
export type ResourcePairs = ReadonlyArray<readonly [string, string]>;

export function encodeSpanRequest(resource: ResourcePairs, spans: readonly SpanRecord[]): Uint8Array {
  const w = writer;
  w.reset();
  const resourceSpans = w.begin(REQUEST_RESOURCE_SPANS);
  const res = w.begin(RESOURCE_SPANS_RESOURCE);
  for (const [key, value] of resource) w.keyValueString(RESOURCE_ATTRIBUTES, key, value);
  w.end(res);
  const scopeSpans = w.begin(RESOURCE_SPANS_SCOPE_SPANS);
  const scope = w.begin(SCOPE_SPANS_SCOPE);
  w.string(SCOPE_NAME_FIELD, SCOPE_NAME);
  w.end(scope);
  for (const span of spans) span.writeTo(w, SCOPE_SPANS_SPANS);
  w.end(scopeSpans);
  w.end(resourceSpans);
  return w.finish();
}
