// Input helpers every non-OpenAI adapter needs: data-URL images and the 400
// for a request an adapter cannot map. The anthropic and bedrock adapters
// import them from here (one copy, no shared folder of their own).
import { randomUUID } from 'node:crypto';
import { MalformedDataError } from '../../../../shared/errors.js';
import { MAX_JSON_DEPTH, nestsTooDeep } from './json-depth.js';
import type { AllowedToolsChoice, AssistantMessage, ChatCompletionRequest, FunctionTool, TextPart, ToolCall, ToolChoice } from './openai-types.js';

export interface InlineImage {
  /** image/png, image/jpeg, ... (lower-cased, parameters dropped) */
  mediaType: string;
  /** base64, as it came */
  data: string;
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/is;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard base64, padded: what OpenAI's data URLs, Anthropic's sources and the providers' inline bytes take. */
export function isBase64(data: string): boolean {
  return data.length > 0 && data.length % 4 === 0 && BASE64.test(data);
}

/** Undefined when `url` is not a data URL; throws for a data URL that is not a base64 image. */
export function parseDataUrl(url: string, param: string): InlineImage | undefined {
  if (!url.startsWith('data:')) return undefined;
  const match = DATA_URL.exec(url);
  const mediaType = match?.[1] === undefined ? undefined : imageMediaType(match[1]);
  const data = match?.[3];
  if (mediaType === undefined || data === undefined || !mediaType.startsWith('image/')) {
    invalidRequest(param, 'expected data:image/<type>;base64,<data>');
  }
  if (!isBase64(data)) invalidRequest(param, 'the image data is not valid base64');
  // 64 base64 characters are 48 bytes: the signature, or the ftyp box with its brands.
  return { mediaType: sniffImageType(Buffer.from(data.slice(0, 64), 'base64')) ?? mediaType, data };
}

const HEIC_BRANDS: ReadonlySet<string> = new Set(['heic', 'heix', 'heim', 'heis']);
const HEIF_BRANDS: ReadonlySet<string> = new Set(['mif1', 'msf1', 'heif']);
/** AVIF is HEIF too: an encoder may name the generic `mif1` first and `avif` only among the compatible brands. */
const AVIF_BRANDS: ReadonlySet<string> = new Set(['avif', 'avis']);

/**
 * The image type an image's first bytes (at least 12) show, for the types the
 * providers read; undefined for any other. What an image says of itself wins
 * over what its data URL or server says: OpenAI reads a PNG sent as
 * `data:image/jpeg` (apps label every image alike), while Anthropic refuses
 * an image whose bytes are not of its media type ("The image was specified
 * using the image/jpeg media type, but the image appears to be a image/png
 * image"), and Converse's format must match the bytes too.
 */
export function sniffImageType(head: Uint8Array): string | undefined {
  const ascii = (from: number, to: number): string => String.fromCharCode(...head.subarray(from, to));
  if (head[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 4) === 'GIF8') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(4, 8) !== 'ftyp') return undefined;
  if (HEIC_BRANDS.has(ascii(8, 12))) return 'image/heic';
  if (HEIF_BRANDS.has(ascii(8, 12)) && !compatibleBrands(head).some((brand) => AVIF_BRANDS.has(brand))) return 'image/heif';
  return undefined;
}

/** The compatible brands of an ftyp box (after its size, type, major brand and minor version), as far as its first 48 bytes and `head` hold them. */
function compatibleBrands(head: Uint8Array): string[] {
  const end = Math.min(head.length, 48, new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(0));
  const brands: string[] = [];
  for (let at = 16; at + 4 <= end; at += 4) brands.push(String.fromCharCode(...head.subarray(at, at + 4)));
  return brands;
}

/**
 * A media type as the providers take it: lower case, without parameters, and
 * `image/jpg` (common in data URLs, but no registered type; Gemini refuses it) as `image/jpeg`.
 */
export function imageMediaType(raw: string): string {
  const type = raw.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'image/jpg' ? 'image/jpeg' : type;
}

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/**
 * A request the provider cannot take (an out-of-range value, an image it
 * cannot read). A PermanentError, so the gateway answers 400 with `param`.
 */
export class ProviderRequestError extends MalformedDataError {
  readonly param: string;

