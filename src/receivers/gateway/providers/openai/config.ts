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
