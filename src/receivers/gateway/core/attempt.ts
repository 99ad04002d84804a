// One upstream attempt: map the request, send it on the provider's kept-alive
// agent, and either answer the client (success, or a committed stream) or
// return a failure for the fallback loop to judge.
import type { ServerResponse } from 'node:http';
import { servedBy, type Endpoint } from './catalog.js';
import type { ClientLink } from './client-link.js';
import { captureOutput, choicesOf } from './capture.js';
import { GatewayHttpError } from './http-error.js';
import type { ChatCompletion, ChatCompletionRequest, Usage } from '../providers/shared/openai-types.js';
import type { AttemptContext, BaseProviderConfig, ProviderAdapter } from '../providers/shared/types.js';
import type { CompletionAnswer } from './protocol.js';
import { recordRequestSettings } from './span-request.js';
import { recordUsage } from './span-usage.js';
import { recordCost } from './usage-cost.js';
import type { Served, UsageMeter } from '../../../usage/meter.js';
import { tokensOf } from '../../../shared/tokens.js';
import { startClientSpan, type SpanRecord } from './spans.js';
import { estimateCompletionUsage } from './token-estimate.js';
import { ChatStreamPipe } from './stream-pipe.js';
import { StreamExchange } from './stream-exchange.js';
import { AttemptClock, parseUpstreamUrl, type UpstreamAgents } from './upstream.js';
import { attemptFailure, retryAfterOf, type AttemptOutcome } from './attempt-failure.js';

export interface ResolvedProvider {
  readonly slug: string;
  readonly config: BaseProviderConfig;
  readonly adapter: ProviderAdapter;
  readonly firstByteMs: number;
  readonly idleMs: number;
  /** Hides the provider's credentials in what its upstream says (see provider-secrets.ts). */
  readonly redact: (text: string) => string;
}

export interface AttemptEnv {
  readonly agents: UpstreamAgents;
  readonly captureContent: boolean;
  readonly countAttempt: (provider: string, outcome: AttemptOutcome) => void;
  /** The attempt's duration, from before its request was built until its answer (or stream) ended. */
  readonly timeAttempt: (provider: string, seconds: number) => void;
}

/** One request answered from the Chat Completions lingua franca, whatever protocol the client speaks. */
export interface RequestState {
  /** The request the next attempt sends; a route may fit it to each endpoint before its attempt (the AI SDK's reasoning). */
  request: ChatCompletionRequest;
  readonly res: ServerResponse;
  /** Writes the answer in the client's protocol. */
  readonly answer: CompletionAnswer;
  /** The request's usage meter (generation id, cost), on routes that generate. */
  readonly meter: UsageMeter | undefined;
  readonly includeUsage: boolean;
  readonly inputMessages: string | undefined;
  /** gen_ai.system_instructions when capture_content is on and the client's API gives them apart (Messages). */
  readonly systemInstructions?: string | undefined;
  readonly server: SpanRecord;
  readonly spans: SpanRecord[];
  readonly client: ClientLink;
  attempts: number;
}

export type AttemptResult = { readonly answered: true } | { readonly answered: false; readonly error: GatewayHttpError; readonly fallback: boolean };

export async function runAttempt(env: AttemptEnv, provider: ResolvedProvider, endpoint: Endpoint, state: RequestState): Promise<AttemptResult> {
  state.attempts += 1;
  const started = performance.now();
  const span = startAttemptSpan('chat', provider, endpoint, state);
  recordRequestSettings(span, state.request);
  if (state.systemInstructions !== undefined) span.str('gen_ai.system_instructions', state.systemInstructions);
  if (state.inputMessages !== undefined) span.str('gen_ai.input.messages', state.inputMessages);
  const served = servedBy(endpoint, provider.slug);
  const clock = new AttemptClock(provider.firstByteMs, provider.idleMs, state.client);
  const ctx = attemptContext(provider, endpoint, clock);
  try {
    const built = provider.adapter.buildRequest(state.request, ctx);
    // Most adapters map synchronously: awaiting only a promise saves a microtask turn.
    const upstream = built instanceof Promise ? await built : built;
    // A request the adapter refused never reaches the upstream: no generation is recorded for it.
    state.meter?.attempt(served, state.request.stream === true);
    const url = parseUpstreamUrl(upstream.url);
    span.str('server.address', url.hostname).int('server.port', url.port);
    if (state.request.stream === true) {
      const mapper = provider.adapter.streamMapper(ctx, state.request);
      const pipe = new ChatStreamPipe({ mapper, slug: provider.slug, redact: provider.redact, state, span, capture: env.captureContent, clock, served });
      const exchange = new StreamExchange(state.res, clock, span, pipe);
      env.agents.stream(provider.slug, upstream, url, clock, span, exchange);
      const outcome = await exchange.outcome;
      if ('refused' in outcome) return httpFailure(env, provider, span, outcome.refused.statusCode, outcome.refused.body, outcome.refused.headers);
      const committed = outcome.piped;
      env.countAttempt(provider.slug, committed.outcome);
      return committed.answered ? { answered: true } : { answered: false, fallback: committed.fallback, error: committed.error };
    }
    const response = await env.agents.exchange(provider.slug, upstream, url, clock, span);
    span.int('http.response.status_code', response.statusCode);
    if (!isSuccess(response.statusCode)) return httpFailure(env, provider, span, response.statusCode, response.body, response.headers);
    const adapter = provider.adapter;
    if (adapter.passthrough === true) {
      const text = bodyText(response.body);
      const completion = adapter.parseResponseText === undefined ? adapter.parseResponse(response.body, ctx, state.request) : adapter.parseResponseText(text, ctx);
      const charged = recordCompletion(span, completion, env.captureContent, state, served);
      state.answer.complete(state.res, completion, text, state, provider.slug, charged);
    } else {
      const completion = adapter.parseResponse(response.body, ctx, state.request);
      const charged = recordCompletion(span, completion, env.captureContent, state, served);
      state.answer.complete(state.res, completion, undefined, state, provider.slug, charged);
    }
    env.countAttempt(provider.slug, 'success');
    return { answered: true };
  } catch (err) {
    const result = failedAttempt(env, provider, span, err, clock);
    // An answer already begun cannot be followed by another endpoint's: the client sees the connection end.
    if (!result.answered && state.res.headersSent) {
      if (!state.res.writableEnded) state.res.destroy();
      return { answered: true };
    }
    return result;
  } finally {
    clock.clear();
    span.end();
    env.timeAttempt(provider.slug, (performance.now() - started) / 1000);
  }
}