  constructor(param: string, message: string) {
    super(`${param}: ${message}`);
    this.param = param;
  }
}

export function invalidRequest(param: string, message: string): never {
  throw new ProviderRequestError(param, message);
}

/**
 * OpenAI parameters that only OpenAI-compatible upstreams take: legacy
 * function calling, audio output, web search and GPT-5's verbosity. The
 * schema passes them through unchecked (openai-types.ts).
 */
export const OPENAI_ONLY_PARAMS = ['functions', 'function_call', 'modalities', 'audio', 'web_search_options', 'verbosity'] as const;

/** OpenAI parameters that some provider types have no setting for. */
export type SamplingParam = 'frequency_penalty' | 'presence_penalty' | 'logit_bias' | 'seed' | 'parallel_tool_calls' | (typeof OPENAI_ONLY_PARAMS)[number];

/**
 * Refuses each of `params` (ones the provider type has no setting for) when
 * its value would change the answer. OpenAI's neutral values (a penalty of 0,
 * a bias of 0 or none) go through, since leaving them out changes nothing; a
 * seed asks for repeatable answers, which the provider cannot promise.
 */
export function rejectWithoutSetting(request: ChatCompletionRequest, params: readonly SamplingParam[], providerType: string): void {
  for (const param of params) {
    if (changesAnswer(request, param)) invalidRequest(param, `not supported by provider type ${providerType}`);
  }
}

function changesAnswer(request: ChatCompletionRequest, param: SamplingParam): boolean {
  switch (param) {
    case 'frequency_penalty':
    case 'presence_penalty':
      return request[param] !== undefined && request[param] !== 0;
    case 'logit_bias':
      return request.logit_bias !== undefined && Object.values(request.logit_bias).some((bias) => bias !== 0);
    case 'seed':
      return request.seed !== undefined;
    case 'parallel_tool_calls':
      // false asks for at most one tool call a turn: it matters only when a tool may be called.
      return request.parallel_tool_calls === false && (request.tools?.length ?? 0) > 0 && request.tool_choice !== 'none';
    case 'functions':
      return Array.isArray(request.functions) && request.functions.length > 0;
    case 'function_call':
      // 'none' and 'auto' without functions ask for nothing.
      return request.function_call != null && request.function_call !== 'none' && request.function_call !== 'auto';
    case 'modalities':
      return Array.isArray(request.modalities) && request.modalities.some((modality) => modality !== 'text');
    case 'audio':
    case 'web_search_options':
      return request[param] != null;
    case 'verbosity':
      return request.verbosity != null && request.verbosity !== 'medium';
  }
}

