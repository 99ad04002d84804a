// OpenAI chat request -> Gemini generateContent / streamGenerateContent request.
import type { ChatCompletionRequest, ChatMessage, ContentPart, ToolChoice } from '../shared/openai-types.js';
import { requireApiKey, type AttemptContext, type UpstreamRequest } from '../shared/types.js';
import type { GoogleProviderConfig } from './config.js';
import { RequestImages } from '../shared/image-fetch.js';
import { nestsTooDeep } from '../shared/json-depth.js';
import { OPENAI_ONLY_PARAMS, functionCalls, functionToolChoice, functionTools, invalidRequest, isHttpUrl, parseDataUrl, parseToolArguments, assistantContent, rejectWithoutSetting, stopList, textOf } from '../shared/inputs.js';
import { reasoningOf, type Effort } from '../shared/reasoning.js';
import { holdsFreeFormObject, toGeminiJsonSchema, toGeminiSchema } from './schema.js';
import { addOptions, providerOptionsFor } from '../shared/provider-options.js';
import { requiresThoughtSignatures, SKIP_SIGNATURE } from './tool-call-id.js';
import { geminiCallIdOf, thoughtSignatureOf } from '../shared/tool-call-id.js';
import type { GeminiContent, GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiPart, GeminiRequest } from './wire.js';

/** OpenAI field -> generationConfig field, copied as they are (ranges are the same as OpenAI's). */
const GENERATION_FIELDS = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['seed', 'seed'],
  ['presence_penalty', 'presencePenalty'],
  ['frequency_penalty', 'frequencyPenalty'],
] as const satisfies ReadonlyArray<readonly [keyof ChatCompletionRequest, keyof GeminiGenerationConfig]>;

const MAX_STOP_SEQUENCES = 5;

/** The image types Gemini reads; it refuses others (a GIF) with a 400 for the whole request. */
const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']);

/** reasoning_effort -> thinkingBudget, as Google's OpenAI compatibility layer maps it (minimal: Flash-Lite's floor). */
const THINKING_BUDGETS: Readonly<Record<Effort, number>> = { minimal: 512, low: 1024, medium: 8192, high: 24_576 };

export async function buildGoogleRequest(request: ChatCompletionRequest, ctx: AttemptContext<GoogleProviderConfig>): Promise<UpstreamRequest> {
  // generationConfig takes seed and both penalties (GENERATION_FIELDS), but no token biases; nothing limits a turn to one tool call.
  rejectWithoutSetting(request, ['logit_bias', 'parallel_tool_calls', ...OPENAI_ONLY_PARAMS], 'google');

  const body: GeminiRequest = { contents: await mapMessages(request.messages, ctx) };
  const system = request.messages.flatMap((message) => (message.role === 'system' || message.role === 'developer' ? [textOf(message.content)] : [])).filter((text) => text !== '');
  if (system.length > 0) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  const tools = functionTools(request.tools, 'google');
  if (tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: tools.map(({ function: fn }) => {
          const parameters = fn.parameters === undefined ? undefined : toGeminiSchema(fn.parameters);
          const declaration: GeminiFunctionDeclaration = { name: fn.name, ...(fn.description !== undefined ? { description: fn.description } : {}) };
          // Gemini rejects an OBJECT schema without properties: a function without parameters omits them.
          if (fn.parameters === undefined || parameters === undefined || !hasProperties(parameters)) return declaration;
          if (holdsFreeFormObject(parameters)) declaration.parametersJsonSchema = toGeminiJsonSchema(fn.parameters);
          else declaration.parameters = parameters;
          return declaration;
        }),
      },
    ];
    if (request.tool_choice !== undefined) body.toolConfig = { functionCallingConfig: mapToolChoice(request.tool_choice) };
  }
  const generationConfig = mapGenerationConfig(request);
  if (request.top_k !== undefined) generationConfig.topK = request.top_k;
  const options = request.providerOptions === undefined ? undefined : providerOptionsFor(request, ctx.slug, 'google');
  if (options !== undefined) addGoogleOptions(body as unknown as Record<string, unknown>, generationConfig as Record<string, unknown>, options);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;

  const model = encodeURIComponent(ctx.model.replace(/^models\//, ''));
  const method = request.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return {
    url: `${ctx.provider.base_url.replace(/\/+$/, '')}/v1beta/models/${model}:${method}`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: request.stream === true ? 'text/event-stream' : 'application/json',
      ...ctx.provider.headers,
      'x-goog-api-key': requireApiKey(ctx),
    },
    body: JSON.stringify(body),
  };
}

