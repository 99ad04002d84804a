// A Messages request -> the Chat Completions request the provider adapters
// take, for providers that are not `anthropic`. Every field and block is
// either carried or refused with a 400 naming it; nothing is dropped.
import type { AssistantMessage, CacheControl, ChatCompletionRequest, ChatMessage, ContentPart, FunctionTool, ReasoningDetail, ReasoningEffort, TextPart, ToolChoice } from '../providers/shared/openai-types.js';
import { ProviderRequestError } from '../providers/shared/inputs.js';
import { fromOrigin, type ParamStyle } from '../core/param-origin.js';
import type { MessagesRequest } from './schema.js';
import { meetsOpenAiStrict } from './strict-schema.js';

type Block = Record<string, unknown> & { type: string };

/** Top-level fields a translation carries (or the gateway reads itself). */
const CARRIED = new Set(['model', 'max_tokens', 'messages', 'system', 'stream', 'temperature', 'top_p', 'stop_sequences', 'metadata', 'tools', 'tool_choice', 'thinking', 'output_config', 'providerOptions', 'top_k']);

/** A thinking budget -> the effort of providers that take no budget (openai). */
function effortFor(budget: number): 'low' | 'medium' | 'high' {
  return budget <= 4096 ? 'low' : budget <= 16_384 ? 'medium' : 'high';
}

/**
 * output_config.effort -> reasoning_effort. xhigh and max stay as they are for
 * Claude's adaptive thinking on bedrock (the other models there and google take
 * them as high); for openai they are high, the top of its scale.
 */
const EFFORTS: Readonly<Record<string, ReasoningEffort>> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max' };

function refuse(param: string, providerType: string, what = 'is not supported'): never {
  throw new ProviderRequestError(param, `${what} when the model is served by provider type ${providerType}`);
}

/** A block's string field, which Anthropic requires: a missing or non-string one is refused, never sent as "undefined". */
function stringField(block: Block, key: string, at: string): string {
  const value = block[key];
  if (typeof value !== 'string') throw new ProviderRequestError(`${at}.${key}`, value === undefined ? 'Field required' : 'must be a string');
  return value;
}

export function toChatRequest(request: MessagesRequest, providerType: string): ChatCompletionRequest {
  for (const key of Object.keys(request)) if (!CARRIED.has(key)) refuse(key, providerType);
  const messages: ChatMessage[] = [];
  const system = systemParts(request.system, providerType);
  if (system.length > 0) messages.push(fromOrigin({ role: 'system', content: system }, 'system'));
  request.messages.forEach((message, i) => {
    if (message.role === 'user') messages.push(...userTurn(message.content, `messages.${i}`, providerType));
    else messages.push(fromOrigin(assistantTurn(message.content, `messages.${i}.content`, providerType), `messages.${i}`));
  });
  // max_completion_tokens: OpenAI's reasoning models refuse max_tokens; every adapter reads it first.
  const chat: ChatCompletionRequest = { model: request.model, messages, max_completion_tokens: request.max_tokens, stream: request.stream === true };
  if (request.stream === true) chat.stream_options = { include_usage: true };
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.top_p !== undefined) chat.top_p = request.top_p;
  // Gemini takes it as topK, OpenAI-compatible servers as top_k; the bedrock adapter refuses it, naming it.
  if (request.top_k !== undefined) chat.top_k = request.top_k;
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  const user = request.metadata?.user_id;
  if (typeof user === 'string') chat.user = user;
  if (request.tools !== undefined && request.tools.length > 0) {
    chat.tools = request.tools.map((tool, i) => functionTool(tool, `tools.${i}`, providerType));
    const choice = request.tool_choice;
    if (choice !== undefined) {
      chat.tool_choice = toolChoice(choice);
      if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
    }
  }
  mapThinking(request, chat, providerType);
  const format = request.output_config?.format;
  if (format !== undefined && format !== null) {
    if (format.type !== 'json_schema') refuse('output_config.format.type', providerType, `${format.type} is not supported`);
    chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema ?? { type: 'object' } } };
  }
  return chat;
}

