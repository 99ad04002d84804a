// The gateway's catalog and keys as the console shows them, read from the
// running config: models with their providers in order and prices, the
// provider slugs with their types, and each key's name, limits and budget
// (never the key itself; a bare key shows the hash-derived name its metrics
// and usage records carry).
import type { ValidatedConfig } from '../../config/validate.js';
import { apiKeyName, type ApiKeyEntry, type GatewayConfig } from '../../receivers/gateway/config.js';
import type { BudgetPeriod } from '../../shared/periods.js';
import { mergePricing, type PricingConfig } from '../../usage/pricing.js';

export interface CatalogKey {
  name: string;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  budget: { usd: number; period: BudgetPeriod } | null;
}

export interface GatewayCatalog {
  receiver: string;
  endpoint: string;
  providers: Array<{ slug: string; type: string }>;
  /** Prices as charged: an endpoint's own over the model's, a cache price left out at the input price. */
  models: Array<{ id: string; name: string | null; endpoints: Array<{ provider: string; model: string; pricing: Record<string, string> }>; pricing: Record<string, string> }>;
  keys: CatalogKey[];
}

function keyOf(entry: ApiKeyEntry): CatalogKey {
  const record = typeof entry === 'string' ? undefined : entry;
  return {
    name: apiKeyName(entry),
    requestsPerMinute: record?.requests_per_minute ?? null,
    tokensPerMinute: record?.tokens_per_minute ?? null,
    budget: record?.budget === undefined ? null : { usd: record.budget.usd, period: record.budget.period },
  };
}

/** The prices a request is charged at: a cache price left out is the input price (pricing.ts). */
function charged(pricing: PricingConfig | undefined): Record<string, string> {
  if (pricing === undefined) return {};
  const prices: Record<string, string> = {};
  for (const [kind, price] of Object.entries(pricing)) if (price !== undefined) prices[kind] = price;
  if (pricing.input !== undefined) {
    prices['input_cache_read'] ??= pricing.input;
    prices['input_cache_write'] ??= pricing.input;
  }
  return prices;
}

export function gatewayCatalogs(config: ValidatedConfig | undefined): GatewayCatalog[] {
  const catalogs: GatewayCatalog[] = [];
  for (const [id, component] of config?.receivers ?? []) {
    if (component.factory.type !== 'gateway') continue;
    const gateway = component.config as GatewayConfig;
    catalogs.push({
      receiver: id,
      endpoint: gateway.endpoint,
      providers: Object.entries(gateway.providers).map(([slug, provider]) => ({ slug, type: provider.type })),
      models: gateway.models.map((model) => ({
        id: model.id,
        name: model.name ?? null,
        endpoints: model.endpoints.map((endpoint) => ({ provider: endpoint.provider, model: endpoint.model, pricing: charged(mergePricing(model.pricing, endpoint.pricing)) })),
        pricing: charged(model.pricing),
      })),
      keys: gateway.api_keys.map(keyOf),
    });
  }
  return catalogs;
}
