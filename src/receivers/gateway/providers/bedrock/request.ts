// OpenAI chat request -> Bedrock Converse / ConverseStream request, signed.
import type { ChatCompletionRequest, ChatMessage, ContentPart, ToolChoice } from '../../core/openai-types.js';
import { fetchImage } from '../shared/image-fetch.js';
import { invalidRequest, isHttpUrl, parseDataUrl, parseToolArguments, stopList, textOf } from '../shared/inputs.js';
import type { AttemptContext, UpstreamRequest } from '../types.js';
import type { BedrockProviderConfig } from './config.js';
import { signRequest } from './signer.js';
import type { ConverseContentBlock, ConverseImageFormat, ConverseInferenceConfig, ConverseMessage, ConverseRequest, ConverseToolChoice } from './wire.js';

const IMAGE_FORMATS: Readonly<Record<string, ConverseImageFormat>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
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
  const system = request.messages.flatMap((message) => (message.role === 'system' || message.role === 'developer' ? [textOf(message.content)] : [])).filter((text) => text !== '');
  if (system.length > 0) body.system = system.map((text) => ({ text }));
  const inferenceConfig = mapInferenceConfig(request, ctx);
  if (Object.keys(inferenceConfig).length > 0) body.inferenceConfig = inferenceConfig;
  if (request.tools !== undefined && request.tools.length > 0) {
    // Converse has no "none": leave the tools out, unless the history holds
    // tool blocks, which Converse refuses without a toolConfig.
    const historyUsesTools = messages.some((message) => message.content.some((block) => 'toolUse' in block || 'toolResult' in block));
    if (request.tool_choice !== 'none' || historyUsesTools) {
      body.toolConfig = {
        tools: request.tools.map(({ function: fn }) => ({
          toolSpec: { name: fn.name, ...(fn.description !== undefined ? { description: fn.description } : {}), inputSchema: { json: fn.parameters ?? { type: 'object', properties: {} } } },
        })),
      };
      const choice = mapToolChoice(request.tool_choice);
      if (choice !== undefined) body.toolConfig.toolChoice = choice;
    }
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
  if (ctx.provider.api_key !== undefined) headers['authorization'] = `Bearer ${ctx.provider.api_key}`;
  const sent = ctx.provider.api_key !== undefined ? headers : await signRequest(ctx.provider, url, headers, json);
  return { url: url.href, method: 'POST', headers: sent, body: json };
}

function rejectUnsupported(request: ChatCompletionRequest): void {
  if (request.n !== undefined && request.n !== 1) invalidRequest('n', 'provider type bedrock returns one choice only');
  if (request.logprobs === true) invalidRequest('logprobs', 'not supported by provider type bedrock');
  const format = request.response_format?.type;
  if (format !== undefined && format !== 'text') invalidRequest('response_format', `${format} is not supported by provider type bedrock`);
}

function mapInferenceConfig(request: ChatCompletionRequest, ctx: AttemptContext<BedrockProviderConfig>): ConverseInferenceConfig {
  const config: ConverseInferenceConfig = {};
  for (const field of RANGED_FIELDS) {
    const value = request[field.from];
    if (value === undefined) continue;
    if (value < field.min || value > field.max) invalidRequest(field.from, `must be between ${field.min} and ${field.max} for provider type bedrock`);
    config[field.to] = value;
  }
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? ctx.maxTokens;
  if (maxTokens !== undefined) config.maxTokens = maxTokens;
  const stop = stopList(request.stop);
  if (stop !== undefined && stop.length > 0) config.stopSequences = stop;
  return config;
}

function mapToolChoice(choice: ToolChoice | undefined): ConverseToolChoice | undefined {
  if (choice === undefined || choice === 'none') return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  return { tool: { name: choice.function.name } };
}

async function mapMessages(input: readonly ChatMessage[], ctx: AttemptContext<BedrockProviderConfig>): Promise<ConverseMessage[]> {
  const messages: ConverseMessage[] = [];
  for (const [i, message] of input.entries()) {
    const param = `messages[${i}]`;
    let turn: ConverseMessage;
    switch (message.role) {
      case 'system':
      case 'developer':
        continue;
      case 'user':
        turn = { role: 'user', content: typeof message.content === 'string' ? textBlocks(message.content) : (await Promise.all(message.content.map((part, j) => mapPart(part, `${param}.content[${j}]`, ctx)))).flat() };
        break;
      case 'assistant': {
        const content = textBlocks(textOf(message.content));
        for (const [j, call] of (message.tool_calls ?? []).entries()) {
          content.push({ toolUse: { toolUseId: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`) } });
        }
        turn = { role: 'assistant', content };
        break;
      }
      case 'tool':
        turn = { role: 'user', content: [{ toolResult: { toolUseId: message.tool_call_id, content: [{ text: textOf(message.content) }] } }] };
        break;
    }
    if (turn.content.length === 0) continue;
    const last = messages.at(-1);
    // Converse wants user and assistant turns to alternate: parallel tool results share one user turn.
    if (last !== undefined && last.role === turn.role) last.content.push(...turn.content);
    else messages.push(turn);
  }
  return messages;
}

function textBlocks(text: string): ConverseContentBlock[] {
  return text === '' ? [] : [{ text }];
}

async function mapPart(part: ContentPart, param: string, ctx: AttemptContext<BedrockProviderConfig>): Promise<ConverseContentBlock[]> {
  if (part.type === 'text') return textBlocks(part.text);
  const url = part.image_url.url;
  const urlParam = `${param}.image_url.url`;
  const image = parseDataUrl(url, urlParam) ?? (isHttpUrl(url) ? await fetchImage(url, ctx.provider.image_fetch, ctx.signal, urlParam) : invalidRequest(urlParam, 'must be an http(s) or data URL'));
  const format = IMAGE_FORMATS[image.mediaType];
  if (format === undefined) invalidRequest(urlParam, `${image.mediaType} is not supported by provider type bedrock (png, jpeg, gif, webp)`);
  return [{ image: { format, source: { bytes: image.data } } }];
}
