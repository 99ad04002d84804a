// Token counts where no upstream gives them: one token per 4 characters of
// text (tool definitions and tool calls' names and arguments as written),
// plus a flat 1600 per image, audio clip or file (Anthropic's cost of a
// ~1.15 megapixel image). Used for Messages' count_tokens on providers with no
// tokenizer, and to charge an answer whose upstream reported no usage (a
// client that left just before OpenAI's usage chunk, a server that ignores
// stream_options.include_usage or sends no usage at all).
import type { ChatCompletion, ChatCompletionRequest, ChatMessage, Usage } from '../providers/shared/openai-types.js';

export const CHARS_PER_TOKEN = 4;
export const TOKENS_PER_MEDIA_BLOCK = 1600;

export function tokensForChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** A generated message or a streamed delta: what its output estimate counts. */
interface Generated {
  content?: string | null | undefined;
  refusal?: string | null | undefined;
  reasoning?: string | null | undefined;
  reasoning_content?: string | null | undefined;
  tool_calls?: ReadonlyArray<{ function?: { name?: string; arguments?: string }; custom?: { name?: string; input?: string } }> | undefined;
}

/** The characters of text, refusal, reasoning and tool calls a message or delta carries. */
export function outputChars(generated: Generated): number {
  let chars = (generated.content ?? '').length + (generated.refusal ?? '').length + (generated.reasoning ?? '').length + (generated.reasoning_content ?? '').length;
  for (const call of generated.tool_calls ?? []) chars += (call.function?.name ?? '').length + (call.function?.arguments ?? '').length + (call.custom?.name ?? '').length + (call.custom?.input ?? '').length;
  return chars;
}

/** The estimated usage of a whole answer that came without one: its request's and its choices' estimates. */
export function estimateCompletionUsage(request: ChatCompletionRequest, completion: ChatCompletion): Usage {
  const prompt = estimateChatInputTokens(request);
  let chars = 0;
  for (const choice of completion.choices) chars += outputChars(choice.message);
  const output = tokensForChars(chars);
  return { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output };
}

/** The estimated prompt tokens of a chat request: its messages' texts, tool calls and media, and its tool definitions. */
export function estimateChatInputTokens(request: ChatCompletionRequest): number {
  let chars = 0;
  let media = 0;
  for (const message of request.messages) {
    const counted = messageSize(message);
    chars += counted.chars;
    media += counted.media;
  }
  if (request.tools !== undefined) chars += JSON.stringify(request.tools).length;
  return tokensForChars(chars) + media * TOKENS_PER_MEDIA_BLOCK;
}

function messageSize(message: ChatMessage): { chars: number; media: number } {
  let chars = 0;
  let media = 0;
  const content = message.content;
  if (typeof content === 'string') chars += content.length;
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text') chars += part.text.length;
      else if (part.type === 'refusal') chars += part.refusal.length;
      else media += 1;
    }
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      chars += call.type === 'custom' ? call.custom.name.length + call.custom.input.length : call.function.name.length + call.function.arguments.length;
    }
    chars += (message.reasoning_content ?? '').length;
  }
  return { chars, media };
}

/** The estimated input tokens of a Messages request body: its system prompt, messages' texts, tool uses and media, and its tool definitions. */
export function estimateMessagesInputTokens(body: Record<string, unknown>): number {
  let chars = 0;
  let media = 0;
  function visit(value: unknown): void {
    if (typeof value === 'string') {
      chars += value.length;
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const block = value as Record<string, unknown>;
    if (block['type'] === 'image' || block['type'] === 'document') {
      media += 1;
      return;
    }
    if (block['type'] === 'tool_use') {
      chars += String(block['name']).length + JSON.stringify(block['input'] ?? {}).length;
      return;
    }
    for (const key of ['text', 'content', 'thinking']) visit(block[key]);
  }
  visit(body['system']);
  for (const message of (body['messages'] as unknown[] | undefined) ?? []) visit((message as { content?: unknown }).content);
  if (Array.isArray(body['tools'])) chars += JSON.stringify(body['tools']).length;
  return tokensForChars(chars) + media * TOKENS_PER_MEDIA_BLOCK;
}
