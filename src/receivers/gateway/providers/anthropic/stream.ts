// Anthropic Messages stream (SSE) -> OpenAI chat.completion.chunk objects.
// https://docs.anthropic.com/en/docs/build-with-claude/streaming
import type { ChatCompletionChunk } from '../shared/openai-types.js';
import { parseSse } from '../shared/sse.js';
import { ChunkBuilder } from '../shared/chunks.js';
import { REASONING_FORMATS, STRUCTURED_OUTPUT_TOOL } from '../shared/reasoning.js';
import { UpstreamStreamError, type AttemptContext } from '../shared/types.js';
import type { AnthropicProviderConfig } from './config.js';
import { mapStopReason, mapUsage } from './response.js';
import type { AnthropicStreamEvent, AnthropicUsage } from './wire.js';

export async function* parseAnthropicStream(body: AsyncIterable<Uint8Array>, ctx: AttemptContext<AnthropicProviderConfig>): AsyncGenerator<ChatCompletionChunk> {
  const out = new ChunkBuilder('', ctx.model);
  const usage: Partial<AnthropicUsage> = {};
  // Content block index -> tool call index: text and thinking blocks take
  // block indexes too, but OpenAI numbers tool calls 0, 1, 2 on their own.
  const toolIndexes = new Map<number, number>();
  // The block carrying a structured-output answer: its JSON streams as content.
  let structuredBlock: number | undefined;
  // Block index -> reasoning_details index (thinking and redacted blocks count 0, 1, 2).
  const reasoningIndexes = new Map<number, number>();
  const format = REASONING_FORMATS.anthropic;

  for await (const sse of parseSse(body)) {
    const event = parseEvent(sse.data);
    switch (event.type) {
      case 'message_start':
        out.id = event.message.id;
        out.model = event.message.model ?? out.model;
        Object.assign(usage, event.message.usage);
        break;
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text' && block.text !== '') yield out.delta({ content: block.text });
        if (block.type === 'tool_use' && block.name === STRUCTURED_OUTPUT_TOOL) structuredBlock = event.index;
        else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
          const index = reasoningIndexes.size;
          reasoningIndexes.set(event.index, index);
          if (block.type === 'redacted_thinking') yield out.delta({ reasoning_details: [{ type: 'reasoning.encrypted', data: block.data, format, index }] });
          else if (block.thinking !== '') yield out.delta({ reasoning: block.thinking, reasoning_details: [{ type: 'reasoning.text', text: block.thinking, format, index }] });
        } else if (block.type === 'tool_use') {
          const index = toolIndexes.size;
          toolIndexes.set(event.index, index);
          yield out.toolCalls([{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }]);
        }
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta.type === 'text_delta') yield out.delta({ content: delta.text });
        else if (delta.type === 'thinking_delta' || delta.type === 'signature_delta') {
          const index = reasoningIndexes.get(event.index);
          if (index === undefined) throw new UpstreamStreamError(`anthropic sent ${delta.type} for block ${event.index}, which is not a thinking block`);
          if (delta.type === 'thinking_delta') yield out.delta({ reasoning: delta.thinking, reasoning_details: [{ type: 'reasoning.text', text: delta.thinking, format, index }] });
          else yield out.delta({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: delta.signature, format, index }] });
        } else if (delta.type === 'input_json_delta' && event.index === structuredBlock) {
          if (delta.partial_json !== '') yield out.delta({ content: delta.partial_json });
        } else if (delta.type === 'input_json_delta' && delta.partial_json !== '') {
          const index = toolIndexes.get(event.index);
          if (index === undefined) throw new UpstreamStreamError(`anthropic sent input_json_delta for block ${event.index}, which is not a tool_use block`);
          yield out.toolCalls([{ index, function: { arguments: delta.partial_json } }]);
        }
        break;
      }
      case 'message_delta':
        Object.assign(usage, definedOnly(event.usage ?? {}));
        yield out.delta({}, structuredBlock !== undefined && event.delta.stop_reason === 'tool_use' ? 'stop' : (mapStopReason(event.delta.stop_reason) ?? 'stop'));
        break;
      case 'message_stop':
        yield out.usage(mapUsage(usage));
        return;
      case 'error':
        throw new UpstreamStreamError(event.error.message, event.error.type === 'overloaded_error' ? 'api_error' : event.error.type);
      default:
        // ping, content_block_stop and event types added later carry nothing to forward.
        break;
    }
  }
  throw new UpstreamStreamError('anthropic stream ended before message_stop');
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
