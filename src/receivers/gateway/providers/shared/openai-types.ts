// Wire shapes of the OpenAI Chat Completions API as the gateway serves it.
// Requests arrive validated (see schema.ts) in these shapes; every provider
// adapter maps from ChatCompletionRequest and back to ChatCompletion /
// ChatCompletionChunk, so the gateway core handles one shape only.

/** Anthropic's prompt-caching breakpoint; honoured by anthropic and bedrock providers. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextPart {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

export interface ImageUrlPart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
  cache_control?: CacheControl;
}

/** Audio and file inputs: only OpenAI-compatible upstreams take them; the other provider types refuse them. */
export interface InputAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
  cache_control?: CacheControl;
}

export interface FilePart {
  type: 'file';
  file: { file_data?: string; file_id?: string; filename?: string };
  cache_control?: CacheControl;
}

export type ContentPart = TextPart | ImageUrlPart | InputAudioPart | FilePart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A call of a custom (free-form input) tool: only OpenAI-compatible upstreams take it. */
export interface CustomToolCall {
  id: string;
  type: 'custom';
  custom: { name: string; input: string };
}

/** What a call names and passes: a function's name and arguments (JSON text), or a custom tool's name and free-form input. */
export function calledWith(call: ToolCall | CustomToolCall): { readonly name: string; readonly input: string } {
  return call.type === 'custom' ? { name: call.custom.name, input: call.custom.input } : { name: call.function.name, input: call.function.arguments };
}

export interface SystemMessage {
  role: 'system' | 'developer';
  content: string | TextPart[];
  name?: string;
}

export interface UserMessage {
  role: 'user';
  content: string | ContentPart[];
  name?: string;
}

/**
 * One piece of a model's reasoning, in OpenRouter's `reasoning_details` shape:
 * the text with the provider's signature, or an encrypted (redacted) block.
 * Clients send them back on the assistant message so signatures survive a
 * multi-turn tool loop; `format` names the provider family that signed them.
 */
export type ReasoningDetail =
  | { type: 'reasoning.text'; text: string; signature?: string | null; format?: string; index?: number }
  | { type: 'reasoning.encrypted'; data: string; format?: string; index?: number }
  // A summary of reasoning kept server side (OpenAI's reasoning models through OpenRouter): text to read, nothing to replay.
  | { type: 'reasoning.summary'; summary: string; format?: string; index?: number };

/** A refusal the model gave, sent back in an assistant turn's content. */
export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content?: string | Array<TextPart | RefusalPart> | null;
  name?: string;
  tool_calls?: Array<ToolCall | CustomToolCall>;
  refusal?: string | null;
  /** A legacy function call (with `functions`): only OpenAI-compatible upstreams take it. */
  function_call?: { name: string; arguments: string } | null;
  /** A previous audio answer, by id: only OpenAI-compatible upstreams take it. */
  audio?: { id: string } | null;
  /** The reasoning text of this turn, as the gateway returned it (informational; details carry the signatures). */
  reasoning?: string | null;
  /** DeepSeek's and Kimi's name for the turn's thinking text, sent back as it came (openai-type upstreams only). */
  reasoning_content?: string | null;
  /** DeepSeek's and Mistral's prefix completion: the answer continues this message (openai-type upstreams only). */
  prefix?: boolean;
  reasoning_details?: ReasoningDetail[];
  /** Images the model made in this turn (OpenRouter's shape), sent back with it: google takes them back; the other types leave them out. */
  images?: ImageOutput[];
}

export interface ToolMessage {
  role: 'tool';
  content: string | TextPart[];
  tool_call_id: string;
}

/** A legacy function call's result (with `functions`): only OpenAI-compatible upstreams take it. */
export interface FunctionMessage {
  role: 'function';
  name: string;
  content: string | null;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage | FunctionMessage;

export interface FunctionTool {
  type: 'function';
  /** A cache breakpoint after this tool (from a Messages request's tool `cache_control`). */
  cache_control?: CacheControl;
  function: {
    name: string;
    description?: string;
    /** A JSON Schema object. */
    parameters?: Record<string, unknown>;
    strict?: boolean;
  };
}

/** A tool taking free-form text (or text in a grammar) instead of JSON arguments: only OpenAI-compatible upstreams take it. */
export interface CustomTool {
  type: 'custom';
  custom: {
    name: string;
    description?: string;
    format?: { type: 'text' } | { type: 'grammar'; grammar: { definition: string; syntax: 'lark' | 'regex' } };
  };
}

/** `allowed_tools`: the tools the model may call this turn, a subset of `tools`; only OpenAI-compatible upstreams take it. */
export interface AllowedToolsChoice {
  type: 'allowed_tools';
  allowed_tools: { mode: 'auto' | 'required'; tools: Array<Record<string, unknown>> };
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } } | { type: 'custom'; custom: { name: string } } | AllowedToolsChoice;

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** OpenRouter's unified reasoning control; `reasoning_effort` is the OpenAI spelling of `effort`. */
export interface ReasoningOptions {
  effort?: ReasoningEffort;
  /** A thinking budget in tokens (Anthropic budget_tokens, Gemini thinkingBudget). */
  max_tokens?: number;
  /** Reason, but leave the reasoning text out of the answer. */
  exclude?: boolean;
  enabled?: boolean;
}

