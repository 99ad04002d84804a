// Answers to Messages clients from providers that are not `anthropic`: the
// Chat Completions answer mapped to a Message, and chunks mapped to
// Anthropic's event sequence: message_start, ping, then per block
// content_block_start / content_block_delta (text_delta, input_json_delta,
// thinking_delta, signature_delta) / content_block_stop, message_delta with
// the stop reason and usage, message_stop; `error` after the first byte.
import type { ServerResponse } from 'node:http';
import type { RequestState } from '../core/attempt.js';
import type { GatewayHttpError } from '../core/http-error.js';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, Usage } from '../providers/shared/openai-types.js';
import type { CompletionAnswer, StreamEncoder } from '../core/protocol.js';
import { anthropicErrorBody } from './errors.js';
import { messageId, messageUsage, stopReasonOf, toMessage } from './from-chat.js';
import { writeJsonAnswer } from '../core/answer-head.js';

export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

type OpenBlock = { kind: 'text' | 'thinking' | 'redacted'; index: number } | { kind: 'tool'; index: number; call: number };

class MessagesStreamEncoder implements StreamEncoder {
  #started = false;
  #next = 0;
  #open: OpenBlock | undefined;
  /** Tool call index -> its block index (arguments may follow the call's start). */
  readonly #toolBlocks = new Map<number, number>();
  /** reasoning_details index -> its thinking block, for a signature that arrives after the text. */
  readonly #thinkingBlocks = new Map<number, number>();
  #finish: FinishReason | null = null;
  #usage: Usage | undefined;

  chunk(chunk: ChatCompletionChunk): string {
    let out = '';
    if (!this.#started) {
      this.#started = true;
      const start = { id: messageId(chunk.id), type: 'message', role: 'assistant', model: chunk.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
      out += sseEvent('message_start', { type: 'message_start', message: start }) + sseEvent('ping', { type: 'ping' });
    }
    if (chunk.usage !== undefined && chunk.usage !== null) this.#usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice === undefined) return out;
    const delta = choice.delta;
    if (typeof delta.reasoning === 'string' && delta.reasoning !== '') {
      const index = this.#reasoningIndex(delta.reasoning_details);
      out += this.#ensure('thinking', index, { type: 'thinking', thinking: '', signature: '' });
      out += this.#delta({ type: 'thinking_delta', thinking: delta.reasoning });
    }
    for (const detail of delta.reasoning_details ?? []) {
      if (detail.type === 'reasoning.encrypted') {
        out += this.#close();
        const index = this.#next++;
        out += sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: detail.data } });
        out += sseEvent('content_block_stop', { type: 'content_block_stop', index });
      } else if (typeof detail.signature === 'string' && detail.signature !== '') {
        const block = detail.index === undefined ? undefined : this.#thinkingBlocks.get(detail.index);
        if (block === undefined) {
          // A signature for reasoning whose text never streamed: a block of its own.
          out += this.#ensure('thinking', detail.index, { type: 'thinking', thinking: '', signature: '' });
        }
        out += sseEvent('content_block_delta', { type: 'content_block_delta', index: block ?? this.#open?.index, delta: { type: 'signature_delta', signature: detail.signature } });
      }
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      out += this.#ensure('text', undefined, { type: 'text', text: '' });
      out += this.#delta({ type: 'text_delta', text: delta.content });
    }
    for (const call of delta.tool_calls ?? []) {
      if (call.id !== undefined && !this.#toolBlocks.has(call.index)) {
        out += this.#close();
        const index = this.#next++;
        this.#toolBlocks.set(call.index, index);
        this.#open = { kind: 'tool', index, call: call.index };
        out += sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: {} } });
      }
      const args = call.function?.arguments;
      const index = this.#toolBlocks.get(call.index);
      if (args !== undefined && args !== '' && index !== undefined) out += sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args } });
    }
    if (choice.finish_reason !== null) this.#finish = choice.finish_reason;
    return out;
  }

  end(): string {
    const usage = messageUsage(this.#usage);
    return (
      this.#close() +
      sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: stopReasonOf(this.#finish, this.#toolBlocks.size > 0) ?? 'end_turn', stop_sequence: null }, usage }) +
      sseEvent('message_stop', { type: 'message_stop' })
    );
  }

  error(error: GatewayHttpError): string {
    return sseEvent('error', anthropicErrorBody(error));
  }

  #reasoningIndex(details: ChatCompletionChunk['choices'][number]['delta']['reasoning_details']): number | undefined {
    return details?.find((d) => d.type === 'reasoning.text')?.index;
  }

  /** Opens a block of `kind` unless that very block is open (thinking blocks are told apart by their detail index). */
  #ensure(kind: 'text' | 'thinking', detailIndex: number | undefined, contentBlock: Record<string, unknown>): string {
    const open = this.#open;
    if (open !== undefined && open.kind === kind && (kind === 'text' || detailIndex === undefined || this.#thinkingBlocks.get(detailIndex) === open.index)) return '';
    const out = this.#close();
    const index = this.#next++;
    this.#open = { kind, index };
    if (kind === 'thinking' && detailIndex !== undefined) this.#thinkingBlocks.set(detailIndex, index);
    return out + sseEvent('content_block_start', { type: 'content_block_start', index, content_block: contentBlock });
  }

  #delta(delta: Record<string, unknown>): string {
    return sseEvent('content_block_delta', { type: 'content_block_delta', index: this.#open?.index, delta });
  }

  #close(): string {
    const open = this.#open;
    if (open === undefined) return '';
    this.#open = undefined;
    return sseEvent('content_block_stop', { type: 'content_block_stop', index: open.index });
  }
}

export const messagesAnswer: CompletionAnswer = {
  complete: function answerMessage(res: ServerResponse, completion: ChatCompletion, _text: string | undefined, state: RequestState, slug: string): void {
    const payload = JSON.stringify(toMessage(completion, state.request.model));
    writeJsonAnswer(res, state, slug, payload);
  },
  openStream: function openMessagesStream(): StreamEncoder {
    return new MessagesStreamEncoder();
  },
};
