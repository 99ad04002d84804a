// Streams an upstream's chunks to the client as server-sent events in the
// client's protocol (the request's StreamEncoder writes each event). Nothing
// is sent until the first chunk exists, so a failure before it can still fall
// back; after it, a failure ends the stream with an in-band error event.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { RequestState } from './attempt.js';
import { attemptFailure, type AttemptOutcome } from './attempt-failure.js';
import { captureOutput, type CapturedChoice } from './capture.js';
import type { GatewayHttpError } from './http-error.js';
import type { StreamEncoder } from './protocol.js';
import type { StreamMapper } from '../providers/shared/types.js';
import type { ChatCompletionChunk, Usage } from '../providers/shared/openai-types.js';
import { recordUsage } from './span-usage.js';
import { recordCost } from './usage-cost.js';
import type { Served, UsageMeter } from '../../../usage/meter.js';
import type { Cost } from '../../../shared/money.js';
import { tokensOf } from '../../../shared/tokens.js';
import type { SpanRecord } from './spans.js';
import type { AttemptClock } from './upstream.js';

export type StreamResult = { answered: true; outcome: AttemptOutcome } | { answered: false; outcome: AttemptOutcome; error: GatewayHttpError };

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' };

class StreamObserver {
  model: string | undefined;
  id: string | undefined;
  usage: Usage | undefined;
  /** An upstream may repeat usage; the first report is the one charged. */
  charged = false;
  cost: Cost | undefined;
  readonly choices: CapturedChoice[] = [];
  readonly #capture: boolean;

  constructor(capture: boolean) {
    this.#capture = capture;
  }

  observe(chunk: ChatCompletionChunk): void {
    this.model ??= chunk.model;
    this.id ??= chunk.id;
    if (chunk.usage != null) this.usage = chunk.usage;
    for (const choice of chunk.choices) {
      let seen = this.choices[choice.index];
      if (seen === undefined) {
        seen = { content: '', toolCalls: [], finishReason: null };
        this.choices[choice.index] = seen;
      }
      if (choice.finish_reason != null) seen.finishReason = choice.finish_reason;
      if (this.#capture) collectDelta(seen, choice.delta);
    }
  }

  charge(meter: UsageMeter | undefined, served: Served, usage: Usage): void {
    this.charged = true;
    this.cost = meter?.charge(served, tokensOf(usage));
  }

  record(span: SpanRecord, capture: boolean, meter: UsageMeter | undefined): void {
    if (this.model !== undefined) span.str('gen_ai.response.model', this.model);
    if (this.id !== undefined) span.str('gen_ai.response.id', this.id);
    if (this.usage !== undefined) recordUsage(span, this.usage);
    recordCost(span, this.cost);
    const present = this.choices.filter((c) => c !== undefined);
    if (meter !== undefined) meter.finishReason = present[0]?.finishReason ?? '';
    span.strings('gen_ai.response.finish_reasons', present.map((c) => c.finishReason ?? ''));
    if (capture) span.str('gen_ai.output.messages', captureOutput(present));
  }
}

function collectDelta(seen: CapturedChoice, delta: ChatCompletionChunk['choices'][number]['delta']): void {
  if (typeof delta.content === 'string') seen.content += delta.content;
  for (const call of delta.tool_calls ?? []) {
    let target = seen.toolCalls[call.index];
    if (target === undefined) {
      target = { id: call.id ?? '', type: 'function', function: { name: call.function?.name ?? '', arguments: '' } };
      seen.toolCalls[call.index] = target;
    }
    target.function.arguments += call.function?.arguments ?? '';
  }
}

/**
 * Events parsed from one upstream read can arrive in several data callbacks
 * (one per HTTP chunk); corking until the next tick sends them in one write
 * instead of one each.
 */
function corkedWriter(res: ServerResponse): (text: string) => boolean {
  let corked = false;
  function uncork(): void {
    corked = false;
    res.uncork();
  }
  return function write(text) {
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    return res.write(text);
  };
}

/** A non-2xx answer, read whole for the adapter to classify. */
export interface RefusedStream {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Uint8Array;
}

export type StreamOutcome = { readonly refused: RefusedStream } | { readonly piped: StreamResult; readonly statusCode: number };

/** What the attempt knows that the pipe needs. */
export interface StreamAttemptOptions {
  readonly mapper: () => StreamMapper;
  readonly slug: string;
  readonly headers: Record<string, string>;
  readonly state: RequestState;
  readonly span: SpanRecord;
  readonly capture: boolean;
  readonly clock: AttemptClock;
  readonly served: Served;
}

/**
 * One streaming attempt as undici's dispatch handler: each part of a 2xx body
 * goes through the adapter's mapper and the client's encoder as it arrives,
 * from undici's own callback, with no body stream, async iterator or await
 * per chunk. A slow client pauses the upstream until it drains. `outcome`
 * settles once: rejected when the exchange fails before an answer started
 * (the attempt's catch judges it), with the body of a non-2xx answer, or with
 * the piped stream's result.
 */
export class StreamAttempt implements Dispatcher.DispatchHandler {
  readonly outcome: Promise<StreamOutcome>;
  #resolve!: (outcome: StreamOutcome) => void;
  #reject!: (err: unknown) => void;
  readonly #options: StreamAttemptOptions;
  readonly #observer: StreamObserver;
  readonly #write: (text: string) => boolean;
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #ended = false;
  #statusCode = 0;
  /** A non-2xx answer's headers and body parts. */
  #refused: { headers: IncomingHttpHeaders; parts: Buffer[] } | undefined;
  #mapper: StreamMapper | undefined;
  /** Set once the first chunk has gone to the client: from then on the attempt is committed. */
  #encoder: StreamEncoder | undefined;
  readonly #resume = (): void => this.#controller?.resume();

