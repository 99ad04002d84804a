// AI SDK call options -> the Chat Completions request every provider adapter
// maps from. What that shape cannot carry (a PDF, a provider-executed tool)
// is an invalid_request_error naming the part, never a silent drop.
import { GatewayHttpError } from '../core/http-error.js';
import { fromOrigin, type ParamStyle } from '../core/param-origin.js';
import type { AssistantMessage, CacheControl, ChatCompletionRequest, ChatMessage, ContentPart, FunctionTool, ImageOutput, ReasoningDetail, ReasoningEffort, ReasoningOptions, ResponseFormat, TextPart, ToolCall, ToolChoice } from '../providers/shared/openai-types.js';
import { claudeTakesEffort, type ClaudeEffort } from '../providers/shared/reasoning.js';
import { reasoningDetailsSchema, type FilePart, type LanguageModelCall, type PartOptions, type PromptMessage, type TaggedData, type ToolContentItem, type ToolOutput } from './schema.js';

export function unsupported(param: string, message: string): GatewayHttpError {
  return new GatewayHttpError(400, `${param}: ${message}`, { type: 'invalid_request_error', code: 'unsupported_value', param });
}

export function toChatRequest(call: LanguageModelCall, model: string, stream: boolean): ChatCompletionRequest {
  const request: ChatCompletionRequest = { model, messages: toMessages(call.prompt) };
  if (stream) {
    request.stream = true;
    request.stream_options = { include_usage: true };
  }
  if (call.maxOutputTokens !== undefined) request.max_tokens = call.maxOutputTokens;
  if (call.temperature !== undefined) request.temperature = call.temperature;
  if (call.topP !== undefined) request.top_p = call.topP;
  if (call.topK !== undefined) request.top_k = call.topK;
  if (call.presencePenalty !== undefined) request.presence_penalty = call.presencePenalty;
  if (call.frequencyPenalty !== undefined) request.frequency_penalty = call.frequencyPenalty;
  if (call.seed !== undefined) request.seed = call.seed;
  if (call.stopSequences !== undefined && call.stopSequences.length > 0) request.stop = call.stopSequences;
  const format = toResponseFormat(call.responseFormat);
  if (format !== undefined) request.response_format = format;
  const tools = toTools(call.tools);
  if (tools !== undefined) {
    request.tools = tools;
    // ai 7 sends toolChoice auto on every call: it only means something with tools.
    const choice = toToolChoice(call.toolChoice, tools);
    if (choice !== undefined) request.tool_choice = choice;
  }
  const effort = toReasoningEffort(call.reasoning);
  if (effort !== undefined) request.reasoning_effort = effort;
  if (call.providerOptions !== undefined) {
    const [options, reasoning] = takeReasoningOptions(call.providerOptions);
    const anthropicEffort = asRecord(options['anthropic'])?.['effort'];
    // @ai-sdk/anthropic's effort beside thinking without a budget (adaptive) says how much to think:
    // the gateway's effort, which Claude's adaptive thinking sends as output_config.effort.
    if (reasoning.enabled === true && reasoning.effort === undefined && reasoning.max_tokens === undefined && isClaudeEffort(anthropicEffort)) reasoning.effort = anthropicEffort;
    const openai = asRecord(options['openai']);
    if (openai !== undefined) options['openai'] = openaiWireOptions(openai);
    const anthropic = asRecord(options['anthropic']);
    if (anthropic !== undefined) options['anthropic'] = anthropicWireOptions(anthropic);
    const google = asRecord(options['google']);
    if (google !== undefined) options['google'] = withoutKeys(google, GOOGLE_CLIENT_SWITCHES);
    const bedrock = asRecord(options['bedrock']);
    if (bedrock !== undefined) options['bedrock'] = bedrockWireOptions(bedrock);
    request.providerOptions = options as NonNullable<ChatCompletionRequest['providerOptions']>;
    const { effort: optionEffort, ...rest } = reasoning;
    if (effort === undefined && optionEffort !== undefined) request.reasoning_effort = optionEffort;
    if (Object.keys(rest).length > 0) request.reasoning = rest;
  }
  return request;
}

const EFFORTS: ReadonlySet<string> = new Set(['none', 'minimal', 'low', 'medium', 'high']);

