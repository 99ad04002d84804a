// Collects the gateway's spans and hands them downstream in batches, like an
// SDK's BatchSpanProcessor: one pipeline batch per request would cost every
// processor and exporter a full round per request.
//
// A span that has ended when its request is done is encoded then, into the
// batch's request (span-export.ts), and not kept: held as objects for the
// batch's 50 ms, a thousand requests' spans a second were most of what each
// young-generation collection had to copy (bench/RESULTS.md, gateway
// maximum). A span still open then (an attempt being cancelled as its client
// leaves) is kept until the batch goes, so that its end still makes it in.
import { SpanRequestWriter, type ResourcePairs } from './span-export.js';
import type { SpanRecord } from './spans.js';

/** ms a span may wait for companions before its batch goes. */
export const SPAN_FLUSH_DELAY_MS = 50;
/** A batch goes as soon as it holds this many spans. */
export const SPAN_BATCH_MAX = 512;

/** Receives one batch: an encoded ExportTraceServiceRequest and how many spans it holds. */
export type EmitBatch = (request: Uint8Array, spans: number) => void;

export class SpanBatcher {
  readonly #emit: EmitBatch;
  readonly #request: SpanRequestWriter;
  /** Spans not yet ended when handed over, encoded when the batch goes. */
  #open: SpanRecord[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(resource: ResourcePairs, emit: EmitBatch) {
    this.#request = new SpanRequestWriter(resource);
    this.#emit = emit;
  }

  add(spans: readonly SpanRecord[]): void {
    for (const span of spans) {
      if (span.ended) this.#request.add(span);
      else this.#open.push(span);
    }
    if (this.#request.spans + this.#open.length >= SPAN_BATCH_MAX) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), SPAN_FLUSH_DELAY_MS);
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const span of this.#open) this.#request.add(span);
    this.#open = [];
    const count = this.#request.spans;
    if (count === 0) return;
    this.#emit(this.#request.finish(), count);
  }
}
