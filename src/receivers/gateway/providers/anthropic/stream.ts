// Anthropic Messages stream (SSE) -> OpenAI chat.completion.chunk objects.
// https://docs.anthropic.com/en/docs/build-with-claude/streaming
import type { ChatCompletionChunk, Usage } from '../shared/openai-types.js';
import { SseStreamMapper, type SseEvent, type SseEventMapper } from '../shared/sse.js';
import { ChunkBuilder } from '../shared/chunks.js';
import { REASONING_FORMATS, STRUCTURED_OUTPUT_TOOL } from '../shared/reasoning.js';
import { UpstreamStreamError, type AttemptContext, type StreamMapper } from '../shared/types.js';
import type { AnthropicProviderConfig } from './config.js';
import { classifyAnthropicEvent } from './errors.js';
import { mapStopReason, mapUsage } from './response.js';
import type { AnthropicStreamEvent, AnthropicUsage } from './wire.js';

const FORMAT = REASONING_FORMATS.anthropic;
type BlockStart = Extract<AnthropicStreamEvent, { type: 'content_block_start' }>['content_block'];
type BlockDelta = Extract<AnthropicStreamEvent, { type: 'content_block_delta' }>['delta'];

export function anthropicStreamMapper(ctx: AttemptContext<AnthropicProviderConfig>): StreamMapper {
  return new SseStreamMapper(new AnthropicEvents(ctx.model));
}

class AnthropicEvents implements SseEventMapper {
  readonly #out: ChunkBuilder;
  readonly #usage: Partial<AnthropicUsage> = {};
  // Content block index -> tool call index: text and thinking blocks take
  // block indexes too, but OpenAI numbers tool calls 0, 1, 2 on their own.
  readonly #toolIndexes = new Map<number, number>();
  // Tool blocks with no argument bytes sent yet (block index -> tool call
  // index, undefined for the structured-output answer, which streams as
  // content, and what to close it with): a tool called without arguments
  // streams none, and clients JSON.parse the assembled string, so such a call
  // is closed with "{}"; an input given whole in content_block_start instead
  // of as input_json_delta is closed with that input.
  readonly #noArguments = new Map<number, { index: number | undefined; input: string }>();
  // The block carrying a structured-output answer: its JSON streams as content.
  #structuredBlock: number | undefined;
  // Block index -> reasoning_details index (thinking and redacted blocks count 0, 1, 2).
  readonly #reasoningIndexes = new Map<number, number>();
  // Blocks a chat answer has no place for (server tool calls and their
  // results): read past with their deltas, as the whole answer reads past
  // them. A server_tool_use streams its input as input_json_delta.
  readonly #passedOver = new Set<number>();

  constructor(model: string) {
    this.#out = new ChunkBuilder('', model);
  }