/** thinking (and output_config.effort) -> the Chat request's reasoning controls. */
function mapThinking(request: MessagesRequest, chat: ChatCompletionRequest, providerType: string): void {
  const thinking = request.thinking;
  const rawEffort = request.output_config?.effort;
  const given = rawEffort === undefined || rawEffort === null ? undefined : EFFORTS[rawEffort];
  const effort = providerType === 'openai' && (given === 'xhigh' || given === 'max') ? 'high' : given;
  if (rawEffort !== undefined && rawEffort !== null && effort === undefined) refuse('output_config.effort', providerType, `${rawEffort} is not supported`);
  if (thinking === undefined || thinking.type === 'disabled') {
    if (effort !== undefined) chat.reasoning_effort = effort;
    return;
  }
  if (thinking.type === 'enabled' && thinking.budget_tokens !== undefined) {
    if (providerType === 'openai') chat.reasoning_effort = effort ?? effortFor(thinking.budget_tokens);
    else chat.reasoning = { max_tokens: thinking.budget_tokens };
    return;
  }
  // The model decides how much to think: the effort says how much it may, high
  // unless set (Anthropic's default: https://platform.claude.com/docs/en/build-with-claude/effort).
  if (thinking.type === 'adaptive') {
    chat.reasoning_effort = effort ?? 'high';
    return;
  }
  refuse('thinking.type', providerType, `${thinking.type} is not supported`);
}

function systemParts(system: MessagesRequest['system'], providerType: string): TextPart[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  return system.map((block, i) => {
    if (block.type !== 'text') refuse(`system.${i}.type`, providerType, `${block.type} blocks in system are not supported`);
    return textPart(stringField(block, 'text', `system.${i}`), block);
  });
}

function textPart(text: string, block: Block): TextPart {
  const cache = cacheControlOf(block);
  return cache === undefined ? { type: 'text', text } : { type: 'text', text, cache_control: cache };
}

function cacheControlOf(block: Block): CacheControl | undefined {
  const cache = block['cache_control'] as CacheControl | null | undefined;
  return cache === null || cache === undefined ? undefined : { type: 'ephemeral', ...(cache.ttl !== undefined ? { ttl: cache.ttl } : {}) };
}

/**
 * A user turn: its tool results first (Chat wants them right after the calls),
 * then the rest as one user message, led by the images tool results held
 * (Chat's tool messages take text only).
 */
function userTurn(content: string | Block[], at: string, providerType: string): ChatMessage[] {
  const param = `${at}.content`;
  // Anthropic refuses an empty user turn too; leaving it out (as google does) would change the conversation (a prefill, or no message at all).
  if (content.length === 0) throw new ProviderRequestError(param, 'user messages must have non-empty content');
  if (typeof content === 'string') return [fromOrigin({ role: 'user', content }, at)];
  const tools: ChatMessage[] = [];
  const toolImages: ContentPart[] = [];
  const parts: ContentPart[] = [];
  content.forEach((block, j) => {
    const blockAt = `${param}.${j}`;
    switch (block.type) {
      case 'text':
        parts.push(fromOrigin(textPart(stringField(block, 'text', blockAt), block), blockAt));
        break;
      case 'image':
        parts.push(fromOrigin(imagePart(block, blockAt, providerType), blockAt));
        break;
      case 'tool_result':
        tools.push(fromOrigin(toolResult(block, blockAt, providerType, toolImages), blockAt));
        break;
      default:
        refuse(`${blockAt}.type`, providerType, `${block.type} blocks are not supported`);
    }
  });
  const user = [...toolImages, ...parts];
  return user.length === 0 ? tools : [...tools, fromOrigin({ role: 'user', content: user }, at)];
}

/** Chat Completions names -> this protocol's, after a message or block's path. */
const MESSAGES_TAILS: Readonly<Record<string, string>> = { '.image_url.url': '.source', '.tool_call_id': '.tool_use_id' };

export const MESSAGES_PARAMS: ParamStyle = {
  fields: {
    max_completion_tokens: 'max_tokens',
    stop: 'stop_sequences',
    parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
    'reasoning.max_tokens': 'thinking.budget_tokens',
    reasoning_effort: 'output_config.effort',
    response_format: 'output_config.format',
  },
  tail: (rest) => (MESSAGES_TAILS[rest] ?? rest).replace(/\[(\d+)\]/g, '.$1'),
};

