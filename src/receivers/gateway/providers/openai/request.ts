// OpenAI-compatible upstreams take the request as it came: only `model` is
// replaced and the gateway's own routing fields are dropped.
import type { ChatCompletionRequest } from '../../core/openai-types.js';
import { ProviderNotConfiguredError, type AttemptContext, type UpstreamRequest } from '../types.js';
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
  const fixed = fixedParts(ctx.slug, ctx.provider);
  return { url: fixed.url, method: 'POST', headers: request.stream === true ? fixed.streamHeaders : fixed.plainHeaders, body: JSON.stringify(body) };
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
    fixed = { url: `${trimSlash(provider.base_url)}/chat/completions`, plainHeaders: headersFor(provider, 'application/json'), streamHeaders: headersFor(provider, 'text/event-stream') };
    fixedByConfig.set(provider, fixed);
  }
  return fixed;
}

function headersFor(provider: OpenAIProviderConfig, accept: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept, ...provider.headers };
  if (provider.api_key !== undefined && provider.api_key !== '') headers['authorization'] = `Bearer ${provider.api_key}`;
  return Object.freeze(headers);
}

function trimSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}
