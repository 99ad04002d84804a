// Gemini streamGenerateContent?alt=sse -> OpenAI chat.completion.chunk objects.
// Each event is a whole GenerateContentResponse holding the next parts of
// each candidate (several with candidateCount, each under its index); a
// function call arrives whole, in one part. A candidate's last event has its
// finishReason: once every candidate asked for has one, the stream is over,
// whether or not the body ends at once.
import type { ChatCompletionChunk, ChatCompletionRequest, FinishReason, Usage } from '../shared/openai-types.js';
import { SseStreamMapper, type SseEvent, type SseEventMapper } from '../shared/sse.js';
import { UpstreamStreamError, type AttemptContext, type StreamMapper } from '../shared/types.js';
import type { GoogleProviderConfig } from './config.js';
import { ChunkBuilder } from '../shared/chunks.js';
import { completionId } from '../shared/inputs.js';
import { candidateCountOf } from './request.js';
import { candidateIndex, candidatesOf, mapFinishReason, mapUsage, parseGeminiBody, readParts, tokenLogprobs } from './response.js';
import type { GeminiCandidate, GeminiUsageMetadata } from './wire.js';

export function googleStreamMapper(ctx: AttemptContext<GoogleProviderConfig>, request: ChatCompletionRequest): StreamMapper {
  return new SseStreamMapper(new GoogleEvents(ctx.model, candidateCountOf(request, ctx.slug)));
}

class GoogleEvents implements SseEventMapper {
  readonly #out: ChunkBuilder;
  readonly #candidates: number;
  #usage: GeminiUsageMetadata | undefined;
  /** Tool calls streamed so far, by candidate index: each choice counts its own. */
  readonly #toolCounts = new Map<number, number>();
  /** Candidates seen, and those that have finished. */
  readonly #seen = new Set<number>();
  readonly #finished = new Set<number>();

  constructor(model: string, candidates: number) {
    this.#out = new ChunkBuilder('', model);
    this.#candidates = candidates;
  }

  event(sse: SseEvent, chunks: ChatCompletionChunk[]): boolean {
    const out = this.#out;
    let response;
    try {
      response = parseGeminiBody(sse.data);
    } catch (err) {
      if (err instanceof UpstreamStreamError) throw err;
      throw new UpstreamStreamError('google sent an event that is not JSON');
    }
    if (out.id === '') {
      out.id = response.responseId ?? completionId();
      out.model = response.modelVersion ?? out.model;
    }
    if (response.usageMetadata !== undefined) this.#usage = response.usageMetadata;
    const candidates = candidatesOf(response);
    // No candidate at all and a block reason: the prompt itself was blocked; each candidate asked for says so.
    if (candidates.length === 0 && response.promptFeedback?.blockReason !== undefined) {
      for (let index = 0; index < this.#candidates; index++) chunks.push(out.delta({}, 'content_filter', index));
      return this.#end(chunks);
    }
    for (const [position, candidate] of candidates.entries()) this.#candidate(candidate, candidateIndex(candidate, position), chunks);
    return this.#finished.size >= this.#candidates ? this.#end(chunks) : false;
  }

  #candidate(candidate: GeminiCandidate, index: number, chunks: ChatCompletionChunk[]): void {
    const out = this.#out;
    this.#seen.add(index);
    const { text, reasoning, toolCalls, images } = readParts(Array.isArray(candidate.content?.parts) ? candidate.content.parts : []);
    if (reasoning !== '') chunks.push(out.delta({ reasoning }, null, index));
    // Gemini streams each event's tokens with it: they ride on that event's text.
    const logprobs = tokenLogprobs(candidate);
    if (text !== '' || logprobs.length > 0) {
      const chunk = out.delta({ content: text }, null, index);
      const [choice] = chunk.choices;
      if (choice !== undefined && candidate.logprobsResult !== undefined) choice.logprobs = { content: logprobs, refusal: null };
      chunks.push(chunk);
    }
    if (images.length > 0) chunks.push(out.delta({ images }, null, index));
    let toolCount = this.#toolCounts.get(index) ?? 0;
    if (toolCalls.length > 0) {
      chunks.push(out.toolCalls(toolCalls.map((call) => ({ index: toolCount++, id: call.id, type: 'function' as const, function: call.function })), index));
      this.#toolCounts.set(index, toolCount);
    }
    if (candidate.finishReason === undefined || this.#finished.has(index)) return;
    const finishReason: FinishReason = mapFinishReason(candidate, toolCount > 0);
    chunks.push(out.delta({}, finishReason, index));
    this.#finished.add(index);
  }

  /** The usage chunk, once, after the last finish. */
  #end(chunks: ChatCompletionChunk[]): true {
    if (this.#usage !== undefined) chunks.push(this.#out.usage(mapUsage(this.#usage)));
    return true;
  }

  /** The latest usageMetadata, before the last event's usage chunk. */
  get usageSoFar(): Usage | undefined {
    return this.#usage === undefined ? undefined : mapUsage(this.#usage);
  }

  end(chunks: ChatCompletionChunk[]): void {
    // Fewer candidates than asked for, each finished (a model that makes fewer): the answer is whole.
    if (this.#finished.size > 0 && this.#finished.size === this.#seen.size) {
      this.#end(chunks);
      return;
    }
    // A candidate without its finishReason: the stream was cut.
    throw new UpstreamStreamError('google stream ended without a finishReason');
  }
}
