// Writes language-model answers in the shapes the AI SDK's gateway client
// parses: a generate result as JSON, or a stream of parts (stream.ts). Every
// part this gateway produces (text, reasoning, tool calls, usage, finish) has
// the same shape in V3 and V4, so nothing V4-only (tagged file data,
// reasoning-file, custom, ping, `interrupted`) is ever sent to either.
import type { ServerResponse } from 'node:http';
import type { RequestState } from '../core/attempt.js';
import type { ChatCompletion } from '../providers/shared/openai-types.js';
import type { CompletionAnswer, StreamEncoder } from '../core/protocol.js';
import { aiSdkUsage, finishReason, gatewayMetadata, reasoningMetadata, responseTimestamp } from './result.js';
import { AiSdkStream } from './stream.js';
import { writeJsonAnswer } from '../core/answer-head.js';

type ContentPart = { type: 'text'; text: string } | { type: 'reasoning'; text: string; providerMetadata?: object } | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

export class AiSdkAnswer implements CompletionAnswer {
  readonly #modelId: string;
  readonly #warnings: readonly object[];

  constructor(modelId: string, warnings: readonly object[]) {
    this.#modelId = modelId;
    this.#warnings = warnings;
  }

  complete(res: ServerResponse, completion: ChatCompletion, _text: string | undefined, state: RequestState, slug: string): void {
    const choice = completion.choices[0];
    const content: ContentPart[] = [];
    const message = choice?.message;
    const details = message?.reasoning_details;
    if ((typeof message?.reasoning === 'string' && message.reasoning !== '') || (details !== undefined && details.length > 0)) {
      const part: ContentPart = { type: 'reasoning', text: message?.reasoning ?? '' };
      if (details !== undefined && details.length > 0) part.providerMetadata = reasoningMetadata(details);
      content.push(part);
    }
    if (typeof message?.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
    for (const call of message?.tool_calls ?? []) content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input: call.function.arguments });
    const payload = JSON.stringify({
      content,
      finishReason: finishReason(choice?.finish_reason),
      usage: aiSdkUsage(completion.usage),
      providerMetadata: { gateway: gatewayMetadata(state, this.#modelId, slug) },
      warnings: this.#warnings,
      response: { id: completion.id, modelId: this.#modelId, timestamp: responseTimestamp(completion.created) },
    });
    writeJsonAnswer(res, state, slug, payload);
  }

  openStream(_state: RequestState, slug: string): StreamEncoder {
    return new AiSdkStream(this.#modelId, slug, this.#warnings);
  }
}
