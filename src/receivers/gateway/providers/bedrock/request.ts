// OpenAI chat request -> Bedrock Converse / ConverseStream request, signed.
import type { AssistantMessage, ChatCompletionRequest, ChatMessage, ContentPart, TextPart, ToolChoice } from '../shared/openai-types.js';
import { RequestImages } from '../shared/image-fetch.js';
import { OPENAI_ONLY_PARAMS, asObject, claudeSampling, claudeStopList, functionCalls, functionToolChoice, functionTools, invalidRequest, isBlank, isHttpUrl, objectSchema, parseDataUrl, parseToolArguments, assistantContent, rejectWithoutSetting, stopList, textOf } from '../shared/inputs.js';
import { REASONING_FORMATS, claudeThinking, claudeThinkingOff, reasoningOf, replayBlocks, structuredOutputTool, type Reasoning } from '../shared/reasoning.js';
import type { AttemptContext, UpstreamRequest } from '../shared/types.js';
import type { BedrockProviderConfig } from './config.js';
import { authorize } from './signer.js';
import { anthropicToolCallId } from '../shared/tool-call-id.js';
import { addOptions, providerOptionsFor } from '../shared/provider-options.js';
import type { ConverseCachePoint, ConverseContentBlock, ConverseImageFormat, ConverseInferenceConfig, ConverseMessage, ConverseRequest, ConverseToolChoice, ConverseToolConfig, ConverseToolResultContent } from './wire.js';

const CACHE_POINT: ConverseCachePoint = { cachePoint: { type: 'default' } };

/** max_tokens for Claude thinking when neither the request nor the catalog sets one (Converse needs room for the budget). */
const THINKING_MAX_TOKENS = 16_384;

const IMAGE_FORMATS: Readonly<Record<string, ConverseImageFormat>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** OpenAI field -> inferenceConfig field, with the range Converse documents. */
const RANGED_FIELDS = [
  { from: 'temperature', to: 'temperature', min: 0, max: 1 },
  { from: 'top_p', to: 'topP', min: 0, max: 1 },
] as const;