  constructor(options: StreamAttemptOptions) {
    this.#options = options;
    this.#observer = new StreamObserver(options.capture);
    this.#write = corkedWriter(options.state.res);
    this.outcome = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    options.clock.onAbort = (reason) => this.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    const reason = this.#options.clock.error;
    if (reason !== undefined) controller.abort(reason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#statusCode = statusCode;
    if (statusCode >= 200 && statusCode < 300) this.#mapper = this.#options.mapper();
    else this.#refused = { headers, parts: [] };
  }

  onResponseData(_controller: Dispatcher.DispatchController, part: Buffer): void {
    if (this.#settled) return;
    this.#options.clock.onByte();
    const mapper = this.#mapper;
    if (mapper === undefined) {
      this.#refused?.parts.push(part);
      return;
    }
    try {
      this.#deliver(mapper.push(part));
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (mapper.finished) this.#finish();
  }

  onResponseEnd(): void {
    this.#ended = true;
    if (this.#settled) return;
    const refused = this.#refused;
    if (refused !== undefined) {
      this.#settle();
      const body = refused.parts.length === 1 ? (refused.parts[0] as Buffer) : Buffer.concat(refused.parts);
      this.#resolve({ refused: { statusCode: this.#statusCode, headers: refused.headers, body } });
      return;
    }
    try {
      this.#deliver((this.#mapper as StreamMapper).end());
    } catch (err) {
      this.#fail(err);
      return;
    }
    this.#finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#ended = true;
    if (!this.#settled) this.#fail(error);
  }

  #deliver(chunks: readonly ChatCompletionChunk[]): void {
    const { state, served } = this.#options;
    const observer = this.#observer;
    for (const chunk of chunks) {
      const encoder = this.#encoder ?? this.#start();
      observer.observe(chunk);
      // Charged before the chunk is encoded, so a usage chunk carries the cost.
      if (chunk.usage != null && !observer.charged) observer.charge(state.meter, served, chunk.usage);
      const text = encoder.chunk(chunk, state);
      if (text !== '' && !this.#write(text)) this.#pause();
    }
  }

  /** The answer's headers, on the first chunk: nothing reaches the client before one exists. */
  #start(): StreamEncoder {
    const { state, slug, headers } = this.#options;
    const encoder = state.answer.openStream(state, slug);
    this.#encoder = encoder;
    state.res.writeHead(200, { ...headers, ...SSE_HEADERS });
    state.meter?.firstByte();
    return encoder;
  }

  #pause(): void {
    const controller = this.#controller;
    if (controller === undefined || controller.paused) return;
    controller.pause();
    this.#options.state.res.once('drain', this.#resume);
  }

  /** The stream is complete: the client's stream is ended; an empty one still gets its headers. */
  #finish(): void {
    const { state } = this.#options;
    const encoder = this.#encoder ?? this.#start();
    this.#settle();
    state.res.end(encoder.end(state));
    this.#record();
    this.#resolve({ piped: { answered: true, outcome: 'success' }, statusCode: this.#statusCode });
    // The upstream said it was done; if its body has not ended with that (it
    // usually ends in the same read), the connection is let go of.
    if (!this.#ended) queueMicrotask(() => this.#abandon(new Error('stream finished before its body ended')));
  }

  #fail(err: unknown): void {
    const { state, span, clock, slug } = this.#options;
    this.#settle();
    this.#abandon(err instanceof Error ? err : new Error(String(err)));
    if (this.#mapper === undefined) {
      // No answer yet, or a non-2xx one that broke off: the attempt's catch judges the error.
      this.#reject(err);
      return;
    }
    const failure = attemptFailure(err, clock, slug);
    span.fail(failure.spanErrorType, failure.error.message);
    const encoder = this.#encoder;
    if (encoder === undefined) {
      // Nothing reached the client yet: the fallback loop may try the next endpoint.
      this.#resolve({ piped: { answered: false, outcome: failure.outcome, error: failure.error }, statusCode: this.#statusCode });
      return;
    }
    state.server.fail(failure.spanErrorType === 'cancelled' ? 'cancelled' : 'stream_error', failure.error.message);
    const res = state.res;
    if (failure.spanErrorType !== 'cancelled' && !res.destroyed) res.end(encoder.error(failure.error, state));
    else res.destroy();
    this.#record();
    this.#resolve({ piped: { answered: true, outcome: failure.outcome }, statusCode: this.#statusCode });
  }

  #record(): void {
    const { span, capture, state } = this.#options;
    this.#observer.record(span, capture, state.meter);
  }

  /** Aborts the upstream exchange if its body is still coming. */
  #abandon(reason: Error): void {
    if (!this.#ended) this.#controller?.abort(reason);
  }

  #settle(): void {
    this.#settled = true;
    this.#options.clock.onAbort = undefined;
    this.#options.state.res.off('drain', this.#resume);
  }
}
