// Anthropic Messages response -> OpenAI chat completion.
import type { ChatCompletion, FinishReason, ReasoningDetail, ToolCall, Usage } from '../shared/openai-types.js';
import { asObject } from '../shared/inputs.js';
import { tokenCount } from '../../../../shared/tokens.js';
import { REASONING_FORMATS, STRUCTURED_OUTPUT_TOOL } from '../shared/reasoning.js';
import { UpstreamStreamError, type AttemptContext } from '../shared/types.js';
import type { AnthropicProviderConfig } from './config.js';
import type { AnthropicResponse, AnthropicStopReason, AnthropicUsage } from './wire.js';

const decoder = new TextDecoder();

const FINISH_REASONS: Readonly<Record<AnthropicStopReason, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // pause_turn: a server tool paused a long turn; the client sees a normal end.
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  // The answer stopped at the model's context window: cut short, as at max_tokens.
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
};

export function mapStopReason(reason: AnthropicStopReason | null | undefined): FinishReason | null {
  if (reason === null || reason === undefined) return null;
  return FINISH_REASONS[reason] ?? 'stop';
}

/**
 * `prompt_tokens` counts every input token, cached or not; Anthropic's
 * input_tokens excludes cache reads and writes. A count that is not a
 * non-negative integer is 0, as it is billed (tokens.ts).
 */
export function mapUsage(usage: Partial<AnthropicUsage>): Usage {
  const cacheRead = tokenCount(usage.cache_read_input_tokens);
  const cacheWrite = tokenCount(usage.cache_creation_input_tokens);
  const prompt = tokenCount(usage.input_tokens) + cacheRead + cacheWrite;
  const completion = tokenCount(usage.output_tokens);
  const mapped: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cacheRead > 0 || cacheWrite > 0) mapped.prompt_tokens_details = { cached_tokens: cacheRead, cache_creation_tokens: cacheWrite };
  return mapped;
}

export function parseAnthropicResponse(body: Uint8Array, ctx: AttemptContext<AnthropicProviderConfig>): ChatCompletion {
  const parsed: unknown = JSON.parse(decoder.decode(body));
  const object = asObject(parsed);
  if (object === undefined || object['type'] !== 'message' || !Array.isArray(object['content'])) {
    throw new UpstreamStreamError('anthropic answered with a body that is not a message');
  }
  const message = parsed as AnthropicResponse;
  let text = '';
  let reasoning = '';
  let structured = false;
  const toolCalls: ToolCall[] = [];
  const details: ReasoningDetail[] = [];
  const format = REASONING_FORMATS.anthropic;
  for (const block of message.content) {
    // A block that is not an object, or text that is not a string, says nothing to pass on.
    if (typeof block !== 'object' || block === null) continue;
    if (block.type === 'text') text += typeof block.text === 'string' ? block.text : '';
    else if (block.type === 'tool_use' && block.name === STRUCTURED_OUTPUT_TOOL) {
      text += JSON.stringify(block.input ?? {});
      structured = true;
    } else if (block.type === 'tool_use') toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    else if (block.type === 'thinking') {
      reasoning += block.thinking;
      details.push({ type: 'reasoning.text', text: block.thinking, signature: block.signature, format, index: details.length });
    } else if (block.type === 'redacted_thinking') details.push({ type: 'reasoning.encrypted', data: block.data, format, index: details.length });
  }
  const reasoningFields = details.length > 0 ? { reasoning, reasoning_details: details } : {};
  return {
    id: message.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: message.model ?? ctx.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}), ...reasoningFields },
        // The forced structured-output call is the answer, not a tool call to run.
        finish_reason: structured && message.stop_reason === 'tool_use' ? 'stop' : mapStopReason(message.stop_reason),
      },
    ],
    usage: mapUsage(message.usage ?? {}),
  };
}
