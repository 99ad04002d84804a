// OpenAI-compatible upstreams take the request as it came: only `model` is
// replaced and the gateway's own routing fields are dropped.
import type { ChatCompletionRequest } from '../../openai-types.js';
import type { AttemptContext, UpstreamRequest } from '../types.js';
import type { OpenAIProviderConfig } from './config.js';

/** Fields the gateway consumes itself; never sent upstream. */
const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['providerOptions', 'gateway', 'order', 'only', 'models']);

export function buildOpenAIRequest(request: ChatCompletionRequest, ctx: AttemptContext<OpenAIProviderConfig>): UpstreamRequest {
  // Copied key by key (not spread-then-delete, which leaves a slow dictionary-mode object).
  const source = request as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (!GATEWAY_FIELDS.has(key)) body[key] = key === 'model' ? ctx.model : source[key];
  }
  // Ask for usage so the attempt's span has token counts; the gateway drops
  // the usage chunk again when the client did not ask for it.
  if (request.stream === true) body['stream_options'] = { ...request.stream_options, include_usage: true };
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: request.stream === true ? 'text/event-stream' : 'application/json', ...ctx.provider.headers };
  if (ctx.provider.api_key !== undefined && ctx.provider.api_key !== '') headers['authorization'] = `Bearer ${ctx.provider.api_key}`;
  return { url: `${trimSlash(ctx.provider.base_url)}/chat/completions`, method: 'POST', headers, body: JSON.stringify(body) };
}

function trimSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}
