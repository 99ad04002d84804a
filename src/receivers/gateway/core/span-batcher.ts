// Collects the gateway's spans and hands them downstream in batches, like an
// SDK's BatchSpanProcessor: one pipeline batch per request would cost every
// processor and exporter a full round per request.
//
// A request's spans are encoded into the batch's request (span-export.ts)
// once the turn of the event loop in which the request closed is over (what
// the request's code still does in that turn, such as naming the provider on
// the SERVER span, makes it in), if every one of them has ended by then, and
// are not kept: held as objects for the batch's 50 ms, a thousand requests'
// spans a second were most of what each young-generation collection had to
// copy (bench/RESULTS.md, gateway maximum). A request with a span still open
// (a stream's attempt waiting for its upstream's end, or being cancelled as
// its client leaves) keeps its spans until the batch goes, so that what is
// recorded on them meanwhile makes it in.
import { SpanRequestWriter, type ResourcePairs } from './span-export.js';
import type { SpanRecord } from './spans.js';

/** ms a span may wait for companions before its batch goes. */
export const SPAN_FLUSH_DELAY_MS = 50;
/** A batch goes as soon as it holds this many spans. */
export const SPAN_BATCH_MAX = 512;

export interface SpanBatcherOptions {
  readonly resource: ResourcePairs;
  /** Receives one batch: an encoded ExportTraceServiceRequest and how many spans it holds. */
  readonly emit: (request: Uint8Array, spans: number) => void;
  /** A span that could not be encoded, left out of its batch. */
  readonly dropped: (err: unknown) => void;
}

export class SpanBatcher {
  readonly #options: SpanBatcherOptions;
  readonly #request: SpanRequestWriter;
  /** Requests closed in this turn of the event loop, settled at its end. */
  #closed: Array<readonly SpanRecord[]> = [];
  #settling: NodeJS.Immediate | undefined;
  /** Spans of requests with a span still open, encoded when the batch goes. */
  #open: SpanRecord[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: SpanBatcherOptions) {
    this.#options = options;
    this.#request = new SpanRequestWriter(options.resource);
  }

  /** One request's spans, once it has closed. */
  add(spans: readonly SpanRecord[]): void {
    this.#closed.push(spans);
    this.#settling ??= setImmediate(() => this.#settle());
  }

  flush(): void {
    this.#settleClosed();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const span of this.#open) this.#write(span);
    this.#open = [];
    const count = this.#request.spans;
    if (count === 0) return;
    this.#options.emit(this.#request.finish(), count);
  }

  #settle(): void {
    this.#settleClosed();
    const pending = this.#request.spans + this.#open.length;
    if (pending >= SPAN_BATCH_MAX) this.flush();
    else if (pending > 0) this.#timer ??= setTimeout(() => this.flush(), SPAN_FLUSH_DELAY_MS);
  }

  #settleClosed(): void {
    clearImmediate(this.#settling);
    this.#settling = undefined;
    const closed = this.#closed;
    this.#closed = [];
    for (const spans of closed) {
      if (spans.every((span) => span.ended)) for (const span of spans) this.#write(span);
      else for (const span of spans) this.#open.push(span);
    }
  }

  #write(span: SpanRecord): void {
    try {
      this.#request.add(span);
    } catch (err) {
      this.#options.dropped(err);
    }
  }
}