/** An attempt's CLIENT span (`chat <model>`, `embeddings <model>`) with the GenAI attributes every operation shares. */
export function startAttemptSpan(operation: 'chat' | 'embeddings', provider: ResolvedProvider, endpoint: Endpoint, state: { readonly server: SpanRecord; readonly spans: SpanRecord[] }): SpanRecord {
  const span = startClientSpan(`${operation} ${endpoint.model}`, state.server);
  state.spans.push(span);
  span.str('gen_ai.operation.name', operation).str('gen_ai.provider.name', provider.adapter.genAiProviderName).str('sluice.provider', provider.slug).str('gen_ai.request.model', endpoint.model);
  return span;
}

/**
 * What the adapter sees of one attempt; its AbortSignal is made only if the
 * adapter asks (image fetches). A class: V8 builds an object literal with a
 * getter through a slow runtime path, about a microsecond per attempt here.
 */
class AttemptContextOf implements AttemptContext {
  readonly slug: string;
  readonly provider: BaseProviderConfig;
  readonly model: string;
  readonly maxTokens: number | undefined;
  readonly #clock: AttemptClock;

  constructor(provider: ResolvedProvider, endpoint: Endpoint, clock: AttemptClock) {
    this.slug = provider.slug;
    this.provider = provider.config;
    this.model = endpoint.model;
    this.maxTokens = endpoint.maxTokens;
    this.#clock = clock;
  }

  get signal(): AbortSignal {
    return this.#clock.signal;
  }
}

export function attemptContext(provider: ResolvedProvider, endpoint: Endpoint, clock: AttemptClock): AttemptContext {
  return new AttemptContextOf(provider, endpoint, clock);
}

/** A passthrough answer's text, without the byte order mark some servers open with (JSON.parse refuses one, and so would the client). */
function bodyText(body: Uint8Array): string {
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  return Buffer.from(body.buffer, body.byteOffset + bom, body.byteLength - bom).toString('utf8');
}

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** An attempt that threw (timeout, network, bad upstream data, a refused request): recorded on its span and counted. */
export function failedAttempt(env: AttemptEnv, provider: ResolvedProvider, span: SpanRecord, err: unknown, clock: AttemptClock): AttemptResult {
  const failure = attemptFailure(err, clock, provider);
  span.fail(failure.spanErrorType, failure.spanMessage);
  env.countAttempt(provider.slug, failure.outcome);
  return { answered: false, fallback: failure.fallback, error: failure.error };
}

/** A non-2xx upstream answer, classified by the provider's adapter. */
export function httpFailure(env: AttemptEnv, provider: ResolvedProvider, span: SpanRecord, status: number, body: Uint8Array, headers: Record<string, string | string[] | undefined>): AttemptResult {
  const info = provider.adapter.classifyError(status, body, headers);
  const message = provider.redact(info.message);
  span.fail(String(status), message);
  env.countAttempt(provider.slug, 'http_error');
  return { answered: false, fallback: info.fallback, error: new GatewayHttpError(info.status, message, { type: info.type, code: info.code, param: info.param, headers: { ...retryAfterOf(info), ...retryHints(headers) } }) };
}

/** Headers by which an upstream tells clients when (and whether) to retry: passed on when its answer is the one the client gets. */
const RETRY_HINTS = ['retry-after', 'retry-after-ms', 'x-should-retry'];

function retryHints(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const hints: Record<string, string> = {};
  for (const name of RETRY_HINTS) {
    const value = headers[name];
    const text = Array.isArray(value) ? value[0] : value;
    // Only well-formed values travel on: seconds or an HTTP date, milliseconds, true or false.
    if (text !== undefined && /^[\w ,:.+-]{1,64}$/.test(text)) hints[name] = text;
  }
  return hints;
}

/** Spans and metering for a whole completion, before it is written (its answer carries the cost); returns the usage charged. */
function recordCompletion(span: SpanRecord, completion: ChatCompletion, captureContent: boolean, state: RequestState, served: Served): Usage {
  if (typeof completion.model === 'string') span.str('gen_ai.response.model', completion.model);
  if (typeof completion.id === 'string') span.str('gen_ai.response.id', completion.id);
  const meter = state.meter;
  // An upstream that sends no usage (some OpenAI-compatible servers) is charged the estimate, not nothing.
  const usage = completion.usage ?? estimateCompletionUsage(state.request, completion);
  if (completion.usage == null) span.str('sluice.usage.source', 'estimate');
  recordUsage(span, usage);
  recordCost(span, meter?.charge(served, tokensOf(usage)));
  if (meter !== undefined) {
    meter.finishReason = completion.choices[0]?.finish_reason ?? '';
    meter.firstByte();
  }
  span.strings('gen_ai.response.finish_reasons', completion.choices.map((c) => c.finish_reason ?? ''));
  if (captureContent) span.str('gen_ai.output.messages', captureOutput(choicesOf(completion)));
  return usage;
}
