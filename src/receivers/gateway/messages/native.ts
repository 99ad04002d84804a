// One attempt on an `anthropic` provider: the client's body travels as it
// came (only `model` is replaced and the gateway's own providerOptions left
// out), with the client's anthropic-version and anthropic-beta headers; the
// answer comes back byte for byte, a stream event for event. The body is read
// on the way only for the CLIENT span (usage, stop reason) and so that an
// error before the first event can still fall back.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { writeJsonAnswer, writeStreamHead } from '../core/answer-head.js';
import { failedAttempt, httpFailure, type AttemptEnv, type AttemptResult, type ResolvedProvider } from '../core/attempt.js';
import { attemptFailure } from '../core/attempt-failure.js';
import type { PlanState } from '../core/attempt-loop.js';
import { servedBy, type Endpoint } from '../core/catalog.js';
import { captureOutput, type CapturedChoice } from '../core/capture.js';
import { recordUsage } from '../core/span-usage.js';
import { insertUsageCost, recordCost } from '../core/usage-cost.js';
import type { Served, UsageMeter } from '../../../usage/meter.js';
import type { Cost } from '../../../shared/money.js';
import { tokenCount, tokensOf } from '../../../shared/tokens.js';
import { estimateMessagesInputTokens, tokensForChars } from '../core/token-estimate.js';
import { recordMessagesSettings } from '../core/span-request.js';
import { startClientSpan, type SpanRecord } from '../core/spans.js';
import { SseParser, type SseEvent } from '../providers/shared/sse.js';
import { endFailedStream, StreamExchange, type StreamPipe } from '../core/stream-exchange.js';
import { AttemptClock, parseUpstreamUrl } from '../core/upstream.js';
import type { AnthropicProviderConfig } from '../providers/anthropic/config.js';
import { classifyAnthropicEvent } from '../providers/anthropic/errors.js';
import { mapUsage } from '../providers/anthropic/response.js';
import type { AnthropicUsage } from '../providers/anthropic/wire.js';
import { requireApiKey, UpstreamStreamError, type UpstreamRequest } from '../providers/shared/types.js';
import { anthropicToolCallId } from '../providers/shared/tool-call-id.js';
import { anthropicErrorBody } from './errors.js';

export interface NativeState extends PlanState {
  /** The client's request body, parsed. */
  readonly body: Record<string, unknown>;
  readonly stream: boolean;
  /** The upstream path: /v1/messages or /v1/messages/count_tokens. */
  readonly path: string;
  readonly operation: 'chat' | 'count_tokens';
  readonly anthropicVersion: string | undefined;
  readonly anthropicBeta: string | undefined;
  readonly res: ServerResponse;
  readonly spans: SpanRecord[];
  /** The request's usage meter (undefined for count_tokens, which generates nothing). */
  readonly meter: UsageMeter | undefined;
  /** gen_ai.input.messages when capture_content is on. */
  readonly inputMessages: string | undefined;
  /** gen_ai.system_instructions (the request's `system`) when capture_content is on. */
  readonly systemInstructions?: string | undefined;
}

/** What the span learns from an answer, streamed or not. */
interface Observed {
  id?: string;
  model?: string;
  stopReason?: string | null;
  usage: Partial<AnthropicUsage>;
  /** A stream's message_delta came: its usage counts the output (message_start's output_tokens is a placeholder). */
  outputCounted?: boolean;
  /** Characters of text, thinking and tool input a stream relayed: what a stream cut before message_delta is charged as output at least. */
  relayedChars?: number;
  /** The output charged is the gateway's estimate (sluice.usage.source). */
  estimated?: boolean;
  /** Set once the attempt's usage was charged. */
  cost?: Cost;
  /** The answer's text and tool calls, collected only when capture_content is on. */
  output?: CapturedChoice;
}

