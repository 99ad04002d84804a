// Bedrock Converse response -> OpenAI chat completion.
import type { ChatCompletion, FinishReason, ReasoningDetail, ToolCall, Usage } from '../shared/openai-types.js';
import { asObject, completionId } from '../shared/inputs.js';
import { tokenCount } from '../../../../shared/tokens.js';
import { REASONING_FORMATS, STRUCTURED_OUTPUT_TOOL } from '../shared/reasoning.js';
import { UpstreamStreamError, type AttemptContext } from '../shared/types.js';
import type { BedrockProviderConfig } from './config.js';
import type { ConverseAdditionalFields, ConverseResponse, ConverseStopReason, ConverseUsage } from './wire.js';

const decoder = new TextDecoder();

/** Stops that say the model failed to write a valid answer or tool call. */
type FailedStop = 'malformed_model_output' | 'malformed_tool_use';
const FAILED_STOPS: ReadonlySet<string> = new Set<FailedStop>(['malformed_model_output', 'malformed_tool_use']);

const FINISH_REASONS: Readonly<Record<Exclude<ConverseStopReason, FailedStop>, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

/**
 * The stop sequence that ended the answer, as vLLM names it on a choice
 * (`stop_reason`), when Claude said which (additionalModelResponseFieldPaths):
 * a Messages answer then carries it as `stop_sequence`.
 */
export function matchedStop(reason: ConverseStopReason, fields: ConverseAdditionalFields | undefined): { stop_reason?: string } {
  const sequence = asObject(fields?.delta)?.['stop_sequence'];
  return reason === 'stop_sequence' && typeof sequence === 'string' ? { stop_reason: sequence } : {};
}

/**
 * A turn that called tools ends with `tool_calls`, and one that called none
 * (or only the structured-output tool) does not, whatever the stop reason
 * says: models behind Converse say `end_turn` after a tool call, or
 * `tool_use` after text alone, at times, and clients run tools by it. A
 * failed stop fails the attempt (the next endpoint may try) rather than pass
 * for a finished answer.
 */
export function mapStopReason(reason: ConverseStopReason, calledTools: boolean): FinishReason {
  if (FAILED_STOPS.has(reason)) throw new UpstreamStreamError(`bedrock stopped with ${reason}`);
  const mapped = FINISH_REASONS[reason as Exclude<ConverseStopReason, FailedStop>] ?? 'stop';
  if (calledTools && mapped === 'stop') return 'tool_calls';
  return !calledTools && mapped === 'tool_calls' ? 'stop' : mapped;
}

/**
 * Like Anthropic's, Converse's inputTokens leaves out cache reads and writes;
 * prompt_tokens counts them. A count that is not a non-negative integer is
 * 0, as it is billed (tokens.ts).
 */
export function mapUsage(usage: ConverseUsage): Usage {
  const cacheRead = tokenCount(usage.cacheReadInputTokens);
  const cacheWrite = tokenCount(usage.cacheWriteInputTokens);
  const prompt = tokenCount(usage.inputTokens) + cacheRead + cacheWrite;
  const completion = tokenCount(usage.outputTokens);
  const mapped: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cacheRead > 0 || cacheWrite > 0) mapped.prompt_tokens_details = { cached_tokens: cacheRead, cache_creation_tokens: cacheWrite };
  return mapped;
}

export function parseBedrockResponse(body: Uint8Array, ctx: AttemptContext<BedrockProviderConfig>): ChatCompletion {
  const parsed: unknown = JSON.parse(decoder.decode(body));
  const message = asObject(asObject(asObject(parsed)?.['output'])?.['message']);
  if (message === undefined || !Array.isArray(message['content'])) throw new UpstreamStreamError('bedrock answered with a body that is not a Converse response');
  const response = parsed as ConverseResponse;
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  const details: ReasoningDetail[] = [];
  const format = REASONING_FORMATS.bedrock;
  for (const block of response.output.message.content) {
    // A block that is not an object, or text that is not a string, says nothing to pass on.
    if (typeof block !== 'object' || block === null) continue;
    if (('toolUse' in block && asObject(block.toolUse) === undefined) || ('reasoningContent' in block && asObject(block.reasoningContent) === undefined)) continue;
    if ('text' in block) text += typeof block.text === 'string' ? block.text : '';
    else if ('toolUse' in block && block.toolUse.name === STRUCTURED_OUTPUT_TOOL) {
      text += JSON.stringify(block.toolUse.input ?? {});
    } else if ('toolUse' in block) toolCalls.push({ id: block.toolUse.toolUseId, type: 'function', function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) } });
    else if ('reasoningContent' in block) {
      const content = block.reasoningContent;
      if ('reasoningText' in content) {
        reasoning += content.reasoningText.text;
        details.push({ type: 'reasoning.text', text: content.reasoningText.text, signature: content.reasoningText.signature ?? null, format, index: details.length });
      } else details.push({ type: 'reasoning.encrypted', data: content.redactedContent, format, index: details.length });
    }
  }
  const reasoningFields = details.length > 0 ? { reasoning, reasoning_details: details } : {};
  return {
    // Converse names neither the response nor the model.
    id: completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}), ...reasoningFields },
        // The forced structured-output call is the answer, not a tool call to run.
        finish_reason: mapStopReason(response.stopReason, toolCalls.length > 0),
        ...matchedStop(response.stopReason, response.additionalModelResponseFields),
      },
    ],
    ...(response.usage !== undefined ? { usage: mapUsage(response.usage) } : {}),
  };
}
