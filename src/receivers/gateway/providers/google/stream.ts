// Gemini streamGenerateContent?alt=sse -> OpenAI chat.completion.chunk objects.
// Each event is a whole GenerateContentResponse holding the next parts; a
// function call arrives whole, in one part. The last event has finishReason.
import type { ChatCompletionChunk, FinishReason } from '../shared/openai-types.js';
import { parseSse } from '../shared/sse.js';
import { UpstreamStreamError, type AttemptContext } from '../shared/types.js';
import type { GoogleProviderConfig } from './config.js';
import { ChunkBuilder } from '../shared/chunks.js';
import { completionId } from '../shared/inputs.js';
import { mapFinishReason, mapUsage, parseGeminiBody, readParts } from './response.js';
import type { GeminiUsageMetadata } from './wire.js';

export async function* parseGoogleStream(body: AsyncIterable<Uint8Array>, ctx: AttemptContext<GoogleProviderConfig>): AsyncGenerator<ChatCompletionChunk> {
  const out = new ChunkBuilder('', ctx.model);
  let usage: GeminiUsageMetadata | undefined;
  let toolCount = 0;
  let finishReason: FinishReason | undefined;

  for await (const sse of parseSse(body)) {
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
    if (response.usageMetadata !== undefined) usage = response.usageMetadata;
    const candidate = response.candidates?.[0];
    const { text, reasoning, toolCalls } = readParts(candidate?.content?.parts ?? []);
    if (reasoning !== '') yield out.delta({ reasoning });
    if (text !== '') yield out.delta({ content: text });
    if (toolCalls.length > 0) {
      yield out.toolCalls(toolCalls.map((call) => ({ index: toolCount++, id: call.id, type: 'function' as const, function: call.function })));
    }
    if (candidate === undefined && response.promptFeedback?.blockReason !== undefined) finishReason = 'content_filter';
    else if (candidate?.finishReason !== undefined) finishReason = mapFinishReason(candidate.finishReason, toolCount > 0);
  }
  // Gemini ends the HTTP response after the event with finishReason; without one the stream was cut.
  if (finishReason === undefined) throw new UpstreamStreamError('google stream ended without a finishReason');
  yield out.delta({}, finishReason);
  if (usage !== undefined) yield out.usage(mapUsage(usage));
}
