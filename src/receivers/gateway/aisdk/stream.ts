// Chat Completions chunks -> AI SDK stream parts (LanguageModelV3/V4
// StreamPart), one `data:` event each. Text and reasoning open with a
// `*-start` before any delta (the client drops deltas without one); tool
// calls stream as tool-input-* and complete as one `tool-call` with the whole
// input string; `finish` always comes last.
import type { RequestState } from '../core/attempt.js';
import type { GatewayHttpError } from '../core/http-error.js';
import { contentText, firstChoice, reasoningText, toolCallKey, type ChatCompletionChunk, type FinishReason, type ReasoningDetail, type ToolCallDelta, type Usage } from '../providers/shared/openai-types.js';
import type { StreamEncoder } from '../core/protocol.js';
import { startsAnotherCall, type StreamedCall } from '../core/tool-call-split.js';
import { aiSdkErrorPart } from './errors.js';
import type { AttemptLog } from './routing.js';
import type { AiSdkWarning } from './warnings.js';
import { aiSdkUsage, answerMetadata, filePart, finishReason, gatewayMetadata, logprobsOf, reasoningMetadata, REFUSED, responseTimestamp, sourceParts } from './result.js';

interface OpenToolCall extends StreamedCall {
  /** What tells the call's deltas apart (toolCallKey). */
  readonly key: string | undefined;
  readonly id: string;
  upstreamId: string;
  args: string;
}

function event(part: object): string {
  return `data: ${JSON.stringify(part)}\n\n`;
}

export class AiSdkStream implements StreamEncoder {
  readonly #modelId: string;
  readonly #log: AttemptLog;
  readonly #warnings: readonly AiSdkWarning[];
  #started = false;
  #blocks = 0;
  #text: string | undefined;
  #reasoning: string | undefined;
  #details: ReasoningDetail[] = [];
  readonly #tools: OpenToolCall[] = [];
  #finish: FinishReason | null = null;
  #refused = false;
  #sources = 0;
  /** The chunks' token logprobs, when the upstream gave any (the app asked for them). */
  #logprobs: unknown[] | undefined;

  readonly #tagged: boolean;
  readonly #raw: boolean;

  /** `raw`: the call asked for includeRawChunks, so each upstream chunk also goes out as a `raw` part. */
  constructor(modelId: string, log: AttemptLog, warnings: readonly AiSdkWarning[], tagged: boolean, raw: boolean) {
    this.#modelId = modelId;
    this.#log = log;
    this.#warnings = warnings;
    this.#tagged = tagged;
    this.#raw = raw;
  }

  chunk(chunk: ChatCompletionChunk): string {
    let out = '';
    if (!this.#started) {
      this.#started = true;
      out += event({ type: 'stream-start', warnings: this.#warnings });
      out += event({ type: 'response-metadata', id: chunk.id, modelId: this.#modelId, timestamp: responseTimestamp(chunk.created) });
    }
    if (this.#raw) out += event({ type: 'raw', rawValue: chunk });
    const choice = firstChoice(chunk.choices);
    if (choice === undefined) return out;
    const delta = choice.delta;
    const reasoning = reasoningText(delta);
    // Some servers send absent fields as null.
    const details = delta.reasoning_details ?? [];
    if (reasoning !== undefined || details.length > 0) {
      if (this.#reasoning === undefined) {
        out += this.#closeText();
        this.#reasoning = `reasoning-${this.#blocks++}`;
        out += event({ type: 'reasoning-start', id: this.#reasoning });
      }
      if (reasoning !== undefined) out += event({ type: 'reasoning-delta', id: this.#reasoning, delta: reasoning });
      this.#details.push(...details);
    }
    // OpenAI streams a refusal apart from the content; it is the answer's text all the same.
    const refusal = typeof delta.refusal === 'string' ? delta.refusal : '';
    if (refusal !== '') this.#refused = true;
    const text = contentText(delta.content) + refusal;
    if (text !== '') {
      if (this.#text === undefined) {
        out += this.#closeReasoning();
        this.#text = `text-${this.#blocks++}`;
        out += event({ type: 'text-start', id: this.#text });
      }
      out += event({ type: 'text-delta', id: this.#text, delta: text });
    }
    for (const image of delta.images ?? []) for (const file of filePart(image, this.#tagged)) out += event(file);
    for (const source of sourceParts(delta.annotations, this.#sources)) {
      this.#sources++;
      out += event(source);
    }
    for (const call of delta.tool_calls ?? []) {
      let open = this.#openCall(call);
      if (open !== undefined && startsAnotherCall(call, open)) open = undefined;
      if (open === undefined) {
        out += this.#closeReasoning() + this.#closeText();
        open = { key: toolCallKey(call), id: call.id ?? `call_${this.#tools.length}`, upstreamId: call.id ?? '', name: call.function?.name ?? '', args: '' };
        this.#tools.push(open);
        out += event({ type: 'tool-input-start', id: open.id, toolName: open.name });
      }
      if (open.upstreamId === '' && call.id !== undefined) open.upstreamId = call.id;
      const args = call.function?.arguments;
      if (args !== undefined && args !== '') {
        open.args += args;
        out += event({ type: 'tool-input-delta', id: open.id, delta: args });
      }
    }
    const logprobs = logprobsOf(choice.logprobs);
    if (logprobs !== undefined) (this.#logprobs ??= []).push(...logprobs);
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) this.#finish = choice.finish_reason;
    return out;
  }

  /** The usage is what was charged: an estimate where the upstream reported none, as the span says. */
  end(state: RequestState, charged: Usage | undefined): string {
    let out = this.#closeReasoning() + this.#closeText();
    for (const call of this.#tools) {
      out += event({ type: 'tool-input-end', id: call.id });
      out += event({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.args });
    }
    const finish = this.#finish ?? (this.#tools.length > 0 ? 'tool_calls' : 'stop');
    out += event({
      type: 'finish',
      finishReason: this.#refused ? REFUSED : finishReason(finish),
      usage: aiSdkUsage(charged),
      providerMetadata: answerMetadata(gatewayMetadata(state, this.#log.answered(this.#modelId)), this.#logprobs),
    });
    return out;
  }

  error(error: GatewayHttpError): string {
    return aiSdkErrorPart(error);
  }

  /** The call a delta continues (see toolCallKey: the latest under its key, as calls at index 0 may follow each other); one with no key continues the last call. */
  #openCall(call: ToolCallDelta): OpenToolCall | undefined {
    const key = toolCallKey(call);
    return key === undefined ? this.#tools.at(-1) : this.#tools.findLast((open) => open.key === key);
  }

  #closeText(): string {
    if (this.#text === undefined) return '';
    const id = this.#text;
    this.#text = undefined;
    return event({ type: 'text-end', id });
  }

  #closeReasoning(): string {
    if (this.#reasoning === undefined) return '';
    const id = this.#reasoning;
    this.#reasoning = undefined;
    if (this.#details.length === 0) return event({ type: 'reasoning-end', id });
    const details = this.#details;
    this.#details = [];
    return event({ type: 'reasoning-end', id, providerMetadata: reasoningMetadata(details) });
  }
}
