// Provider `type` -> the schema of its `providers.<slug>` entry. Config-only:
// validating a config loads no adapter code (index.ts holds the adapters).
import type { z } from 'zod';
import { anthropicConfigSchema } from './anthropic/config.js';
import { bedrockConfigSchema } from './bedrock/config.js';
import { googleConfigSchema } from './google/config.js';
import { openaiConfigSchema } from './openai/config.js';
import type { BaseProviderConfig } from './shared/types.js';

export const providerConfigSchemas: ReadonlyMap<string, z.ZodType<BaseProviderConfig>> = new Map<string, z.ZodType<BaseProviderConfig>>([
  ['openai', openaiConfigSchema],
  ['anthropic', anthropicConfigSchema],
  ['google', googleConfigSchema],
  ['bedrock', bedrockConfigSchema],
]);

export function providerTypes(): string[] {
  return [...providerConfigSchemas.keys()].sort();
}