export async function buildBedrockRequest(request: ChatCompletionRequest, ctx: AttemptContext<BedrockProviderConfig>): Promise<UpstreamRequest> {
  rejectUnsupported(request);
  const messages = await mapMessages(request.messages, ctx);
  const body: ConverseRequest = { messages };
  const system = request.messages.flatMap((message) => (message.role === 'system' || message.role === 'developer' ? textBlocksOf(message.content) : []));
  if (system.length > 0) body.system = system as Array<{ text: string } | ConverseCachePoint>;
  const inferenceConfig = mapInferenceConfig(request, ctx);
  const reasoning = reasoningOf(request);
  const additional = mapReasoning(reasoning, request, ctx, inferenceConfig);
  if (additional !== undefined) body.additionalModelRequestFields = additional;
  if (Object.keys(inferenceConfig).length > 0) body.inferenceConfig = inferenceConfig;
  // Converse says only that a stop sequence ended the answer; Claude names which when asked (at `/delta/stop_sequence`: `/stop_sequence` gives nothing).
  if (inferenceConfig.stopSequences !== undefined && isClaude(ctx.model)) body.additionalModelResponseFieldPaths = ['/delta/stop_sequence'];
  // Converse refuses tool blocks in the history without a toolConfig (OpenAI and Anthropic take them).
  const historyUsesTools = messages.some((message) => message.content.some((block) => 'toolUse' in block || 'toolResult' in block));
  const tools = functionTools(request.tools, 'bedrock');
  if (tools.length > 0) {
    // Converse has no "none": leave the tools out, unless the history needs them.
    if (request.tool_choice !== 'none' || historyUsesTools) {
      body.toolConfig = {
        // A tool with cache_control is followed by a cache point, as a cached block is.
        // An empty description says nothing, and Converse refuses one (at least 1 character).
        tools: tools.flatMap(({ function: fn, cache_control: cache }) => {
          const tool = { toolSpec: { name: fn.name, ...(fn.description !== undefined && fn.description !== '' ? { description: fn.description } : {}), inputSchema: { json: objectSchema(fn.parameters) } } };
          return cache === undefined ? [tool] : [tool, CACHE_POINT];
        }),
      };
      const choice = mapToolChoice(request.tool_choice);
      if (choice !== undefined) body.toolConfig.toolChoice = choice;
    }
  } else if (historyUsesTools) {
    const called = calledTools(messages);
    if (called.length > 0) body.toolConfig = { tools: called };
  }
  const output = structuredOutputTool(request, 'bedrock', reasoning);
  if (output !== undefined) {
    body.toolConfig = { tools: [{ toolSpec: { name: output.name, description: output.description, inputSchema: { json: output.schema } } }], toolChoice: { tool: { name: output.name } } };
  }

  // Options are added before signing: the signature covers the body.
  const options = request.providerOptions === undefined ? undefined : providerOptionsFor(request, ctx.slug, 'bedrock');
  if (options !== undefined) {
    // additionalModelRequestFields holds each model's own fields: the app's (top_k) join the reasoning ones the gateway set, which win.
    const extra = asObject(options['additionalModelRequestFields']);
    if (extra !== undefined && body.additionalModelRequestFields !== undefined) body.additionalModelRequestFields = { ...extra, ...body.additionalModelRequestFields };
    addOptions(body as unknown as Record<string, unknown>, options, 'as-is');
  }

  const operation = request.stream === true ? 'converse-stream' : 'converse';
  // Model ids and inference-profile ARNs hold ':' and '/': one encoded path segment.
  const url = new URL(`${ctx.provider.base_url.replace(/\/+$/, '')}/model/${encodeURIComponent(ctx.model)}/${operation}`);
  const json = JSON.stringify(body);
  const headers: Record<string, string> = {
    ...ctx.provider.headers,
    'content-type': 'application/json',
    accept: request.stream === true ? 'application/vnd.amazon.eventstream' : 'application/json',
  };
  return { url: url.href, method: 'POST', headers: await authorize(ctx.provider, url, headers, json), body: json };
}

function rejectUnsupported(request: ChatCompletionRequest): void {
  if (request.n !== undefined && request.n !== 1) invalidRequest('n', 'provider type bedrock returns one choice only');
  if (request.logprobs === true) invalidRequest('logprobs', 'not supported by provider type bedrock');
  if (request.top_k !== undefined) invalidRequest('top_k', 'not supported by provider type bedrock (Converse has no top-k setting)');
  // Converse's inferenceConfig has no penalties, token biases or seed, and its toolChoice no limit of one call a turn.
  rejectWithoutSetting(request, ['frequency_penalty', 'presence_penalty', 'logit_bias', 'seed', 'parallel_tool_calls', ...OPENAI_ONLY_PARAMS], 'bedrock');
}

/**
 * Converse has no common reasoning field: Claude models take Anthropic's
 * `thinking` (and `output_config` with adaptive thinking) and Amazon Nova 2
 * its `reasoningConfig`, all through additionalModelRequestFields.
 */
function mapReasoning(reasoning: Reasoning | undefined, request: ChatCompletionRequest, ctx: AttemptContext<BedrockProviderConfig>, config: ConverseInferenceConfig): Record<string, unknown> | undefined {
  if (reasoning === undefined) return undefined;
  if (!reasoning.on) {
    const thinking = isClaude(ctx.model) ? claudeThinkingOff(ctx.model) : undefined;
    return thinking === undefined ? undefined : { thinking };
  }
  if (isClaude(ctx.model)) {
    // Converse hands Claude the request as Anthropic's API would have it, and Claude checks it the same way.
    const clientMax = request.max_completion_tokens ?? request.max_tokens;
    const { thinking, outputConfig, maxTokens } = claudeThinking(reasoning, ctx.model, config.maxTokens ?? THINKING_MAX_TOKENS, clientMax !== undefined, request, 'bedrock');
    config.maxTokens = maxTokens;
    return { thinking, ...(outputConfig !== undefined ? { output_config: outputConfig } : {}) };
  }
  if (reasoning.budget !== undefined) invalidRequest('reasoning.max_tokens', `provider type bedrock takes a thinking budget for Claude models only; use reasoning_effort for ${ctx.model}`);
  if (reasoning.exclude) invalidRequest('reasoning.exclude', 'is not supported by provider type bedrock');
  return { reasoningConfig: { type: 'enabled', maxReasoningEffort: reasoning.effort === 'minimal' ? 'low' : reasoning.effort } };
}

