// A Chat Completions answer -> Anthropic's Message, for providers that are not
// `anthropic`: reasoning as thinking blocks (signature kept), text, tool_use.
import { randomUUID } from 'node:crypto';
import { contentText, firstChoice, reasoningText, type ChatCompletion, type ChatCompletionRequest, type FinishReason, type ReasoningDetail, type StopNamed, type ToolCall, type Usage } from '../providers/shared/openai-types.js';
import { tokensOf } from '../../../shared/tokens.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export type ContentBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface MessageUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
  /** USD, on a priced model's whole answer, as native whole answers carry it. */
  cost?: number;
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessageUsage;
}

const STOP_REASONS: Readonly<Record<FinishReason, StopReason>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/**
 * `toolUse`: the answer holds tool calls. OpenAI answers `stop` with them
 * when `tool_choice` names a function; Anthropic's clients run tools only on
 * `tool_use`, so an answer with tool calls that stopped normally says so.
 * `stopSequence`: the request's stop sequence the server said ended it.
 */
export function stopReasonOf(reason: FinishReason | null | undefined, toolUse = false, stopSequence: string | null = null): StopReason | null {
  if (reason === null || reason === undefined) return null;
  if (reason !== 'stop') return STOP_REASONS[reason] ?? 'end_turn';
  if (toolUse) return 'tool_use';
  return stopSequence === null ? 'end_turn' : 'stop_sequence';
}

/**
 * The request's stop sequence that ended a choice, where the server names it
 * (vLLM, SGLang; OpenAI does not say, and its `stop` stays `end_turn`). A
 * stop string of the server's own is not one the client asked for.
 */
export function matchedStopSequence(choice: StopNamed, stops: ChatCompletionRequest['stop']): string | null {
  const named = typeof choice.stop_reason === 'string' ? choice.stop_reason : choice.matched_stop;
  if (typeof named !== 'string') return null;
  const asked = typeof stops === 'string' ? [stops] : (stops ?? []);
  return asked.includes(named) ? named : null;
}

/**
 * Anthropic's input_tokens leaves cache reads and writes out; Chat's
 * prompt_tokens counts them. The counts are the ones the request is billed
 * on: an upstream's negative or non-numeric count is 0 here too.
 */
export function messageUsage(usage: Usage | null | undefined): MessageUsage {
  const tokens = tokensOf(usage ?? {});
  return {
    input_tokens: Math.max(0, tokens.input - tokens.cacheRead - tokens.cacheWrite),
    output_tokens: tokens.output,
    cache_creation_input_tokens: tokens.cacheWrite,
    cache_read_input_tokens: tokens.cacheRead,
  };
}

/** Anthropic message ids start with `msg_`; others are given that prefix. */
export function messageId(id: string | undefined): string {
  if (id === undefined || id === '') return `msg_${randomUUID().replaceAll('-', '')}`;
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** Reasoning details joined into whole blocks, in order (streamed pieces share an index). */
export function thinkingBlocks(reasoning: string | undefined, details: readonly ReasoningDetail[] | undefined): ContentBlock[] {
  if (details === undefined || details.length === 0) return reasoning === undefined || reasoning === '' ? [] : [{ type: 'thinking', thinking: reasoning, signature: '' }];
  const blocks: ContentBlock[] = [];
  const byIndex = new Map<number, ContentBlock>();
  for (const detail of details) {
    const known = detail.index === undefined ? undefined : byIndex.get(detail.index);
    if (detail.type === 'reasoning.encrypted') {
      blocks.push({ type: 'redacted_thinking', data: detail.data });
      continue;
    }
    // A summary (OpenAI's reasoning models through OpenRouter) is the reasoning there is to read; it has no signature.
    const text = detail.type === 'reasoning.summary' ? detail.summary : detail.text;
    const signature = detail.type === 'reasoning.text' ? detail.signature : undefined;
    if (known?.type === 'thinking') {
      known.thinking += text;
      if (typeof signature === 'string' && signature !== '') known.signature = signature;
      continue;
    }
    const block: ContentBlock = { type: 'thinking', thinking: text, signature: signature ?? '' };
    blocks.push(block);
    if (detail.index !== undefined) byIndex.set(detail.index, block);
  }
  return blocks;
}

/**
 * A tool call's id, or one of Anthropic's shape for a call that came without
 * (NVIDIA NIM, StepFun and SiliconFlow send none): the client needs it to
 * answer the call with a tool_result.
 */
export function toolUseId(id: string | undefined): string {
  return typeof id === 'string' && id !== '' ? id : `toolu_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

export function toolUseBlock(call: ToolCall): ContentBlock {
  const args: unknown = call.function.arguments;
  const id = toolUseId(call.id);
  // Some servers give the arguments as an object rather than its JSON.
  if (typeof args !== 'string') return { type: 'tool_use', id, name: call.function.name, input: args ?? {} };
  let input: unknown = {};
  try {
    input = args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    // Arguments that are not JSON: kept whole rather than lost.
    input = { arguments: args };
  }
  return { type: 'tool_use', id, name: call.function.name, input };
}

/** `stops`: the stop sequences the request asked for. */
export function toMessage(completion: ChatCompletion, model: string, stops?: ChatCompletionRequest['stop']): Message {
  const choice = firstChoice(completion.choices);
  const message = choice?.message;
  const content: ContentBlock[] = message === undefined ? [] : [...thinkingBlocks(reasoningText(message), message.reasoning_details)];
  const text = contentText(message?.content);
  if (text !== '') content.push({ type: 'text', text });
  // OpenAI says a refusal apart from the content; Anthropic says it as text with its own stop reason.
  const refusal = message?.refusal;
  const refused = typeof refusal === 'string' && refusal !== '';
  if (refused) content.push({ type: 'text', text: refusal });
  // Messages has no custom tools, so no request of its sends one and no answer to it calls one.
  for (const call of message?.tool_calls ?? []) if (call.type === 'function') content.push(toolUseBlock(call));
  const stopSequence = choice === undefined ? null : matchedStopSequence(choice, stops);
  const stopReason = refused ? 'refusal' : stopReasonOf(choice?.finish_reason, (message?.tool_calls?.length ?? 0) > 0, stopSequence);
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: typeof completion.model === 'string' && completion.model !== '' ? completion.model : model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopReason === 'stop_sequence' ? stopSequence : null,
    usage: messageUsage(completion.usage),
  };
}