  event(sse: SseEvent, chunks: ChatCompletionChunk[]): boolean {
    const out = this.#out;
    const event = parseEvent(sse.data);
    switch (event.type) {
      case 'message_start':
        out.id = event.message.id;
        out.model = event.message.model ?? out.model;
        Object.assign(this.#usage, event.message.usage);
        break;
      case 'content_block_start':
        this.#blockStart(event.index, event.content_block, chunks);
        break;
      case 'content_block_delta':
        this.#blockDelta(event.index, event.delta, chunks);
        break;
      case 'content_block_stop':
        this.#closeEmptyCall(event.index, chunks);
        break;
      case 'message_delta':
        for (const blockIndex of [...this.#noArguments.keys()]) this.#closeEmptyCall(blockIndex, chunks);
        Object.assign(this.#usage, definedOnly(event.usage ?? {}));
        chunks.push(out.delta({}, this.#structuredBlock !== undefined && event.delta.stop_reason === 'tool_use' ? 'stop' : (mapStopReason(event.delta.stop_reason) ?? 'stop')));
        break;
      case 'message_stop':
        chunks.push(out.usage(mapUsage(this.#usage)));
        return true;
      case 'error':
        throw new UpstreamStreamError(event.error.message, event.error.type === 'overloaded_error' ? 'api_error' : event.error.type, classifyAnthropicEvent(sse.data));
      default:
        // ping and event types added later carry nothing to forward.
        break;
    }
    return false;
  }

  end(): void {
    throw new UpstreamStreamError('anthropic stream ended before message_stop');
  }

  /** message_start's input tokens (and message_delta's output), before message_stop reports them. */
  get usageSoFar(): Usage | undefined {
    return this.#usage.input_tokens === undefined ? undefined : mapUsage(this.#usage);
  }

  #blockStart(blockIndex: number, block: BlockStart, chunks: ChatCompletionChunk[]): void {
    const out = this.#out;
    if (block.type === 'text' && block.text !== '') chunks.push(out.delta({ content: block.text }));
    if (block.type === 'tool_use' && block.name === STRUCTURED_OUTPUT_TOOL) {
      this.#structuredBlock = blockIndex;
      this.#noArguments.set(blockIndex, { index: undefined, input: startInput(block.input) });
    } else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
      const index = this.#reasoningIndexes.size;
      this.#reasoningIndexes.set(blockIndex, index);
      if (block.type === 'redacted_thinking') chunks.push(out.delta({ reasoning_details: [{ type: 'reasoning.encrypted', data: block.data, format: FORMAT, index }] }));
      else if (block.thinking !== '') chunks.push(out.delta({ reasoning: block.thinking, reasoning_details: [{ type: 'reasoning.text', text: block.thinking, format: FORMAT, index }] }));
    } else if (block.type === 'tool_use') {
      const index = this.#toolIndexes.size;
      this.#toolIndexes.set(blockIndex, index);
      this.#noArguments.set(blockIndex, { index, input: startInput(block.input) });
      chunks.push(out.toolCalls([{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }]));
    } else if (block.type !== 'text') this.#passedOver.add(blockIndex);
  }

  #blockDelta(blockIndex: number, delta: BlockDelta, chunks: ChatCompletionChunk[]): void {
    const out = this.#out;
    if (this.#passedOver.has(blockIndex)) return;
    if (delta.type === 'text_delta') chunks.push(out.delta({ content: delta.text }));
    else if (delta.type === 'thinking_delta' || delta.type === 'signature_delta') {
      const index = this.#reasoningIndexes.get(blockIndex);
      if (index === undefined) throw new UpstreamStreamError(`anthropic sent ${delta.type} for block ${blockIndex}, which is not a thinking block`);
      if (delta.type === 'thinking_delta') chunks.push(out.delta({ reasoning: delta.thinking, reasoning_details: [{ type: 'reasoning.text', text: delta.thinking, format: FORMAT, index }] }));
      else chunks.push(out.delta({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: delta.signature, format: FORMAT, index }] }));
    } else if (delta.type === 'input_json_delta' && blockIndex === this.#structuredBlock) {
      if (delta.partial_json === '') return;
      this.#noArguments.delete(blockIndex);
      chunks.push(out.delta({ content: delta.partial_json }));
    } else if (delta.type === 'input_json_delta' && delta.partial_json !== '') {
      const index = this.#toolIndexes.get(blockIndex);
      if (index === undefined) throw new UpstreamStreamError(`anthropic sent input_json_delta for block ${blockIndex}, which is not a tool_use block`);
      // Deltas carry the whole input (the start's is then {}).
      this.#noArguments.delete(blockIndex);
      chunks.push(out.toolCalls([{ index, function: { arguments: delta.partial_json } }]));
    }
  }

  #closeEmptyCall(blockIndex: number, chunks: ChatCompletionChunk[]): void {
    const pending = this.#noArguments.get(blockIndex);
    if (pending === undefined) return;
    this.#noArguments.delete(blockIndex);
    if (pending.index === undefined) chunks.push(this.#out.delta({ content: pending.input }));
    else chunks.push(this.#out.toolCalls([{ index: pending.index, function: { arguments: pending.input } }]));
  }
}

/** A tool_use start's input as arguments: "{}" unless it is a non-empty object. */
function startInput(input: unknown): string {
  return typeof input === 'object' && input !== null && !Array.isArray(input) && Object.keys(input).length > 0 ? JSON.stringify(input) : '{}';
}

function parseEvent(data: string): AnthropicStreamEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new UpstreamStreamError('anthropic sent an event that is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { type?: unknown }).type !== 'string') {
    throw new UpstreamStreamError('anthropic sent an event without a type');
  }
  return parsed as AnthropicStreamEvent;
}

function definedOnly(usage: Partial<AnthropicUsage>): Partial<AnthropicUsage> {
  return Object.fromEntries(Object.entries(usage).filter(([, value]) => value !== null && value !== undefined));
}
