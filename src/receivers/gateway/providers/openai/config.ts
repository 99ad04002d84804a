import { z } from 'zod';
import { keyText } from '../../../../config/key-text.js';
import type { BaseProviderConfig } from '../shared/types.js';

export interface OpenAIProviderConfig extends BaseProviderConfig {
  type: 'openai';
}

export const openaiConfigSchema: z.ZodType<OpenAIProviderConfig> = z.strictObject({
  type: z.literal('openai'),
  base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  // Optional: local servers (Ollama, vLLM, llama.cpp) often need none.
  api_key: keyText().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  first_byte_timeout: z.number().positive().optional(),
  stream_idle_timeout: z.number().positive().optional(),
});

/**
 * `{base_url}{path}`, the path added to base_url's own and its query kept
 * at the end: Azure OpenAI's deployments take `?api-version=` there
 * (`.../deployments/gpt-4o?api-version=2024-10-21` asks
 * `.../deployments/gpt-4o/chat/completions?api-version=2024-10-21`).
 */
export function upstreamUrl(provider: OpenAIProviderConfig, path: string): string {
  const url = new URL(provider.base_url);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  return url.href;
}
