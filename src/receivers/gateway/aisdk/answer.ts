// Writes language-model answers in the shapes the AI SDK's gateway client
// parses: a generate result as JSON, or a stream of parts (stream.ts). Every
// part this gateway produces (text, reasoning, tool calls, usage, finish)
// but files has the same shape in V3 and V4; a file's data (an image the
// model made) is tagged for V4 only. Nothing else V4-only (reasoning-file,
// custom, ping, `interrupted`) is ever sent to either.
import type { ServerResponse } from 'node:http';
import type { RequestState } from '../core/attempt.js';
import { calledWith, contentText, firstChoice, reasoningText, type ChatCompletion, type Usage } from '../providers/shared/openai-types.js';
import type { CompletionAnswer, StreamEncoder } from '../core/protocol.js';
import { aiSdkUsage, answerMetadata, filePart, finishReason, gatewayMetadata, logprobsOf, reasoningMetadata, REFUSED, responseTimestamp, sourceParts, type FilePart, type SourcePart } from './result.js';
import type { AttemptLog } from './routing.js';
import { AiSdkStream } from './stream.js';
import type { AiSdkWarning } from './warnings.js';
import { writeJsonAnswer } from '../core/answer-head.js';

type ContentPart = { type: 'text'; text: string } | { type: 'reasoning'; text: string; providerMetadata?: object } | { type: 'tool-call'; toolCallId: string; toolName: string; input: string } | FilePart | SourcePart;

export class AiSdkAnswer implements CompletionAnswer {
  readonly #modelId: string;
  readonly #log: AttemptLog;
  readonly #tagged: boolean;
  readonly #raw: boolean;
  /** Set before each attempt: the call settings the gateway drops or changes for that attempt's provider. */
  warnings: readonly AiSdkWarning[] = [];

  /** `log`: the request's attempts. `tagged`: the client speaks V4, whose file parts tag their data. `raw`: a stream also sends each upstream chunk (includeRawChunks). */
  constructor(modelId: string, log: AttemptLog, tagged: boolean, raw: boolean) {
    this.#modelId = modelId;
    this.#log = log;
    this.#tagged = tagged;
    this.#raw = raw;
  }

  /** The usage is what was charged: an estimate where the upstream reported none, as the span says. */
  complete(res: ServerResponse, completion: ChatCompletion, _text: string | undefined, state: RequestState, slug: string, charged: Usage): void {
    const choice = firstChoice(completion.choices);
    const content: ContentPart[] = [];
    const message = choice?.message;
    // Some servers send absent fields as null.
    const details = message?.reasoning_details ?? [];
    const reasoning = message === undefined ? undefined : reasoningText(message);
    if (reasoning !== undefined || details.length > 0) {
      const part: ContentPart = { type: 'reasoning', text: reasoning ?? '' };
      if (details.length > 0) part.providerMetadata = reasoningMetadata(details);
      content.push(part);
    }
    // OpenAI says a refusal apart from the content; it is the answer's text all the same.
    const refusal = message?.refusal;
    const refused = typeof refusal === 'string' && refusal !== '';
    const text = contentText(message?.content) + (refused ? refusal : '');
    if (text !== '') content.push({ type: 'text', text });
    for (const image of message?.images ?? []) content.push(...filePart(image, this.#tagged));
    content.push(...sourceParts(message?.annotations, 0));
    // (A custom tool's call, whose input is free text, comes only from a Chat Completions request naming one.)
    for (const call of message?.tool_calls ?? []) {
      const { name, input } = calledWith(call);
      content.push({ type: 'tool-call', toolCallId: call.id, toolName: name, input });
    }
    const payload = JSON.stringify({
      content,
      finishReason: refused ? REFUSED : finishReason(choice?.finish_reason),
      usage: aiSdkUsage(charged),
      providerMetadata: answerMetadata(gatewayMetadata(state, this.#log.answered(this.#modelId)), logprobsOf(choice?.logprobs)),
      warnings: this.warnings,
      response: { id: completion.id, modelId: this.#modelId, timestamp: responseTimestamp(completion.created) },
    });
    writeJsonAnswer(res, state, slug, payload);
  }

  openStream(_state: RequestState, _slug: string): StreamEncoder {
    return new AiSdkStream(this.#modelId, this.#log, this.warnings, this.#tagged, this.#raw);
  }
}
