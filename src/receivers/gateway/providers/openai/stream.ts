import type { ChatCompletionChunk } from '../shared/openai-types.js';
import { SseParser, type SseEvent } from '../shared/sse.js';
import { UpstreamStreamError } from '../shared/types.js';
import { isObject } from './response.js';

/** The chunk an event carries, or undefined for `[DONE]`. */
function toChunk(event: SseEvent): ChatCompletionChunk | undefined {
  if (event.data === '[DONE]') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(event.data);
  } catch {
    throw new UpstreamStreamError('upstream sent an event that is not JSON');
  }
  if (!isObject(parsed)) throw new UpstreamStreamError('upstream sent an event that is not a JSON object');
  const error = parsed['error'];
  if (error !== undefined && error !== null) {
    const wire = isObject(error) ? error : { message: String(error) };
    throw new UpstreamStreamError(typeof wire['message'] === 'string' ? wire['message'] : 'upstream stream error', typeof wire['type'] === 'string' ? wire['type'] : 'api_error');
  }
  if (!Array.isArray(parsed['choices'])) throw new UpstreamStreamError('upstream sent an event that is not a chat.completion.chunk');
  return parsed as unknown as ChatCompletionChunk;
}

// The SSE parser is fed here, not through parseSse's generator: one async
// step per body chunk rather than one more per event.
export async function* parseOpenAIStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<ChatCompletionChunk> {
  const parser = new SseParser();
  for await (const part of body) {
    for (const event of parser.push(part)) {
      const chunk = toChunk(event);
      if (chunk === undefined) return;
      yield chunk;
    }
  }
  for (const event of parser.end()) {
    const chunk = toChunk(event);
    if (chunk === undefined) return;
    yield chunk;
  }
}