function isClaudeEffort(value: unknown): value is ClaudeEffort {
  return value === 'low' || value === 'medium' || value === 'high' || value === 'xhigh' || value === 'max';
}

/**
 * The reasoning controls apps set as provider options (ai 6 has no
 * `reasoning` call setting): openai.reasoningEffort, anthropic.thinking,
 * google.thinkingConfig, bedrock.reasoningConfig. They become the gateway's
 * own reasoning request, which every provider type maps, and leave the
 * options passed on to the provider.
 */
function takeReasoningOptions(all: Record<string, unknown>): [Record<string, unknown>, ReasoningOptions] {
  const rest: Record<string, unknown> = {};
  const reasoning: ReasoningOptions = {};
  for (const [provider, value] of Object.entries(all)) {
    const options = asRecord(value);
    if (options === undefined || provider === 'gateway') {
      rest[provider] = value;
      continue;
    }
    const kept: Record<string, unknown> = {};
    for (const [key, option] of Object.entries(options)) {
      const taken = reasoningOf(key, option);
      if (taken === undefined) kept[key] = option;
      else Object.assign(reasoning, taken);
    }
    rest[provider] = kept;
  }
  return [rest, reasoning];
}

/** One provider option as the gateway's reasoning request, or undefined when it is not a reasoning control. */
function reasoningOf(key: string, value: unknown): ReasoningOptions | undefined {
  if (key === 'reasoningEffort') return isEffort(value) ? { effort: value } : undefined;
  const options = asRecord(value);
  if (options === undefined) return undefined;
  if (key === 'thinking' || key === 'reasoningConfig') {
    // anthropic { type, budgetTokens }; bedrock { type, budgetTokens } for Claude, { type, maxReasoningEffort } for Nova,
    // { type: 'adaptive', maxReasoningEffort } for Claude 4.6 (efforts up to xhigh and max, the gateway's high).
    if (options['type'] === 'disabled') return { enabled: false };
    const budget = options['budgetTokens'] ?? options['budget_tokens'];
    const effort = options['maxReasoningEffort'] === 'xhigh' || options['maxReasoningEffort'] === 'max' ? 'high' : options['maxReasoningEffort'];
    if (typeof budget === 'number') return { max_tokens: budget };
    if (isEffort(effort)) return { effort };
    return options['type'] === 'enabled' || options['type'] === 'adaptive' ? { enabled: true } : undefined;
  }
  if (key === 'thinkingConfig') {
    // Gemini: a budget of 0 turns thinking off and -1 lets the model choose; includeThoughts: false keeps its thoughts out of the answer.
    const taken: ReasoningOptions = {};
    const budget = options['thinkingBudget'];
    if (budget === 0) taken.enabled = false;
    else if (budget === -1) taken.enabled = true;
    else if (typeof budget === 'number') taken.max_tokens = budget;
    if (isEffort(options['thinkingLevel'])) taken.effort = options['thinkingLevel'];
    if (options['includeThoughts'] === false) taken.exclude = true;
    else if (options['includeThoughts'] === true && taken.enabled === undefined) taken.enabled = true;
    return taken;
  }
  return undefined;
}

/**
 * @ai-sdk/openai's options with no Chat Completions field: the switches that
 * shape its own request, and the Responses API's reasoning summaries and
 * `include` (what an answer brings back, not what the model does).
 */
const OPENAI_NO_CHAT_FIELD: ReadonlySet<string> = new Set(['structuredOutputs', 'strictJsonSchema', 'reasoningSummary', 'include']);

/** @ai-sdk/anthropic's switches that shape its own request or parsing and have no Messages field. */
const ANTHROPIC_CLIENT_SWITCHES: ReadonlySet<string> = new Set(['sendReasoning', 'structuredOutputMode', 'toolStreaming']);

/** @ai-sdk/google's switch between a responseSchema and a schema-less JSON answer, which it applies itself. */
const GOOGLE_CLIENT_SWITCHES: ReadonlySet<string> = new Set(['structuredOutputs']);

/**
 * providerOptions.anthropic as @ai-sdk/anthropic names its options, in the
 * Messages API's shapes: `effort` (checked by the call schema) is
 * `output_config.effort`, as that provider sends it, and its client-side
 * switches are left out.
 */
function anthropicWireOptions(options: Record<string, unknown>): Record<string, unknown> {
  const { effort, ...out } = withoutKeys(options, ANTHROPIC_CLIENT_SWITCHES);
  if (effort !== undefined) out['outputConfig'] = { ...asRecord(out['outputConfig']), effort };
  return out;
}

