// Gemini streamGenerateContent?alt=sse -> OpenAI chat.completion.chunk objects.
// Each event is a whole GenerateContentResponse holding the next parts; a
// function call arrives whole, in one part. The last event has finishReason:
// the stream is over there, whether or not the body ends at once.
import type { ChatCompletionChunk, FinishReason, Usage } from '../shared/openai-types.js';
import { SseStreamMapper, type SseEvent, type SseEventMapper } from '../shared/sse.js';
import { UpstreamStreamError, type AttemptContext, type StreamMapper } from '../shared/types.js';
import type { GoogleProviderConfig } from './config.js';
import { ChunkBuilder } from '../shared/chunks.js';
import { completionId } from '../shared/inputs.js';
import { mapFinishReason, mapUsage, parseGeminiBody, readParts } from './response.js';
import type { GeminiUsageMetadata } from './wire.js';

export function googleStreamMapper(ctx: AttemptContext<GoogleProviderConfig>): StreamMapper {
  return new SseStreamMapper(new GoogleEvents(ctx.model));
}

class GoogleEvents implements SseEventMapper {
  readonly #out: ChunkBuilder;
  #usage: GeminiUsageMetadata | undefined;
  #toolCount = 0;

  constructor(model: string) {
    this.#out = new ChunkBuilder('', model);
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
    const candidate = response.candidates?.[0];
    const { text, reasoning, toolCalls, images } = readParts(candidate?.content?.parts ?? []);
    if (reasoning !== '') chunks.push(out.delta({ reasoning }));
    if (text !== '') chunks.push(out.delta({ content: text }));
    if (images.length > 0) chunks.push(out.delta({ images }));
    if (toolCalls.length > 0) {
      chunks.push(out.toolCalls(toolCalls.map((call) => ({ index: this.#toolCount++, id: call.id, type: 'function' as const, function: call.function }))));
    }
    let finishReason: FinishReason;
    if (candidate === undefined && response.promptFeedback?.blockReason !== undefined) finishReason = 'content_filter';
    else if (candidate?.finishReason !== undefined) finishReason = mapFinishReason(candidate, this.#toolCount > 0);
    else return false;
    chunks.push(out.delta({}, finishReason));
    if (this.#usage !== undefined) chunks.push(out.usage(mapUsage(this.#usage)));
    return true;
  }

  /** The latest usageMetadata, before the last event's usage chunk. */
  get usageSoFar(): Usage | undefined {
    return this.#usage === undefined ? undefined : mapUsage(this.#usage);
  }

  end(): void {
    // Reached only when no event had a finishReason: the stream was cut.
    throw new UpstreamStreamError('google stream ended without a finishReason');
  }
}
