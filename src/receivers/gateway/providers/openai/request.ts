// OpenAI-compatible upstreams take the request as it came: only `model` is
// replaced and the gateway's own routing fields are dropped.
import { RAW_REQUEST, type ChatCompletionRequest, type ChatMessage, type ContentPart, type FunctionTool, type TextPart } from '../shared/openai-types.js';
import { withModel } from '../shared/raw-request.js';
import { invalidRequest } from '../shared/inputs.js';
import { portableToolCallId } from '../shared/tool-call-id.js';
import { addOptions, providerOptionsFor } from '../shared/provider-options.js';
import { ProviderNotConfiguredError, type AttemptContext, type UpstreamRequest } from '../shared/types.js';
import { upstreamUrl, type OpenAIProviderConfig } from './config.js';

/** Fields the gateway consumes itself; never sent upstream (`reasoning` is mapped below). */
const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['providerOptions', 'gateway', 'order', 'only', 'models', 'reasoning']);

export function buildOpenAIRequest(request: ChatCompletionRequest, ctx: AttemptContext<OpenAIProviderConfig>): UpstreamRequest {
  const raw = request[RAW_REQUEST];
  if (raw !== undefined) {
    const fixed = fixedParts(ctx.slug, ctx.provider);
    return { url: fixed.url, method: 'POST', headers: fixed.plainHeaders, body: withModel(raw, ctx.model) };
  }
  // Copied key by key (not spread-then-delete, which leaves a slow dictionary-mode object).
  const source = request as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (GATEWAY_FIELDS.has(key)) continue;
    if (key === 'model') body[key] = ctx.model;
    else if (key === 'messages') body[key] = withPortableIds(withoutExtensions(request.messages, REPLAYS_THINKING.test(ctx.model)));
    // A Messages tool's cache_control, like a part's, is not OpenAI's.
    else if (key === 'tools' && request.tools?.some((tool) => tool.type === 'function' && tool.cache_control !== undefined)) body[key] = request.tools.map((tool) => (tool.type === 'function' ? withoutCacheControl(tool) : tool));
    else body[key] = source[key];
  }
  if (request.reasoning !== undefined) mapReasoning(request, body);
  const options = request.providerOptions === undefined ? undefined : providerOptionsFor(request, ctx.slug, 'openai');
  if (options !== undefined) addOptions(body, options, 'snake_case');
  // Ask for usage so the attempt's span has token counts; the gateway drops
  // the usage chunk again when the client did not ask for it.
  if (request.stream === true) body['stream_options'] = { ...request.stream_options, include_usage: true };
  const fixed = fixedParts(ctx.slug, ctx.provider);
  return { url: fixed.url, method: 'POST', headers: request.stream === true ? fixed.streamHeaders : fixed.plainHeaders, body: JSON.stringify(body) };
}

/** OpenAI's Chat Completions API takes an effort only: `reasoning: {effort}` becomes `reasoning_effort`. */
function mapReasoning(request: ChatCompletionRequest, body: Record<string, unknown>): void {
  const reasoning = request.reasoning ?? {};
  if (reasoning.max_tokens !== undefined) invalidRequest('reasoning.max_tokens', 'provider type openai takes reasoning_effort, not a token budget');
  if (reasoning.exclude === true) invalidRequest('reasoning.exclude', 'is not supported by provider type openai');
  const effort = reasoning.enabled === false ? 'none' : (reasoning.effort ?? (reasoning.enabled === true ? 'medium' : undefined));
  if (effort !== undefined && body['reasoning_effort'] === undefined) body['reasoning_effort'] = effort;
}

/**
 * Models that refuse a conversation whose tool-calling turn comes back without
 * its thinking as `reasoning_content` (DeepSeek's, Kimi's). Other servers
 * may refuse the field ("reasoning_content was unexpected"), so it goes only
 * to these, by the upstream model's name.
 */
const REPLAYS_THINKING = /deepseek|kimi|moonshot/i;

/**
 * The gateway's extensions to the message shapes (cache_control on parts,
 * reasoning, reasoning_details and images on assistant turns) are for the providers
 * that use them; OpenAI caches prompts by itself and keeps reasoning server
 * side. With `replayThinking`, a turn that called tools keeps its thinking
 * text as `reasoning_content` (a client's own is kept as it came). The array
 * is returned as it is when no message carries them.
 */
