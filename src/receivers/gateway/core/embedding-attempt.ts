// One embeddings attempt on one endpoint: the adapter's upstream requests,
// each made and sent in turn on the provider's agent under one attempt
// clock, then the protocol's answer. A CLIENT span `embeddings <model>` per attempt.
import type { ServerResponse } from 'node:http';
import type { Served, UsageMeter } from '../../../usage/meter.js';
import { NO_TOKENS } from '../../../shared/tokens.js';
import { recordCost } from './usage-cost.js';
import { InvalidResponseError, type AttemptContext, type EmbeddingAdapter, type EmbeddingReply, type EmbeddingRequest, type EmbeddingResult } from '../providers/shared/types.js';
import { attemptContext, failedAttempt, httpFailure, isSuccess, startAttemptSpan, type AttemptEnv, type AttemptResult, type ResolvedProvider } from './attempt.js';
import { servedBy, type Endpoint } from './catalog.js';
import type { ClientLink } from './client-link.js';
import { GatewayHttpError } from './http-error.js';
import type { SpanRecord } from './spans.js';
import { AttemptClock, parseUpstreamUrl } from './upstream.js';
import { UNSUPPORTED_VALUE } from './attempt-failure.js';

/** Writes a successful embeddings answer in the client's protocol. */
export type EmbeddingAnswer = (res: ServerResponse, result: EmbeddingResult, state: EmbeddingState, slug: string) => void;

export interface EmbeddingState {
  readonly request: EmbeddingRequest;
  /** The encoding_format the client asked for (gen_ai.request.encoding_formats), when it gave one. */
  readonly encodingFormat?: string | undefined;
  readonly res: ServerResponse;
  readonly answer: EmbeddingAnswer;
  /** The request's usage meter (generation id, cost), on routes that generate. */
  readonly meter: UsageMeter | undefined;
  readonly server: SpanRecord;
  readonly spans: SpanRecord[];
  readonly client: ClientLink;
  attempts: number;
}

export async function runEmbeddingAttempt(env: AttemptEnv, provider: ResolvedProvider, endpoint: Endpoint, state: EmbeddingState): Promise<AttemptResult> {
  state.attempts += 1;
  const started = performance.now();
  const span = startAttemptSpan('embeddings', provider, endpoint, state);
  if (state.encodingFormat !== undefined) span.strings('gen_ai.request.encoding_formats', [state.encodingFormat]);
  const served = servedBy(endpoint, provider.slug);
  const clock = new AttemptClock(provider.firstByteMs, provider.idleMs, state.client);
  const ctx = attemptContext(provider, endpoint, clock);
  try {
    const adapter = provider.adapter.embeddings;
    if (adapter === undefined) {
      // Another endpoint (of a type that embeds) may still serve the model.
      const error = new GatewayHttpError(400, `Provider ${provider.slug} (type ${provider.adapter.type}) does not serve embeddings.`, { type: 'invalid_request_error', code: UNSUPPORTED_VALUE, param: 'model' });
      span.fail(UNSUPPORTED_VALUE, error.message);
      env.countAttempt(provider.slug, 'rejected');
      return { answered: false, fallback: true, error };
    }
    const replies: EmbeddingReply[] = [];
    for await (const upstream of adapter.buildRequests(state.request, ctx)) {
      // A request the adapter refused (or could not sign) never reaches the upstream: no generation is recorded for it.
      if (replies.length === 0) state.meter?.attempt(served, false);
      const url = parseUpstreamUrl(upstream.url);
      // One value a key: the calls of an attempt go to one endpoint, and the status is the last call's.
      span.replace('server.address', url.hostname).replace('server.port', url.port);
      const response = await env.agents.exchange(provider.slug, upstream, url, clock, span).catch(function chargeEarlierCalls(err: unknown) {
        // A later call timed out or could not be reached: the ones before it still count.
        chargeAnswered(span, state, served, replies, ctx, adapter);
        throw err;
      });
      span.replace('http.response.status_code', response.statusCode);
      if (!isSuccess(response.statusCode)) {
        chargeAnswered(span, state, served, replies, ctx, adapter);
        return httpFailure(env, provider, span, response.statusCode, response.body, response.headers);
      }
      replies.push({ body: response.body, headers: response.headers });
    }
    const result = adapter.parseResponses(replies, state.request, ctx);
    checkVectors(result.vectors, state.request.input.length);
    if (result.model !== undefined) span.str('gen_ai.response.model', result.model);
    span.int('gen_ai.usage.input_tokens', result.inputTokens);
    // Charged before the answer is written, so the answer can carry the cost.
    recordCost(span, state.meter?.charge(served, { ...NO_TOKENS, input: result.inputTokens }));
    state.meter?.firstByte();
    const first = result.vectors[0];
    if (first !== undefined) span.int('gen_ai.embeddings.dimension.count', first.length);
    state.answer(state.res, result, state, provider.slug);
    env.countAttempt(provider.slug, 'success');
    return { answered: true };
  } catch (err) {
    return failedAttempt(env, provider, span, err, clock);
  } finally {
    clock.clear();
    span.end();
    env.timeAttempt(provider.slug, (performance.now() - started) / 1000);
  }
}

/**
 * An attempt whose later upstream call failed after earlier ones answered
 * (Titan's one call per text, batches of Gemini and Cohere): the upstream
 * reported and bills those calls' tokens, so they are charged to the
 * request, as a stream broken off is charged the usage it had reported.
 */
function chargeAnswered(span: SpanRecord, state: EmbeddingState, served: Served, replies: readonly EmbeddingReply[], ctx: AttemptContext, adapter: EmbeddingAdapter): void {
  if (replies.length === 0) return;
  let tokens: number;
  try {
    // parseResponses maps any first part of an attempt's replies.
    tokens = adapter.parseResponses(replies, state.request, ctx).inputTokens;
  } catch {
    return; // an answer that does not parse reported nothing usable
  }
  if (tokens === 0) return;
  span.int('gen_ai.usage.input_tokens', tokens);
  recordCost(span, state.meter?.charge(served, { ...NO_TOKENS, input: tokens }));
}

/** One vector per input, at every index: an upstream's list can be short, long, or indexed with holes or twice. */
function checkVectors(vectors: readonly (readonly number[] | undefined)[], inputs: number): void {
  if (vectors.length !== inputs) throw new InvalidResponseError(`${vectors.length} embeddings for ${inputs} inputs`);
  for (let i = 0; i < inputs; i++) if (vectors[i] === undefined) throw new InvalidResponseError(`no embedding at index ${i}`);
}
