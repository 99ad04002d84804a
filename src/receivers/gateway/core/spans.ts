// The gateway's own spans: recorded compactly and written straight to OTLP
// protobuf (writeTo) for the pipeline; an output that wants the model decodes
// the batch's bytes.
import { SpanKind, StatusCode } from '../../../otlp/model.js';
import type { ProtoWriter } from './proto-writer.js';
import { newSpanId, newTraceId, nowNanos, type ParentContext } from './trace-context.js';

export const SCOPE_NAME = 'sluice.gateway';

// opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto field numbers.
const SPAN_TRACE_ID = 1;
const SPAN_SPAN_ID = 2;
const SPAN_TRACE_STATE = 3;
const SPAN_PARENT_SPAN_ID = 4;
const SPAN_NAME = 5;
const SPAN_KIND = 6;
const SPAN_START = 7;
const SPAN_END = 8;
const SPAN_ATTRIBUTES = 9;
const SPAN_STATUS = 15;
const SPAN_FLAGS = 16;
const STATUS_MESSAGE = 2;
const STATUS_CODE = 3;
const KEY_VALUE_KEY = 1;
const KEY_VALUE_VALUE = 2;
const ANY_STRING = 1;
const ANY_DOUBLE = 4;
const ANY_ARRAY = 5;
const ARRAY_VALUES = 1;

/** A double attribute (integers are plain numbers). */
class DoubleValue {
  constructor(readonly value: number) {}
}

/** An attribute value: a string, an integer (already truncated), a double, or a string array. */
type AttributeValue = string | number | DoubleValue | readonly string[];

