// Bedrock ConverseStream (binary event stream) -> OpenAI chat.completion.chunk objects.
import type { ChatCompletionChunk } from '../shared/openai-types.js';
import { ChunkBuilder } from '../shared/chunks.js';
import { completionId } from '../shared/inputs.js';
import { REASONING_FORMATS, STRUCTURED_OUTPUT_TOOL } from '../shared/reasoning.js';
import { UpstreamStreamError, type AttemptContext } from '../shared/types.js';
import type { BedrockProviderConfig } from './config.js';
import { errorTypeOf } from './errors.js';
import { decodeEventStream, headerString } from './event-stream.js';
import { mapStopReason, mapUsage } from './response.js';
import type { ConverseStreamEvents } from './wire.js';

const decoder = new TextDecoder();

export async function* parseBedrockStream(body: AsyncIterable<Uint8Array>, ctx: AttemptContext<BedrockProviderConfig>): AsyncGenerator<ChatCompletionChunk> {
  const out = new ChunkBuilder(completionId(), ctx.model);
  // Content block index -> tool call index (text blocks take block indexes too).
  const toolIndexes = new Map<number, number>();
  let stopped = false;
  // The block carrying a structured-output answer: its JSON streams as content.
  let structuredBlock: number | undefined;
  // Block index -> reasoning_details index.
  const reasoningIndexes = new Map<number, number>();
  const format = REASONING_FORMATS.bedrock;

  for await (const message of decodeEventStream(body)) {
    const messageType = headerString(message, ':message-type');
    const payload = decoder.decode(message.body);
    if (messageType === 'exception' || messageType === 'error') {
      const exception = headerString(message, ':exception-type') ?? headerString(message, ':error-code') ?? 'internalServerException';
      throw new UpstreamStreamError(readMessage(payload) ?? headerString(message, ':error-message') ?? exception, errorTypeOf(exception));
    }
    const eventType = headerString(message, ':event-type');
    const event = parsePayload(payload);
    switch (eventType) {
      case 'contentBlockStart': {
        const { contentBlockIndex, start } = event as ConverseStreamEvents['contentBlockStart'];
        if (start.toolUse?.name === STRUCTURED_OUTPUT_TOOL) structuredBlock = contentBlockIndex;
        else if (start.toolUse !== undefined) {
          const index = toolIndexes.size;
          toolIndexes.set(contentBlockIndex, index);
          yield out.toolCalls([{ index, id: start.toolUse.toolUseId, type: 'function', function: { name: start.toolUse.name, arguments: '' } }]);
        }
        break;
      }
      case 'contentBlockDelta': {
        const { contentBlockIndex, delta } = event as ConverseStreamEvents['contentBlockDelta'];
        if (delta.text !== undefined && delta.text !== '') yield out.delta({ content: delta.text });
        if (delta.reasoningContent !== undefined) {
          let index = reasoningIndexes.get(contentBlockIndex);
          if (index === undefined) {
            index = reasoningIndexes.size;
            reasoningIndexes.set(contentBlockIndex, index);
          }
          const { text, signature, redactedContent } = delta.reasoningContent;
          if (text !== undefined && text !== '') yield out.delta({ reasoning: text, reasoning_details: [{ type: 'reasoning.text', text, format, index }] });
          if (signature !== undefined) yield out.delta({ reasoning_details: [{ type: 'reasoning.text', text: '', signature, format, index }] });
          if (redactedContent !== undefined) yield out.delta({ reasoning_details: [{ type: 'reasoning.encrypted', data: redactedContent, format, index }] });
        }
        if (delta.toolUse !== undefined && contentBlockIndex === structuredBlock) {
          if (delta.toolUse.input !== '') yield out.delta({ content: delta.toolUse.input });
        } else if (delta.toolUse !== undefined && delta.toolUse.input !== '') {
          const index = toolIndexes.get(contentBlockIndex);
          if (index === undefined) throw new UpstreamStreamError(`bedrock sent a toolUse delta for block ${contentBlockIndex}, which started no tool call`);
          yield out.toolCalls([{ index, function: { arguments: delta.toolUse.input } }]);
        }
        break;
      }
      case 'messageStop': {
        stopped = true;
        const { stopReason } = event as ConverseStreamEvents['messageStop'];
        yield out.delta({}, structuredBlock !== undefined && stopReason === 'tool_use' ? 'stop' : mapStopReason(stopReason));
        break;
      }
      case 'metadata': {
        const { usage } = event as ConverseStreamEvents['metadata'];
        if (usage !== undefined) yield out.usage(mapUsage(usage));
        break;
      }
      default:
        // messageStart, contentBlockStop and event types added later carry nothing to forward.
        break;
    }
  }
  if (!stopped) throw new UpstreamStreamError('bedrock stream ended before messageStop');
}

function parsePayload(payload: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(payload);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new UpstreamStreamError('bedrock sent an event whose payload is not a JSON object');
}

function readMessage(payload: string): string | undefined {
  try {
    const parsed = JSON.parse(payload) as { message?: unknown; Message?: unknown };
    const message = parsed.message ?? parsed.Message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}