export async function runNativeAttempt(env: AttemptEnv, provider: ResolvedProvider, endpoint: Endpoint, state: NativeState): Promise<AttemptResult> {
  state.attempts += 1;
  const started = performance.now();
  const span = startClientSpan(`${state.operation} ${endpoint.model}`, state.server);
  state.spans.push(span);
  span.str('gen_ai.operation.name', state.operation).str('gen_ai.provider.name', provider.adapter.genAiProviderName).str('sluice.provider', provider.slug).str('gen_ai.request.model', endpoint.model);
  if (state.operation === 'chat') recordMessagesSettings(span, state.body);
  if (state.systemInstructions !== undefined) span.str('gen_ai.system_instructions', state.systemInstructions);
  if (state.inputMessages !== undefined) span.str('gen_ai.input.messages', state.inputMessages);
  const clock = new AttemptClock(provider.firstByteMs, provider.idleMs, state.client);
  const observed: Observed = state.inputMessages === undefined ? { usage: {} } : { usage: {}, output: { content: '', toolCalls: [], finishReason: null } };
  const served = servedBy(endpoint, provider.slug);
  try {
    const upstream = buildNativeRequest(provider, endpoint.model, state);
    // A request refused here (no api_key) never reaches the upstream: no generation is recorded for it.
    state.meter?.attempt(served, state.stream);
    const url = parseUpstreamUrl(upstream.url);
    span.str('server.address', url.hostname).int('server.port', url.port);
    if (state.stream) {
      const exchange = new StreamExchange(state.res, clock, span, new NativeStreamPipe({ state, span, clock, slug: provider.slug, redact: provider.redact, observed, served }));
      env.agents.stream(provider.slug, upstream, url, clock, span, exchange);
      const outcome = await exchange.outcome;
      if ('refused' in outcome) return refusedAttempt(env, provider, span, outcome.refused.statusCode, outcome.refused.body, outcome.refused.headers);
      const result = outcome.piped;
      env.countAttempt(provider.slug, result.answered ? (span.failed ? 'stream_error' : 'success') : 'stream_error');
      return result;
    }
    const response = await env.agents.exchange(provider.slug, upstream, url, clock, span);
    span.int('http.response.status_code', response.statusCode);
    if (response.statusCode < 200 || response.statusCode >= 300) return refusedAttempt(env, provider, span, response.statusCode, response.body, response.headers);
    const text = Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength).toString('utf8');
    observeMessage(nativeAnswer(JSON.parse(text), state.operation), observed);
    // Charged before the answer is written, so a priced model's usage carries the cost
    // (an unpriced one's answer stays byte for byte what Anthropic sent).
    charge(span, observed, state.meter, served);
    const answer = state.meter?.priced === true && observed.cost !== undefined ? insertUsageCost(text, state.meter.costUsd) : text;
    state.meter?.firstByte();
    writeJsonAnswer(state.res, state, provider.slug, answer, requestIdHead(response.headers));
    env.countAttempt(provider.slug, 'success');
    return { answered: true };
  } catch (err) {
    return failedAttempt(env, provider, span, err, clock);
  } finally {
    clock.clear();
    charge(span, observed, state.meter, served);
    record(span, observed);
    span.end();
    env.timeAttempt(provider.slug, (performance.now() - started) / 1000);
  }
}

/**
 * Messages whose tool_use ids (and tool_result tool_use_ids) Anthropic would
 * refuse go with ids it takes, as to the chat route's `anthropic` type: a
 * Gemini answer's without its thought signature, another provider's with
 * characters outside its pattern (Kimi K2's `functions.get_weather:0`) in it
 * (anthropicToolCallId, the same for a call and its result). Other messages
 * are passed on as they came.
 */
function withAnthropicToolIds(messages: readonly unknown[]): unknown[] {
  return messages.map(function anthropicIds(message) {
    if (typeof message !== 'object' || message === null) return message;
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content) || !content.some(carriesRefusedId)) return message;
    return {
      ...message,
      content: content.map(function block(b: unknown) {
        if (!carriesRefusedId(b)) return b;
        const part = b as Record<string, unknown>;
        return part['type'] === 'tool_use' ? { ...part, id: anthropicToolCallId(String(part['id'])) } : { ...part, tool_use_id: anthropicToolCallId(String(part['tool_use_id'])) };
      }),
    };
  });
}

