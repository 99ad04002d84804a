import { z } from 'zod';
import { keyText } from '../../../../config/key-text.js';
import type { BaseProviderConfig } from '../shared/types.js';

export interface AnthropicProviderConfig extends BaseProviderConfig {
  type: 'anthropic';
  /** Empty until set: requests then answer 503 provider_not_configured. */
  api_key?: string | undefined;
  /** The `anthropic-version` header. */
  anthropic_version: string;
  /** max_tokens when neither the request nor the catalog sets one (Anthropic requires it). */
  default_max_tokens: number;
}

export const anthropicConfigSchema: z.ZodType<AnthropicProviderConfig> = z.strictObject({
  type: z.literal('anthropic'),
  base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://api.anthropic.com'),
  api_key: keyText().optional(),
  anthropic_version: z.string().min(1).default('2023-06-01'),
  default_max_tokens: z.int().positive().default(4096),
  headers: z.record(z.string(), z.string()).optional(),
  first_byte_timeout: z.number().positive().optional(),
  stream_idle_timeout: z.number().positive().optional(),
});