function withoutKeys(options: Record<string, unknown>, keys: ReadonlySet<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).filter(([key]) => !keys.has(key)));
}

/**
 * providerOptions.openai as @ai-sdk/openai names its chat options, in the
 * names Chat Completions takes once snake_cased: `textVerbosity` is
 * `verbosity`, a number of `logprobs` is `top_logprobs`, and the client's
 * own switches are left out (OpenAI refuses an argument it does not know).
 */
function openaiWireOptions(options: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (OPENAI_NO_CHAT_FIELD.has(key)) continue;
    if (key === 'textVerbosity') out['verbosity'] = value;
    else if (key === 'logprobs' && typeof value === 'number') {
      out['logprobs'] = true;
      out['topLogprobs'] = value;
    } else out[key] = value;
  }
  return out;
}

/**
 * providerOptions.bedrock as @ai-sdk/amazon-bedrock names its options, in
 * the shapes Converse takes: `anthropicBeta` is Claude's `anthropic_beta`
 * among the model's own fields, and a `serviceTier` name its ServiceTier
 * object (`{type}`), as that provider sends them.
 */
function bedrockWireOptions(options: Record<string, unknown>): Record<string, unknown> {
  const { anthropicBeta, serviceTier, ...out } = options;
  if (Array.isArray(anthropicBeta)) out['additionalModelRequestFields'] = { ...asRecord(out['additionalModelRequestFields']), anthropic_beta: anthropicBeta };
  else if (anthropicBeta !== undefined) out['anthropicBeta'] = anthropicBeta;
  if (typeof serviceTier === 'string') out['serviceTier'] = { type: serviceTier };
  else if (serviceTier !== undefined) out['serviceTier'] = serviceTier;
  return out;
}

/** Chat Completions names -> this protocol's, after a prompt message or part's path. */
const PROMPT_TAILS: Readonly<Record<string, string>> = { '.image_url.url': '', '.tool_call_id': '.toolCallId' };

export const PROMPT_PARAMS: ParamStyle = {
  fields: {
    max_tokens: 'maxOutputTokens',
    stop: 'stopSequences',
    top_p: 'topP',
    top_k: 'topK',
    presence_penalty: 'presencePenalty',
    frequency_penalty: 'frequencyPenalty',
    response_format: 'responseFormat',
    tool_choice: 'toolChoice',
  },
  tail: (rest) => PROMPT_TAILS[rest] ?? rest,
};

