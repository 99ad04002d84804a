import { RAW_EVENT, type ChatCompletionChunk } from '../shared/openai-types.js';
import { SseStreamMapper, type SseEvent, type SseEventMapper } from '../shared/sse.js';
import { UpstreamStreamError, type StreamMapper } from '../shared/types.js';
import { classifyOpenAIError, hasChoiceObjects, isObject } from './response.js';

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
    // vLLM and OpenRouter give the HTTP status the error stands for as its code.
    const code = wire['code'];
    const answer = typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? classifyOpenAIError(code, new TextEncoder().encode(event.data)) : undefined;
    throw new UpstreamStreamError(typeof wire['message'] === 'string' ? wire['message'] : 'upstream stream error', typeof wire['type'] === 'string' ? wire['type'] : 'api_error', answer);
  }
  if (!hasChoiceObjects(parsed, 'delta')) throw new UpstreamStreamError('upstream sent an event that is not a chat.completion.chunk');
  const chunk = parsed as unknown as ChatCompletionChunk;
  // One line of data can be passed on as it came; a multi-line event is serialized again.
  if (!event.data.includes('\n')) chunk[RAW_EVENT] = event.data;
  return chunk;
}

const OPENAI_EVENTS: SseEventMapper = {
  event(event, out) {
    const chunk = toChunk(event);
    if (chunk === undefined) return true;
    out.push(chunk);
    return false;
  },
  // Some OpenAI-compatible servers end the body without `[DONE]`: that is the end too
  // (a body that ends before any chunk is a failed attempt: stream-pipe.ts).
  end() {},
};

export function openAIStreamMapper(): StreamMapper {
  return new SseStreamMapper(OPENAI_EVENTS);
}
