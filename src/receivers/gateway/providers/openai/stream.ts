import { answerTooLarge, MAX_ANSWER_BYTES } from '../shared/answer-limits.js';
import { RAW_EVENT, type ChatCompletion, type ChatCompletionChunk } from '../shared/openai-types.js';
import { SseStreamMapper, type SseEvent, type SseEventMapper } from '../shared/sse.js';
import { UpstreamStreamError, type StreamMapper } from '../shared/types.js';
import { hasChoiceObjects, inBandError, isObject, parseOpenAIResponseText, quoted } from './response.js';

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
  // An event typed `error` is one whether or not its data wraps the error in
  // an `error` key (the Responses API's shape, `{type, code, message}`, does
  // not): wrapped here, so its type and code are read as a wrapped one's.
  const bare = event.event === 'error' && parsed['error'] == null;
  const error = bare ? inBandError({ error: parsed }, JSON.stringify({ error: parsed })) : inBandError(parsed, event.data);
  if (error !== undefined) throw error;
  const choices = parsed['choices'];
  // Some servers (Vertex AI's Mistral, Bedrock's OpenAI-compatible endpoints) leave choices out of a usage-only chunk.
  if (choices === undefined || choices === null) parsed['choices'] = [];
  // A choice without a delta is given an empty one (clients read delta.content): either way the event's own text will not do.
  const asSent = Array.isArray(choices) && choices.every((choice) => isObject(choice) && isObject(choice['delta']));
  if (!hasChoiceObjects(parsed, 'delta')) throw new UpstreamStreamError('upstream sent an event that is not a chat.completion.chunk');
  const chunk = parsed as unknown as ChatCompletionChunk;
  // One line of data can be passed on as it came; a multi-line event is serialized again.
  if (asSent && !event.data.includes('\n')) chunk[RAW_EVENT] = event.data;
  return chunk;
}

/**
 * One stream's events. The opening chunk that only says the role (vLLM,
 * OpenRouter and OpenAI send it at once) is held until more comes: an error
 * right after it then finds no byte sent to the client, and the attempt can
 * still fall back, as it can for the translating adapters (chunks.ts).
 */
class OpenAIEvents implements SseEventMapper {
  #held: ChatCompletionChunk | undefined;
  #first = true;
  /** Each choice seen, by index: whether it has had its finish_reason. */
  readonly #finished = new Map<number, boolean>();

  event(event: SseEvent, out: ChatCompletionChunk[]): boolean {
    const chunk = toChunk(event);
    if (chunk === undefined) {
      this.#release(out);
      return true;
    }
    for (const choice of chunk.choices) this.#finished.set(choice.index, this.#finished.get(choice.index) === true || saysFinished(choice.finish_reason));
    if (this.#first) {
      this.#first = false;
      if (saysOnlyRole(chunk)) {
        this.#held = chunk;
        return false;
      }
    }
    this.#release(out);
    out.push(chunk);
    return false;
  }

  // Some OpenAI-compatible servers end the body without `[DONE]`: that is the end
  // too once every choice has its finish_reason (a body that ends before any
  // chunk is a failed attempt: stream-pipe.ts). A choice left without one was
  // cut short (a proxy that closed the body cleanly): that is an error, as for
  // Gemini's stream without a finishReason, not a whole answer.
  end(out: ChatCompletionChunk[]): void {
    for (const [index, finished] of this.#finished) {
      if (!finished) throw new UpstreamStreamError(`upstream stream ended before choice ${index} finished (no finish_reason and no [DONE])`);
    }
    this.#release(out);
  }