function isEffort(value: unknown): value is ReasoningEffort {
  return typeof value === 'string' && EFFORTS.has(value);
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The prompt-caching breakpoint an app set on a message or part as the AI
 * SDK's own providers read it: anthropic.cacheControl (or cache_control),
 * bedrock.cachePoint. It becomes the gateway's cache_control, which the
 * anthropic and bedrock provider types honour and the others leave out.
 */
function cacheControlOf(options: PartOptions): CacheControl | undefined {
  const anthropic = asRecord(options?.['anthropic']?.['cacheControl'] ?? options?.['anthropic']?.['cache_control']);
  if (anthropic?.['type'] === 'ephemeral') {
    const ttl = anthropic['ttl'];
    return ttl === '5m' || ttl === '1h' ? { type: 'ephemeral', ttl } : { type: 'ephemeral' };
  }
  return asRecord(options?.['bedrock']?.['cachePoint']) === undefined ? undefined : { type: 'ephemeral' };
}

const IMAGE_DETAILS: ReadonlySet<string> = new Set(['auto', 'low', 'high']);

/** The resolution an app asked of an image part as @ai-sdk/openai reads it (openai.imageDetail): Chat Completions' image_url.detail. */
function imageDetailOf(options: PartOptions): 'auto' | 'low' | 'high' | undefined {
  const detail = options?.['openai']?.['imageDetail'];
  return typeof detail === 'string' && IMAGE_DETAILS.has(detail) ? (detail as 'auto' | 'low' | 'high') : undefined;
}

/** Text as content parts with the breakpoint after it, or as it was without one. */
function cachedText(text: string, cache: CacheControl | undefined): string | TextPart[] {
  return cache === undefined ? text : [{ type: 'text', text, cache_control: cache }];
}

function toMessages(prompt: readonly PromptMessage[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  prompt.forEach(function toMessage(message, i) {
    const at = `prompt[${i}]`;
    // A breakpoint on a message is one after its last part, as the AI SDK's providers place it.
    const messageCache = cacheControlOf(message.providerOptions);
    switch (message.role) {
      case 'system':
        messages.push(fromOrigin({ role: 'system', content: cachedText(message.content, messageCache) }, at));
        return;
      case 'user': {
        const parts: ContentPart[] = [];
        message.content.forEach(function toPart(part, j) {
          const partAt = `${at}.content[${j}]`;
          const content: ContentPart = part.type === 'text' ? { type: 'text', text: part.text } : filePart(part, partAt);
          const detail = imageDetailOf(part.providerOptions);
          if (content.type === 'image_url' && detail !== undefined) content.image_url.detail = detail;
          const cache = cacheControlOf(part.providerOptions) ?? (j === message.content.length - 1 ? messageCache : undefined);
          if (cache !== undefined) content.cache_control = cache;
          parts.push(fromOrigin(content, partAt));
        });
        messages.push(fromOrigin({ role: 'user', content: parts }, at));
        return;
      }
      case 'assistant':
        messages.push(fromOrigin(assistantMessage(message, at, messageCache), at));
        return;
      case 'tool': {
        // Tool messages take text only: images the tools returned follow as one
        // user message after all of them, as every tool call must be answered
        // right after its assistant turn (OpenAI and Anthropic refuse a turn between).
        const images: ContentPart[] = [];
        for (const [j, part] of message.content.entries()) {
          // Approvals concern provider-executed tools, which never reach a Chat Completions upstream.
          if (part.type !== 'tool-result') continue;
          const [text, returned] = toolResult(part.output, `${at}.content[${j}].output`);
          const cache = cacheControlOf(part.providerOptions) ?? (j === message.content.length - 1 ? messageCache : undefined);
          messages.push(fromOrigin({ role: 'tool', tool_call_id: part.toolCallId, content: cachedText(text, cache) }, `${at}.content[${j}]`));
          images.push(...returned);
        }
        if (images.length > 0) messages.push(fromOrigin({ role: 'user', content: images }, at));
        return;
      }
    }
  });
  return messages;
}

function assistantMessage(message: Extract<PromptMessage, { role: 'assistant' }>, at: string, messageCache: CacheControl | undefined): AssistantMessage {
  let text = '';
  // The turn's text is one part: a breakpoint on any of its text parts closes it.
  let cache = messageCache;
  let reasoning = '';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  const images: ImageOutput[] = [];
  message.content.forEach(function collect(part, j) {
    switch (part.type) {
      case 'text':
        text += part.text;
        cache = cacheControlOf(part.providerOptions) ?? cache;
        return;
      case 'reasoning': {
        // Signed reasoning comes back as it left (providerMetadata.sluice on the answer's reasoning part).
        reasoning += part.text;
        const replay = reasoningDetailsSchema.safeParse(part.providerOptions?.['sluice']?.['reasoningDetails']);
        if (replay.success && replay.data !== undefined) details.push(...(replay.data as ReasoningDetail[]));
        return;
      }
      case 'tool-call':
        // Provider-executed calls ran upstream already; their results are not ours to replay.
        if (part.providerExecuted === true) return;
        calls.push({ id: part.toolCallId, type: 'function', function: { name: part.toolName, arguments: JSON.stringify(part.input ?? {}) } });
        return;
      case 'file': {
        // An image the model made (Gemini's responseModalities IMAGE), replayed by the next turn.
        const image = filePart(part, `${at}.content[${j}]`);
        if (image.type !== 'image_url') throw unsupported(`${at}.content[${j}]`, 'assistant file parts other than images cannot be sent to a Chat Completions upstream');
        images.push({ type: 'image_url', image_url: image.image_url });
        return;
      }
      default:
        // reasoning-file, custom, provider tool results: the upstream made
        // them and Chat Completions has no field to take them back.
        return;
    }
  });
  const out: AssistantMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : cachedText(text, cache) };
  if (calls.length > 0) out.tool_calls = calls;
  if (reasoning !== '') out.reasoning = reasoning;
  if (details.length > 0) out.reasoning_details = details;
  if (images.length > 0) out.images = images;
  return out;
}

const SNIFFED: ReadonlyArray<[string, string]> = [
  ['iVBORw0KGgo', 'image/png'],
  ['/9j/', 'image/jpeg'],
  ['R0lGOD', 'image/gif'],
  ['UklGR', 'image/webp'],
];

/** A concrete image media type for base64 data: the declared one, else sniffed from the bytes. */
function imageType(declared: string, base64: string, param: string): string {
  if (declared.startsWith('image/') && declared !== 'image/*') return declared;
  for (const [head, type] of SNIFFED) if (base64.startsWith(head)) return type;
  throw unsupported(param, `the image's media type ${declared} is not one of png, jpeg, gif or webp`);
}

function isHttpUrl(value: string): boolean {
  return value.startsWith('https://') || value.startsWith('http://');
}

/** A file part as an image_url part (images) or text (text documents). */
function filePart(part: FilePart, param: string): ContentPart {
  const data: TaggedData = typeof part.data === 'string' ? untagged(part.data) : part.data;
  return fileContent(part.mediaType, data, param);
}

function untagged(data: string): TaggedData {
  if (isHttpUrl(data)) return { type: 'url', url: data };
  return { type: 'data', data };
}

function fileContent(mediaType: string, data: TaggedData, param: string): ContentPart {
  if (data.type === 'text') return { type: 'text', text: data.text };
  if (data.type === 'reference') throw unsupported(`${param}.data`, 'provider file references cannot be sent to a Chat Completions upstream');
  const isImage = mediaType === 'image' || mediaType.startsWith('image/');
  if (data.type === 'url') {
    if (!isHttpUrl(data.url)) throw unsupported(`${param}.data`, 'a file URL must be http(s)');
    if (isImage) return { type: 'image_url', image_url: { url: data.url } };
    throw unsupported(param, `file parts of type ${mediaType} cannot be sent to a Chat Completions upstream (images and text only)`);
  }
  if (data.data.startsWith('data:')) {
    const [type, bytes] = dataUrlParts(data.data, mediaType, param);
    // Not read again: a data URL inside a data URL is no file, and unwrapping one after another would recurse without end.
    if (bytes.type === 'data' && bytes.data.startsWith('data:')) throw invalidDataUrl(param, 'its data is another data URL');
    return fileContent(type, bytes, param);
  }
  if (isImage) return { type: 'image_url', image_url: { url: `data:${imageType(mediaType, data.data, param)};base64,${data.data}` } };
  if (mediaType.startsWith('text/') || mediaType === 'application/json') return { type: 'text', text: Buffer.from(data.data, 'base64').toString('utf8') };
  throw unsupported(param, `file parts of type ${mediaType} cannot be sent to a Chat Completions upstream (images and text only)`);
}

/** A `data:` URL's media type (the part's own when the URL names none) and its bytes as base64. */
function dataUrlParts(url: string, mediaType: string, param: string): [string, TaggedData] {
  const comma = url.indexOf(',');
  if (comma === -1) throw invalidDataUrl(param, 'it has no comma before its data');
  const [type = '', ...flags] = url.slice('data:'.length, comma).split(';');
  const payload = url.slice(comma + 1);
  if (flags.includes('base64')) return [type || mediaType, { type: 'data', data: payload }];
  // Without `;base64` the data is percent-encoded bytes (RFC 2397), text or not.
  return [type || mediaType, { type: 'data', data: percentDecoded(payload).toString('base64') }];
}

/**
 * Percent-decoding to bytes, as a data URL's data is (RFC 3986): `%` and two
 * hex digits is that byte, anything else stands for itself (as UTF-8).
 * decodeURIComponent decodes to text, so it refuses bytes that are not
 * UTF-8 (a PNG); Node's byte decoder (querystring's) is not public API.
 */
function percentDecoded(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const high = hexDigit(bytes[i + 1]);
    const low = hexDigit(bytes[i + 2]);
    if (bytes[i] === 0x25 && high !== -1 && low !== -1) {
      out[length++] = high * 16 + low;
      i += 2;
    } else {
      out[length++] = bytes[i] as number;
    }
  }
  return out.subarray(0, length);
}