/** How many candidates the request asks for: `n`, else `providerOptions.google.candidateCount` (which n wins over), else one. */
export function candidateCountOf(request: ChatCompletionRequest, slug: string): number {
  if (request.n !== undefined) return request.n;
  const count = request.providerOptions === undefined ? undefined : providerOptionsFor(request, slug, 'google')?.['candidateCount'];
  return typeof count === 'number' && Number.isInteger(count) && count > 1 ? count : 1;
}

function mapGenerationConfig(request: ChatCompletionRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  for (const [from, to] of GENERATION_FIELDS) {
    const value = request[from];
    if (value !== undefined) config[to] = value;
  }
  if (request.n !== undefined) config.candidateCount = request.n;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  const stop = stopList(request.stop);
  if (stop !== undefined && stop.length > MAX_STOP_SEQUENCES) invalidRequest('stop', `provider type google takes at most ${MAX_STOP_SEQUENCES} stop sequences`);
  if (stop !== undefined && stop.length > 0) config.stopSequences = stop;
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const given = format.json_schema.schema;
    const schema = given === undefined ? undefined : toGeminiSchema(given);
    // A schema for any object says no more than JSON mode, and Gemini refuses an OBJECT without properties.
    if (given !== undefined && schema !== undefined && !(schema['type'] === 'OBJECT' && !hasProperties(schema))) {
      if (holdsFreeFormObject(schema)) config.responseJsonSchema = toGeminiJsonSchema(given);
      else config.responseSchema = schema;
    }
  }
  if (request.logprobs === true) {
    config.responseLogprobs = true;
    if (request.top_logprobs != null) config.logprobs = request.top_logprobs;
  }
  const reasoning = reasoningOf(request);
  if (reasoning !== undefined) {
    config.thinkingConfig = reasoning.on ? { thinkingBudget: reasoning.budget ?? THINKING_BUDGETS[reasoning.effort], includeThoughts: !reasoning.exclude } : { thinkingBudget: 0 };
  }
  return config;
}

function mapToolChoice(choice: ToolChoice): { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } {
  const named = functionToolChoice(choice, 'google');
  if (named === undefined || named === 'auto') return { mode: 'AUTO' };
  if (named === 'none') return { mode: 'NONE' };
  if (named === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [named.function.name] };
}