function withoutExtensions(messages: ChatMessage[], replayThinking: boolean): ChatMessage[] {
  if (!messages.some(hasExtension)) return messages;
  return messages.map(function strip(message): ChatMessage {
    if (!hasExtension(message)) return message;
    if (message.role === 'assistant') {
      const { reasoning, reasoning_details: details, images: _images, ...rest } = message;
      if (replayThinking && rest.tool_calls !== undefined && rest.tool_calls.length > 0 && rest.reasoning_content == null) {
        const thinking = reasoning ?? details?.map((detail) => (detail.type === 'reasoning.text' ? detail.text : '')).join('') ?? '';
        if (thinking !== '') rest.reasoning_content = thinking;
      }
      return typeof rest.content === 'string' || rest.content == null ? rest : { ...rest, content: rest.content.map((part) => (part.type === 'text' ? withoutCacheControl(part) : part)) };
    }
    if (message.role === 'function' || typeof message.content === 'string') return message;
    if (message.role === 'user') return { ...message, content: message.content.map(({ cache_control: _c, ...part }): ContentPart => part) };
    return { ...message, content: message.content.map(({ cache_control: _c, ...part }) => part) };
  });
}

/**
 * Gemini-minted tool call ids carry Gemini's thought signature, longer than
 * the 40 characters OpenAI takes: they go without it. The array is returned
 * as it is when no message carries one.
 */
function withPortableIds(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some(hasGeminiId)) return messages;
  return messages.map(function portable(message): ChatMessage {
    if (message.role === 'tool') return { ...message, tool_call_id: portableToolCallId(message.tool_call_id) };
    if (message.role !== 'assistant' || message.tool_calls === undefined) return message;
    return { ...message, tool_calls: message.tool_calls.map((call) => ({ ...call, id: portableToolCallId(call.id) })) };
  });
}

function hasGeminiId(message: ChatMessage): boolean {
  if (message.role === 'tool') return portableToolCallId(message.tool_call_id) !== message.tool_call_id;
  return message.role === 'assistant' && message.tool_calls !== undefined && message.tool_calls.some((call) => portableToolCallId(call.id) !== call.id);
}

function hasExtension(message: ChatMessage): boolean {
  if (message.role === 'assistant' && (message.reasoning !== undefined || message.reasoning_details !== undefined || message.images !== undefined)) return true;
  return typeof message.content !== 'string' && message.content != null && message.content.some((part) => part.type !== 'refusal' && part.cache_control !== undefined);
}

function withoutCacheControl<T extends TextPart | FunctionTool>({ cache_control: _c, ...rest }: T): Omit<T, 'cache_control'> {
  return rest;
}

interface FixedParts {
  readonly url: string;
  readonly plainHeaders: Record<string, string>;
  readonly streamHeaders: Record<string, string>;
}

// The URL and headers depend only on the provider's config: made once per config, frozen (shared by requests).
const fixedByConfig = new WeakMap<OpenAIProviderConfig, FixedParts>();

function fixedParts(slug: string, provider: OpenAIProviderConfig): FixedParts {
  // No api_key means the upstream needs none (Ollama, vLLM); an empty one is a
  // key that was expected but not set (`${env:OPENAI_API_KEY:-}`).
  if (provider.api_key === '') throw new ProviderNotConfiguredError(`Provider ${slug} has no api_key: set receivers.gateway.providers.${slug}.api_key.`);
  let fixed = fixedByConfig.get(provider);
  if (fixed === undefined) {
    fixed = { url: upstreamUrl(provider, '/chat/completions'), plainHeaders: headersFor(provider, 'application/json'), streamHeaders: headersFor(provider, 'text/event-stream') };
    fixedByConfig.set(provider, fixed);
  }
  return fixed;
}

function headersFor(provider: OpenAIProviderConfig, accept: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept, ...provider.headers };
  if (provider.api_key !== undefined && provider.api_key !== '') headers['authorization'] = `Bearer ${provider.api_key}`;
  return Object.freeze(headers);
}