function hexDigit(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function invalidDataUrl(param: string, why: string): GatewayHttpError {
  return new GatewayHttpError(400, `${param}.data: not a valid data URL: ${why}.`, { type: 'invalid_request_error', code: 'invalid_value', param: `${param}.data` });
}

function toolResult(output: ToolOutput, param: string): [string, ContentPart[]] {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return [output.value, []];
    case 'json':
    case 'error-json':
      return [JSON.stringify(output.value ?? null), []];
    case 'execution-denied':
      return [output.reason ?? 'The tool execution was denied.', []];
    case 'content': {
      let text = '';
      const images: ContentPart[] = [];
      output.value.forEach(function collect(item, k) {
        const part = contentItem(item, `${param}.value[${k}]`);
        if (part === undefined) return;
        if (part.type === 'text') text += part.text;
        else images.push(fromOrigin(part, `${param}.value[${k}]`));
      });
      return [text, images];
    }
  }
}

function contentItem(item: ToolContentItem, param: string): ContentPart | undefined {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text };
    case 'file':
      return fileContent(item.mediaType, typeof item.data === 'string' ? untagged(item.data) : item.data, param);
    case 'file-data':
    case 'image-data':
      return fileContent(item.mediaType, { type: 'data', data: item.data }, param);
    case 'file-url':
      return fileContent(item.mediaType ?? 'application/octet-stream', { type: 'url', url: item.url }, param);
    case 'image-url':
      return fileContent('image', { type: 'url', url: item.url }, param);
    case 'custom':
      return undefined;
    default:
      throw unsupported(param, 'provider file ids cannot be sent to a Chat Completions upstream');
  }
}