function carriesRefusedId(block: unknown): boolean {
  if (typeof block !== 'object' || block === null) return false;
  const b = block as Record<string, unknown>;
  const id = b['type'] === 'tool_use' ? b['id'] : b['type'] === 'tool_result' ? b['tool_use_id'] : undefined;
  return typeof id === 'string' && anthropicToolCallId(id) !== id;
}

/**
 * Anthropic's id for the request (`req_...`), which its SDKs show as
 * `_request_id` and its support asks for: the one upstream header an answer
 * passes on (others tell of the provider's account, or set its cookies).
 */
function requestIdHead(headers: IncomingHttpHeaders): string[] {
  const id = requestIdOf(headers);
  return id === undefined ? [] : ['request-id', id];
}

/** The request-id header's value, if it is a plain id. */
function requestIdOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['request-id'];
  const id = Array.isArray(value) ? value[0] : value;
  return id !== undefined && /^[\w-]{1,128}$/.test(id) ? id : undefined;
}

/** An HTTP error from Anthropic: its request-id goes with it, as with an answer (the SDKs' `APIError.requestID`). */
function refusedAttempt(env: AttemptEnv, provider: ResolvedProvider, span: SpanRecord, status: number, body: Uint8Array, headers: IncomingHttpHeaders): AttemptResult {
  const result = httpFailure(env, provider, span, status, body, headers);
  const id = requestIdOf(headers);
  return result.answered || id === undefined ? result : { ...result, error: result.error.withHeaders({ 'request-id': id }) };
}

/** A 2xx body is passed on only if it is what the operation answers: a Message, or count_tokens' {input_tokens}. */
function nativeAnswer(parsed: unknown, operation: NativeState['operation']): Record<string, unknown> {
  const answer = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  const expected = operation === 'count_tokens' ? typeof answer?.['input_tokens'] === 'number' : answer?.['type'] === 'message';
  if (answer === undefined || !expected) {
    throw new UpstreamStreamError(operation === 'count_tokens' ? 'upstream answered without input_tokens' : 'upstream answered with a body that is not a message');
  }
  return answer;
}

export function buildNativeRequest(provider: ResolvedProvider, model: string, state: NativeState): UpstreamRequest {
  const config = provider.config as AnthropicProviderConfig;
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(state.body)) if (key !== 'providerOptions') body[key] = key === 'model' ? model : state.body[key];
  if (Array.isArray(body['messages'])) body['messages'] = withAnthropicToolIds(body['messages'] as unknown[]);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: state.stream ? 'text/event-stream' : 'application/json',
    ...config.headers,
    'x-api-key': requireApiKey({ slug: provider.slug, provider: config }),
    'anthropic-version': state.anthropicVersion ?? config.anthropic_version,
  };
  if (state.anthropicBeta !== undefined) headers['anthropic-beta'] = state.anthropicBeta;
  return { url: `${config.base_url.replace(/\/+$/, '')}${state.path}`, method: 'POST', headers, body: JSON.stringify(body) };
}


/**
 * Forwards the upstream's events as they come. Nothing is written before the
 * first event that is not an error, so an overloaded stream can still fall back.
 */
interface NativeStreamOptions {
  readonly state: NativeState;
  readonly span: SpanRecord;
  readonly clock: AttemptClock;
  readonly slug: string;
  readonly redact: (text: string) => string;
  readonly observed: Observed;
  readonly served: Served;
}

class NativeStreamPipe implements StreamPipe<AttemptResult> {
  readonly #sse = new SseParser();
  #committed = false;
  readonly #options: NativeStreamOptions;

  constructor(options: NativeStreamOptions) {
    this.#options = options;
  }

  part(part: Buffer, exchange: StreamExchange<AttemptResult>): void {
    this.#events(this.#sse.push(part), exchange);
  }

  end(exchange: StreamExchange<AttemptResult>): void {
    this.#events(this.#sse.end(), exchange);
    if (!exchange.settled) throw new UpstreamStreamError('anthropic stream ended before message_stop');
  }