export interface GatewayOptions {
  /** Provider slugs tried first, in this order; the model's other endpoints follow. */
  order?: string[];
  /** Hard filter: only these provider slugs may serve the request. */
  only?: string[];
  /** Fallback model ids, tried after the requested model's endpoints. */
  models?: string[];
}

/**
 * The client's own JSON text of a Chat Completions request, when sending it
 * on with only `model` replaced is exactly the same request: set by the
 * chat route's parser (see raw-request.ts), used by OpenAI-compatible
 * upstreams instead of serializing the request again.
 */
export const RAW_REQUEST: unique symbol = Symbol('sluice.rawRequest');

export interface RawRequestText {
  readonly text: string;
  /** Where the text after the `model` value starts. */
  readonly afterModel: number;
}

export interface ChatCompletionRequest {
  [RAW_REQUEST]?: RawRequestText;
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: Array<FunctionTool | CustomTool>;
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  temperature?: number;
  top_p?: number;
  /** Not OpenAI's: sampling from the k likeliest tokens, for providers that take it. */
  top_k?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  seed?: number;
  n?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  response_format?: ResponseFormat;
  reasoning_effort?: ReasoningEffort;
  reasoning?: ReasoningOptions;
  user?: string;
  providerOptions?: { gateway?: GatewayOptions } & Record<string, unknown>;
  // OpenAI-only fields passed through unchecked, as any unknown top-level
  // field is; other provider types refuse them (inputs.ts OPENAI_ONLY_PARAMS).
  functions?: unknown;
  function_call?: unknown;
  modalities?: unknown;
  audio?: unknown;
  web_search_options?: unknown;
  verbosity?: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_creation_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
  /** USD at catalog prices, added by the gateway. */
  cost?: number;
}

/** Where an answer's text came from, as OpenAI's search models say it in `message.annotations` (`delta.annotations` streamed); read as upstream data (unchecked). */
export interface UrlCitation {
  type: 'url_citation';
  url_citation: { url: string; title?: string; start_index?: number; end_index?: number };
}

/** An image the model made, as OpenRouter answers it: a data URL in `message.images` (`delta.images` streamed). */
export interface ImageOutput {
  type: 'image_url';
  image_url: { url: string };
}

/**
 * What some OpenAI-compatible servers add to a choice that finished `stop`:
 * the stop string that ended it, or the stop token's id (a number) when a
 * token did. OpenAI itself does not say.
 */
export interface StopNamed {
  /** vLLM's name for it (null at the end of sequence). */
  stop_reason?: string | number | null;
  /** SGLang's. */
  matched_stop?: string | number | null;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; tool_calls?: Array<ToolCall | CustomToolCall>; refusal?: string | null; reasoning?: string; reasoning_content?: string | null; reasoning_details?: ReasoningDetail[]; images?: ImageOutput[]; annotations?: unknown };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  } & StopNamed>;
  usage?: Usage;
  system_fingerprint?: string;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function' | 'custom';
  function?: { name?: string; arguments?: string };
  custom?: { name?: string; input?: string };
}

/** A message's or delta's reasoning: `reasoning`, or `reasoning_content` as DeepSeek, vLLM and SGLang name it. */
export function reasoningText(part: { reasoning?: string | null; reasoning_content?: string | null }): string | undefined {
  if (typeof part.reasoning === 'string' && part.reasoning !== '') return part.reasoning;
  return typeof part.reasoning_content === 'string' && part.reasoning_content !== '' ? part.reasoning_content : undefined;
}

/** A message's or delta's text: a string, or the text of an array of parts (some servers, Mistral's among them, answer with parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
}

/**
 * What tells a streamed tool call's deltas apart: its index, or, from servers
 * that leave index out, its id. Undefined for a delta with neither, which
 * continues the last call.
 */
export function toolCallKey(delta: ToolCallDelta): string | undefined {
  if (typeof delta.index === 'number') return `index:${delta.index}`;
  return delta.id === undefined ? undefined : `id:${delta.id}`;
}

/**
 * The upstream event text a chunk was parsed from, when an OpenAI-compatible
 * upstream sent it: a Chat Completions stream passes it on unchanged instead
 * of serializing the chunk again. A symbol key, so JSON.stringify skips it.
 */
export const RAW_EVENT: unique symbol = Symbol('sluice.rawEvent');

export interface ChatCompletionChunk {
  [RAW_EVENT]?: string;
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; tool_calls?: ToolCallDelta[]; refusal?: string | null; reasoning?: string; reasoning_content?: string | null; reasoning_details?: ReasoningDetail[]; images?: ImageOutput[]; annotations?: unknown };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  } & StopNamed>;
  /** Present (possibly null) on the final usage chunk when stream_options.include_usage is set. */
  usage?: Usage | null;
  system_fingerprint?: string;
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/**
 * The first choice (index 0), the one answer of the protocols that have no
 * `n` (Messages, the AI SDK's): an upstream may make several all the same
 * (`providerOptions.google.candidateCount`). A server that leaves `index`
 * out means that one.
 */
export function firstChoice<C extends { index: number }>(choices: readonly C[]): C | undefined {
  return choices.find((choice) => !(choice.index > 0));
}
