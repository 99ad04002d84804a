// Collects the gateway's spans and hands them downstream in batches, like an
// SDK's BatchSpanProcessor: one pipeline batch per request would cost every
// processor and exporter a full round per request.
import type { Span } from '../../../otlp/model.js';

/** ms a span may wait for companions before its batch goes. */
export const SPAN_FLUSH_DELAY_MS = 50;
/** A batch goes as soon as it holds this many spans. */
export const SPAN_BATCH_MAX = 512;

export class SpanBatcher<T = Span> {
  readonly #emit: (spans: T[]) => void;
  #pending: T[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(emit: (spans: T[]) => void) {
    this.#emit = emit;
  }

  add(spans: readonly T[]): void {
    for (const span of spans) this.#pending.push(span);
    if (this.#pending.length >= SPAN_BATCH_MAX) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), SPAN_FLUSH_DELAY_MS);
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0) return;
    const spans = this.#pending;
    this.#pending = [];
    this.#emit(spans);
  }
}