  fail(err: unknown): AttemptResult {
    const { span, state, clock } = this.#options;
    const failure = attemptFailure(err, clock, this.#options, true);
    span.fail(failure.spanErrorType, failure.spanMessage);
    if (!this.#committed) return { answered: false, fallback: failure.fallback, error: failure.error };
    // Charged before the client's stream ends: the generation is recorded once it has.
    countUnreported(this.#options.observed, state.body);
    charge(span, this.#options.observed, state.meter, this.#options.served);
    endFailedStream(state.res, state.server, failure, () => `event: error\ndata: ${JSON.stringify(anthropicErrorBody(failure.error))}\n\n`);
    return { answered: true };
  }

  /** Events up to the one that settles the attempt; what follows it is dropped. */
  #events(events: readonly SseEvent[], exchange: StreamExchange<AttemptResult>): void {
    for (const event of events) {
      this.#event(event, exchange);
      if (exchange.settled) return;
    }
  }

  #event(event: SseEvent, exchange: StreamExchange<AttemptResult>): void {
    // An event with empty data (a keep-alive some servers in between send) says nothing: the SDKs skip it too.
    if (event.data === '') return;
    const { span, state } = this.#options;
    const data = parseEvent(event.data);
    const type = typeof data['type'] === 'string' ? data['type'] : (event.event ?? 'unknown');
    // Before the first byte an in-band error is an answer like an HTTP one, judged as that answer would be.
    if (type === 'error' && !this.#committed) throw errorEvent(data, event.data);
    observeEvent(type, data, this.#options.observed);
    if (!this.#committed) {
      writeStreamHead(state.res, state, this.#options.slug, requestIdHead(exchange.headers));
      this.#committed = true;
      state.meter?.firstByte();
    }
    // An event whose data came on several lines goes on the same way; an error's words may quote the provider's key.
    const text = type === 'error' ? this.#options.redact(event.data) : event.data;
    exchange.write(`event: ${event.event ?? type}\ndata: ${text.replaceAll('\n', '\ndata: ')}\n\n`);
    if (type === 'error') {
      // Recorded as an error event before the first byte would be, by the answer it stands for.
      const failure = attemptFailure(errorEvent(data, event.data), this.#options.clock, this.#options, true);
      span.fail(failure.spanErrorType, failure.spanMessage);
    }
    if (type === 'error' || type === 'message_stop') {
      countUnreported(this.#options.observed, state.body);
      charge(span, this.#options.observed, state.meter, this.#options.served);
      state.res.end();
      exchange.complete({ answered: true });
    }
  }
}

/** An `error` event as the failure it reports. */
function errorEvent(data: Record<string, unknown>, text: string): UpstreamStreamError {
  const error = (data['error'] ?? {}) as { type?: unknown; message?: unknown };
  const errorType = typeof error.type === 'string' ? error.type : 'api_error';
  return new UpstreamStreamError(typeof error.message === 'string' ? error.message : 'anthropic stream error', errorType, classifyAnthropicEvent(text));
}

function parseEvent(data: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(data);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new UpstreamStreamError('anthropic sent an event that is not a JSON object');
}

/** An upstream's stop_reason of another type than string or null is not passed on into spans and records. */
function observeStopReason(value: unknown, observed: Observed): void {
  if (typeof value === 'string' || value === null) observed.stopReason = value;
}

function observeMessage(message: Record<string, unknown>, observed: Observed): void {
  if (typeof message['id'] === 'string') observed.id = message['id'];
  if (typeof message['model'] === 'string') observed.model = message['model'];
  observeStopReason(message['stop_reason'], observed);
  const usage = message['usage'];
  if (typeof usage === 'object' && usage !== null) Object.assign(observed.usage, usage);
  if (observed.output !== undefined && Array.isArray(message['content'])) {
    for (const block of message['content'] as Array<Record<string, unknown>>) {
      if (block['type'] === 'text') observed.output.content += String(block['text']);
      else if (block['type'] === 'tool_use') observed.output.toolCalls.push({ id: String(block['id']), type: 'function', function: { name: String(block['name']), arguments: JSON.stringify(block['input'] ?? {}) } });
    }
  }
  // count_tokens answers {input_tokens}
  if (typeof message['input_tokens'] === 'number') observed.usage.input_tokens = message['input_tokens'];
}

function observeEvent(type: string, data: Record<string, unknown>, observed: Observed): void {
  if (type === 'content_block_delta') observed.relayedChars = (observed.relayedChars ?? 0) + deltaChars(data['delta']);
  const output = observed.output;
  if (output !== undefined && (type === 'content_block_start' || type === 'content_block_delta')) {
    const block = (data['content_block'] ?? {}) as Record<string, unknown>;
    const delta = (data['delta'] ?? {}) as Record<string, unknown>;
    if (block['type'] === 'tool_use') output.toolCalls.push({ id: String(block['id']), type: 'function', function: { name: String(block['name']), arguments: '' } });
    if (delta['type'] === 'text_delta') output.content += String(delta['text']);
    const last = output.toolCalls.at(-1);
    if (delta['type'] === 'input_json_delta' && last?.type === 'function') last.function.arguments += String(delta['partial_json']);
  }
  if (type === 'message_start') observeMessage((data['message'] ?? {}) as Record<string, unknown>, observed);
  else if (type === 'message_delta') {
    observeStopReason(((data['delta'] ?? {}) as { stop_reason?: unknown }).stop_reason, observed);
    observed.outputCounted = true;
    const usage = data['usage'];
    if (typeof usage === 'object' && usage !== null) {
      for (const [key, value] of Object.entries(usage)) if (typeof value === 'number') (observed.usage as Record<string, number>)[key] = value;
    }
  }
}

/** The characters a content_block_delta carries: text, thinking or tool input. */
function deltaChars(delta: unknown): number {
  if (typeof delta !== 'object' || delta === null) return 0;
  const d = delta as Record<string, unknown>;
  const text = d['type'] === 'text_delta' ? d['text'] : d['type'] === 'thinking_delta' ? d['thinking'] : d['type'] === 'input_json_delta' ? d['partial_json'] : undefined;
  return typeof text === 'string' ? text.length : 0;
}

/**
 * A stream that ended before message_delta counted its output is charged at
 * least the estimate of what was relayed (a token per 4 characters), as a
 * chat stream is, rather than message_start's placeholder of 1; one whose
 * message_start told no input tokens, the estimate of its request's.
 */
function countUnreported(observed: Observed, body: Record<string, unknown>): void {
  if (observed.outputCounted === true) return;
  if (observed.usage.input_tokens === undefined) {
    observed.usage.input_tokens = estimateMessagesInputTokens(body);
    observed.estimated = true;
  }
  const relayed = tokensForChars(observed.relayedChars ?? 0);
  if (tokenCount(observed.usage.output_tokens) >= relayed) return;
  observed.usage.output_tokens = relayed;
  observed.estimated = true;
}

/** Once per attempt, when its usage is known: the cost at the endpoint's prices, on the span and the meter. */
function charge(span: SpanRecord, observed: Observed, meter: UsageMeter | undefined, served: Served): void {
  if (observed.cost !== undefined || meter === undefined) return;
  if (observed.usage.input_tokens === undefined && observed.usage.output_tokens === undefined) return;
  observed.cost = meter.charge(served, tokensOf(mapUsage(observed.usage)));
  recordCost(span, observed.cost);
  if (observed.stopReason !== undefined && observed.stopReason !== null) meter.finishReason = observed.stopReason;
}

function record(span: SpanRecord, observed: Observed): void {
  if (observed.model !== undefined) span.str('gen_ai.response.model', observed.model);
  if (observed.id !== undefined) span.str('gen_ai.response.id', observed.id);
  if (observed.usage.input_tokens !== undefined || observed.usage.output_tokens !== undefined) recordUsage(span, mapUsage(observed.usage));
  if (observed.estimated === true) span.str('sluice.usage.source', 'estimate');
  if (observed.stopReason !== undefined && observed.stopReason !== null) span.strings('gen_ai.response.finish_reasons', [observed.stopReason]);
  if (observed.output !== undefined) span.str('gen_ai.output.messages', captureOutput([{ ...observed.output, finishReason: observed.stopReason ?? null }]));
}
