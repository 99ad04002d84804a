// Answers to Messages clients from providers that are not `anthropic`: the
// Chat Completions answer mapped to a Message, and chunks mapped to
// Anthropic's event sequence: message_start, ping, then per block
// content_block_start / content_block_delta (text_delta, input_json_delta,
// thinking_delta, signature_delta) / content_block_stop, message_delta with
// the stop reason and usage, message_stop; `error` after the first byte.
import type { ServerResponse } from 'node:http';
import type { RequestState } from '../core/attempt.js';
import type { GatewayHttpError } from '../core/http-error.js';
import { firstChoice, reasoningText, toolCallKey, type ChatCompletion, type ChatCompletionChunk, type FinishReason, type ToolCallDelta, type Usage } from '../providers/shared/openai-types.js';
import { UpstreamStreamError } from '../providers/shared/types.js';
import type { CompletionAnswer, StreamEncoder } from '../core/protocol.js';
import { anthropicErrorBody } from './errors.js';
import { matchedStopSequence, messageId, messageUsage, stopReasonOf, toMessage, toolUseId } from './from-chat.js';
import { writeJsonAnswer } from '../core/answer-head.js';
import { isWholeJson, startsAnotherCall } from '../core/tool-call-split.js';

export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A streamed tool call: its arguments so far, and its block once started. */
interface ToolCallState {
  id: string;
  /** The id the upstream gave the call ('' until it gives one): a delta under another may start another call (startsAnotherCall). */
  upstreamId: string;
  name: string;
  args: string;
  block: number | undefined;
  closed: boolean;
  /** Another call started under the call's index (startsAnotherCall): it has all the arguments it will have. */
  done: boolean;
}

type OpenBlock = { kind: 'text' | 'thinking' | 'redacted'; index: number } | { kind: 'tool'; index: number; call: ToolCallState };

class MessagesStreamEncoder implements StreamEncoder {
  #started = false;
  #next = 0;
  #open: OpenBlock | undefined;
  /** Tool calls by their index (or id, from servers that send no index): arguments may follow the call's start. */
  readonly #calls = new Map<string, ToolCallState>();
  /**
   * Calls that started while another call's block was open. Anthropic's
   * blocks run one after another, and an upstream may interleave calls'
   * arguments: a call waits, its arguments gathered, until the open one's
   * arguments are whole JSON (or another block opens, or the message ends).
   */
  readonly #waiting: ToolCallState[] = [];
  #lastCall: ToolCallState | undefined;
  /** reasoning_details index -> its thinking block, for a signature that arrives after the text. */
  readonly #thinkingBlocks = new Map<number, number>();
  #finish: FinishReason | null = null;
  /** The request's stop sequence the upstream said ended the answer. */
  #stopSequence: string | null = null;
  /** The upstream streamed a refusal: the message stops for that reason. */
  #refused = false;

