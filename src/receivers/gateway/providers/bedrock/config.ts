import { z } from 'zod';
import { keyText } from '../../../../config/key-text.js';
import { imageFetchConfigSchema, type ImageFetchConfig } from '../shared/image-fetch.js';
import type { BaseProviderConfig } from '../shared/types.js';

export interface BedrockProviderConfig extends BaseProviderConfig {
  type: 'bedrock';
  region: string;
  /** Static credentials; when absent, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN are read per request. */
  access_key_id?: string | undefined;
  secret_access_key?: string | undefined;
  session_token?: string | undefined;
  /** How http(s) image URLs are fetched and inlined (Converse takes image bytes only). */
  image_fetch: ImageFetchConfig;
}

export const bedrockConfigSchema: z.ZodType<BedrockProviderConfig> = z
  .strictObject({
    type: z.literal('bedrock'),
    region: z.string().min(1).optional(),
    base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    // A Bedrock API key (sent as a Bearer token) replaces SigV4 signing.
    api_key: keyText({ min: 1 }).optional(),
    access_key_id: keyText({ min: 1 }).optional(),
    secret_access_key: keyText({ min: 1 }).optional(),
    session_token: keyText({ min: 1 }).optional(),
    image_fetch: imageFetchConfigSchema,
    headers: z.record(z.string(), z.string()).optional(),
    first_byte_timeout: z.number().positive().optional(),
    stream_idle_timeout: z.number().positive().optional(),
  })
  .transform((config, ctx) => {
    // An empty variable is unset, as for the credentials (a compose file passes an unset one as '').
    const region = config.region ?? nonEmpty(process.env['AWS_REGION']) ?? nonEmpty(process.env['AWS_DEFAULT_REGION']);
    if (region === undefined) {
      ctx.addIssue({ code: 'custom', path: ['region'], message: 'region is required (or set AWS_REGION)' });
      return z.NEVER;
    }
    if ((config.access_key_id === undefined) !== (config.secret_access_key === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['secret_access_key'], message: 'access_key_id and secret_access_key must be set together' });
      return z.NEVER;
    }
    return { ...config, region, base_url: config.base_url ?? `https://bedrock-runtime.${region}.amazonaws.com` };
  });

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}
