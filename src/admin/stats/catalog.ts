// The gateway's catalog and keys as the console shows them, read from the
// running config: models with their providers in order and prices, the
// provider slugs with their types, and each key's name and budget (never the
// key itself; a bare key shows the hash-derived name its metrics carry).
import type { ValidatedConfig } from '../../config/validate.js';
import { apiKeyName, type GatewayConfig } from '../../receivers/gateway/config.js';

export interface GatewayCatalog {
  receiver: string;
  endpoint: string;
  providers: Array<{ slug: string; type: string }>;
  models: Array<{ id: string; name: string | null; endpoints: Array<{ provider: string; model: string }>; pricing: Record<string, string> }>;
  keys: Array<{ name: string; budget: { usd: number; period: string } | null }>;
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

function keyOf(entry: GatewayConfig['api_keys'][number]): GatewayCatalog['keys'][number] {
  const budget = field(entry, 'budget');
  const usd = field(budget, 'usd');
  const period = field(budget, 'period');
  return {
    // The name metrics and usage records carry (a bare key's is derived from its hash).
    name: apiKeyName(entry),
    budget: typeof usd === 'number' ? { usd, period: typeof period === 'string' ? period : 'total' } : null,
  };
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
        endpoints: model.endpoints.map((endpoint) => ({ provider: endpoint.provider, model: endpoint.model })),
        pricing: Object.fromEntries(Object.entries(model.pricing ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined)),
      })),
      keys: gateway.api_keys.map(keyOf),
    });
  }
  return catalogs;
}