  chunk(chunk: ChatCompletionChunk, state: RequestState): string {
    let out = '';
    if (!this.#started) {
      this.#started = true;
      // Some servers name no model in their chunks: the request's then, as for a whole answer (toMessage).
      const model = typeof chunk.model === 'string' && chunk.model !== '' ? chunk.model : state.request.model;
      const start = { id: messageId(chunk.id), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
      out += sseEvent('message_start', { type: 'message_start', message: start }) + sseEvent('ping', { type: 'ping' });
    }
    const choice = firstChoice(chunk.choices);
    if (choice === undefined) return out;
    const delta = choice.delta;
    const reasoning = reasoningText(delta);
    if (reasoning !== undefined) {
      const index = this.#reasoningIndex(delta.reasoning_details);
      out += this.#ensure('thinking', index, { type: 'thinking', thinking: '', signature: '' });
      out += this.#delta({ type: 'thinking_delta', thinking: reasoning });
    }
    for (const detail of delta.reasoning_details ?? []) {
      if (detail.type === 'reasoning.encrypted') {
        out += this.#close();
        const index = this.#next++;
        out += sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: detail.data } });
        out += sseEvent('content_block_stop', { type: 'content_block_stop', index });
      } else if (detail.type === 'reasoning.text' && typeof detail.signature === 'string' && detail.signature !== '') {
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
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      this.#refused = true;
      out += this.#ensure('text', undefined, { type: 'text', text: '' });
      out += this.#delta({ type: 'text_delta', text: delta.refusal });
    }
    for (const call of delta.tool_calls ?? []) out += this.#toolCall(call);
    if (choice.finish_reason !== null) {
      this.#finish = choice.finish_reason;
      this.#stopSequence = matchedStopSequence(choice, state.request.stop);
    }
    return out;
  }

  /** The usage is what was charged: an estimate where the upstream reported none, as the span says. */
  end(_state: RequestState, charged: Usage | undefined): string {
    const usage = messageUsage(charged);
    const stopReason = this.#refused ? 'refusal' : (stopReasonOf(this.#finish, this.#calls.size > 0, this.#stopSequence) ?? 'end_turn');
    let out = '';
    while (this.#waiting.length > 0) out += this.#startWaiting();
    return (
      out +
      this.#close() +
      sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: stopReason === 'stop_sequence' ? this.#stopSequence : null }, usage }) +
      sseEvent('message_stop', { type: 'message_stop' })
    );
  }

  error(error: GatewayHttpError): string {
    return sseEvent('error', anthropicErrorBody(error));
  }

  #toolCall(call: ToolCallDelta): string {
    const key = toolCallKey(call);
    let state = key === undefined ? this.#lastCall : this.#calls.get(key);
    if (state !== undefined && startsAnotherCall(call, state)) {
      state.done = true;
      state = undefined;
    }
    if (state === undefined) {
      state = { id: '', upstreamId: '', name: '', args: '', block: undefined, closed: false, done: false };
      this.#calls.set(key ?? `unkeyed:${this.#calls.size}`, state);
      this.#waiting.push(state);
      this.#lastCall = state;
    }
    // A block starts with the call's id and name, which some servers send after its first delta
    // (and as '' on the deltas after that); one that never sends an id gets its own (toolUseId).
    if (call.id !== undefined && call.id !== '' && state.upstreamId === '') state.upstreamId = call.id;
    if (state.block === undefined) {
      if (call.id !== undefined && call.id !== '') state.id = call.id;
      const name = call.function?.name;
      if (name !== undefined && name !== '') state.name = name;
    }
    let out = '';
    const args = call.function?.arguments;
    if (args !== undefined && args !== '') {
      if (state.closed) throw new UpstreamStreamError(`upstream sent arguments for tool call ${state.id} after they were whole or another block began`);
      state.args += args;
      if (state.block !== undefined) out += sseEvent('content_block_delta', { type: 'content_block_delta', index: state.block, delta: { type: 'input_json_delta', partial_json: args } });
    }
    // The open call streams on until its arguments are whole; then the next waiting call starts, once it has its name.
    while (this.#waiting.length > 0) {
      const open = this.#open;
      if (open?.kind === 'tool' && !open.call.done && !isWholeJson(open.call.args)) break;
      if (this.#waiting[0]?.name === '') break;
      out += this.#startWaiting();
    }
    return out;
  }

  /** Closes the open block and starts the first waiting call, with the arguments it gathered meanwhile. */
  #startWaiting(): string {
    const call = this.#waiting.shift();
    if (call === undefined) return '';
    let out = this.#close();
    const index = this.#next++;
    call.block = index;
    call.id = toolUseId(call.id);
    this.#open = { kind: 'tool', index, call };
    out += sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
    if (call.args !== '') out += sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.args } });
    return out;
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
    if (open.kind === 'tool') open.call.closed = true;
    return sseEvent('content_block_stop', { type: 'content_block_stop', index: open.index });
  }
}

export const messagesAnswer: CompletionAnswer = {
  // The usage is what was charged: an estimate where the upstream reported none, as the span says.
  complete: function answerMessage(res: ServerResponse, completion: ChatCompletion, _text: string | undefined, state: RequestState, slug: string, charged: Usage): void {
    const message = toMessage({ ...completion, usage: charged }, state.request.model, state.request.stop);
    if (state.meter?.priced === true) message.usage.cost = state.meter.costUsd;
    const payload = JSON.stringify(message);
    writeJsonAnswer(res, state, slug, payload);
  },
  openStream: function openMessagesStream(): StreamEncoder {
    return new MessagesStreamEncoder();
  },
};