/** Anthropic's models (`anthropic.claude-...`, and inference profiles such as `us.anthropic.claude-...`), which take Anthropic's request rules. */
function isClaude(model: string): boolean {
  return /anthropic\.|claude/i.test(model);
}

function mapInferenceConfig(request: ChatCompletionRequest, ctx: AttemptContext<BedrockProviderConfig>): ConverseInferenceConfig {
  const config: ConverseInferenceConfig = {};
  const sampling = isClaude(ctx.model) ? claudeSampling(request) : request;
  for (const field of RANGED_FIELDS) {
    const value = sampling[field.from];
    if (value === undefined) continue;
    if (value < field.min || value > field.max) invalidRequest(field.from, `must be between ${field.min} and ${field.max} for provider type bedrock`);
    config[field.to] = value;
  }
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? ctx.maxTokens;
  if (maxTokens !== undefined) config.maxTokens = maxTokens;
  // Converse itself takes a stop sequence of whitespace only; Claude refuses it.
  const stop = isClaude(ctx.model) ? claudeStopList(request.stop, 'bedrock') : stopList(request.stop);
  if (stop !== undefined && stop.length > 0) config.stopSequences = stop;
  return config;
}

/**
 * The tools the history called, declared with any input, for a request that
 * sends none (a summary of a tool loop): what the history needs to be taken.
 */
function calledTools(messages: readonly ConverseMessage[]): ConverseToolConfig['tools'] {
  const names = new Set(messages.flatMap((message) => message.content.flatMap((block) => ('toolUse' in block ? [block.toolUse.name] : []))));
  return [...names].map((name) => ({ toolSpec: { name, inputSchema: { json: { type: 'object' } } } }));
}

function mapToolChoice(choice: ToolChoice | undefined): ConverseToolChoice | undefined {
  const named = functionToolChoice(choice, 'bedrock');
  if (named === undefined || named === 'none') return undefined;
  if (named === 'auto') return { auto: {} };
  if (named === 'required') return { any: {} };
  return { tool: { name: named.function.name } };
}

