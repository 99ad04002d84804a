// Bedrock ConverseStream (binary event stream) -> OpenAI chat.completion.chunk objects.
import type { ChatCompletionChunk } from '../shared/openai-types.js';
import { ChunkBuilder } from '../shared/chunks.js';
import { completionId } from '../shared/inputs.js';
import { REASONING_FORMATS, STRUCTURED_OUTPUT_TOOL } from '../shared/reasoning.js';
import { UpstreamStreamError, type AttemptContext, type StreamMapper } from '../shared/types.js';
import type { BedrockProviderConfig } from './config.js';
import { classifyBedrockException, errorTypeOf } from './errors.js';
import { EventStreamDecoder, headerString } from './event-stream.js';
import type { Message } from '@smithy/eventstream-codec';
import { mapStopReason, mapUsage, matchedStop } from './response.js';
import type { ConverseStreamEvents } from './wire.js';

const decoder = new TextDecoder();
const FORMAT = REASONING_FORMATS.bedrock;

export function bedrockStreamMapper(ctx: AttemptContext<BedrockProviderConfig>): StreamMapper {
  return new BedrockStreamMapper(ctx.model);
}

class BedrockStreamMapper implements StreamMapper {
  // The metadata event after messageStop is the stream's last: it is over
  // there, whether or not the body ends at once.
  finished = false;
  error: unknown;
  readonly #frames = new EventStreamDecoder();
  readonly #out: ChunkBuilder;
  // Content block index -> tool call index (text blocks take block indexes too).
  readonly #toolIndexes = new Map<number, number>();
  // Tool blocks (block index -> tool call index) with no input bytes sent
  // yet: a tool called without arguments streams none, and clients
  // JSON.parse the assembled string, so such a call is closed with "{}".
  readonly #noArguments = new Map<number, number>();
  #stopped = false;
  // The block carrying a structured-output answer: its JSON streams as content.
  #structuredBlock: number | undefined;
  // Block index -> reasoning_details index.
  readonly #reasoningIndexes = new Map<number, number>();

  constructor(model: string) {
    this.#out = new ChunkBuilder(completionId(), model);
  }

  push(part: Uint8Array): readonly ChatCompletionChunk[] {
    const chunks: ChatCompletionChunk[] = [];
    if (this.error !== undefined || this.finished) return chunks;
    try {
      this.#frames.push(part, (message) => this.#message(message, chunks));
    } catch (err) {
      this.error = err;
    }
    return chunks;
  }

  end(): readonly ChatCompletionChunk[] {
    if (this.error !== undefined || this.finished) return [];
    try {
      this.#frames.end();
      if (!this.#stopped) throw new UpstreamStreamError('bedrock stream ended before messageStop');
    } catch (err) {
      this.error = err;
    }
    return [];
  }

  #message(message: Message, chunks: ChatCompletionChunk[]): void {
    if (this.finished) return;
    const out = this.#out;
    const messageType = headerString(message, ':message-type');
    const payload = decoder.decode(message.body);
    if (messageType === 'exception' || messageType === 'error') {
      const exception = headerString(message, ':exception-type') ?? headerString(message, ':error-code') ?? 'internalServerException';
      throw new UpstreamStreamError(readMessage(payload) ?? headerString(message, ':error-message') ?? exception, errorTypeOf(exception), classifyBedrockException(exception, payload));
    }
    const eventType = headerString(message, ':event-type');
    const event = parsePayload(payload);
    switch (eventType) {
      case 'contentBlockStart': {
        const { contentBlockIndex, start } = event as ConverseStreamEvents['contentBlockStart'];
        if (start.toolUse?.name === STRUCTURED_OUTPUT_TOOL) this.#structuredBlock = contentBlockIndex;
        else if (start.toolUse !== undefined) {
          const index = this.#toolIndexes.size;
          this.#toolIndexes.set(contentBlockIndex, index);
          this.#noArguments.set(contentBlockIndex, index);
          chunks.push(out.toolCalls([{ index, id: start.toolUse.toolUseId, type: 'function', function: { name: start.toolUse.name, arguments: '' } }]));
        }
        break;
      }
      case 'contentBlockDelta': {
        const { contentBlockIndex, delta } = event as ConverseStreamEvents['contentBlockDelta'];
        this.#delta(contentBlockIndex, delta, chunks);
        break;
      }
      case 'contentBlockStop': {
        const { contentBlockIndex } = event as ConverseStreamEvents['contentBlockStop'];
        this.#closeEmptyCall(contentBlockIndex, chunks);
        break;
      }
      case 'messageStop': {
        for (const blockIndex of [...this.#noArguments.keys()]) this.#closeEmptyCall(blockIndex, chunks);
        this.#stopped = true;
        const { stopReason, additionalModelResponseFields } = event as ConverseStreamEvents['messageStop'];
        // The structured-output block is the answer, not a tool call: it has no tool index.
        const last = out.delta({}, mapStopReason(stopReason, this.#toolIndexes.size > 0));
        const choice = last.choices[0];
        if (choice !== undefined) Object.assign(choice, matchedStop(stopReason, additionalModelResponseFields));
        chunks.push(last);
        break;
      }
      case 'metadata': {
        const { usage } = event as ConverseStreamEvents['metadata'];
        if (usage !== undefined) chunks.push(out.usage(mapUsage(usage)));
        if (this.#stopped) this.finished = true;
        break;
      }
      default:
        // messageStart and event types added later carry nothing to forward.
        break;
    }
  }

  #delta(blockIndex: number, delta: ConverseStreamEvents['contentBlockDelta']['delta'], chunks: ChatCompletionChunk[]): void {
    const out = this.#out;
    if (delta.text !== undefined && delta.text !== '') chunks.push(out.delta({ content: delta.text }));
    if (delta.reasoningContent !== undefined) {
      let index = this.#reasoningIndexes.get(blockIndex);
      if (index === undefined) {
        index = this.#reasoningIndexes.size;
        this.#reasoningIndexes.set(blockIndex, index);
      }
      const { text, signature, redactedContent } = delta.reasoningContent;
      if (text !== undefined && text !== '') chunks.push(out.delta({ reasoning: text, reasoning_details: [{ type: 'reasoning.text', text, format: FORMAT, index }] }));
      if (signature !== undefined) chunks.push(out.delta({ reasoning_details: [{ type: 'reasoning.text', text: '', signature, format: FORMAT, index }] }));
      if (redactedContent !== undefined) chunks.push(out.delta({ reasoning_details: [{ type: 'reasoning.encrypted', data: redactedContent, format: FORMAT, index }] }));
    }
    if (delta.toolUse !== undefined && blockIndex === this.#structuredBlock) {
      if (delta.toolUse.input !== '') chunks.push(out.delta({ content: delta.toolUse.input }));
    } else if (delta.toolUse !== undefined && delta.toolUse.input !== '') {
      const index = this.#toolIndexes.get(blockIndex);
      if (index === undefined) throw new UpstreamStreamError(`bedrock sent a toolUse delta for block ${blockIndex}, which started no tool call`);
      this.#noArguments.delete(blockIndex);
      chunks.push(out.toolCalls([{ index, function: { arguments: delta.toolUse.input } }]));
    }
  }

  #closeEmptyCall(blockIndex: number, chunks: ChatCompletionChunk[]): void {
    const index = this.#noArguments.get(blockIndex);
    if (index === undefined) return;
    this.#noArguments.delete(blockIndex);
    chunks.push(this.#out.toolCalls([{ index, function: { arguments: '{}' } }]));
  }
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
