import type { ChatCompletionChunk } from '../../core/openai-types.js';
import { parseSse } from '../../core/sse.js';
import { UpstreamStreamError } from '../types.js';
import { isObject } from './response.js';

export async function* parseOpenAIStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<ChatCompletionChunk> {
  for await (const event of parseSse(body)) {
    if (event.data === '[DONE]') return;
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
    yield parsed as unknown as ChatCompletionChunk;
  }
}
