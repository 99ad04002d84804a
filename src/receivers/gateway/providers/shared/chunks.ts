// OpenAI chat.completion.chunk objects for one streamed completion, shared by
// the adapters that translate another provider's stream.
import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from './openai-types.js';

export type Delta = ChatCompletionChunk['choices'][number]['delta'];

export class ChunkBuilder {
  /** Providers may name the completion and model only in their first event. */
  id: string;
  model: string;
  readonly created = Math.floor(Date.now() / 1000);
  // The role rides on each choice's first chunk with content, not on the
  // provider's start event: an error right after the start then reaches the
  // gateway before any byte went to the client, and it can still fall back.
  readonly #roleSent = new Set<number>();

  constructor(id: string, model: string) {
    this.id = id;
    this.model = model;
  }

  /** `index`: the choice's, when the upstream makes several (`n`). */
  delta(delta: Delta, finishReason: FinishReason | null = null, index = 0): ChatCompletionChunk {
    const withRole: Delta = this.#roleSent.has(index) ? delta : { role: 'assistant', ...delta };
    this.#roleSent.add(index);
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index, delta: withRole, finish_reason: finishReason }] };
  }

  toolCalls(calls: ToolCallDelta[], index = 0): ChatCompletionChunk {
    return this.delta({ tool_calls: calls }, null, index);
  }

  /** The final usage chunk: no choices, as OpenAI sends it with include_usage. */
  usage(usage: Usage): ChatCompletionChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage };
  }
}
