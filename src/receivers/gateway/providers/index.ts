// The flat registry: provider `type` -> adapter. One line per provider folder.
import type { BaseProviderConfig, ProviderAdapter } from './types.js';
import { openaiAdapter } from './openai/index.js';

// Adapters are generic over their config; the registry keeps the base form.
type AnyAdapter = ProviderAdapter<BaseProviderConfig>;

export const providerAdapters: ReadonlyMap<string, AnyAdapter> = new Map<string, AnyAdapter>([
  ['openai', openaiAdapter as AnyAdapter],
]);

export function providerTypes(): string[] {
  return [...providerAdapters.keys()].sort();
}
