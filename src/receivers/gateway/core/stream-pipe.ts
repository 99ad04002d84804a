// Streams an upstream's chunks to the client as server-sent events in the
// client's protocol (the request's StreamEncoder writes each event). Nothing
// is sent until the first chunk exists, so a failure before it can still fall
// back; after it, a failure ends the stream with an in-band error event.
import { writeStreamHead } from './answer-head.js';
import type { RequestState } from './attempt.js';
import { attemptFailure, type AttemptOutcome } from './attempt-failure.js';
import { captureOutput, type CapturedChoice } from './capture.js';
import type { GatewayHttpError } from './http-error.js';
import type { StreamEncoder } from './protocol.js';
import { endFailedStream, type StreamExchange, type StreamPipe } from './stream-exchange.js';
import { UpstreamStreamError, type StreamMapper } from '../providers/shared/types.js';
import type { ChatCompletionChunk, CustomToolCall, ToolCall, ToolCallDelta, Usage } from '../providers/shared/openai-types.js';
import { recordUsage } from './span-usage.js';
import { recordCost } from './usage-cost.js';
import type { Served, UsageMeter } from '../../../usage/meter.js';
import type { Cost } from '../../../shared/money.js';
import { tokensOf } from '../../../shared/tokens.js';
import { estimateChatInputTokens, outputChars, tokensForChars } from './token-estimate.js';
import type { SpanRecord } from './spans.js';
import type { AttemptClock } from './upstream.js';

export type StreamResult = { answered: true; outcome: AttemptOutcome } | { answered: false; outcome: AttemptOutcome; error: GatewayHttpError; fallback: boolean };

class StreamObserver {
  model: string | undefined;
  id: string | undefined;
  /** The latest usage report: reports are cumulative, so the last one stands. */
  usage: Usage | undefined;
  /** True when `usage` is the gateway's estimate, not the upstream's report. */
  estimated = false;
  /** Characters of text, reasoning and tool calls relayed: the output estimate's base. */
  relayedChars = 0;
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
        seen = { content: '', refusal: '', toolCalls: [], finishReason: null };
        this.choices[choice.index] = seen;
      }
      if (choice.finish_reason != null) seen.finishReason = choice.finish_reason;
      this.relayedChars += outputChars(choice.delta);
      if (this.#capture) collectDelta(seen, choice.delta);
    }
  }

  record(span: SpanRecord, capture: boolean, meter: UsageMeter | undefined): void {
    if (this.model !== undefined) span.str('gen_ai.response.model', this.model);
    if (this.id !== undefined) span.str('gen_ai.response.id', this.id);
    if (this.usage !== undefined) recordUsage(span, this.usage);
    if (this.estimated) span.str('sluice.usage.source', 'estimate');
    recordCost(span, this.cost);
    const present = this.choices.filter((c) => c !== undefined);
    if (meter !== undefined) meter.finishReason = present[0]?.finishReason ?? '';
    span.strings('gen_ai.response.finish_reasons', present.map((c) => c.finishReason ?? ''));
    if (capture) span.str('gen_ai.output.messages', captureOutput(present));
  }
}


function collectDelta(seen: CapturedChoice, delta: ChatCompletionChunk['choices'][number]['delta']): void {
  if (typeof delta.content === 'string') seen.content += delta.content;
  if (typeof delta.refusal === 'string') seen.refusal = (seen.refusal ?? '') + delta.refusal;
  for (const call of delta.tool_calls ?? []) {
    const captured = capturedCall(seen.toolCalls, call);
    if (captured.type === 'custom') captured.custom.input += call.custom?.input ?? '';
    else captured.function.arguments += call.function?.arguments ?? '';
  }
}

/** The call a delta continues or starts: by index, or (servers that leave index out) by id, a delta with neither continuing the last. */
function capturedCall(calls: Array<ToolCall | CustomToolCall>, call: ToolCallDelta): ToolCall | CustomToolCall {
  const known = typeof call.index === 'number' ? calls[call.index] : call.id === undefined ? calls.at(-1) : calls.find((c) => c.id === call.id);
  if (known !== undefined) return known;
  const id = call.id ?? '';
  const started: ToolCall | CustomToolCall =
    call.type === 'custom' || call.custom !== undefined ? { id, type: 'custom', custom: { name: call.custom?.name ?? '', input: '' } } : { id, type: 'function', function: { name: call.function?.name ?? '', arguments: '' } };
  if (typeof call.index === 'number') calls[call.index] = started;
  else calls.push(started);
  return started;
}

/** What the attempt knows that the pipe needs. */
export interface ChatStreamOptions {
  readonly mapper: StreamMapper;
  readonly slug: string;
  readonly redact: (text: string) => string;
  readonly state: RequestState;
  readonly span: SpanRecord;
  readonly capture: boolean;
  readonly clock: AttemptClock;
  readonly served: Served;
}

/**
 * A 2xx chat stream: each body part through the adapter's mapper, each chunk
 * through the client's encoder, as the part arrives.
 */
