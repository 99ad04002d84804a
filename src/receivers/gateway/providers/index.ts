// The flat registry: provider `type` -> adapter. One line per provider folder.
import type { BaseProviderConfig, ProviderAdapter } from './shared/types.js';
import { anthropicAdapter } from './anthropic/index.js';
import { bedrockAdapter } from './bedrock/index.js';
import { googleAdapter } from './google/index.js';
import { openaiAdapter } from './openai/index.js';

// Adapters are generic over their config; the registry keeps the base form.
type AnyAdapter = ProviderAdapter<BaseProviderConfig>;

export const providerAdapters: ReadonlyMap<string, AnyAdapter> = new Map<string, AnyAdapter>([
  ['openai', openaiAdapter as AnyAdapter],
  ['anthropic', anthropicAdapter as AnyAdapter],
  ['google', googleAdapter as AnyAdapter],
  ['bedrock', bedrockAdapter as AnyAdapter],
]);