async function mapMessages(input: readonly ChatMessage[], ctx: AttemptContext<BedrockProviderConfig>): Promise<ConverseMessage[]> {
  const images = new RequestImages(ctx.provider.image_fetch, ctx);
  const messages: ConverseMessage[] = [];
  for (const [i, message] of input.entries()) {
    const param = `messages[${i}]`;
    let turn: ConverseMessage;
    switch (message.role) {
      case 'system':
      case 'developer':
        continue;
      case 'user':
        turn = { role: 'user', content: typeof message.content === 'string' ? textBlocks(message.content) : (await Promise.all(message.content.map((part, j) => mapPart(part, `${param}.content[${j}]`, images)))).flat() };
        // Leaving it out would change the conversation (a last one would turn the assistant's turn into a prefill).
        if (turn.content.every((block) => 'cachePoint' in block)) invalidRequest(`${param}.content`, 'is empty, which provider type bedrock refuses');
        break;
      case 'assistant': {
        // Signed reasoning comes first in the turn, as the model returned it.
        const content = [...reasoningBlocks(message), ...textBlocksOf(assistantContent(message, param, 'bedrock'))];
        for (const [j, call] of functionCalls(message, param, 'bedrock').entries()) {
          content.push({ toolUse: { toolUseId: anthropicToolCallId(call.id), name: call.function.name, input: parseToolArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`) } });
        }
        turn = { role: 'assistant', content };
        break;
      }
      case 'function':
        return invalidRequest(`${param}.role`, 'function (legacy function calling) is not supported by provider type bedrock; use tools');
      case 'tool': {
        const cached = typeof message.content !== 'string' && message.content.some((part) => part.cache_control !== undefined);
        turn = { role: 'user', content: [{ toolResult: { toolUseId: anthropicToolCallId(message.tool_call_id), content: toolResultContent(textOf(message.content)) } }, ...(cached ? [CACHE_POINT] : [])] };
        break;
      }
    }
    if (turn.content.length === 0) continue;
    const last = messages.at(-1);
    // Converse wants user and assistant turns to alternate: parallel tool results share one user turn.
    if (last !== undefined && last.role === turn.role) last.content.push(...turn.content);
    else messages.push(turn);
  }
  if (messages.length === 0) invalidRequest('messages', 'provider type bedrock needs a user or assistant message with content');
  // Converse refuses a conversation that opens with the assistant (a chat UI's greeting); another provider type takes it.
  if (messages[0]?.role === 'assistant') {
    const first = input.findIndex((message) => message.role !== 'system' && message.role !== 'developer');
    invalidRequest(`messages[${first}].role`, 'provider type bedrock needs the conversation to start with a user message (after any system messages)');
  }
  // A last assistant turn is a prefill, which Claude refuses to end in whitespace ("final assistant
  // content cannot end with trailing whitespace"); the model writes its own. Trimmed for every model:
  // nothing is lost, and an inference profile's ARN does not say that it serves Claude.
  const last = messages.at(-1);
  const prefill = last?.role === 'assistant' ? last.content.findLast((block) => !('cachePoint' in block)) : undefined;
  if (prefill !== undefined && 'text' in prefill) prefill.text = prefill.text.trimEnd();
  return messages;
}

/** Converse refuses a blank text block, in a tool result too: a tool that returned no text (or only images) answers an empty JSON object. */
function toolResultContent(text: string): ConverseToolResultContent[] {
  return isBlank(text) ? [{ json: {} }] : [{ text }];
}

/**
 * Converse refuses a blank text block; Claude writes whitespace-only text
 * before a tool call at times, which the client sends back. Such text says
 * nothing, so it is left out.
 */
function textBlocks(text: string): ConverseContentBlock[] {
  return isBlank(text) ? [] : [{ text }];
}

/** Text parts as blocks; a part with cache_control is followed by a cache point. */
function textBlocksOf(content: string | readonly TextPart[]): ConverseContentBlock[] {
  if (typeof content === 'string') return textBlocks(content);
  return content.flatMap((part) => cached(part, textBlocks(part.text)));
}

function cached(part: ContentPart, blocks: ConverseContentBlock[]): ConverseContentBlock[] {
  return part.cache_control === undefined ? blocks : [...blocks, CACHE_POINT];
}

function reasoningBlocks(message: AssistantMessage): ConverseContentBlock[] {
  return replayBlocks(message.reasoning_details, REASONING_FORMATS.bedrock).map((block) =>
    block.kind === 'text' ? { reasoningContent: { reasoningText: { text: block.text, signature: block.signature } } } : { reasoningContent: { redactedContent: block.data } },
  );
}

async function mapPart(part: ContentPart, param: string, images: RequestImages): Promise<ConverseContentBlock[]> {
  if (part.type === 'text') return textBlocksOf([part]);
  if (part.type !== 'image_url') invalidRequest(param, `${part.type} parts are not supported by provider type bedrock`);
  const url = part.image_url.url;
  const urlParam = `${param}.image_url.url`;
  const image = parseDataUrl(url, urlParam) ?? (isHttpUrl(url) ? await images.fetch(url, urlParam) : invalidRequest(urlParam, 'must be an http(s) or data URL'));
  const format = IMAGE_FORMATS[image.mediaType];
  if (format === undefined) invalidRequest(urlParam, `${image.mediaType} is not supported by provider type bedrock (png, jpeg, gif, webp)`);
  return cached(part, [{ image: { format, source: { bytes: image.data } } }]);
}
