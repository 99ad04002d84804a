// The gateway's own spans, built as plain OTLP/JSON model objects.
import { SpanKind, StatusCode, type AnyValue, type ExportTraceServiceRequest, type KeyValue, type Span } from '../../otlp/model.js';
import { newSpanId, newTraceId, nowNanos, type ParentContext } from './trace-context.js';

const SCOPE = { name: 'sluice.gateway' };

export class SpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: KeyValue[] = [];
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
    this.attributes.push({ key, value: { stringValue: value } });
    return this;
  }

  int(key: string, value: number): this {
    this.attributes.push({ key, value: { intValue: String(Math.trunc(value)) } });
    return this;
  }

  strings(key: string, values: readonly string[]): this {
    const array: AnyValue[] = values.map((v) => ({ stringValue: v }));
    this.attributes.push({ key, value: { arrayValue: { values: array } } });
    return this;
  }

  /** Records error.type and sets status ERROR. */
  fail(errorType: string, message?: string): this {
    if (this.#error === undefined) this.str('error.type', errorType);
    this.#error = message ?? errorType;
    return this;
  }

  get flags(): number | undefined {
    return this.#flags;
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  end(): void {
    this.#end ??= nowNanos();
  }

  toSpan(): Span {
    const span: Span = {
      traceId: this.traceId,
      spanId: this.spanId,
      name: this.#name,
      kind: this.#kind,
      startTimeUnixNano: this.#start.toString(),
      endTimeUnixNano: (this.#end ?? nowNanos()).toString(),
      attributes: this.attributes,
      status: this.#error === undefined ? { code: StatusCode.UNSET } : { code: StatusCode.ERROR, message: this.#error },
    };
    if (this.parentSpanId !== undefined) span.parentSpanId = this.parentSpanId;
    if (this.#flags !== undefined) span.flags = this.#flags;
    if (this.#traceState !== undefined) span.traceState = this.#traceState;
    return span;
  }
}

export function startServerSpan(name: string, parent: ParentContext | undefined): SpanRecord {
  if (parent === undefined) return new SpanRecord(name, SpanKind.SERVER, { traceId: newTraceId(), spanId: undefined, flags: 1 });
  return new SpanRecord(name, SpanKind.SERVER, parent);
}

export function startClientSpan(name: string, server: SpanRecord): SpanRecord {
  return new SpanRecord(name, SpanKind.CLIENT, { traceId: server.traceId, spanId: server.spanId, flags: server.flags });
}

export function toRequest(resource: KeyValue[], spans: Span[]): ExportTraceServiceRequest {
  return { resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope: SCOPE, spans }] }] };
}
