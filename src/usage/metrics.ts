// sluice_gateway_tokens_total{model,provider,key,type} and
// sluice_gateway_cost_usd_total{model,provider,key}. Cost is summed exactly
// (integer cost units) and converted to a float only when scraped, so the
// exported value is the nearest double to the true total, never a drifted sum.
// A model id the catalog does not list is whatever a client wrote after a
// provider's slug; past UNLISTED_MODELS of them, further ones are counted
// under model="other", so invented ids cannot grow the series without end;
// so is one longer than UNLISTED_MODEL_LENGTH characters, so one cannot put
// a megabyte into a label.
import type { Counter } from 'prom-client';
import type { CounterSeries } from '../shared/metric-series.js';
import type { Telemetry } from '../shared/telemetry.js';
import { costToNumber, type Cost } from '../shared/money.js';
import type { TokenCounts } from '../shared/tokens.js';
import type { Served } from './meter.js';

export interface UsageMetrics {
  count(key: string, served: Served, tokens: TokenCounts, cost: Cost): void;
}

export const UNLISTED_MODELS = 100;
export const OTHER_MODEL = 'other';
/** The longest model id outside the catalog that gets a series of its own (as long as `sluice.model` keeps on spans). */
export const UNLISTED_MODEL_LENGTH = 256;

type TokenLabel = 'model' | 'provider' | 'key' | 'type';
type CostLabel = 'model' | 'provider' | 'key';

interface Series {
  readonly input: CounterSeries;
  readonly output: CounterSeries;
  readonly cacheRead: CounterSeries;
  readonly cacheWrite: CounterSeries;
  readonly reasoning: CounterSeries;
  readonly total: { readonly labels: Record<CostLabel, string>; cost: Cost };
}

// One per Telemetry, so totals outlive a gateway recreated by a config reload (as its counters do).
const byTelemetry = new WeakMap<Telemetry, UsageMetrics>();

export function usageMetrics(telemetry: Telemetry): UsageMetrics {
  let metrics = byTelemetry.get(telemetry);
  if (metrics === undefined) {
    metrics = createUsageMetrics(telemetry);
    byTelemetry.set(telemetry, metrics);
  }
  return metrics;
}

function createUsageMetrics(telemetry: Telemetry): UsageMetrics {
  const tokens = telemetry.counterSeries<TokenLabel>('sluice_gateway_tokens_total', 'Tokens upstreams reported, by model, provider slug, key name and type (input counts every prompt token, cache reads and writes included).', ['model', 'provider', 'key', 'type']);
  const totals = new Map<string, { labels: Record<CostLabel, string>; cost: Cost }>();
  telemetry.counter('sluice_gateway_cost_usd_total', 'Cost in USD at catalog prices, by model, provider slug and key name.', ['model', 'provider', 'key'], function exactTotals(this: Counter<CostLabel>) {
    this.reset();
    for (const total of totals.values()) this.inc(total.labels, costToNumber(total.cost));
  });
  // The series per model, provider and key, made once (metric-series.ts).
  const series = new Map<string, Series>();
  function seriesOf(model: string, provider: string, key: string): Series {
    const id = `${model}\u0000${provider}\u0000${key}`;
    let found = series.get(id);
    if (found === undefined) {
      const child = (type: string) => tokens.series({ model, provider, key, type });
      found = { input: child('input'), output: child('output'), cacheRead: child('cache_read'), cacheWrite: child('cache_write'), reasoning: child('reasoning'), total: { labels: { model, provider, key }, cost: 0n } };
      series.set(id, found);
      totals.set(id, found.total);
    }
    return found;
  }
  const unlisted = new Set<string>();
  function modelLabel(served: Served): string {
    if (!served.unlisted || unlisted.has(served.modelId)) return served.modelId;
    if (unlisted.size >= UNLISTED_MODELS || served.modelId.length > UNLISTED_MODEL_LENGTH) return OTHER_MODEL;
    unlisted.add(served.modelId);
    return served.modelId;
  }
  return {
    count: function count(key, served, counts, amount) {
      const s = seriesOf(modelLabel(served), served.provider, key);
      if (counts.input > 0) s.input.inc(counts.input);
      if (counts.output > 0) s.output.inc(counts.output);
      if (counts.cacheRead > 0) s.cacheRead.inc(counts.cacheRead);
      if (counts.cacheWrite > 0) s.cacheWrite.inc(counts.cacheWrite);
      if (counts.reasoning > 0) s.reasoning.inc(counts.reasoning);
      s.total.cost += amount;
    },
  };
}
