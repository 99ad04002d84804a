// OpenAI chat.completion.chunk objects for one streamed completion, shared by
// the adapters that translate another provider's stream.
import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from './openai-types.js';

export type Delta = ChatCompletionChunk['choices'][number]['delta'];

export class ChunkBuilder {
  /** Providers may name the completion and model only in their first event. */
  id: string;
  model: string;
  readonly created = Math.floor(Date.now() / 1000);
  // The role rides on the first chunk with content, not on the provider's
  // start event: an error right after the start then reaches the gateway
  // before any byte went to the client, and it can still fall back.
  #roleSent = false;

  constructor(id: string, model: string) {
    this.id = id;
    this.model = model;
  }

  delta(delta: Delta, finishReason: FinishReason | null = null): ChatCompletionChunk {
    const withRole: Delta = this.#roleSent ? delta : { role: 'assistant', ...delta };
    this.#roleSent = true;
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta: withRole, finish_reason: finishReason }] };
  }

  toolCalls(calls: ToolCallDelta[]): ChatCompletionChunk {
    return this.delta({ tool_calls: calls });
  }

  /** The final usage chunk: no choices, as OpenAI sends it with include_usage. */
  usage(usage: Usage): ChatCompletionChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage };
  }
}