export class ChatStreamPipe implements StreamPipe<StreamResult> {
  readonly #options: ChatStreamOptions;
  readonly #observer: StreamObserver;
  /** Set once the first chunk has gone to the client: from then on the attempt is committed. */
  #encoder: StreamEncoder | undefined;

  constructor(options: ChatStreamOptions) {
    this.#options = options;
    this.#observer = new StreamObserver(options.capture);
  }

  part(part: Buffer, exchange: StreamExchange<StreamResult>): void {
    const mapper = this.#options.mapper;
    this.#deliver(mapper.push(part), exchange);
    this.#after(mapper, exchange);
  }

  end(exchange: StreamExchange<StreamResult>): void {
    const mapper = this.#options.mapper;
    this.#deliver(mapper.end(), exchange);
    if (mapper.error !== undefined) throw mapper.error;
    this.#finish(exchange);
  }

  fail(err: unknown): StreamResult {
    const { state, span, clock } = this.#options;
    const failure = attemptFailure(err, clock, this.#options, true);
    span.fail(failure.spanErrorType, failure.spanMessage);
    const encoder = this.#encoder;
    // Nothing reached the client yet: the fallback loop may try the next endpoint.
    if (encoder === undefined) return { answered: false, outcome: failure.outcome, error: failure.error, fallback: failure.fallback };
    // A stream cut short still used what the upstream counted so far; one it
    // counted nothing of (OpenAI's usage comes last) is charged an estimate,
    // so a client that leaves just before the usage chunk is not served free.
    this.#settle(this.#unreported());
    endFailedStream(state.res, state.server, failure, () => encoder.error(failure.error, state));
    this.#record();
    return { answered: true, outcome: failure.outcome };
  }

  /** Chunks the mapper made before an event failed are delivered; then the failure ends the attempt. */
  #after(mapper: StreamMapper, exchange: StreamExchange<StreamResult>): void {
    if (mapper.error !== undefined) throw mapper.error;
    if (mapper.finished) this.#finish(exchange);
  }

  #deliver(chunks: readonly ChatCompletionChunk[], exchange: StreamExchange<StreamResult>): void {
    const { state, served } = this.#options;
    const observer = this.#observer;
    for (const chunk of chunks) {
      const encoder = this.#encoder ?? this.#start();
      observer.observe(chunk);
      // Reported before the chunk is encoded, so a usage chunk carries its cost; charged once the attempt settles.
      if (chunk.usage != null) state.meter?.report(served, tokensOf(chunk.usage));
      const text = encoder.chunk(chunk, state);
      if (text !== '') exchange.write(text);
    }
  }

  /** The answer's headers, on the first chunk: nothing reaches the client before one exists. */
  #start(): StreamEncoder {
    const { state, slug } = this.#options;
    const encoder = state.answer.openStream(state, slug);
    writeStreamHead(state.res, state, slug);
    this.#encoder = encoder;
    state.meter?.firstByte();
    return encoder;
  }

  /** The stream is complete: the client's stream is ended. One that carried no chunk at all is a failed attempt. */
  #finish(exchange: StreamExchange<StreamResult>): void {
    const { state } = this.#options;
    const encoder = this.#encoder;
    if (encoder === undefined) throw new UpstreamStreamError('upstream stream ended without a chunk');
    // An upstream that never reports usage (one ignoring stream_options.include_usage) is charged the estimate.
    this.#settle(this.#unreported());
    state.res.end(encoder.end(state, this.#observer.usage));
    this.#record();
    exchange.complete({ answered: true, outcome: 'success' });
  }

  /**
   * Charges the attempt's latest usage report, before the client's stream
   * ends (the generation is recorded once it has). `soFar`: usage the
   * upstream told before a final report that never came.
   */
  #settle(soFar: Usage | undefined): void {
    const { state, served } = this.#options;
    const observer = this.#observer;
    if (observer.usage === undefined && soFar !== undefined) {
      observer.usage = soFar;
      state.meter?.report(served, tokensOf(soFar));
    }
    const cost = state.meter?.settle();
    if (cost !== undefined) observer.cost = cost;
  }

  /**
   * Undefined when the upstream's usage report came. Otherwise what it told
   * so far (Anthropic's message_start, Gemini's latest usageMetadata), or
   * the estimate of the request when it told nothing; either way with at
   * least the estimated tokens of what was relayed as output, since the
   * output told so far may lag it (message_start's output_tokens is a
   * placeholder of 1, whatever follows).
   */
  #unreported(): Usage | undefined {
    const observer = this.#observer;
    if (observer.usage !== undefined) return undefined;
    const relayed = tokensForChars(observer.relayedChars);
    const told = this.#options.mapper.usageSoFar;
    if (told !== undefined && tokensOf(told).output >= relayed) return told;
    observer.estimated = true;
    const prompt = told === undefined ? estimateChatInputTokens(this.#options.state.request) : tokensOf(told).input;
    return { ...told, prompt_tokens: prompt, completion_tokens: relayed, total_tokens: prompt + relayed };
  }

  #record(): void {
    const { span, capture, state } = this.#options;
    this.#observer.record(span, capture, state.meter);
  }
}
