// Catalog prices (USD per token, decimal strings) parsed once into exact
// cost units, and a request's cost from its token counts.
import { parseUsd, type Cost } from '../shared/money.js';
import type { TokenCounts } from '../shared/tokens.js';

export const PRICE_KINDS = ['input', 'output', 'input_cache_read', 'input_cache_write'] as const;
export type PriceKind = (typeof PRICE_KINDS)[number];

/** The catalog's `pricing` block: decimal strings, every kind optional. */
export type PricingConfig = { readonly [K in PriceKind]?: string | undefined };

/** Cost units per token. Cache prices default to the input price when not given. */
export interface Prices {
  readonly input: Cost;
  readonly output: Cost;
  readonly cacheRead: Cost;
  readonly cacheWrite: Cost;
}

export function parsePrices(config: PricingConfig): Prices {
  const input = parseUsd(config.input ?? '0');
  return {
    input,
    output: parseUsd(config.output ?? '0'),
    cacheRead: config.input_cache_read === undefined ? input : parseUsd(config.input_cache_read),
    cacheWrite: config.input_cache_write === undefined ? input : parseUsd(config.input_cache_write),
  };
}

/** An endpoint's own pricing replaces the model's, kind by kind. */
export function mergePricing(model: PricingConfig | undefined, endpoint: PricingConfig | undefined): PricingConfig | undefined {
  if (endpoint === undefined) return model;
  const merged: Partial<Record<PriceKind, string>> = {};
  for (const kind of PRICE_KINDS) {
    const price = endpoint[kind] ?? model?.[kind];
    if (price !== undefined) merged[kind] = price;
  }
  return merged;
}

/** Uncached input at the input price, cache reads and writes at theirs, output at the output price. */
export function costOf(tokens: TokenCounts, prices: Prices): Cost {
  const uncached = Math.max(0, tokens.input - tokens.cacheRead - tokens.cacheWrite);
  return BigInt(uncached) * prices.input + BigInt(tokens.cacheRead) * prices.cacheRead + BigInt(tokens.cacheWrite) * prices.cacheWrite + BigInt(tokens.output) * prices.output;
}