/** String content or text parts, joined: for system prompts and tool results. */
export function textOf(content: string | ReadonlyArray<{ type: 'text'; text: string }> | null | undefined): string {
  if (content === null || content === undefined) return '';
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/**
 * An assistant turn's content for provider types without OpenAI's audio
 * answers, legacy function calls or refusal parts: a refusal part is what the model said, so it goes
 * as text; a previous audio answer (`audio.id`) cannot be replayed.
 */
export function assistantContent(message: AssistantMessage, param: string, type: string): string | TextPart[] {
  if (message.audio != null) invalidRequest(`${param}.audio`, `is not supported by provider type ${type}`);
  if (message.function_call != null) invalidRequest(`${param}.function_call`, `(legacy function calling) is not supported by provider type ${type}; use tool_calls`);
  const content = message.content;
  if (content === null || content === undefined || typeof content === 'string') return content ?? '';
  return content.map((part): TextPart => (part.type === 'refusal' ? { type: 'text', text: part.refusal } : part));
}

/**
 * The request's tools, for provider types that take function tools only:
 * a custom tool (free-form input, OpenAI's `type: "custom"`) is refused.
 */
export function functionTools(tools: ChatCompletionRequest['tools'], type: string): FunctionTool[] {
  if (tools === undefined) return [];
  return tools.map(function functionOnly(tool, i): FunctionTool {
    if (tool.type !== 'function') return invalidRequest(`tools[${i}].type`, `custom tools are not supported by provider type ${type}; use function tools`);
    return tool;
  });
}

/** An assistant turn's tool calls, for provider types that take function tools only (see functionTools). */
export function functionCalls(message: AssistantMessage, param: string, type: string): ToolCall[] {
  const calls = message.tool_calls ?? [];
  return calls.map(function functionOnly(call, j): ToolCall {
    if (call.type !== 'function') return invalidRequest(`${param}.tool_calls[${j}].type`, `custom tool calls are not supported by provider type ${type}`);
    return call;
  });
}

/** A tool choice for provider types that take function tools only: `allowed_tools` and a named custom tool are refused. */
export function functionToolChoice(choice: ToolChoice | undefined, type: string): Exclude<ToolChoice, AllowedToolsChoice | { type: 'custom' }> | undefined {
  if (typeof choice !== 'object' || choice.type === 'function') return choice;
  if (choice.type === 'allowed_tools') return invalidRequest('tool_choice', `allowed_tools is not supported by provider type ${type}`);
  return invalidRequest('tool_choice', `custom tools are not supported by provider type ${type}`);
}

/** An assistant tool call's `arguments` string as a JSON object (empty means no arguments). */
export function parseToolArguments(args: string, param: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    invalidRequest(param, 'is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) invalidRequest(param, 'must be a JSON object');
  // Sent on as an object, they are walked and serialized as the body is: bounded as it is.
  if (nestsTooDeep(parsed)) invalidRequest(param, `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  return parsed as Record<string, unknown>;
}

/**
 * A function tool's parameters as the input schema Anthropic and Converse
 * require: an object schema. OpenAI takes `{}` or `{properties: {...}}`
 * without `type`, which means the same.
 */
export function objectSchema(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  if (parameters === undefined) return { type: 'object', properties: {} };
  return parameters['type'] === undefined ? { type: 'object', ...parameters } : parameters;
}

/** A JSON object, or undefined for anything else: for reading untyped upstream bodies. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** `stop` as a list, without empty strings, which mark no place to stop (Anthropic refuses them). */
export function stopList(stop: string | string[] | undefined): string[] | undefined {
  if (stop === undefined) return undefined;
  return (typeof stop === 'string' ? [stop] : stop).filter((sequence) => sequence !== '');
}

/**
 * `stop` as Claude takes it, on Anthropic's API and on Bedrock alike: a stop
 * sequence of whitespace only (`"\n"`) is refused there ("each stop sequence
 * must contain non-whitespace"), and leaving it out would change where the
 * answer ends.
 */
export function claudeStopList(stop: string | string[] | undefined, providerType: string): string[] | undefined {
  const list = stopList(stop);
  if (list?.some(isBlank) === true) invalidRequest('stop', `a stop sequence of whitespace only is not supported by Claude models on provider type ${providerType}`);
  return list;
}

/**
 * `temperature` and `top_p` as Claude takes them, on Anthropic's API and on
 * Bedrock alike: Claude Sonnet 4.5 and later refuse the two together
 * ("`temperature` and `top_p` cannot both be specified for this model"),
 * and OpenAI clients send `top_p: 1` beside a temperature. A value at
 * Claude's default (`top_p` 1, no truncation; `temperature` 1) beside the
 * other asks for nothing, so it is left out.
 */
export function claudeSampling(request: ChatCompletionRequest): Pick<ChatCompletionRequest, 'temperature' | 'top_p'> {
  const { temperature, top_p: topP } = request;
  if (temperature !== undefined && topP === 1) return { temperature };
  if (topP !== undefined && temperature === 1) return { top_p: topP };
  return { ...(temperature !== undefined ? { temperature } : {}), ...(topP !== undefined ? { top_p: topP } : {}) };
}

/** Empty or whitespace only: text Claude refuses in a text block or a stop sequence, and Converse in any text block. */
export function isBlank(text: string): boolean {
  return text.trim() === '';
}

/** The gateway's id for a completion an upstream did not name. */
export function completionId(): string {
  return `chatcmpl-${randomUUID().replaceAll('-', '')}`;
}

/**
 * DESIGN 7: fall back on 401/403/408/429 and 5xx (Anthropic's 529 too); 400/404/413/422 are the request's fault.
 * A 402 (the provider's account is out of credit: Anthropic's billing_error, OpenRouter, DeepSeek) is about
 * the provider, as a 401 or 403 is, and another provider may answer.
 */
export function isFallbackStatus(status: number): boolean {
  return status === 401 || status === 402 || status === 403 || status === 408 || status === 429 || status >= 500;
}