async function mapMessages(messages: readonly ChatMessage[], ctx: AttemptContext<GoogleProviderConfig>): Promise<GeminiContent[]> {
  // A functionResponse names its function; OpenAI's tool message only has the call id.
  const functionNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) if (call.type === 'function') functionNames.set(call.id, call.function.name);
  }
  const images = new RequestImages(ctx.provider.image_fetch, ctx);
  const contents: GeminiContent[] = [];
  for (const [i, message] of messages.entries()) {
    const param = `messages[${i}]`;
    let turn: GeminiContent;
    switch (message.role) {
      case 'system':
      case 'developer':
        continue;
      case 'user': {
        const parts = typeof message.content === 'string' ? textParts(message.content) : (await Promise.all(message.content.map((part, j) => mapPart(part, `${param}.content[${j}]`, images)))).flat();
        turn = { role: 'user', parts };
        break;
      }
      case 'assistant': {
        const parts = textParts(textOf(assistantContent(message, param, 'google')));
        // The images the model made (responseModalities IMAGE) go back as it made them, so a conversation can edit them.
        for (const [j, image] of (message.images ?? []).entries()) parts.push(...(await mapPart(image, `${param}.images[${j}]`, images)));
        for (const [j, call] of functionCalls(message, param, 'google').entries()) {
          const part: GeminiPart = { functionCall: { name: call.function.name, args: parseToolArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`), ...idOf(call.id) } };
          // Parallel calls: Gemini signs only the first call of a turn.
          const signature = thoughtSignatureOf(call.id) ?? (j === 0 && requiresThoughtSignatures(ctx.model) ? SKIP_SIGNATURE : undefined);
          if (signature !== undefined) part.thoughtSignature = signature;
          parts.push(part);
        }
        turn = { role: 'model', parts };
        break;
      }
      case 'function':
        return invalidRequest(`${param}.role`, 'function (legacy function calling) is not supported by provider type google; use tools');
      case 'tool': {
        const name = functionNames.get(message.tool_call_id);
        if (name === undefined) invalidRequest(`${param}.tool_call_id`, `no assistant tool call with id ${message.tool_call_id} precedes this tool message`);
        turn = { role: 'user', parts: [{ functionResponse: { name, response: toolResponse(textOf(message.content)), ...idOf(message.tool_call_id) } }] };
        break;
      }
    }
    if (turn.parts.length === 0) continue;
    const last = contents.at(-1);
    if (last !== undefined && last.role === turn.role) last.parts.push(...turn.parts);
    else contents.push(turn);
  }
  // Gemini refuses a request without contents ("contents is not specified"); OpenAI takes system messages alone.
  if (contents.length === 0) invalidRequest('messages', 'provider type google needs a user or assistant message with content');
  return contents;
}

function hasProperties(schema: Record<string, unknown>): boolean {
  return Object.keys((schema['properties'] as object | undefined) ?? {}).length > 0;
}

/** Gemini's own id of a call (Gemini 3 gives one), sent back on the call and on its functionResponse, which it matches by id. */
function idOf(toolCallId: string): { id: string } | Record<string, never> {
  const id = geminiCallIdOf(toolCallId);
  return id === undefined ? {} : { id };
}

/**
 * A JSON object result is sent as the response; anything else as `{output: <value>}` (the key Gemini's docs name),
 * and JSON nested deeper than a request body may be as its text.
 */
function toolResponse(content: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(content);
    if (nestsTooDeep(parsed)) return { output: content };
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    return { output: parsed };
  } catch {
    return { output: content };
  }
}

function textParts(text: string): GeminiPart[] {
  return text === '' ? [] : [{ text }];
}

async function mapPart(part: ContentPart, param: string, images: RequestImages): Promise<GeminiPart[]> {
  if (part.type === 'text') return textParts(part.text);
  if (part.type !== 'image_url') invalidRequest(param, `${part.type} parts are not supported by provider type google`);
  const url = part.image_url.url;
  const urlParam = `${param}.image_url.url`;
  const image = parseDataUrl(url, urlParam) ?? (isHttpUrl(url) ? await images.fetch(url, urlParam) : invalidRequest(urlParam, 'must be an http(s) or data URL'));
  if (!IMAGE_TYPES.has(image.mediaType)) invalidRequest(urlParam, `${image.mediaType} is not supported by provider type google (png, jpeg, webp, heic, heif)`);
  return [{ inlineData: { mimeType: image.mediaType, data: image.data } }];
}

/** generationConfig fields apps set as providerOptions.google; the other keys (safetySettings, cachedContent, labels) are top-level. */
const GENERATION_CONFIG_KEYS: ReadonlySet<string> = new Set(['thinkingConfig', 'responseModalities', 'imageConfig', 'mediaResolution', 'candidateCount', 'responseLogprobs', 'logprobs', 'speechConfig', 'audioTimestamp', 'topK']);

function addGoogleOptions(body: Record<string, unknown>, generationConfig: Record<string, unknown>, options: Record<string, unknown>): void {
  const top: Record<string, unknown> = {};
  const generation: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) (GENERATION_CONFIG_KEYS.has(key) ? generation : top)[key] = value;
  addOptions(body, top, 'as-is');
  addOptions(generationConfig, generation, 'as-is');
}
