// Gemini streamGenerateContent?alt=sse -> OpenAI chat.completion.chunk objects.
// Each event is a whole GenerateContentResponse holding the next parts; a
// function call arrives whole, in one part. The last event has finishReason.
import type { ChatCompletionChunk, FinishReason } from '../../openai-types.js';
import { parseSse } from '../../sse.js';
import { UpstreamStreamError, type AttemptContext } from '../types.js';
import type { GoogleProviderConfig } from './config.js';
import { completionId } from '../shared/inputs.js';
import { mapFinishReason, mapUsage, parseGeminiBody, readParts } from './response.js';
import type { GeminiUsageMetadata } from './wire.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

export async function* parseGoogleStream(body: AsyncIterable<Uint8Array>, ctx: AttemptContext<GoogleProviderConfig>): AsyncGenerator<ChatCompletionChunk> {
  let id = '';
  let model = ctx.model;
  const created = Math.floor(Date.now() / 1000);
  let usage: GeminiUsageMetadata | undefined;
  let toolCount = 0;
  let finishReason: FinishReason | undefined;

  // The role rides on the first chunk with content (as in the other adapters).
  let roleSent = false;

  function chunk(delta: Delta, finish: FinishReason | null = null): ChatCompletionChunk {
    const withRole: Delta = roleSent ? delta : { role: 'assistant', ...delta };
    roleSent = true;
    return { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: withRole, finish_reason: finish }] };
  }

  for await (const sse of parseSse(body)) {
    let response;
    try {
      response = parseGeminiBody(sse.data);
    } catch (err) {
      if (err instanceof UpstreamStreamError) throw err;
      throw new UpstreamStreamError('google sent an event that is not JSON');
    }
    if (id === '') {
      id = response.responseId ?? completionId();
      model = response.modelVersion ?? model;
    }
    if (response.usageMetadata !== undefined) usage = response.usageMetadata;
    const candidate = response.candidates?.[0];
    const { text, toolCalls } = readParts(candidate?.content?.parts ?? []);
    if (text !== '') yield chunk({ content: text });
    if (toolCalls.length > 0) {
      yield chunk({ tool_calls: toolCalls.map((call) => ({ index: toolCount++, id: call.id, type: 'function' as const, function: call.function })) });
    }
    if (candidate === undefined && response.promptFeedback?.blockReason !== undefined) finishReason = 'content_filter';
    else if (candidate?.finishReason !== undefined) finishReason = mapFinishReason(candidate.finishReason, toolCount > 0);
  }
  // Gemini ends the HTTP response after the event with finishReason; without one the stream was cut.
  if (finishReason === undefined) throw new UpstreamStreamError('google stream ended without a finishReason');
  yield chunk({}, finishReason);
  if (usage !== undefined) yield { id, object: 'chat.completion.chunk', created, model, choices: [], usage: mapUsage(usage) };
}
