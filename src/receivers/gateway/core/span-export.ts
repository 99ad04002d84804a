// The gateway's spans as an encoded ExportTraceServiceRequest: one
// ResourceSpans (the gateway's resource), one ScopeSpans, the spans. A
// request is written as its spans come: opened with its resource and scope,
// each span added as it is done with, closed once the batch is complete.
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

/** Resource attributes as [key, string value] pairs. */
export type ResourcePairs = ReadonlyArray<readonly [string, string]>;

/** One request being written; its writer (and buffer) is reused from one request to the next. */
export class SpanRequestWriter {
  readonly #writer = new ProtoWriter();
  readonly #resource: ResourcePairs;
  /** The open ResourceSpans and ScopeSpans, while a request is open. */
  #resourceSpans = -1;
  #scopeSpans = -1;
  #spans = 0;

  constructor(resource: ResourcePairs) {
    this.#resource = resource;
  }

  /** Spans added since the request was opened. */
  get spans(): number {
    return this.#spans;
  }

  /** Adds a span, opening a request first if none is open; a span that fails to encode leaves nothing behind. */
  add(span: SpanRecord): void {
    if (this.#resourceSpans === -1) this.#open();
    const before = this.#writer.length;
    try {
      span.writeTo(this.#writer, SCOPE_SPANS_SPANS);
    } catch (err) {
      this.#writer.truncate(before);
      throw err;
    }
    this.#spans += 1;
  }

  /** Closes the request and gives its bytes (a copy); the next add() opens another. */
  finish(): Uint8Array {
    const w = this.#writer;
    if (this.#resourceSpans === -1) this.#open();
    w.end(this.#scopeSpans);
    w.end(this.#resourceSpans);
    this.#resourceSpans = -1;
    this.#scopeSpans = -1;
    this.#spans = 0;
    return w.finish();
  }

  #open(): void {
    const w = this.#writer;
    w.reset();
    this.#resourceSpans = w.begin(REQUEST_RESOURCE_SPANS);
    const res = w.begin(RESOURCE_SPANS_RESOURCE);
    for (const [key, value] of this.#resource) w.keyValueString(RESOURCE_ATTRIBUTES, key, value);
    w.end(res);
    this.#scopeSpans = w.begin(RESOURCE_SPANS_SCOPE_SPANS);
    const scope = w.begin(SCOPE_SPANS_SCOPE);
    w.string(SCOPE_NAME_FIELD, SCOPE_NAME);
    w.end(scope);
  }
}