export class SpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly #keys: string[] = [];
  readonly #values: AttributeValue[] = [];
  readonly #name: string;
  readonly #kind: number;
  readonly #start: bigint;
  readonly #flags: number | undefined;
  readonly #traceState: string | undefined;
  #end: bigint | undefined;
  #error: string | undefined;

  constructor(name: string, kind: number, parent: { traceId: string; spanId: string | undefined; flags?: number | undefined; traceState?: string | undefined }) {
    this.#name = name;
    this.#kind = kind;
    this.traceId = parent.traceId;
    this.parentSpanId = parent.spanId;
    this.spanId = newSpanId();
    this.#flags = parent.flags;
    this.#traceState = parent.traceState;
    this.#start = nowNanos();
  }

  str(key: string, value: string): this {
    this.#keys.push(key);
    this.#values.push(value);
    return this;
  }

  int(key: string, value: number): this {
    this.#keys.push(key);
    this.#values.push(Math.trunc(value));
    return this;
  }

  double(key: string, value: number): this {
    this.#keys.push(key);
    this.#values.push(new DoubleValue(value));
    return this;
  }

  strings(key: string, values: readonly string[]): this {
    this.#keys.push(key);
    this.#values.push(values);
    return this;
  }

  /**
   * Sets `key` to a string or integer, replacing what was recorded for it
   * before: an attempt of several upstream calls (Titan embeddings, one per
   * text) records one value, as OTLP wants each key once.
   */
  replace(key: string, value: string | number): this {
    const stored = typeof value === 'number' ? Math.trunc(value) : value;
    const at = this.#keys.lastIndexOf(key);
    if (at === -1) {
      this.#keys.push(key);
      this.#values.push(stored);
    } else this.#values[at] = stored;
    return this;
  }

  /** Records error.type and sets status ERROR. */
  fail(errorType: string, message?: string): this {
    if (this.#error === undefined) this.str('error.type', errorType);
    this.#error = message ?? errorType;
    return this;
  }

  /**
   * Records error.type of an answer the client caused (a 4xx), leaving the
   * status UNSET: on a SERVER span a 4xx is not the server's error
   * (OpenTelemetry HTTP conventions), and backends count ERROR spans as failures.
   */
  refuse(errorType: string): this {
    if (this.#error === undefined) this.str('error.type', errorType);
    return this;
  }

  get flags(): number | undefined {
    return this.#flags;
  }

  get traceState(): string | undefined {
    return this.#traceState;
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  end(): void {
    this.#end ??= nowNanos();
  }

  get ended(): boolean {
    return this.#end !== undefined;
  }

  /** Writes this span as one `spans` field of a ScopeSpans message. */
  writeTo(w: ProtoWriter, field: number): void {
    const span = w.begin(field);
    w.hex(SPAN_TRACE_ID, this.traceId);
    w.hex(SPAN_SPAN_ID, this.spanId);
    if (this.#traceState !== undefined) w.string(SPAN_TRACE_STATE, this.#traceState);
    if (this.parentSpanId !== undefined) w.hex(SPAN_PARENT_SPAN_ID, this.parentSpanId);
    w.string(SPAN_NAME, this.#name);
    w.int(SPAN_KIND, this.#kind);
    w.fixed64(SPAN_START, this.#start);
    w.fixed64(SPAN_END, this.#end ?? nowNanos());
    for (let i = 0; i < this.#keys.length; i++) writeAttribute(w, this.#keys[i] as string, this.#values[i] as AttributeValue);
    // An empty Status for UNSET, as the model's `{ code: UNSET }` encodes.
    const status = w.begin(SPAN_STATUS);
    if (this.#error !== undefined) {
      w.string(STATUS_MESSAGE, this.#error);
      w.int(STATUS_CODE, StatusCode.ERROR);
    }
    w.end(status);
    if (this.#flags !== undefined) w.fixed32(SPAN_FLAGS, this.#flags);
    w.end(span);
  }
}

function writeAttribute(w: ProtoWriter, key: string, value: AttributeValue): void {
  if (typeof value === 'string') return w.keyValueString(SPAN_ATTRIBUTES, key, value);
  if (typeof value === 'number') return w.keyValueInt(SPAN_ATTRIBUTES, key, value);
  const kv = w.begin(SPAN_ATTRIBUTES);
  if (value instanceof DoubleValue) {
    w.string(KEY_VALUE_KEY, key);
    const any = w.begin(KEY_VALUE_VALUE);
    w.double(ANY_DOUBLE, value.value);
    w.end(any);
    w.end(kv);
    return;
  }
  w.string(KEY_VALUE_KEY, key);
  const any = w.begin(KEY_VALUE_VALUE);
  const array = w.begin(ANY_ARRAY);
  for (const item of value) {
    const element = w.begin(ARRAY_VALUES);
    w.string(ANY_STRING, item);
    w.end(element);
  }
  w.end(array);
  w.end(any);
  w.end(kv);
}

/** Characters of a requested model id that `sluice.model` keeps: real ids are far shorter. */
const MODEL_ATTRIBUTE_CHARS = 256;

/**
 * `sluice.model` on a request's SERVER span: the model the client asked for,
 * recorded before it is looked up. Cut at 256 characters, so a request body
 * whose `model` is megabytes long (a 404, but recorded all the same) does not
 * put megabytes on a span that every drain then carries.
 */
export function recordRequestedModel(server: SpanRecord, model: string): void {
  server.str('sluice.model', model.length > MODEL_ATTRIBUTE_CHARS ? `${model.slice(0, MODEL_ATTRIBUTE_CHARS)}...` : model);
}

export function startServerSpan(name: string, parent: ParentContext | undefined): SpanRecord {
  if (parent === undefined) return new SpanRecord(name, SpanKind.SERVER, { traceId: newTraceId(), spanId: undefined, flags: 1 });
  return new SpanRecord(name, SpanKind.SERVER, parent);
}

export function startClientSpan(name: string, server: SpanRecord): SpanRecord {
  // A child inherits its parent's tracestate (W3C Trace Context), as its trace id and flags.
  return new SpanRecord(name, SpanKind.CLIENT, { traceId: server.traceId, spanId: server.spanId, flags: server.flags, traceState: server.traceState });
}
