// OpenAI chat request -> Anthropic Messages request.
import type { AssistantMessage, ChatCompletionRequest, ChatMessage, ContentPart, TextPart, ToolChoice } from '../shared/openai-types.js';
import { addOptions, providerOptionsFor } from '../shared/provider-options.js';
import { OPENAI_ONLY_PARAMS, claudeSampling, claudeStopList, functionCalls, functionToolChoice, functionTools, invalidRequest, isBlank, isHttpUrl, objectSchema, parseDataUrl, parseToolArguments, assistantContent, rejectWithoutSetting, textOf } from '../shared/inputs.js';
import { REASONING_FORMATS, claudeThinking, claudeThinkingOff, reasoningOf, replayBlocks, structuredOutputTool } from '../shared/reasoning.js';
import { anthropicToolCallId } from '../shared/tool-call-id.js';
import { requireApiKey, type AttemptContext, type UpstreamRequest } from '../shared/types.js';
import type { AnthropicProviderConfig } from './config.js';
import type { AnthropicMessage, AnthropicRequest, AnthropicRequestBlock, AnthropicTextBlock, AnthropicToolChoice } from './wire.js';

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** Sampling fields copied as they are, with the range Anthropic accepts (OpenAI's temperature goes to 2). */
const RANGED_FIELDS = [
  { from: 'temperature', to: 'temperature', min: 0, max: 1 },
  { from: 'top_p', to: 'top_p', min: 0, max: 1 },
] as const;

export function buildAnthropicRequest(request: ChatCompletionRequest, ctx: AttemptContext<AnthropicProviderConfig>): UpstreamRequest {
  rejectUnsupported(request);
  const { system, messages } = mapMessages(request.messages);
  const clientMax = request.max_completion_tokens ?? request.max_tokens;
  const body: AnthropicRequest = {
    model: ctx.model,
    max_tokens: clientMax ?? ctx.maxTokens ?? ctx.provider.default_max_tokens,
    messages,
  };
  if (system.length > 0) body.system = system.some((block) => block.cache_control !== undefined) ? system : system.map((block) => block.text).join('\n\n');
  const reasoning = reasoningOf(request);
  if (reasoning?.on === true) {
    const { thinking, outputConfig, maxTokens } = claudeThinking(reasoning, ctx.model, body.max_tokens, clientMax !== undefined, request, 'anthropic');
    body.thinking = thinking;
    if (outputConfig !== undefined) body.output_config = outputConfig;
    body.max_tokens = maxTokens;
  } else if (reasoning?.on === false) {
    const thinking = claudeThinkingOff(ctx.model);
    if (thinking !== undefined) body.thinking = thinking;
  }
  const sampling = claudeSampling(request);
  for (const field of RANGED_FIELDS) {
    const value = sampling[field.from];
    if (value === undefined) continue;
    if (value < field.min || value > field.max) invalidRequest(field.from, `must be between ${field.min} and ${field.max} for provider type anthropic`);
    body[field.to] = value;
  }
  const stop = claudeStopList(request.stop, 'anthropic');
  if (stop !== undefined && stop.length > 0) body.stop_sequences = stop;
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  const options = request.providerOptions === undefined ? undefined : providerOptionsFor(request, ctx.slug, 'anthropic');
  // @ai-sdk/anthropic's disableParallelToolUse is no body field: it is the tool choice's, as parallel_tool_calls: false is.
  const { disableParallelToolUse, ...bodyOptions } = options ?? {};
  const parallel = request.parallel_tool_calls ?? (disableParallelToolUse === true ? false : undefined);
  const tools = functionTools(request.tools, 'anthropic');
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
      input_schema: objectSchema(tool.function.parameters),
      // A breakpoint on a tool caches the tool definitions up to it.
      ...(tool.cache_control !== undefined ? { cache_control: tool.cache_control } : {}),
    }));
    const choice = mapToolChoice(request.tool_choice, parallel);
    if (choice !== undefined) body.tool_choice = choice;
  }
  const output = structuredOutputTool(request, 'anthropic', reasoning);
  if (output !== undefined) {
    body.tools = [{ name: output.name, description: output.description, input_schema: output.schema }];
    body.tool_choice = { type: 'tool', name: output.name };
  }
  if (request.stream === true) body.stream = true;
  if (request.top_k !== undefined) body.top_k = request.top_k;
  if (options !== undefined) addOptions(body as unknown as Record<string, unknown>, bodyOptions, 'snake_case');

  return {
    url: `${ctx.provider.base_url.replace(/\/+$/, '')}/v1/messages`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: request.stream === true ? 'text/event-stream' : 'application/json',
      ...ctx.provider.headers,
      'x-api-key': requireApiKey(ctx),
      'anthropic-version': ctx.provider.anthropic_version,
    },
    body: JSON.stringify(body),
  };
}

function rejectUnsupported(request: ChatCompletionRequest): void {
  if (request.n !== undefined && request.n !== 1) invalidRequest('n', 'provider type anthropic returns one choice only');
  if (request.logprobs === true) invalidRequest('logprobs', 'not supported by provider type anthropic');
  // The Messages API has no penalties, token biases or seed.
  rejectWithoutSetting(request, ['frequency_penalty', 'presence_penalty', 'logit_bias', 'seed', ...OPENAI_ONLY_PARAMS], 'anthropic');
}

function mapToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): AnthropicToolChoice | undefined {
  const noParallel = parallel === false ? { disable_parallel_tool_use: true } : {};
  const named = functionToolChoice(choice, 'anthropic');
  if (named === undefined) return parallel === false ? { type: 'auto', ...noParallel } : undefined;
  if (named === 'none') return { type: 'none' };
  if (named === 'auto') return { type: 'auto', ...noParallel };
  if (named === 'required') return { type: 'any', ...noParallel };
  return { type: 'tool', name: named.function.name, ...noParallel };
}

/** System and developer messages become `system`; the rest alternate user/assistant, same-role neighbours merged. */
function mapMessages(input: readonly ChatMessage[]): { system: AnthropicTextBlock[]; messages: AnthropicMessage[] } {
  const system: AnthropicTextBlock[] = [];
  const messages: AnthropicMessage[] = [];
  input.forEach((message, i) => {
    const param = `messages[${i}]`;
    let turn: AnthropicMessage;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(message.content));
        return;
      case 'user':
        turn = { role: 'user', content: typeof message.content === 'string' ? textBlocks(message.content) : message.content.flatMap((part, j) => mapPart(part, `${param}.content[${j}]`)) };
        // Leaving it out would change the conversation (a last one would turn the assistant's turn into a prefill).
        if (turn.content.length === 0) invalidRequest(`${param}.content`, 'is empty or whitespace only, which provider type anthropic refuses');
        break;
      case 'assistant': {
        // Signed thinking comes first in the turn, as Anthropic returned it.
        const content: AnthropicRequestBlock[] = [...thinkingBlocks(message), ...textParts(assistantContent(message, param, 'anthropic'))];
        for (const [j, call] of functionCalls(message, param, 'anthropic').entries()) {
          content.push({ type: 'tool_use', id: anthropicToolCallId(call.id), name: call.function.name, input: parseToolArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`) });
        }
        turn = { role: 'assistant', content };
        break;
      }
      case 'function':
        return invalidRequest(`${param}.role`, 'function (legacy function calling) is not supported by provider type anthropic; use tools');
      case 'tool': {
        // An empty or blank result is sent without content (Anthropic rejects such text).
        const text = textOf(message.content);
        const cache = typeof message.content === 'string' ? undefined : message.content.findLast((part) => part.cache_control !== undefined)?.cache_control;
        turn = { role: 'user', content: [{ type: 'tool_result', tool_use_id: anthropicToolCallId(message.tool_call_id), ...(isBlank(text) ? {} : { content: text }), ...(cache !== undefined ? { cache_control: cache } : {}) }] };
        break;
      }
    }
    if (turn.content.length === 0) return;
    const last = messages.at(-1);
    // Consecutive tool results (parallel calls) must share one user turn.
    if (last !== undefined && last.role === turn.role) last.content.push(...turn.content);
    else messages.push(turn);
  });
  if (messages.length === 0) invalidRequest('messages', 'provider type anthropic needs a user or assistant message with content');
  // A last assistant turn is a prefill, which Anthropic refuses to end in whitespace
  // ("final assistant content cannot end with trailing whitespace"); the model writes its own.
  const prefill = messages.at(-1)?.role === 'assistant' ? messages.at(-1)?.content.at(-1) : undefined;
  if (prefill?.type === 'text') prefill.text = prefill.text.trimEnd();
  return { system, messages };
}

/**
 * Anthropic refuses text blocks that are empty or whitespace only (400 "text
 * content blocks must contain non-whitespace text"), in system too. Claude
 * writes such text before a tool call at times, which the client sends back;
 * it says nothing, so it is left out.
 */
function textBlocks(text: string): AnthropicTextBlock[] {
  return isBlank(text) ? [] : [{ type: 'text', text }];
}

/** Text parts as blocks, each keeping its cache_control breakpoint. */
function textParts(content: string | readonly TextPart[]): AnthropicTextBlock[] {
  if (typeof content === 'string') return textBlocks(content);
  return content.flatMap((part) => (isBlank(part.text) ? [] : [withCache({ type: 'text', text: part.text }, part)]));
}

function withCache<B extends AnthropicTextBlock | Extract<AnthropicRequestBlock, { type: 'image' }>>(block: B, part: ContentPart): B {
  if (part.cache_control !== undefined) block.cache_control = part.cache_control;
  return block;
}

function thinkingBlocks(message: AssistantMessage): AnthropicRequestBlock[] {
  return replayBlocks(message.reasoning_details, REASONING_FORMATS.anthropic).map((block) =>
    block.kind === 'text' ? { type: 'thinking', thinking: block.text, signature: block.signature } : { type: 'redacted_thinking', data: block.data },
  );
}

function mapPart(part: ContentPart, param: string): AnthropicRequestBlock[] {
  if (part.type === 'text') return textParts([part]);
  if (part.type !== 'image_url') invalidRequest(param, `${part.type} parts are not supported by provider type anthropic`);
  const url = part.image_url.url;
  const inline = parseDataUrl(url, `${param}.image_url.url`);
  if (inline !== undefined) {
    if (!IMAGE_TYPES.has(inline.mediaType)) invalidRequest(`${param}.image_url.url`, `${inline.mediaType} is not supported by provider type anthropic (jpeg, png, gif, webp)`);
    return [withCache({ type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } }, part)];
  }
  if (!isHttpUrl(url)) invalidRequest(`${param}.image_url.url`, 'must be an http(s) or data URL');
  return [withCache({ type: 'image', source: { type: 'url', url } }, part)];
}
