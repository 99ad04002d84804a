import { z } from 'zod';
import { keyText } from '../../../../config/key-text.js';
import type { BaseProviderConfig } from '../shared/types.js';
import { imageFetchConfigSchema, type ImageFetchConfig } from '../shared/image-fetch.js';

export interface GoogleProviderConfig extends BaseProviderConfig {
  type: 'google';
  /** Empty until set: requests then answer 503 provider_not_configured. */
  api_key?: string | undefined;
  /** How http(s) image URLs are fetched and inlined (Gemini takes inline bytes only). */
  image_fetch: ImageFetchConfig;
}

export const googleConfigSchema: z.ZodType<GoogleProviderConfig> = z.strictObject({
  type: z.literal('google'),
  base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://generativelanguage.googleapis.com'),
  api_key: keyText().optional(),
  image_fetch: imageFetchConfigSchema,
  headers: z.record(z.string(), z.string()).optional(),
  first_byte_timeout: z.number().positive().optional(),
  stream_idle_timeout: z.number().positive().optional(),
});