  #release(out: ChatCompletionChunk[]): void {
    if (this.#held === undefined) return;
    out.push(this.#held);
    this.#held = undefined;
  }
}

/** Whether a choice's finish_reason ends it: some servers (SGLang, older Ollama) send "" where OpenAI sends null, for a choice still going. */
function saysFinished(reason: unknown): boolean {
  return typeof reason === 'string' && reason !== '';
}

/** A chunk with nothing for the client but the role: no text, calls, finish or usage. */
function saysOnlyRole(chunk: ChatCompletionChunk): boolean {
  if (chunk.usage != null || chunk.choices.length === 0) return false;
  return chunk.choices.every((choice) => !saysFinished(choice.finish_reason) && Object.entries(choice.delta).every(([key, value]) => key === 'role' || value === '' || value === null));
}

export function openAIStreamMapper(): StreamMapper {
  return new OpenAIStreamMapper();
}

/**
 * An OpenAI-compatible stream: SSE, or one JSON document where a server
 * ignored `stream: true` (a completion) or failed after its 200 went out (an
 * error object, as OpenRouter and LiteLLM send), or a web page where
 * base_url leads to one. SSE has no line opening with `{` or `<`, so the
 * body's first character tells which.
 */
class OpenAIStreamMapper implements StreamMapper {
  readonly #sse = new SseStreamMapper(new OpenAIEvents());
  /** The body's parts, once it turned out to be JSON or markup; undefined while it is SSE or not yet known. */
  #json: Buffer[] | undefined;
  /** Bytes in #json. */
  #jsonSize = 0;
  #markup = false;
  #known = false;
  #finished = false;
  #error: unknown;

  get finished(): boolean {
    return this.#json === undefined ? this.#sse.finished : this.#finished;
  }

  get error(): unknown {
    return this.#json === undefined ? this.#sse.error : this.#error;
  }

  push(part: Uint8Array): readonly ChatCompletionChunk[] {
    if (!this.#known) this.#known = this.#sniff(part);
    if (this.#json === undefined) return this.#sse.push(part);
    this.#json.push(Buffer.from(part));
    this.#jsonSize += part.length;
    if (this.#jsonSize > MAX_ANSWER_BYTES) throw answerTooLarge();
    return [];
  }

  end(): readonly ChatCompletionChunk[] {
    if (this.#json === undefined) return this.#sse.end();
    this.#finished = true;
    const text = Buffer.concat(this.#json).toString('utf8');
    if (this.#markup) {
      this.#error = new UpstreamStreamError(`upstream answered with a body that is not an event stream: ${quoted(text)}`);
      return [];
    }
    try {
      return completionChunks(parseOpenAIResponseText(text.replace(/^\uFEFF/, '')));
    } catch (err) {
      this.#error = err;
      return [];
    }
  }

  /** True once the part shows what the body is: its first byte past whitespace and a byte order mark. */
  #sniff(part: Uint8Array): boolean {
    for (let i = 0; i < part.length; i++) {
      const byte = part[i] as number;
      // Whitespace, and the bytes of a byte order mark (EF BB BF), which nothing else before the first character has.
      if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0xef || byte === 0xbb || byte === 0xbf) continue;
      // '{' opens JSON, '<' markup.
      if (byte === 0x7b || byte === 0x3c) this.#json = [];
      this.#markup = byte === 0x3c;
      return true;
    }
    return false;
  }
}

/** A whole completion as the chunks that would have streamed it: each choice whole in one, then usage in its own. */
function completionChunks(completion: ChatCompletion): ChatCompletionChunk[] {
  const { id, created, model } = completion;
  const chunks: ChatCompletionChunk[] = completion.choices.map(function choiceChunk(choice, i) {
    const { tool_calls: calls, ...message } = choice.message;
    const delta: ChatCompletionChunk['choices'][number]['delta'] = calls === undefined || calls === null ? message : { ...message, tool_calls: calls.map((call, index) => ({ index, ...call })) };
    const index = typeof choice.index === 'number' ? choice.index : i;
    const streamed: ChatCompletionChunk['choices'][number] = { index, delta, finish_reason: choice.finish_reason ?? null };
    if (choice.logprobs !== undefined) streamed.logprobs = choice.logprobs;
    return { id, object: 'chat.completion.chunk', created, model, choices: [streamed] };
  });
  if (completion.usage != null) chunks.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: completion.usage });
  return chunks;
}