function toResponseFormat(format: LanguageModelCall['responseFormat']): ResponseFormat | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.schema === undefined) return { type: 'json_object' };
  const jsonSchema: Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] = { name: format.name ?? 'response', schema: format.schema };
  if (format.description !== undefined) jsonSchema.description = format.description;
  return { type: 'json_schema', json_schema: jsonSchema };
}

function toTools(tools: LanguageModelCall['tools']): FunctionTool[] | undefined {
  if (tools === undefined || tools.length === 0) return undefined;
  return tools.map(function toTool(tool, i): FunctionTool {
    if (tool.type === 'provider') throw unsupported(`tools[${i}]`, `the provider tool ${tool.id} cannot be run by this gateway`);
    const fn: FunctionTool['function'] = { name: tool.name, parameters: tool.inputSchema };
    if (tool.description !== undefined) fn.description = tool.description;
    if (tool.strict !== undefined) fn.strict = tool.strict;
    // A breakpoint on a tool caches the tool definitions up to it.
    const cache = cacheControlOf(tool.providerOptions);
    return cache === undefined ? { type: 'function', function: fn } : { type: 'function', function: fn, cache_control: cache };
  });
}

function toToolChoice(choice: LanguageModelCall['toolChoice'], tools: readonly FunctionTool[]): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice.type !== 'tool') return choice.type;
  if (!tools.some((t) => t.function.name === choice.toolName)) throw unsupported('toolChoice.toolName', `no tool named ${choice.toolName} in tools`);
  return { type: 'function', function: { name: choice.toolName } };
}

function toReasoningEffort(level: LanguageModelCall['reasoning']): ReasoningEffort | undefined {
  if (level === undefined || level === 'provider-default') return undefined;
  // The gateway's efforts stop at high, but for a model that takes more (takesReasoning).
  return level === 'xhigh' || level === 'max' ? 'high' : level;
}

/**
 * Whether the endpoint answering takes the call's `reasoning` as it is: ai 7's
 * `xhigh` and `max` are `high` but for a Claude model whose adaptive thinking
 * takes them, on anthropic or bedrock (claudeTakesEffort).
 */
export function takesReasoning(call: LanguageModelCall, type: string, model: string): boolean {
  const level = call.reasoning;
  if (level !== 'xhigh' && level !== 'max') return true;
  return (type === 'anthropic' || type === 'bedrock') && claudeTakesEffort(model, level);
}

/** The request for the endpoint answering: the call's `xhigh` or `max` as it is where the model takes it. */
export function forEndpoint(request: ChatCompletionRequest, call: LanguageModelCall, type: string, model: string): ChatCompletionRequest {
  const level = call.reasoning;
  if ((level !== 'xhigh' && level !== 'max') || request.reasoning_effort !== 'high' || !takesReasoning(call, type, model)) return request;
  return { ...request, reasoning_effort: level };
}