function imagePart(block: Block, param: string, providerType: string): ContentPart {
  const source = block['source'] as { type?: string; media_type?: string; data?: string; url?: string } | undefined;
  let url: string | undefined;
  if (source?.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') url = `data:${source.media_type};base64,${source.data}`;
  else if (source?.type === 'url' && typeof source.url === 'string') url = source.url;
  if (url === undefined) refuse(`${param}.source`, providerType, `image source ${String(source?.type)} is not supported`);
  const cache = cacheControlOf(block);
  return cache === undefined ? { type: 'image_url', image_url: { url } } : { type: 'image_url', image_url: { url }, cache_control: cache };
}

/** A tool_result as a tool message; the images it holds go to `images`. */
function toolResult(block: Block, param: string, providerType: string, images: ContentPart[]): ChatMessage {
  const id = block['tool_use_id'];
  if (typeof id !== 'string') refuse(`${param}.tool_use_id`, providerType, 'is required');
  const content = block['content'];
  const text: TextPart[] = [];
  if (typeof content === 'string') text.push({ type: 'text', text: content });
  else if (Array.isArray(content)) {
    (content as unknown[]).forEach((inner, k) => {
      const at = `${param}.content.${k}`;
      if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) refuse(at, providerType, 'must be a content block');
      const type = (inner as Block).type;
      if (type === 'image') images.push(fromOrigin(imagePart(inner as Block, at, providerType), at));
      else if (type === 'text') text.push({ type: 'text', text: stringField(inner as Block, 'text', at) });
      else refuse(`${at}.type`, providerType, `${String(type)} blocks in a tool_result are not supported`);
    });
  } else if (content !== undefined && content !== null) refuse(`${param}.content`, providerType, 'must be a string or text and image blocks');
  // Chat has no error flag on a tool result: the model reads it in the text.
  if (block['is_error'] === true) text.unshift({ type: 'text', text: 'Error: ' });
  const cache = cacheControlOf(block);
  if (cache !== undefined) {
    if (text.length === 0) text.push({ type: 'text', text: '' });
    (text[text.length - 1] as TextPart).cache_control = cache;
  }
  return { role: 'tool', tool_call_id: id, content: text.length === 1 && text[0]?.cache_control === undefined ? (text[0]?.text ?? '') : text };
}

function assistantTurn(content: string | Block[], param: string, providerType: string): AssistantMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const text: TextPart[] = [];
  const calls: NonNullable<AssistantMessage['tool_calls']> = [];
  const details: ReasoningDetail[] = [];
  content.forEach((block, j) => {
    const at = `${param}.${j}`;
    switch (block.type) {
      case 'text':
        text.push(textPart(stringField(block, 'text', at), block));
        break;
      case 'tool_use': {
        const input = block['input'] ?? {};
        if (typeof input !== 'object' || Array.isArray(input)) throw new ProviderRequestError(`${at}.input`, 'must be an object');
        calls.push({ id: stringField(block, 'id', at), type: 'function', function: { name: stringField(block, 'name', at), arguments: JSON.stringify(input) } });
        break;
      }
      // The signature is whichever provider's signed the turn (see from-chat.ts): no format, so it replays as it came.
      case 'thinking':
        details.push({ type: 'reasoning.text', text: stringField(block, 'thinking', at), signature: typeof block['signature'] === 'string' ? block['signature'] : null, index: details.length });
        break;
      case 'redacted_thinking':
        details.push({ type: 'reasoning.encrypted', data: stringField(block, 'data', at), index: details.length });
        break;
      default:
        refuse(`${at}.type`, providerType, `${block.type} blocks are not supported`);
    }
  });
  const message: AssistantMessage = { role: 'assistant', content: text.length === 0 ? null : text.some((part) => part.cache_control !== undefined) ? text : text.map((part) => part.text).join('') };
  if (calls.length > 0) message.tool_calls = calls;
  if (details.length > 0) message.reasoning_details = details;
  if (message.content === null && calls.length === 0) message.content = '';
  return message;
}

function functionTool(tool: NonNullable<MessagesRequest['tools']>[number], param: string, providerType: string): FunctionTool {
  // Server tools (web_search_..., bash_..., text_editor_...) run at Anthropic only.
  if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') refuse(`${param}.type`, providerType, `the server tool ${tool.type} is not supported`);
  if (tool.name === undefined) throw new ProviderRequestError(`${param}.name`, 'Field required');
  const schema = tool['input_schema'] as Record<string, unknown> | undefined;
  const description = tool['description'];
  const fn: FunctionTool = { type: 'function', function: { name: tool.name, ...(typeof description === 'string' ? { description } : {}), parameters: schema ?? { type: 'object', properties: {} } } };
  // Inputs that follow the schema: OpenAI's strict function calling says the same, of the
  // schemas it takes; for another the tool goes without it rather than the request failing.
  if (tool['strict'] === false || (tool['strict'] === true && meetsOpenAiStrict(fn.function.parameters))) fn.function.strict = tool['strict'];
  const cache = cacheControlOf(tool as unknown as Block);
  return cache === undefined ? fn : { ...fn, cache_control: cache };
}

function toolChoice(choice: NonNullable<MessagesRequest['tool_choice']>): ToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}
